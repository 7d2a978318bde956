"""Encoding and normalisation domains: base64, hex, Luhn check digits, Roman numerals, Morse
code, number formatting, IPv4 subnets, URL parsing, phone normalisation, word frequencies.

Reference answers come from the standard library (base64, ipaddress, urllib) or a few lines
of arithmetic; list answers are scored per item with the count enforced.

Not covered: non-ASCII text, IPv6, internationalised URLs, non-NANP phone numbers.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import random
import re
from collections import Counter
from urllib.parse import parse_qsl, urlsplit

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain
from posttrain.verifiers.structured import (answer_text, json_field_score, parse_int, parse_json, parse_word_list,
                                            sequence_score, split_items)

WORDS = ["alpha", "beta", "gamma", "delta", "river", "cloud", "stone", "maple", "ember", "frost", "tide", "spark"]


class _Base:
    family = "text_data"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"
    id = ""

    def solve(self, task: Task) -> str:
        a = task.hidden["answer"]
        return "; ".join(map(str, a)) if isinstance(a, list) else str(a)

    def exact(self, task: Task, answer: str) -> Score:
        v = 1.0 if (answer_text(answer) or "").strip() == str(task.hidden["answer"]) else 0.0
        return Score(v, components={"exact": (v, 1.0)}, verifier_version=self.id)

    def items(self, task: Task, answer: str, pattern: str) -> Score:
        """Per-item credit; every item must match ``pattern`` (so stray text voids the answer)."""
        got = split_items(answer_text(answer), ";")
        if got is not None and not all(re.fullmatch(pattern, g) for g in got):
            got = None
        v = sequence_score(got, [str(x) for x in task.hidden["answer"]])
        return Score(v, components={"items": (v, 1.0)}, verifier_version=self.id)


def _phrase(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


@register_domain
class Base64(_Base):
    """Base64-encode or -decode ASCII text (standard alphabet, with padding).

    Exact. Not covered: URL-safe alphabet, binary payloads. Probes: the input unchanged,
    the encoding without padding (when it has any), hex instead of base64.
    """

    id = "text_data.base64-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        text = _phrase(rng, difficulty + 1)
        enc = base64.b64encode(text.encode()).decode()
        decode = difficulty >= 2 and rng.random() < 0.5
        given, ans = (enc, text) if decode else (text, enc)
        prompt = f"{'Decode this base64' if decode else 'Base64-encode this ASCII text'}: {given}\nAnswer with the result only."
        probes = {"unchanged": given, "unpadded": ans.rstrip("="), "hex": text.encode().hex()}
        return make_task(self.id, difficulty, prompt, answer=ans,
                         hidden={"probes": {k: v for k, v in probes.items() if v != ans}})

    def score(self, task: Task, answer: str) -> Score:
        return self.exact(task, answer)

    def probes(self, task: Task) -> dict[str, str]:
        return dict(task.hidden["probes"])


@register_domain
class HexEncode(_Base):
    """Hex-encode ASCII text (lowercase, two digits per byte, no separators).

    Exact (case-insensitive hex digits). Not covered: other encodings. Probes: decimal byte
    values, upper-case text encoded byte-reversed.
    """

    id = "text_data.hex_encode-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        text = _phrase(rng, difficulty)
        prompt = f"Hex-encode the ASCII bytes of \"{text}\" (two lowercase hex digits per byte, no spaces). Answer only the hex."
        return make_task(self.id, difficulty, prompt, answer=text.encode().hex(), public={"text": text})

    def score(self, task: Task, answer: str) -> Score:
        got = (answer_text(answer) or "").strip().lower()
        v = 1.0 if got == task.hidden["answer"] else 0.0
        return Score(v, components={"exact": (v, 1.0)}, verifier_version=self.id)

    def probes(self, task: Task) -> dict[str, str]:
        b = task.public["text"].encode()
        return {"decimal": " ".join(str(x) for x in b), "reversed": b[::-1].hex()}


def luhn_digit(payload: str) -> int:
    total = 0
    for i, ch in enumerate(reversed(payload)):
        d = int(ch) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return (10 - total % 10) % 10


@register_domain
class LuhnDigit(_Base):
    """Compute the Luhn check digit to append to a number.

    Exact digit. Not covered: validating whole numbers. Probes: digit sum mod 10 without
    doubling, doubling from the wrong end (when different).
    """

    id = "text_data.luhn_digit-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        payload = "".join(str(rng.randint(0, 9)) for _ in range(4 + 4 * difficulty))
        ans = luhn_digit(payload)
        naive = (10 - sum(map(int, payload)) % 10) % 10
        wrong_end = luhn_digit(payload + "0")  # doubles the other positions
        prompt = (f"What Luhn check digit should be appended to {payload}? (Double every second digit starting from the "
                  "rightmost digit of the payload.) Answer with one digit.")
        return make_task(self.id, difficulty, prompt, answer=ans, hidden={"wrong": {"naive": naive, "wrong_end": wrong_end}})

    def score(self, task: Task, answer: str) -> Score:
        v = 1.0 if parse_int(answer) == task.hidden["answer"] else 0.0
        return Score(v, components={"exact": (v, 1.0)}, verifier_version=self.id)

    def probes(self, task: Task) -> dict[str, str]:
        a = task.hidden["answer"]
        out = {k: str(v) for k, v in task.hidden["wrong"].items() if v != a}
        out["next_digit"] = str((a + 1) % 10)
        return out


ROMAN = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"), (10, "X"),
         (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


def to_roman(n: int, subtractive: bool = True) -> str:
    out = ""
    for v, s in ROMAN:
        if not subtractive and len(s) == 2:
            continue
        while n >= v:
            out, n = out + s, n - v
    return out


@register_domain
class Roman(_Base):
    """Convert integers to Roman numerals (standard subtractive form) or back.

    Partial credit per item (count enforced). Not covered: numbers above 3999.
    Probes: additive-only numerals (IIII), the inputs unchanged.
    """

    id = "text_data.roman-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        nums = [rng.randint(1, [50, 500, 3999][difficulty - 1]) for _ in range(2 + difficulty)]
        to_int = difficulty > 1 and rng.random() < 0.5
        given = [to_roman(n) for n in nums] if to_int else [str(n) for n in nums]
        ans = [str(n) for n in nums] if to_int else [to_roman(n) for n in nums]
        what = "Roman numerals to integers" if to_int else "integers to Roman numerals"
        prompt = f"Convert these {what}: {'; '.join(given)}\nAnswer in order, separated by '; ', nothing else."
        add = [to_roman(n, False) for n in nums]
        return make_task(self.id, difficulty, prompt, answer=ans, public={"given": given},
                         hidden={"additive": add if not to_int and all(a != b for a, b in zip(add, ans)) else None})

    def score(self, task: Task, answer: str) -> Score:
        v = sequence_score(parse_word_list(answer, ";", lower=False), task.hidden["answer"])
        return Score(v, components={"items": (v, 1.0)}, verifier_version=self.id)

    def probes(self, task: Task) -> dict[str, str]:
        out = {"unchanged": "; ".join(task.public["given"])}
        if task.hidden["additive"]:
            out["additive"] = "; ".join(task.hidden["additive"])
        return out


MORSE = dict(zip("abcdefghijklmnopqrstuvwxyz", ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - "
                 "..- ...- .-- -..- -.-- --..".split()))


@register_domain
class Morse(_Base):
    """Encode text to Morse code (letters separated by spaces, words by ' / ') or decode it.

    Exact (whitespace-normalised). Not covered: digits and punctuation.
    Probes: dots and dashes swapped, the input unchanged.
    """

    id = "text_data.morse-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        text = _phrase(rng, difficulty)
        code = " / ".join(" ".join(MORSE[c] for c in w) for w in text.split())
        decode = difficulty > 1 and rng.random() < 0.5
        given, ans = (code, text) if decode else (text, code)
        prompt = (f"{'Decode this Morse code' if decode else 'Encode in Morse code'} (letters separated by one space, "
                  f"words by ' / '): {given}\nAnswer with the result only{', in lowercase' if decode else ''}.")
        swapped = code.translate(str.maketrans(".-", "-."))
        return make_task(self.id, difficulty, prompt, answer=ans, public={"given": given},
                         hidden={"swapped": swapped if not decode else None})

    def score(self, task: Task, answer: str) -> Score:
        got = " ".join((answer_text(answer) or "").split()).lower()
        v = 1.0 if got == task.hidden["answer"] else 0.0
        return Score(v, components={"exact": (v, 1.0)}, verifier_version=self.id)

    def probes(self, task: Task) -> dict[str, str]:
        out = {"unchanged": task.public["given"]}
        if task.hidden["swapped"] and task.hidden["swapped"] != task.hidden["answer"]:
            out["swapped"] = task.hidden["swapped"]
        return out


@register_domain
class NumberFormat(_Base):
    """Format numbers with comma thousands separators and exactly two decimals (half-up).

    Partial credit per number (count enforced). Not covered: locales, currency symbols.
    Probes: the raw numbers, no thousands separators.
    """

    id = "text_data.number_format-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        nums = [rng.randint(0, 10 ** (3 + 2 * difficulty)) * 10 + rng.choice([1, 3, 7, 9]) for _ in range(2 + difficulty)]
        raw = [f"{n // 1000}.{n % 1000:03d}" for n in nums]  # three decimals, never a rounding tie
        ans = [f"{round(n / 1000, 2):,.2f}" for n in nums]
        prompt = (f"Format each number with commas as thousands separators and exactly two decimal places: "
                  f"{'; '.join(raw)}\nAnswer in order, separated by '; ', nothing else.")
        return make_task(self.id, difficulty, prompt, answer=ans, public={"raw": raw})

    def score(self, task: Task, answer: str) -> Score:
        return self.items(task, answer, r"\d{1,3}(?:,\d{3})*\.\d{2}")

    def probes(self, task: Task) -> dict[str, str]:
        plain = [a.replace(",", "") for a in task.hidden["answer"]]
        out = {"raw": "; ".join(task.public["raw"])}
        if all(p != a for p, a in zip(plain, task.hidden["answer"])):
            out["no_separators"] = "; ".join(plain)
        return out


@register_domain
class Ipv4Subnet(_Base):
    """Network address, broadcast address, netmask and usable host count of an IPv4 CIDR.

    Partial credit per JSON field. Not covered: IPv6, /31 and /32 special cases.
    Probes: the address itself for every address field and hosts = 2^(32-prefix).
    """

    id = "text_data.ipv4_subnet-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        prefix = rng.choice([[24, 16, 8], [20, 22, 26, 27], [19, 21, 23, 25, 28, 29, 30]][difficulty - 1])
        ip = ipaddress.IPv4Address(rng.randrange(1 << 24, 223 << 24))
        net = ipaddress.IPv4Network(f"{ip}/{prefix}", strict=False)
        while ip in (net.network_address, net.broadcast_address):
            ip = ipaddress.IPv4Address(int(ip) + 1)
        ans = {"network": str(net.network_address), "broadcast": str(net.broadcast_address),
               "netmask": str(net.netmask), "hosts": net.num_addresses - 2}
        prompt = (f"For {ip}/{prefix}, give the network address, broadcast address, netmask and number of usable host "
                  'addresses as JSON: {"network": "...", "broadcast": "...", "netmask": "...", "hosts": N}. JSON only.')
        return make_task(self.id, difficulty, prompt, answer=ans, public={"ip": str(ip), "prefix": prefix})

    def solve(self, task: Task) -> str:
        return json.dumps(task.hidden["answer"])

    def score(self, task: Task, answer: str) -> Score:
        ok, got = parse_json(answer)
        v = json_field_score(got, task.hidden["answer"]) if ok and isinstance(got, dict) else 0.0
        return Score(v, components={"fields": (v, 1.0)}, verifier_version=self.id)

    def probes(self, task: Task) -> dict[str, str]:
        ip = task.public["ip"]
        return {"same_ip": json.dumps({"network": ip, "broadcast": ip, "netmask": "255.255.255.255",
                                       "hosts": 2 ** (32 - task.public["prefix"])})}


@register_domain
class UrlParse(_Base):
    """Split a URL into scheme, host, port, path and query parameters (JSON).

    Partial credit per JSON leaf (extra keys count against). Not covered: userinfo,
    fragments' semantics, percent-decoding. Probes: the whole URL as the host, fields swapped.
    """

    id = "text_data.url_parse-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
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
        return make_task(self.id, difficulty, prompt, answer=ans, public={"url": url})

    def solve(self, task: Task) -> str:
        return json.dumps(task.hidden["answer"])

    def score(self, task: Task, answer: str) -> Score:
        ok, got = parse_json(answer)
        v = json_field_score(got, task.hidden["answer"]) if ok and isinstance(got, dict) else 0.0
        return Score(v, components={"fields": (v, 1.0)}, verifier_version=self.id)

    def probes(self, task: Task) -> dict[str, str]:
        a = task.hidden["answer"]
        return {"url_as_host": json.dumps({"scheme": a["host"], "host": task.public["url"], "port": "x",
                                           "path": a["scheme"], "query": "x"})}


@register_domain
class PhoneNormalize(_Base):
    """Normalise US phone numbers written many ways to E.164 (+1XXXXXXXXXX).

    Partial credit per number (count enforced). Not covered: other countries, extensions.
    Probes: digits only without +1, the inputs unchanged.
    """

    id = "text_data.phone_normalize-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        nums = [f"{rng.randint(201, 989)}{rng.randint(200, 999)}{rng.randint(0, 9999):04d}" for _ in range(1 + 2 * difficulty)]
        styles = [lambda d: f"({d[:3]}) {d[3:6]}-{d[6:]}", lambda d: f"{d[:3]}-{d[3:6]}-{d[6:]}",
                  lambda d: f"{d[:3]}.{d[3:6]}.{d[6:]}", lambda d: f"+1 {d[:3]} {d[3:6]} {d[6:]}",
                  lambda d: f"1-{d[:3]}-{d[3:6]}-{d[6:]}"]
        given = [rng.choice(styles[: 2 + difficulty])(d) for d in nums]
        prompt = (f"Normalise these US phone numbers to E.164 format (+1 followed by 10 digits): {'; '.join(given)}\n"
                  "Answer in order, separated by '; ', nothing else.")
        return make_task(self.id, difficulty, prompt, answer=[f"+1{d}" for d in nums], public={"given": given})

    def score(self, task: Task, answer: str) -> Score:
        return self.items(task, answer, r"\+1\d{10}")

    def probes(self, task: Task) -> dict[str, str]:
        return {"digits_only": "; ".join(a[2:] for a in task.hidden["answer"]),
                "unchanged": "; ".join(task.public["given"])}


@register_domain
class WordFrequency(_Base):
    """Top-k most frequent words of a text with counts (ties broken alphabetically).

    Partial credit per line ``word: count`` (exactly k lines). Not covered: stemming,
    stop words. Probes: the first k distinct words with count 1, the top-k with counts off by one.
    """

    id = "text_data.word_frequency-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        vocab = rng.sample(WORDS, 4 + 2 * difficulty)
        weights = [rng.randint(1, 6) for _ in vocab]
        words = rng.choices(vocab, weights, k=10 + 8 * difficulty)
        k = 2 + difficulty
        top = sorted(Counter(words).items(), key=lambda x: (-x[1], x[0]))[:k]
        text = " ".join(w.title() if rng.random() < 0.2 else w for w in words)
        prompt = (f"Text: {text}\nList the {k} most frequent words (case-insensitive) with their counts, most frequent "
                  "first, ties alphabetical, one per line as `word: count`, nothing else.")
        return make_task(self.id, difficulty, prompt, answer=[f"{w}: {c}" for w, c in top], public={"k": k},
                         hidden={"first": list(dict.fromkeys(words))[:k]})

    def solve(self, task: Task) -> str:
        return "\n".join(task.hidden["answer"])

    def score(self, task: Task, answer: str) -> Score:
        t = answer_text(answer)
        got = None if t is None else [re.sub(r"\s*:\s*", ": ", ln.strip().lower()) for ln in t.strip().splitlines()]
        if got is not None and not all(re.fullmatch(r"[a-z]+: \d+", g) for g in got):
            got = None
        v = sequence_score(got, task.hidden["answer"])
        return Score(v, components={"lines": (v, 1.0)}, verifier_version=self.id)

    def probes(self, task: Task) -> dict[str, str]:
        exp = task.hidden["answer"]
        off = [f"{ln.split(': ')[0]}: {int(ln.split(': ')[1]) + 1}" for ln in exp]
        first = [f"{w}: 1" for w in task.hidden["first"]]
        return {"off_by_one": "\n".join(off), **({"first_words": "\n".join(first)}
                                                 if all(a != b for a, b in zip(first, exp)) else {})}
