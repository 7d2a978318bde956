"""Parsing and normalisation domains: number formatting, IPv4 subnets, URL parsing, phone
normalisation, word frequencies.

Reference answers come from the standard library (ipaddress, urllib) or a few lines of
arithmetic; list answers are scored per item with the count enforced
(:func:`._kit.items_score`), JSON answers field by field.

Not covered: IPv6, internationalised URLs, non-NANP phone numbers, locales.
"""

from __future__ import annotations

import ipaddress
import json
import random
import re
from collections import Counter
from urllib.parse import parse_qsl, urlsplit

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.domains.text_data import _kit as K
from posttrain.domains.text_data.encodings import WORDS
from posttrain.verifiers.structured import answer_text, json_field_score, parse_json, sequence_score

_REFERENCE = K.joined_answer("; ")  # a list answer: its items joined


def _json_fields_check(task: Task, answer: str) -> Score:
    """Partial credit per JSON leaf of ``hidden["answer"]`` (extra keys count against)."""
    ok, got = parse_json(answer)
    v = json_field_score(got, task.hidden["answer"]) if ok and isinstance(got, dict) else 0.0
    return Score(v, components={"fields": (v, 1.0)}, verifier_version=task.domain)


ID_NUMBER_FORMAT = "text_data.number_format-v1"
DOC_NUMBER_FORMAT = """Format numbers with comma thousands separators and exactly two decimals (half-up).

Partial credit per number (count enforced). Not covered: locales, currency symbols.
Probes: the raw numbers, no thousands separators.
"""


def _number_format_draw(rng: random.Random, difficulty: int) -> Draft:
    nums = [rng.randint(0, 10 ** (3 + 2 * difficulty)) * 10 + rng.choice([1, 3, 7, 9]) for _ in range(2 + difficulty)]
    raw = [f"{n // 1000}.{n % 1000:03d}" for n in nums]  # three decimals, never a rounding tie
    ans = [f"{round(n / 1000, 2):,.2f}" for n in nums]
    prompt = (f"Format each number with commas as thousands separators and exactly two decimal places: "
              f"{'; '.join(raw)}\nAnswer in order, separated by '; ', nothing else.")
    return Draft(prompt, answer=ans, public={"raw": raw})


def _number_format_check(task: Task, answer: str) -> Score:
    return K.items_score(task, answer, r"\d{1,3}(?:,\d{3})*\.\d{2}")


def _number_format_probes(task: Task) -> dict[str, str]:
    plain = [a.replace(",", "") for a in task.hidden["answer"]]
    out = {"raw": "; ".join(task.public["raw"])}
    if all(p != a for p, a in zip(plain, task.hidden["answer"])):
        out["no_separators"] = "; ".join(plain)
    return out


register_domain(SingleTurnDomain(
    ID_NUMBER_FORMAT, _number_format_draw, _number_format_check, _number_format_probes,
    reference=_REFERENCE, description=DOC_NUMBER_FORMAT))


ID_IPV4_SUBNET = "text_data.ipv4_subnet-v1"
DOC_IPV4_SUBNET = """Network address, broadcast address, netmask and usable host count of an IPv4 CIDR.

Partial credit per JSON field. Not covered: IPv6, /31 and /32 special cases.
Probes: the address itself for every address field and hosts = 2^(32-prefix).
"""


def _ipv4_subnet_draw(rng: random.Random, difficulty: int) -> Draft:
    prefix = rng.choice([[24, 16, 8], [20, 22, 26, 27], [19, 21, 23, 25, 28, 29, 30]][difficulty - 1])
    ip = ipaddress.IPv4Address(rng.randrange(1 << 24, 223 << 24))
    net = ipaddress.IPv4Network(f"{ip}/{prefix}", strict=False)
    while ip in (net.network_address, net.broadcast_address):
        ip = ipaddress.IPv4Address(int(ip) + 1)
    ans = {"network": str(net.network_address), "broadcast": str(net.broadcast_address),
           "netmask": str(net.netmask), "hosts": net.num_addresses - 2}
    prompt = (f"For {ip}/{prefix}, give the network address, broadcast address, netmask and number of usable host "
              'addresses as JSON: {"network": "...", "broadcast": "...", "netmask": "...", "hosts": N}. JSON only.')
    return Draft(prompt, answer=ans, public={"ip": str(ip), "prefix": prefix})


def _ipv4_subnet_probes(task: Task) -> dict[str, str]:
    ip = task.public["ip"]
    return {"same_ip": json.dumps({"network": ip, "broadcast": ip, "netmask": "255.255.255.255",
                                   "hosts": 2 ** (32 - task.public["prefix"])})}


register_domain(SingleTurnDomain(
    ID_IPV4_SUBNET, _ipv4_subnet_draw, _json_fields_check, _ipv4_subnet_probes,
    reference=K.json_answer, description=DOC_IPV4_SUBNET))


ID_URL_PARSE = "text_data.url_parse-v1"
DOC_URL_PARSE = """Split a URL into scheme, host, port, path and query parameters (JSON).

Partial credit per JSON leaf (extra keys count against). Not covered: userinfo,
fragments' semantics, percent-decoding. Probes: the whole URL as the host, fields swapped.
"""


