"""Encoding domains: base64, hex, Luhn check digits, Roman numerals, Morse code.

Reference answers come from the standard library (base64) or a few lines of arithmetic; list
answers are scored per item with the count enforced (:func:`._kit.items_score`).

Not covered: non-ASCII text, other alphabets. Parsing and normalisation domains (numbers,
IPv4 subnets, URLs, phone numbers, word frequencies) are in :mod:`.parsing`.
"""

from __future__ import annotations

import base64
import random

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.domains.text_data import _kit as K
from posttrain.verifiers.structured import answer_text, parse_int, parse_word_list, sequence_score

WORDS = ["alpha", "beta", "gamma", "delta", "river", "cloud", "stone", "maple", "ember", "frost", "tide", "spark"]


def _phrase(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))

_REFERENCE = K.joined_answer("; ")  # a list answer: its items joined


ID_BASE64 = "text_data.base64-v1"
DOC_BASE64 = """Base64-encode or -decode ASCII text (standard alphabet, with padding).

Exact. Not covered: URL-safe alphabet, binary payloads. Probes: the input unchanged,
the encoding without padding (when it has any), hex instead of base64.
"""


def _base64_draw(rng: random.Random, difficulty: int) -> Draft:
    text = _phrase(rng, difficulty + 1)
    enc = base64.b64encode(text.encode()).decode()
    decode = difficulty >= 2 and rng.random() < 0.5
    given, ans = (enc, text) if decode else (text, enc)
    prompt = f"{'Decode this base64' if decode else 'Base64-encode this ASCII text'}: {given}\nAnswer with the result only."
    probes = {"unchanged": given, "unpadded": ans.rstrip("="), "hex": text.encode().hex()}
    return Draft(prompt, answer=ans,
                 hidden={"probes": {k: v for k, v in probes.items() if v != ans}})


def _base64_probes(task: Task) -> dict[str, str]:
    return dict(task.hidden["probes"])


register_domain(SingleTurnDomain(
    ID_BASE64, _base64_draw, K.exact_text, _base64_probes, reference=_REFERENCE, description=DOC_BASE64))


ID_HEX_ENCODE = "text_data.hex_encode-v1"
DOC_HEX_ENCODE = """Hex-encode ASCII text (lowercase, two digits per byte, no separators).

Exact (case-insensitive hex digits). Not covered: other encodings. Probes: decimal byte
values, upper-case text encoded byte-reversed.
"""


def _hex_encode_draw(rng: random.Random, difficulty: int) -> Draft:
    text = _phrase(rng, difficulty)
    prompt = f"Hex-encode the ASCII bytes of \"{text}\" (two lowercase hex digits per byte, no spaces). Answer only the hex."
    return Draft(prompt, answer=text.encode().hex(), public={"text": text})


def _hex_encode_check(task: Task, answer: str) -> Score:
    got = (answer_text(answer) or "").strip().lower()
    v = 1.0 if got == task.hidden["answer"] else 0.0
    return Score(v, components={"exact": (v, 1.0)}, verifier_version=task.domain)


def _hex_encode_probes(task: Task) -> dict[str, str]:
    b = task.public["text"].encode()
    return {"decimal": " ".join(str(x) for x in b), "reversed": b[::-1].hex()}


register_domain(SingleTurnDomain(
    ID_HEX_ENCODE, _hex_encode_draw, _hex_encode_check, _hex_encode_probes,
    reference=_REFERENCE, description=DOC_HEX_ENCODE))


def luhn_digit(payload: str) -> int:
    total = 0
    for i, ch in enumerate(reversed(payload)):
        d = int(ch) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return (10 - total % 10) % 10


ID_LUHN_DIGIT = "text_data.luhn_digit-v1"
DOC_LUHN_DIGIT = """Compute the Luhn check digit to append to a number.

Exact digit. Not covered: validating whole numbers. Probes: digit sum mod 10 without
doubling, doubling from the wrong end (when different).
"""


def _luhn_digit_draw(rng: random.Random, difficulty: int) -> Draft:
    payload = "".join(str(rng.randint(0, 9)) for _ in range(4 + 4 * difficulty))
    ans = luhn_digit(payload)
    naive = (10 - sum(map(int, payload)) % 10) % 10
    wrong_end = luhn_digit(payload + "0")  # doubles the other positions
    prompt = (f"What Luhn check digit should be appended to {payload}? (Double every second digit starting from the "
              "rightmost digit of the payload.) Answer with one digit.")
    return Draft(prompt, answer=ans, hidden={"wrong": {"naive": naive, "wrong_end": wrong_end}})


