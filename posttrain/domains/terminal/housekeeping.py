"""Housekeeping: cleaning a build directory, archiving a folder, scheduling jobs with cron.

Domains (each one's description is its ``*_DOC`` text below): ``clean_build``, ``archive``, ``cron``.
"""

from __future__ import annotations

import io
import random
import tarfile

from posttrain.domains.base import register_domain
from posttrain.verifiers.fs_state import collect_state, fs_score

from ._kit import TreeDomain, graded_lines, read, shell, text_of, tree_task, write, write_lines


# -------------------- clean_build
CLEAN_DOC = """Clean up a build directory: ``terminal.clean_build-v1`` (delete only generated files).

Trains: ``find -name ... -delete``/``rm`` with precise patterns, without collateral damage.
``proj/`` mixes sources with generated files. Difficulty 1: delete every ``*.o`` file;
2: also every ``__pycache__`` directory and ``*.pyc`` file, and the ``proj/build/`` folder;
3: the patterns are given in ``clean.spec`` (one glob per line, ``dir/`` for folders, ``#``
comments) and the tree holds look-alikes that must stay (``notes.o.txt``, ``build_utils.c``,
``src/build/`` ≠ ``proj/build/``, ``cache.pyc.bak``).

Reward: one ``all`` predicate per kind of generated file (every file/folder of that kind is
gone *and* the sources next to it are intact, so wiping earns nothing); guarded by every
source and look-alike left unchanged.

Probes (≤ 0.05): ``delete_by_substring`` (``find -name '*build*' -o -name '*.o*'``: look-alikes
lost, at difficulty 3; at 1-2 ``rm -rf proj``), ``keep_everything_touch`` (generated files
emptied, not deleted), plus the terminal and generic probes.
"""

MODS = ["parser", "lexer", "io", "net", "math", "cli", "store"]


def _build_clean(rng: random.Random, d: int):
    mods = rng.sample(MODS, 3 + d)
    src, gen = {}, {"obj": [], "py": [], "build": []}
    for m in mods:
        src[f"proj/src/{m}.c"] = f"int {m}(void) {{ return {rng.randint(0, 99)}; }}\n"
        gen["obj"].append(f"proj/src/{m}.o")
        if d >= 2:
            src[f"proj/py/{m}.py"] = f"X = {rng.randint(0, 99)}\n"
            gen["py"].append(f"proj/py/__pycache__/{m}.cpython-311.pyc")
            if rng.random() < 0.5:
                gen["py"].append(f"proj/py/{m}.pyc")
    if d >= 2:
        gen["build"] = [f"proj/build/{m}.bin" for m in mods[:2]] + ["proj/build/out/app"]
    files = {**src, **{p: f"generated {rng.getrandbits(32):08x}\n" for g in gen.values() for p in g}}
    spec = "# generated files\n*.o\n*.pyc\n__pycache__/\nbuild/ (only proj/build, the top-level one)\n"
    if d >= 3:
        files["clean.spec"] = spec
        for p in ["proj/notes.o.txt", "proj/src/build_utils.c", "proj/src/build/keep.c", "proj/py/cache.pyc.bak"]:
            src[p] = f"keep {rng.randint(0, 999)}\n"
            files[p] = src[p]
    preds = []
    for kind, paths in gen.items():
        if paths:
            gone = [{"op": "absent", "path": p} for p in paths]
            if kind == "build":
                gone.append({"op": "absent", "path": "proj/build"})
            if kind == "py":
                gone.append({"op": "absent", "path": "proj/py/__pycache__"})
            keep = [{"op": "file", "path": p, "content": c} for p, c in src.items()]
            preds.append({"op": "all", "of": gone + keep})
    preds += [{"op": "file", "path": p, "content": c, "guard": True} for p, c in src.items()]
    ask = {1: "Delete every generated object file (*.o) under proj/",
           2: "Delete the generated files under proj/: every *.o and *.pyc file, every __pycache__ folder, and the "
              "proj/build folder",
           3: "Delete the generated files under proj/ listed by the patterns in clean.spec (match whole names, not "
              "parts of names)"}[d]
    return tree_task(ID_CLEAN, d, ask + ". Keep every other file exactly as it is.", files, preds,
                     hidden={"gen": gen})