def _url_parse_draw(rng: random.Random, difficulty: int) -> Draft:
    host = f"{rng.choice(WORDS)}.{rng.choice(['com', 'org', 'io'])}"
    port = rng.choice([80, 443, 8080, 5000]) if difficulty > 1 else None
    path = "/" + "/".join(rng.choice(WORDS) for _ in range(difficulty))
    q = {rng.choice(WORDS) + str(i): str(rng.randint(1, 99)) for i in range(difficulty)}
    url = (f"{rng.choice(['http', 'https'])}://{host}" + (f":{port}" if port else "") + path
           + ("?" + "&".join(f"{k}={v}" for k, v in q.items()) if q else ""))
    parts = urlsplit(url)
    ans = {"scheme": parts.scheme, "host": parts.hostname, "port": parts.port, "path": parts.path,
           "query": dict(parse_qsl(parts.query))}
    prompt = (f"Parse {url}\nAnswer as JSON with keys scheme, host, port (an integer, or null if absent), path, and "
              "query (an object of parameter names to string values). JSON only.")
    return Draft(prompt, answer=ans, public={"url": url})


def _url_parse_probes(task: Task) -> dict[str, str]:
    a = task.hidden["answer"]
    return {"url_as_host": json.dumps({"scheme": a["host"], "host": task.public["url"], "port": "x",
                                       "path": a["scheme"], "query": "x"})}


register_domain(SingleTurnDomain(
    ID_URL_PARSE, _url_parse_draw, _json_fields_check, _url_parse_probes,
    reference=K.json_answer, description=DOC_URL_PARSE))


ID_PHONE_NORMALIZE = "text_data.phone_normalize-v1"
DOC_PHONE_NORMALIZE = """Normalise US phone numbers written many ways to E.164 (+1XXXXXXXXXX).

Partial credit per number (count enforced). Not covered: other countries, extensions.
Probes: digits only without +1, the inputs unchanged.
"""


def _phone_normalize_draw(rng: random.Random, difficulty: int) -> Draft:
    nums = [f"{rng.randint(201, 989)}{rng.randint(200, 999)}{rng.randint(0, 9999):04d}" for _ in range(1 + 2 * difficulty)]
    styles = [lambda d: f"({d[:3]}) {d[3:6]}-{d[6:]}", lambda d: f"{d[:3]}-{d[3:6]}-{d[6:]}",
              lambda d: f"{d[:3]}.{d[3:6]}.{d[6:]}", lambda d: f"+1 {d[:3]} {d[3:6]} {d[6:]}",
              lambda d: f"1-{d[:3]}-{d[3:6]}-{d[6:]}"]
    given = [rng.choice(styles[: 2 + difficulty])(d) for d in nums]
    prompt = (f"Normalise these US phone numbers to E.164 format (+1 followed by 10 digits): {'; '.join(given)}\n"
              "Answer in order, separated by '; ', nothing else.")
    return Draft(prompt, answer=[f"+1{d}" for d in nums], public={"given": given})


def _phone_normalize_check(task: Task, answer: str) -> Score:
    return K.items_score(task, answer, r"\+1\d{10}")


def _phone_normalize_probes(task: Task) -> dict[str, str]:
    return {"digits_only": "; ".join(a[2:] for a in task.hidden["answer"]),
            "unchanged": "; ".join(task.public["given"])}


register_domain(SingleTurnDomain(
    ID_PHONE_NORMALIZE, _phone_normalize_draw, _phone_normalize_check, _phone_normalize_probes,
    reference=_REFERENCE, description=DOC_PHONE_NORMALIZE))


ID_WORD_FREQUENCY = "text_data.word_frequency-v1"
DOC_WORD_FREQUENCY = """Top-k most frequent words of a text with counts (ties broken alphabetically).

Partial credit per line ``word: count`` (exactly k lines). Not covered: stemming,
stop words. Probes: the first k distinct words with count 1, the top-k with counts off by one.
"""


def _word_frequency_draw(rng: random.Random, difficulty: int) -> Draft:
    vocab = rng.sample(WORDS, 4 + 2 * difficulty)
    weights = [rng.randint(1, 6) for _ in vocab]
    words = rng.choices(vocab, weights, k=10 + 8 * difficulty)
    k = 2 + difficulty
    top = sorted(Counter(words).items(), key=lambda x: (-x[1], x[0]))[:k]
    text = " ".join(w.title() if rng.random() < 0.2 else w for w in words)
    prompt = (f"Text: {text}\nList the {k} most frequent words (case-insensitive) with their counts, most frequent "
              "first, ties alphabetical, one per line as `word: count`, nothing else.")
    return Draft(prompt, answer=[f"{w}: {c}" for w, c in top], public={"k": k},
                 hidden={"first": list(dict.fromkeys(words))[:k]})


def _word_frequency_reference(task: Task) -> str:
    return "\n".join(task.hidden["answer"])


def _word_frequency_check(task: Task, answer: str) -> Score:
    t = answer_text(answer)
    got = None if t is None else [re.sub(r"\s*:\s*", ": ", ln.strip().lower()) for ln in t.strip().splitlines()]
    if got is not None and not all(re.fullmatch(r"[a-z]+: \d+", g) for g in got):
        got = None
    v = sequence_score(got, task.hidden["answer"])
    return Score(v, components={"lines": (v, 1.0)}, verifier_version=task.domain)


def _word_frequency_probes(task: Task) -> dict[str, str]:
    exp = task.hidden["answer"]
    off = [f"{ln.split(': ')[0]}: {int(ln.split(': ')[1]) + 1}" for ln in exp]
    first = [f"{w}: 1" for w in task.hidden["first"]]
    return {"off_by_one": "\n".join(off), **({"first_words": "\n".join(first)}
                                             if all(a != b for a, b in zip(first, exp)) else {})}


register_domain(SingleTurnDomain(
    ID_WORD_FREQUENCY, _word_frequency_draw, _word_frequency_check, _word_frequency_probes,
    reference=_word_frequency_reference, description=DOC_WORD_FREQUENCY))
