"""The pinned source distributions of the real repository tier: manifest, cache, hash check.

What it is: ``packages.json`` (next to this file, committed) pins each package by version,
download URL and sha256. :func:`sdist_path` returns the cached ``.tar.gz`` of a package,
downloading it first when it is missing (host side, over HTTPS; the sandbox never reaches the
network), and refuses a file whose sha256 differs from the pin.

Cache: ``$POSTTRAIN_CACHE/repos`` when that variable is set, else ``~/.cache/posttrain/repos``.

Guarantees: a returned path always hashes to its pin (checked on every call: a cached file
edited after download is refused with :class:`RepoCacheError`, never re-fetched silently);
a download is written to a temporary name and renamed only after its hash matched; a missing
network is a :class:`RepoFetchError` naming the package and URL.

Does not: resolve dependencies (the packages are chosen to need none) or talk to any index
other than the pinned URL.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from posttrain.core.errors import EnvError

MANIFEST = Path(__file__).with_name("packages.json")
DOWNLOAD_TIMEOUT_S = 60.0


class RepoFetchError(EnvError):
    """A pinned sdist could not be downloaded (no network, HTTP error, hash mismatch)."""


class RepoCacheError(EnvError):
    """A cached sdist does not match its pinned sha256 (tampered or truncated)."""


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    filename: str
    url: str
    sha256: str
    import_root: str
    sources: tuple[str, ...]
    tests: tuple[str, ...]
    tries: tuple[tuple[int, int], ...] = ()  # per-level validation budget over the default

    @property
    def key(self) -> str:
        return f"{self.name}-{self.version}"


def load_manifest(path: Path | str | None = None) -> tuple[Package, ...]:
    data = json.loads(Path(path or MANIFEST).read_text())
    return tuple(Package(p["name"], p["version"], p["filename"], p["url"], p["sha256"],
                         p["import_root"], tuple(p["sources"]), tuple(p["tests"]),
                         tuple(sorted((int(k), int(v)) for k, v in p.get("tries", {}).items())))
                 for p in data["packages"])


def package(name: str) -> Package:
    for p in load_manifest():
        if p.name == name:
            return p
    raise EnvError(f"no repository package {name!r} in {MANIFEST.name}")


def cache_dir() -> Path:
    root = os.environ.get("POSTTRAIN_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "posttrain"
    return base / "repos"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _download(pkg: Package, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=pkg.filename + ".", dir=dest.parent)
    try:
        try:
            with urllib.request.urlopen(pkg.url, timeout=DOWNLOAD_TIMEOUT_S) as resp, \
                    os.fdopen(fd, "wb") as out:
                while chunk := resp.read(1 << 16):
                    out.write(chunk)
        except OSError as exc:  # URLError, timeouts, DNS: all OSError
            raise RepoFetchError(f"cannot download {pkg.key} from {pkg.url}: {exc} "
                                 f"(the repository pool needs the network once; or put the "
                                 f"file at {dest})") from exc
        got = _sha256(Path(tmp))
        if got != pkg.sha256:
            raise RepoFetchError(f"{pkg.key}: downloaded sha256 {got} != pinned {pkg.sha256}")
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def sdist_path(pkg: Package, *, fetch: bool = True, cache: Path | None = None) -> Path:
    """The verified cached sdist of ``pkg`` (downloaded first when missing and ``fetch``)."""
    dest = (cache or cache_dir()) / "sdists" / pkg.filename
    if not dest.exists():
        if not fetch:
            raise RepoFetchError(f"{pkg.key} is not cached at {dest} and fetching is off")
        _download(pkg, dest)
    got = _sha256(dest)
    if got != pkg.sha256:
        raise RepoCacheError(f"cached {dest} has sha256 {got}, pinned {pkg.sha256}: refused "
                             f"(delete the file to download it again)")
    return dest