def _luhn_digit_check(task: Task, answer: str) -> Score:
    v = 1.0 if parse_int(answer) == task.hidden["answer"] else 0.0
    return Score(v, components={"exact": (v, 1.0)}, verifier_version=task.domain)


def _luhn_digit_probes(task: Task) -> dict[str, str]:
    a = task.hidden["answer"]
    out = {k: str(v) for k, v in task.hidden["wrong"].items() if v != a}
    out["next_digit"] = str((a + 1) % 10)
    return out


register_domain(SingleTurnDomain(
    ID_LUHN_DIGIT, _luhn_digit_draw, _luhn_digit_check, _luhn_digit_probes,
    reference=_REFERENCE, description=DOC_LUHN_DIGIT))


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


ID_ROMAN = "text_data.roman-v1"
DOC_ROMAN = """Convert integers to Roman numerals (standard subtractive form) or back.

Partial credit per item (count enforced). Not covered: numbers above 3999.
Probes: additive-only numerals (IIII), the inputs unchanged.
"""


def _roman_draw(rng: random.Random, difficulty: int) -> Draft:
    nums = [rng.randint(1, [50, 500, 3999][difficulty - 1]) for _ in range(2 + difficulty)]
    to_int = difficulty > 1 and rng.random() < 0.5
    given = [to_roman(n) for n in nums] if to_int else [str(n) for n in nums]
    ans = [str(n) for n in nums] if to_int else [to_roman(n) for n in nums]
    what = "Roman numerals to integers" if to_int else "integers to Roman numerals"
    prompt = f"Convert these {what}: {'; '.join(given)}\nAnswer in order, separated by '; ', nothing else."
    add = [to_roman(n, False) for n in nums]
    return Draft(prompt, answer=ans, public={"given": given},
                 hidden={"additive": add if not to_int and all(a != b for a, b in zip(add, ans)) else None})


def _roman_check(task: Task, answer: str) -> Score:
    v = sequence_score(parse_word_list(answer, ";", lower=False), task.hidden["answer"])
    return Score(v, components={"items": (v, 1.0)}, verifier_version=task.domain)


def _roman_probes(task: Task) -> dict[str, str]:
    out = {"unchanged": "; ".join(task.public["given"])}
    if task.hidden["additive"]:
        out["additive"] = "; ".join(task.hidden["additive"])
    return out


register_domain(SingleTurnDomain(
    ID_ROMAN, _roman_draw, _roman_check, _roman_probes, reference=_REFERENCE, description=DOC_ROMAN))


MORSE = dict(zip("abcdefghijklmnopqrstuvwxyz", ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - "
                 "..- ...- .-- -..- -.-- --..".split()))


ID_MORSE = "text_data.morse-v1"
DOC_MORSE = """Encode text to Morse code (letters separated by spaces, words by ' / ') or decode it.

Exact (whitespace-normalised). Not covered: digits and punctuation.
Probes: dots and dashes swapped, the input unchanged.
"""


def _morse_draw(rng: random.Random, difficulty: int) -> Draft:
    text = _phrase(rng, difficulty)
    code = " / ".join(" ".join(MORSE[c] for c in w) for w in text.split())
    decode = difficulty > 1 and rng.random() < 0.5
    given, ans = (code, text) if decode else (text, code)
    prompt = (f"{'Decode this Morse code' if decode else 'Encode in Morse code'} (letters separated by one space, "
              f"words by ' / '): {given}\nAnswer with the result only{', in lowercase' if decode else ''}.")
    swapped = code.translate(str.maketrans(".-", "-."))
    return Draft(prompt, answer=ans, public={"given": given},
                 hidden={"swapped": swapped if not decode else None})


def _morse_check(task: Task, answer: str) -> Score:
    got = " ".join((answer_text(answer) or "").split()).lower()
    v = 1.0 if got == task.hidden["answer"] else 0.0
    return Score(v, components={"exact": (v, 1.0)}, verifier_version=task.domain)


def _morse_probes(task: Task) -> dict[str, str]:
    out = {"unchanged": task.public["given"]}
    if task.hidden["swapped"] and task.hidden["swapped"] != task.hidden["answer"]:
        out["swapped"] = task.hidden["swapped"]
    return out


register_domain(SingleTurnDomain(
    ID_MORSE, _morse_draw, _morse_check, _morse_probes, reference=_REFERENCE, description=DOC_MORSE))
