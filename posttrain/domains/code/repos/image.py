"""Package images: a pinned sdist extracted once, with its test runner, as a sandbox template.

What it is: :func:`image_dir` turns a verified sdist (:mod:`.fetch`) into a directory under
the cache (``images/<name>-<version>-<key>``): the sdist's tree, plus ``.posttrain/`` holding
the *install step* done once — pytest and its pure-Python dependencies copied from the host's
own install (``vendor/``, precompiled for the sandbox's ``/usr/bin/python3`` with unchecked
hashes so no sandbox pays the compile), a neutral ``pytest.ini`` (the sdist's own pytest
options may name plugins the sandbox lacks) and ``run-tests``, the one command that runs the
suite. :func:`template` wraps it as a :class:`~posttrain.sandbox.Template`: isolated sandboxes
mount it as the read-only lowest overlay layer of ``/work``, so each task starts from a warm
copy-on-write copy and nothing is extracted again.

:func:`run_suite` runs the suite in a sandbox and returns per-test outcomes from pytest's
JUnit XML (:func:`posttrain.sandbox.parse_junit`); test ids are ``classname::name``.

Guarantees: an image directory is complete or absent (built under a temporary name, renamed
last); extraction refuses members outside the tree (``tarfile`` ``data`` filter); tests run
with ``python3 -S`` and ``PYTHONPATH`` = the vendored runner + the package's import root, so
the host's site-packages never leak in.

Does not: install dependencies of the packages (the manifest picks packages that need none),
or guard against a submission that patches pytest from inside the package under test (the
grader's static gate looks for that: :mod:`.grade`).
"""

from __future__ import annotations

import hashlib
import importlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
from pathlib import Path
from typing import Any

from posttrain.core.errors import EnvError, MissingExtraError
from posttrain.sandbox import Template, parse_junit

from .fetch import Package, cache_dir, sdist_path

IMAGE_VERSION = "1"
VENDORED = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py")
SANDBOX_PYTHON = "/usr/bin/python3"
META = ".posttrain"
REPORT = f"{META}/report.xml"
_lock = threading.Lock()
_templates: dict[str, Template] = {}


def _vendor_sources() -> list[Path]:
    out = []
    for name in VENDORED:
        try:
            mod = importlib.import_module(name)
        except ImportError as exc:
            if name == "py":  # a one-file shim some pytest versions ship; optional
                continue
            raise MissingExtraError(f"the repository tier vendors {name} into its images: "
                                    f"install the 'dev' extra ({exc})") from exc
        f = Path(mod.__file__)
        out.append(f.parent if f.name == "__init__.py" else f)
    return out


def _vendor_key(sources: list[Path]) -> str:
    versions = []
    for s in sources:
        mod = sys.modules.get(s.stem if s.is_file() else s.name)
        versions.append(f"{s.name}={getattr(mod, '__version__', '?')}")
    return ",".join(versions)


def _run_tests_script(pkg: Package) -> str:
    root = "/work" if pkg.import_root in ("", ".") else f"/work/{pkg.import_root}"
    tests = " ".join(pkg.tests)
    return ("#!/bin/sh\n# Run the package's test suite (arguments go to pytest; default: the whole suite)\n"
            "cd /work || exit 2\n"
            f'[ "$#" -eq 0 ] && set -- {tests}\n'
            f"exec env PYTHONPATH=/work/{META}/vendor:{root} PYTHONDONTWRITEBYTECODE=1 "
            f"{SANDBOX_PYTHON} -S -m pytest -c /work/{META}/pytest.ini --rootdir /work \"$@\"\n")


def _build(pkg: Package, dest: Path) -> None:
    sdist = sdist_path(pkg)
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
    try:
        with tarfile.open(sdist) as tf:
            tf.extractall(tmp / "x", filter="data")
        (top,) = list((tmp / "x").iterdir())  # an sdist holds one top directory
        tree = tmp / "tree"
        top.rename(tree)
        meta = tree / META
        (meta / "vendor").mkdir(parents=True)
        for src in _vendor_sources():
            target = meta / "vendor" / src.name
            if src.is_dir():
                shutil.copytree(src, target, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(src, target)
        (meta / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
        script = meta / "run-tests"
        script.write_text(_run_tests_script(pkg))
        script.chmod(0o755)
        if Path(SANDBOX_PYTHON).exists():  # the sandbox's interpreter: compile once, here
            subprocess.run([SANDBOX_PYTHON, "-m", "compileall", "-q", "-j", "1",
                            "--invalidation-mode", "unchecked-hash", str(meta / "vendor")],
                           check=False, capture_output=True, timeout=300)
        try:
            tree.rename(dest)
        except OSError:  # another process built it first: theirs is as good
            if not dest.is_dir():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def image_dir(pkg: Package, cache: Path | None = None) -> Path:
    """The built image of ``pkg`` (built now when absent; the sdist fetched when missing)."""
    sources = _vendor_sources()
    key = hashlib.sha256(f"{IMAGE_VERSION}|{pkg!r}|{_vendor_key(sources)}".encode()).hexdigest()[:12]
    root = (cache or cache_dir()) / "images"
    dest = root / f"{pkg.key}-{key}"
    with _lock:
        if not dest.exists():
            root.mkdir(parents=True, exist_ok=True)
            _build(pkg, dest)
    return dest


def template(pkg: Package) -> Template:
    """The sandbox template of ``pkg``'s image (one per process and package)."""
    with _lock:
        t = _templates.get(pkg.key)
    if t is None:
        t = Template.of(base_dir=str(image_dir(pkg)), name=pkg.key)
        with _lock:
            _templates[pkg.key] = t
    return t


def read_source(pkg: Package, rel: str) -> str:
    """A pristine file of the image (host side), as text."""
    path = image_dir(pkg) / rel
    if not path.resolve().is_relative_to(image_dir(pkg).resolve()):
        raise EnvError(f"{rel!r} is outside the image of {pkg.key}")
    return path.read_text(encoding="utf-8")


def run_suite(sb: Any, pkg: Package, timeout: float = 60.0) -> dict[str, Any]:
    """Run ``pkg``'s suite in ``sb``; ``{test id: TestCase}`` (empty when pytest produced no
    report: a crash, a timeout, or a tampered runner)."""
    cmd = (f"rm -f /work/{REPORT}; sh /work/{META}/run-tests -q --junitxml=/work/{REPORT} "
           f"-o junit_family=xunit1 {' '.join(pkg.tests)} >/dev/null 2>&1; true")
    res = sb.exec(["sh", "-c", cmd], timeout=timeout, cpu_time=timeout)
    if res.status not in ("ok", "nonzero_exit"):
        return {}
    try:
        raw = sb.read_file(REPORT, max_bytes=16 << 20)
    except Exception:  # no report: the run never got to write one
        return {}
    report = parse_junit(raw)
    return {} if report.error else {c.name: c for c in report.cases}


def locate(pkg: Package, test_id: str) -> tuple[str, tuple[str, ...]] | None:
    """``(file, (Class..., function))`` of a test id, resolved against the image."""
    classname, _, name = test_id.rpartition("::")
    parts = classname.split(".")
    root = image_dir(pkg)
    for i in range(len(parts), 0, -1):
        rel = "/".join(parts[:i]) + ".py"
        if (root / rel).is_file():
            return rel, (*parts[i:], name.split("[")[0])
    return None


def clear_templates() -> None:
    """Forget cached templates (tests that move the cache between builds)."""
    with _lock:
        _templates.clear()

