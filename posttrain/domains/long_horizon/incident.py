"""Investigate an incident, fix it, write the postmortem: ``long_horizon.incident-v1``.

Trains: following a failure across several services' logs to its root cause, then acting on
it. ``logs/*.log`` hold timestamped lines of a request chain (gateway → ... → the faulty
service); upstream services log timeouts *caused by* the next service, and the faulty one
logs an error naming a bad configuration key. ``runbook.md`` gives each key's correct
value. Stages:

1. ``rootcause.txt``: ``SERVICE <name>`` and ``FIRST_ERROR <timestamp>`` (the faulty
   service's first ERROR line);
2. fix ``config/<service>.conf``: the bad key set to the runbook value, every other line
   unchanged;
3. (difficulty ≥ 2) ``postmortem.md`` with the headings ``## Summary``, ``## Root cause``,
   ``## Fix``; the root-cause section names the service and the timestamp and the fix
   section the ``key=value`` applied.
Difficulty 2 lengthens the chain; difficulty 3 adds a decoy service (not in the chain) with
earlier, unrelated errors, and misleading WARN lines.

Process rewards (checkpoints): each stage right, the first time.

Outcome: the fraction of stages right in the final tree (the postmortem checked structurally:
headings present, facts in the right sections, nothing else required); guarded by the logs
left unchanged.

Probes (≤ 0.05): ``blame_gateway`` (the first service to show errors), ``blame_decoy``,
``rewrite_all_configs`` (every key of every config set to its runbook value, other lines
dropped), plus the generic probes.
"""

from __future__ import annotations

import random

from posttrain.domains.base import register_domain

from ._kit import LongDomain, done, files_task, lines_equal, read_text, shell, stage_env, stage_score, write

DOMAIN_ID = "long_horizon.incident-v1"
SERVICES = ["orders", "payments", "inventory", "pricing", "auth", "search", "ledger"]
KEYS = {"db_port": ("5432", "5433"), "pool_size": ("20", "0"), "cache_host": ("cache-1", "cache-9"),
        "timeout_ms": ("800", "8"), "region": ("eu-west", "eu-wset")}


def _ts(base: int) -> str:
    return f"2024-06-03T14:{base // 60:02d}:{base % 60:02d}Z"


def _build(rng: random.Random, d: int):
    chain = ["gateway"] + rng.sample(SERVICES, 1 + d)
    bad = chain[-1]
    key = rng.choice(sorted(KEYS))
    good_v, bad_v = KEYS[key]
    t0 = rng.randint(600, 1500)
    logs = {s: [] for s in chain}
    for s in chain:
        for k in range(3):
            logs[s].append((t0 - 300 + 40 * k + rng.randint(0, 20), f"INFO {s} request ok"))
    first = t0 + rng.randint(0, 20)
    for k in range(rng.randint(3, 5)):
        t = first + 30 * k
        logs[bad].append((t, f"ERROR {bad} config {key}={bad_v} rejected"))
        for i in range(len(chain) - 2, -1, -1):
            t += rng.randint(1, 5)
            logs[chain[i]].append((t, f"ERROR {chain[i]} timeout calling {chain[i + 1]}"))
    if d >= 3:
        decoy = rng.choice([s for s in SERVICES if s not in chain])
        logs[decoy] = [(t0 - 200 + 15 * k, f"ERROR {decoy} disk quota warning on /var/tmp") for k in range(3)]
        logs["gateway"].append((t0 - 100, f"WARN gateway slow response from {chain[1]}"))
    files = {f"logs/{s}.log": "".join(f"{_ts(t)} {m}\n" for t, m in sorted(v)) for s, v in logs.items()}
    confs = {}
    for s in chain[1:]:
        ks = rng.sample(sorted(KEYS), 3) if s != bad else list(dict.fromkeys([key] + rng.sample(sorted(KEYS), 2)))
        confs[s] = {k: (bad_v if (s == bad and k == key) else KEYS[k][0]) for k in ks}
    for s, kv in confs.items():
        files[f"config/{s}.conf"] = f"# {s} settings\n" + "".join(f"{k}={v}\n" for k, v in kv.items())
    files["runbook.md"] = "# Runbook\nCorrect values:\n" + "".join(f"- {k}: {v[0]}\n" for k, v in sorted(KEYS.items()))
    fixed = files[f"config/{bad}.conf"].replace(f"{key}={bad_v}\n", f"{key}={good_v}\n")
    out = {"rootcause.txt": f"SERVICE {bad}\nFIRST_ERROR {_ts(first)}\n", f"config/{bad}.conf": fixed}
    text = ("The gateway has been returning errors. Investigate logs/*.log, then:\n1. write rootcause.txt with two lines "
            "'SERVICE <name>' (the service where the failure starts) and 'FIRST_ERROR <timestamp>' (its first ERROR "
            "line's timestamp, as written);\n2. fix that service's config/<name>.conf: set the bad key to the value "
            "in runbook.md, changing no other line;\n")
    if d >= 2:
        text += ("3. write postmortem.md with the sections '## Summary', '## Root cause' (naming the service and the "
                 "timestamp) and '## Fix' (naming the key=value you set).\n")
    return files_task(DOMAIN_ID, d, text + "Do not edit the logs.", files,
                      {"outputs": out, "logs": {p: c for p, c in files.items() if p.startswith("logs/")},
                       "service": bad, "first": _ts(first), "fix": f"{key}={good_v}", "chain": chain,
                       "configs": {s: files[f"config/{s}.conf"] for s in confs}})