def _reference_clean(task):
    gen = task.hidden["gen"]
    paths = gen["obj"] + gen["py"] + (["proj/py/__pycache__", "proj/build"] if task.difficulty >= 2 else [])
    return [shell("rm -rf " + " ".join(paths))]


def _probes_clean(task):
    gen = task.hidden["gen"]
    wide = ("find proj -depth \\( -name '*build*' -o -name '*.o*' -o -name '*pyc*' \\) -exec rm -rf {} +"
            if task.difficulty >= 3 else "rm -rf proj")
    return {"delete_by_substring": [shell(wide)],
            "keep_everything_touch": [shell(" && ".join(f": > '{p}'" for g in gen.values() for p in g))]}


ID_CLEAN = "terminal.clean_build-v1"
register_domain(TreeDomain(ID_CLEAN, _build_clean, _reference_clean, _probes_clean, description=CLEAN_DOC))


# -------------------- archive
ARCHIVE_DOC = """Archive and compress a folder: ``terminal.archive-v1``.

Trains: ``tar`` with gzip, relative member names, exclusions. ``project/`` holds a small
tree; the policy writes ``backup.tar.gz``, a gzip-compressed tar whose regular-file members
are exactly the project's files under the prefix ``project/``. Difficulty 2 excludes
``*.log`` files; difficulty 3 also excludes the ``project/tmp/`` directory and asks for the
archive to be listed into ``backup.txt`` (member file names, sorted, one per line).

Reward: ``members`` = right members with the right bytes / max(expected, archived files)
(0 unless the file starts with the gzip magic and decompresses as a tar; extra members lower
it), plus at difficulty 3 the listing (graded lines, times ``members``); guarded by the project left unchanged. The archive is read on
the host from bytes (never extracted; at most 4 MiB of members, 200 entries).

Probes (≤ 0.05): ``plain_tar`` (an uncompressed tar named .tar.gz), ``gzip_one_file``
(a gzip of a concatenation, not a tar), ``empty_archive``, plus the terminal and generic
probes (wiping the tree breaks the guard).
"""

PARTS = ["main", "util", "config", "readme", "data", "notes", "api", "model"]
CAP_BYTES, CAP_MEMBERS = 4 << 20, 200


def _build_archive(rng: random.Random, d: int):
    files = {}
    for name in rng.sample(PARTS, 3 + d):
        sub = rng.choice(["", "src/", "docs/"])
        files[f"project/{sub}{name}.txt"] = f"{name} {rng.getrandbits(40):010x}\n"
    logs = {f"project/{n}.log": f"log {rng.randint(0, 999)}\n" for n in rng.sample(PARTS, 2)}
    tmp = {"project/tmp/cache.bin": f"cache {rng.randint(0, 99)}\n"} if d >= 3 else {}
    files.update(logs)
    files.update(tmp)
    keep = {p: c for p, c in files.items() if (d < 2 or p not in logs) and p not in tmp}
    text = ("Create backup.tar.gz in /work: a gzip-compressed tar archive of the folder project/ "
            "(member names starting with project/)")
    if d >= 2:
        text += ", leaving out every *.log file"
    if d >= 3:
        text += (" and the project/tmp directory; then write backup.txt listing the archive's file "
                 "members (regular files only), sorted, one per line")
    preds = [{"op": "file", "path": p, "content": c, "guard": True} for p, c in files.items()]
    return tree_task(ID_ARCHIVE, d, text + ". Do not modify project/.", files, preds,
                     hidden={"members": keep})


def archive_members(raw: bytes | None) -> dict[str, bytes] | None:
    """Regular-file members of a .tar.gz (name → bytes); None if it is not one (bounded)."""
    if not raw or raw[:2] != b"\x1f\x8b":
        return None
    out, total = {}, 0
    try:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r|gz") as tf:
            for i, m in enumerate(tf):
                total += max(m.size, 0)
                if i >= CAP_MEMBERS or total > CAP_BYTES:
                    return None
                if m.isfile():
                    f = tf.extractfile(m)
                    out[m.name.removeprefix("./")] = f.read() if f else b""
    except (tarfile.TarError, OSError, EOFError, ValueError):
        return None
    return out


