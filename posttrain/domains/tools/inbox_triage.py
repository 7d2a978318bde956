"""E-mail triage by rules: ``tools.inbox_triage-v1``.

Trains: applying written triage rules to a hidden inbox through ``list_messages(folder)``
(ids, senders, subjects), ``read_message(message_id)`` (the body), ``add_label`` and
``archive``: label by sender domain, archive by subject prefix, and (level 3) label by a word
in the body, which needs every body read. Messages that match no rule must stay untouched.

Difficulty: 1 = sender rule; 2 = + subject rule (archive); 3 = + body rule (read each message).

Reward: validity² × (0.3·calls + 0.7·state·precision²·[all calls made]); ``state_ok`` compares
every message's folder and label set after the episode with the expected ones.

Probes (≤ 0.05): the kit's set (:mod:`._kit`). Not at the floor (partial credit by the
family's rule): archiving every message earns the calls part for the ones the rules archive,
never the state part.
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.domains.base import register_domain
from ._kit import ApiDomain, chunk, Plan, S, tool

DOMAINS = ["billing.acme.com", "news.example.org", "friends.net", "corp.example.com", "shop.io"]
USERS = ["ana", "noreply", "team", "li", "sam", "ops", "kim"]
SUBJECTS = ["Invoice 4471", "Lunch on Friday?", "Weekly digest", "Server alert", "Your order shipped",
            "Quarterly numbers", "Re: contract", "Photos", "Password reset", "Meeting notes"]


def _msg(st, message_id):
    if message_id not in st["messages"]:
        raise ValueError(f"no message {message_id!r}")
    return st["messages"][message_id]


def _list(st, folder):
    return [{"id": k, "from": m["from"], "subject": m["subject"]}
            for k, m in sorted(st["messages"].items()) if m["folder"] == folder]


def _read(st, message_id):
    return {"body": _msg(st, message_id)["body"]}


def _label(st, message_id, label):
    m = _msg(st, message_id)
    if label not in m["labels"]:
        m["labels"] = sorted(m["labels"] + [label])
    return {"labels": m["labels"]}


def _archive(st, message_id):
    _msg(st, message_id)["folder"] = "archive"
    return "ok"


ID = "tools.inbox_triage-v1"


def _tools(st: dict[str, Any]):
    return [tool("list_messages", "Messages in a folder (id, from, subject).", {"folder": S}, _list, st),
            tool("read_message", "Body of a message.", {"message_id": S}, _read, st),
            tool("add_label", "Add a label to a message.", {"message_id": S, "label": S}, _label, st),
            tool("archive", "Move a message to the archive folder.", {"message_id": S}, _archive, st)]


def _plan(rng: random.Random, difficulty: int) -> Plan:
    n = {1: 5, 2: 6, 3: 7}[difficulty]
    dom, news = rng.sample(DOMAINS, 2)
    prefix = rng.choice(["[newsletter]", "[promo]", "[digest]"])
    word = rng.choice(["URGENT", "ASAP", "deadline"])
    msgs = {}
    for i in range(n):
        mid = f"m{rng.randint(100, 999)}{i}"
        d = dom if i % 3 == 0 else rng.choice(DOMAINS)
        subj = rng.choice(SUBJECTS)
        if i % 3 == 1 or rng.random() < 0.2:
            subj = f"{prefix} {subj}"
        body = f"Hello, {rng.choice(['see attached', 'quick question', 'fyi', 'thanks'])}."
        if i % 2 == 0 and rng.random() < 0.7:
            body += f" {word}: please reply today."
        msgs[mid] = {"from": f"{rng.choice(USERS)}@{d}", "subject": subj, "body": body,
                     "folder": "inbox", "labels": []}
    msgs[f"m{rng.randint(100, 999)}x"] = {"from": f"old@{dom}", "subject": "archived thread", "body": word,
                                          "folder": "archive", "labels": []}
    rules = [f"label every inbox message from an address at {dom} with 'finance'"]
    if difficulty >= 2:
        rules.append(f"archive every inbox message whose subject starts with {prefix}")
    if difficulty == 3:
        rules.append(f"label every inbox message whose body contains '{word}' with 'urgent' (case-sensitive)")
    inbox = sorted(k for k, m in msgs.items() if m["folder"] == "inbox")
    turns = [[("list_messages", {"folder": "inbox"})]]
    if difficulty == 3:
        turns += chunk([("read_message", {"message_id": k}) for k in inbox])
    work = [("add_label", {"message_id": k, "label": "finance"}) for k in inbox if msgs[k]["from"].endswith("@" + dom)]
    if difficulty >= 2:
        work += [("archive", {"message_id": k}) for k in inbox if msgs[k]["subject"].startswith(prefix)]
    if difficulty == 3:
        work += [("add_label", {"message_id": k, "label": "urgent"}) for k in inbox if word in msgs[k]["body"]]
    turns += chunk(work)
    prompt = "Triage the inbox: " + "; ".join(rules) + ". Touch nothing else. Reply ok when finished."
    return Plan(prompt, {"messages": msgs}, turns, "ok", extra={"labels": ["finance", "urgent"]})


DOMAIN = register_domain(ApiDomain(ID, _tools, _plan, description=__doc__, result="state"))