def _sections(text: str) -> dict[str, str]:
    out, cur = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            cur = line[3:].strip().lower()
            out[cur] = ""
        elif cur is not None:
            out[cur] += line + "\n"
    return out


def postmortem_ok(text: str | None, h: dict) -> bool:
    if text is None:
        return False
    sec = _sections(text)
    if not {"summary", "root cause", "fix"} <= set(sec):
        return False
    rc = sec["root cause"]
    return h["service"] in rc and h["first"] in rc and h["fix"] in sec["fix"]


def _stages(task) -> dict:
    h = task.hidden
    st = {p: (lambda env, p=p, c=c: lines_equal(read_text(env, p), c)) for p, c in h["outputs"].items()}
    if task.difficulty >= 2:
        st["postmortem.md"] = lambda env: postmortem_ok(read_text(env, "postmortem.md"), h)
    return st


def _verify(env, trajectory):
    h = env.task.hidden
    stages = _stages(env.task)
    if not all(lines_equal(read_text(env, p), c) for p, c in h["logs"].items()):
        return stage_score(DOMAIN_ID, {k: 0.0 for k in stages}, env, "logs changed")
    return stage_score(DOMAIN_ID, {k: float(f(env)) for k, f in stages.items()}, env)


def _postmortem(h: dict) -> str:
    return (f"# Postmortem\n\n## Summary\nGateway errors caused by a bad setting.\n\n## Root cause\n"
            f"{h['service']} rejected its configuration from {h['first']} on; upstream services timed out.\n\n"
            f"## Fix\nSet {h['fix']} in config/{h['service']}.conf.\n")


def _env(task):
    return stage_env(task, _verify, list(_stages(task).items()))


def _reference(task) -> list[str]:
    h = task.hidden
    acts = [shell("grep -h ERROR logs/*.log | sort | head")]
    acts += [write(p, c) for p, c in h["outputs"].items()]
    return acts + ([write("postmortem.md", _postmortem(h))] if task.difficulty >= 2 else []) + [done()]


def _probes(task) -> dict:
    h = task.hidden
    wrong = h["chain"][0]
    rewrite = [write(f"config/{s}.conf", "".join(f"{k}={v}\n" for k, v in [h["fix"].split("=")])) for s in h["configs"]]
    blame = lambda s: [write("rootcause.txt", f"SERVICE {s}\nFIRST_ERROR {h['first']}\n"),  # noqa: E731
                       write("postmortem.md", _postmortem({**h, "service": s})), done()]
    return {"blame_gateway": blame(wrong), "blame_decoy": blame("search" if h["service"] != "search" else "auth"),
            "rewrite_all_configs": rewrite + [done()]}


register_domain(LongDomain(DOMAIN_ID, _build, _env, _reference, _probes, description=__doc__))