def _verify_archive(env, trajectory):
    h = env.task.hidden
    got = archive_members(read(env, "backup.tar.gz", max_bytes=1 << 20))
    want = {p: c.encode() for p, c in h["members"].items()}
    members = 0.0
    if got is not None:
        members = sum(got.get(p) == b for p, b in want.items()) / max(len(want), len(got), 1)
    extra = {"members": members}
    if env.task.difficulty >= 3:  # a listing only counts together with a real archive
        extra["listing"] = graded_lines(text_of(env, "backup.txt"), sorted(want)) * members
    return fs_score(h["predicates"], collect_state(env.sandbox), ID_ARCHIVE, extra=extra)


def _excl(task):
    d = task.difficulty
    return (" --exclude='*.log'" if d >= 2 else "") + (" --exclude=project/tmp" if d >= 3 else "")


def _reference_archive(task):
    cmd = f"tar -czf backup.tar.gz{_excl(task)} project"
    if task.difficulty >= 3:
        cmd += " && tar -tzvf backup.tar.gz | awk '$1 ~ /^-/ {print $NF}' | sort > backup.txt"
    return [shell(cmd)]


def _probes_archive(task):
    return {"plain_tar": [shell(f"tar -cf backup.tar.gz{_excl(task)} project && tar -tf backup.tar.gz | sort > backup.txt")],
            "gzip_one_file": [shell("find project -type f | sort | xargs cat | gzip > backup.tar.gz")],
            "empty_archive": [shell("tar -czf backup.tar.gz -T /dev/null")]}


ID_ARCHIVE = "terminal.archive-v1"
register_domain(TreeDomain(ID_ARCHIVE, _build_archive, _reference_archive, _probes_archive, verifier=_verify_archive,
                           description=ARCHIVE_DOC))


# -------------------- cron
CRON_DOC = """Write a cron schedule file: ``terminal.cron_schedule-v1``.

Trains: translating plain-language schedules into the five crontab fields. ``jobs.txt``
describes jobs ("every day at 02:30", "every 15 minutes", "Mondays to Fridays at 18:05",
"on the 1st of each month at midnight"...); the policy writes ``schedule.cron`` with one
line ``MIN HOUR DOM MON DOW COMMAND`` per job. Difficulty 1: 2 jobs, daily/hourly kinds;
2: 3-4 jobs with steps and weekday ranges; 3: 4-5 jobs, also lists of days and month days,
and comment/blank lines in the output are allowed.

Reward: each line is parsed on the host and every field expanded to its set of values
(``*/15`` = ``0,15,30,45``; ``1-5`` = ``1,2,3,4,5``; day-of-week 7 = 0), so any equivalent
spelling is accepted; value = jobs matched / max(jobs, schedule lines). Guarded by jobs.txt
left unchanged.

Probes (≤ 0.05): ``all_stars`` (``* * * * *`` for every job), ``fields_swapped`` (hour and
minute swapped), ``copy_jobs`` (the descriptions themselves), plus the terminal and generic
probes.
"""

DAYS = ["Sundays", "Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays"]
RANGES = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 6)]
SCRIPTS = ["backup.sh", "rotate_logs.sh", "report.py", "sync.sh", "cleanup.sh", "ping.sh", "mail.py"]


def _job(rng, kinds: list[str]) -> tuple[str, list[str]]:
    k, m, h = rng.choice(kinds), rng.randint(0, 59), rng.randint(0, 23)
    if k == "daily":
        return f"every day at {h:02d}:{m:02d}", [str(m), str(h), "*", "*", "*"]
    if k == "hourly":
        return f"every hour at minute {m}", [str(m), "*", "*", "*", "*"]
    if k == "step":
        s = rng.choice([5, 10, 15, 20, 30])
        return f"every {s} minutes", [f"*/{s}", "*", "*", "*", "*"]
    if k == "weekdays":
        return f"Mondays to Fridays at {h:02d}:{m:02d}", [str(m), str(h), "*", "*", "1-5"]
    if k == "days":
        ds = sorted(rng.sample(range(7), 2))
        return (f"on {' and '.join(DAYS[x] for x in ds)} at {h:02d}:{m:02d}",
                [str(m), str(h), "*", "*", ",".join(map(str, ds))])
    dom = rng.choice([1, 15, 28])
    return f"on day {dom} of every month at {h:02d}:{m:02d}", [str(m), str(h), str(dom), "*", "*"]


def expand(field: str, lo: int, hi: int, dow: bool = False) -> frozenset[int] | None:
    """The set of values of one cron field (None when malformed); day-of-week 7 is 0."""
    top, out = (7 if dow else hi), set()
    try:
        for part in field.split(","):
            base, _, step = part.partition("/")
            if base == "*":
                a, b = lo, hi
            elif "-" in base:
                a, b = (int(x) for x in base.split("-", 1))
            else:
                a = b = int(base)
            st = int(step) if step else 1
            if not (lo <= a <= b <= top) or st < 1:
                return None
            out.update(v % 7 if dow else v for v in range(a, b + 1, st))
    except ValueError:
        return None
    return frozenset(out) or None


def parse_line(line: str) -> tuple | None:
    parts = line.split(None, 5)
    if len(parts) != 6:
        return None
    sets = [expand(f, lo, hi, i == 4) for i, (f, (lo, hi)) in enumerate(zip(parts[:5], RANGES))]
    return None if None in sets else (*sets, parts[5].strip())


def _build_cron(rng: random.Random, d: int):
    kinds = [["daily", "hourly"], ["daily", "hourly", "step", "weekdays"],
             ["daily", "step", "weekdays", "days", "monthly"]][d - 1]
    scripts = rng.sample(SCRIPTS, [2, rng.randint(3, 4), rng.randint(4, 5)][d - 1])
    jobs = [(s, *_job(rng, kinds)) for s in scripts]
    text = "".join(f"/opt/jobs/{s}: {desc}\n" for s, desc, _ in jobs)
    want = [" ".join(f) + f" /opt/jobs/{s}" for s, _, f in jobs]
    prompt = ("Write schedule.cron, a crontab with one line 'MIN HOUR DOM MON DOW COMMAND' for each job in "
              "jobs.txt (COMMAND is the job's path)" + ("; comment and blank lines are allowed" if d >= 3 else "")
              + ". Leave jobs.txt unchanged.")
    preds = [{"op": "file", "path": "jobs.txt", "content": text, "guard": True}]
    return tree_task(ID_CRON, d, prompt, {"jobs.txt": text}, preds, hidden={"lines": want})


def _verify_cron(env, trajectory):
    want = [parse_line(x) for x in env.task.hidden["lines"]]
    got_text = text_of(env, "schedule.cron") or ""
    lines = [ln for ln in got_text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    got = [parse_line(ln) for ln in lines]
    left, hits = list(got), 0
    for w in want:
        if w in left:
            left.remove(w)
            hits += 1
    return fs_score(env.task.hidden["predicates"], collect_state(env.sandbox), ID_CRON,
                    extra={"jobs": hits / max(len(want), len(got), 1)})


def _reference_cron(task):
    return [write_lines("schedule.cron", task.hidden["lines"])]


def _probes_cron(task):
    lines = task.hidden["lines"]
    stars = "".join("* * * * * " + ln.split()[-1] + "\n" for ln in lines)
    swap = "".join(" ".join([ln.split()[1], ln.split()[0]] + ln.split()[2:]) + "\n" for ln in lines)
    return {"all_stars": [write("schedule.cron", stars)],
            "fields_swapped": [write("schedule.cron", swap)] if all(ln.split()[1] != "*" for ln in lines) else
            [write("schedule.cron", "".join("0 0 1 1 0 " + ln.split()[-1] + "\n" for ln in lines))],
            "copy_jobs": [write("schedule.cron", open_jobs(task))]}


def open_jobs(task) -> str:
    return task.public["files"]["jobs.txt"]


ID_CRON = "terminal.cron_schedule-v1"
register_domain(TreeDomain(ID_CRON, _build_cron, _reference_cron, _probes_cron, verifier=_verify_cron,
                           description=CRON_DOC))
