"""String-transform domains: identifier case conversion, Caesar and Vigenère ciphers, anagram
checks, letter counts, longest palindromic substring, greedy word wrap, run-length encoding.

Exact answers unless each item of a list is independently checkable (then per item, with
the item count enforced).

Not covered: Unicode normalisation, locale-aware casing.
"""

from __future__ import annotations

import random
import re
import string

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.domains.text_data import _kit as K
from posttrain.verifiers.structured import (answer_text, baseline_corrected_score, parse_int, parse_word_list,
                                            sequence_score)

WORDS = ["user", "id", "max", "count", "http", "request", "parse", "json", "file", "name", "total", "price",
         "get", "set", "value", "index", "data", "list", "time", "zone", "retry", "limit", "cache", "key"]
TEXT_WORDS = ["the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "river", "stone", "light", "green",
              "paper", "house", "music", "quiet", "storm", "apple", "table", "dream"]
STYLES = {"snake_case": lambda w: "_".join(w), "camelCase": lambda w: w[0] + "".join(x.title() for x in w[1:]),
          "PascalCase": lambda w: "".join(x.title() for x in w), "kebab-case": lambda w: "-".join(w),
          "SCREAMING_SNAKE_CASE": lambda w: "_".join(w).upper()}

_REFERENCE = K.joined_answer(", ")  # a list answer: its items joined


ID_CASE_CONVERT = "text_data.case_convert-v1"
DOC_CASE_CONVERT = """Convert identifiers between snake_case, camelCase, PascalCase, kebab-case and SCREAMING_SNAKE_CASE.

Partial credit per identifier (count enforced). Not covered: acronyms (HTTPServer).
Probes: the identifiers unchanged, all lower-cased.
"""


def _case_convert_draw(rng: random.Random, difficulty: int) -> Draft:
    src, dst = rng.sample(list(STYLES), 2)
    ids = [rng.sample(WORDS, rng.randint(2, 1 + difficulty + (difficulty > 1))) for _ in range(1 + 2 * difficulty)]
    items = [STYLES[src](w) for w in ids]
    prompt = (f"Convert these {src} identifiers to {dst}: {', '.join(items)}\nAnswer with the converted identifiers "
              "in order, comma-separated, nothing else.")
    return Draft(prompt, answer=[STYLES[dst](w) for w in ids], public={"items": items})


def _case_convert_check(task: Task, answer: str) -> Score:
    v = sequence_score(parse_word_list(answer, lower=False), task.hidden["answer"])
    return Score(v, components={"identifiers": (v, 1.0)}, verifier_version=task.domain)


def _case_convert_probes(task: Task) -> dict[str, str]:
    items = task.public["items"]
    out = {"unchanged": items, "lowercased": [i.lower() for i in items]}
    return {k: ", ".join(v) for k, v in out.items() if all(a != b for a, b in zip(v, task.hidden["answer"]))}


register_domain(SingleTurnDomain(
    ID_CASE_CONVERT, _case_convert_draw, _case_convert_check, _case_convert_probes,
    reference=_REFERENCE, description=DOC_CASE_CONVERT))


def shift(text: str, k: int) -> str:
    return "".join(chr((ord(c) - 97 + k) % 26 + 97) if c.islower() else c for c in text)


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(TEXT_WORDS) for _ in range(n))


ID_CAESAR = "text_data.caesar-v1"
DOC_CAESAR = """Caesar-shift a lowercase sentence (encode or decode); spaces stay.

Exact. Not covered: upper case, punctuation. Probes: the shift applied the wrong way,
the text unchanged.
"""


def _caesar_draw(rng: random.Random, difficulty: int) -> Draft:
    k = rng.randint(1, 25)
    while k == 13:
        k = rng.randint(1, 25)
    plain = _sentence(rng, 2 + difficulty)
    decode = difficulty > 1 and rng.random() < 0.5
    given, ans = (shift(plain, k), plain) if decode else (plain, shift(plain, k))
    verb = "Decode (shift each letter back by" if decode else "Encode (shift each letter forward by"
    prompt = (f"{verb} {k} positions in the alphabet, wrapping z to a; keep spaces): {given}\n"
              "Answer with the resulting text only.")
    wrong = shift(given, -k if not decode else k)
    return Draft(prompt, answer=ans, public={"given": given}, hidden={"wrong_way": wrong})


def _caesar_check(task: Task, answer: str) -> Score:
    return K.exact_text(task, answer, strip_case=True)


def _caesar_probes(task: Task) -> dict[str, str]:
    return {"wrong_way": task.hidden["wrong_way"], "unchanged": task.public["given"]}


register_domain(SingleTurnDomain(
    ID_CAESAR, _caesar_draw, _caesar_check, _caesar_probes, reference=_REFERENCE, description=DOC_CAESAR))


def vigenere(text: str, key: str, sign: int = 1) -> str:
    out, i = [], 0
    for c in text:
        if c.islower():
            out.append(shift(c, sign * (ord(key[i % len(key)]) - 97)))
            i += 1
        else:
            out.append(c)
    return "".join(out)


ID_VIGENERE = "text_data.vigenere-v1"
DOC_VIGENERE = """Vigenère-encrypt a lowercase sentence with a keyword (key advances on letters only).

Exact. Not covered: decryption without the key. Probes: decryption instead of
encryption, the key advancing on spaces too.
"""


def _vigenere_draw(rng: random.Random, difficulty: int) -> Draft:
    key = "".join(rng.choice(string.ascii_lowercase[1:]) for _ in range(2 + difficulty))
    plain = _sentence(rng, 1 + difficulty)
    ans = vigenere(plain, key)
    spaced = "".join(shift(c, ord(key[i % len(key)]) - 97) if c != " " else c for i, c in enumerate(plain))
    prompt = (f"Encrypt with the Vigenère cipher, key \"{key}\" (a=0 ... z=25; the key advances only on letters; "
              f"spaces are kept): {plain}\nAnswer with the ciphertext only.")
    return Draft(prompt, answer=ans, hidden={
                 "decrypt": vigenere(plain, key, -1), "spaced": spaced})


def _vigenere_check(task: Task, answer: str) -> Score:
    return K.exact_text(task, answer, strip_case=True)


def _vigenere_probes(task: Task) -> dict[str, str]:
    out = {"decrypted": task.hidden["decrypt"]}
    if task.hidden["spaced"] != task.hidden["answer"]:
        out["key_on_spaces"] = task.hidden["spaced"]
    return out


register_domain(SingleTurnDomain(
    ID_VIGENERE, _vigenere_draw, _vigenere_check, _vigenere_probes, reference=_REFERENCE, description=DOC_VIGENERE))


ID_ANAGRAMS = "text_data.anagrams-v1"
DOC_ANAGRAMS = """Decide for each word pair whether the words are anagrams.

Partial credit: accuracy above the majority-answer baseline (all pairs answered).
Not covered: multi-word anagrams. Probes: all yes, all no, every answer flipped.
"""


def _anagrams_draw(rng: random.Random, difficulty: int) -> Draft:
    pairs, ans = [], []
    for i in range(2 + 2 * difficulty):
        w = "".join(rng.choice("aeilnorst") for _ in range(3 + difficulty))
        yes = i % 2 == 0
        if yes:
            v = "".join(rng.sample(w, len(w)))
        else:
            v = list(rng.sample(w, len(w)))
            v[rng.randrange(len(v))] = rng.choice("bcdfgm")
            v = "".join(v)
        pairs.append((w, v))
        ans.append("yes" if sorted(w) == sorted(v) else "no")
    order = rng.sample(range(len(pairs)), len(pairs))
    pairs, ans = [pairs[i] for i in order], [ans[i] for i in order]
    prompt = ("For each pair, are the two words anagrams of each other (same letters, same counts)?\n"
              + "\n".join(f"{a} / {b}" for a, b in pairs) + "\nAnswer yes or no for each pair in order, "
              "comma-separated, nothing else.")
    return Draft(prompt, answer=ans)


def _anagrams_check(task: Task, answer: str) -> Score:
    got = parse_word_list(answer)
    got = got if got is None or set(got) <= {"yes", "no"} else None
    v = baseline_corrected_score(got, task.hidden["answer"])
    return Score(v, components={"pairs": (v, 1.0)}, verifier_version=task.domain)


def _anagrams_probes(task: Task) -> dict[str, str]:
    a = task.hidden["answer"]
    return {"all_yes": ", ".join(["yes"] * len(a)), "all_no": ", ".join(["no"] * len(a)),
            "flipped": ", ".join("no" if x == "yes" else "yes" for x in a)}


register_domain(SingleTurnDomain(
    ID_ANAGRAMS, _anagrams_draw, _anagrams_check, _anagrams_probes, reference=_REFERENCE, description=DOC_ANAGRAMS))


ID_LETTER_COUNT = "text_data.letter_count-v1"
DOC_LETTER_COUNT = """Count occurrences of a letter in a sentence, case-insensitively.

Exact integer. Not covered: substrings. Probes: the case-sensitive count (when it
differs), the number of words containing the letter (when it differs), off-by-one.
"""


def _letter_count_draw(rng: random.Random, difficulty: int) -> Draft:
    words = [w.title() if rng.random() < 0.3 else w for w in (rng.choice(TEXT_WORDS) for _ in range(3 + 3 * difficulty))]
    text = " ".join(words)
    letter = rng.choice(sorted(set(text.lower()) - {" "}))
    ans = text.lower().count(letter)
    prompt = (f"How many times does the letter \"{letter}\" occur in: \"{text}\" (upper or lower case)? "
              "Answer with one integer.")
    return Draft(prompt, answer=ans, hidden={
                 "case_sensitive": text.count(letter), "words": sum(letter in w.lower() for w in words)})


def _letter_count_check(task: Task, answer: str) -> Score:
    v = 1.0 if parse_int(answer) == task.hidden["answer"] else 0.0
    return Score(v, components={"exact": (v, 1.0)}, verifier_version=task.domain)


def _letter_count_probes(task: Task) -> dict[str, str]:
    a, h = task.hidden["answer"], task.hidden
    cands = {"plus_one": a + 1, "case_sensitive": h["case_sensitive"], "word_count": h["words"]}
    return {k: str(v) for k, v in cands.items() if v != a}


register_domain(SingleTurnDomain(
    ID_LETTER_COUNT, _letter_count_draw, _letter_count_check, _letter_count_probes,
    reference=_REFERENCE, description=DOC_LETTER_COUNT))


ID_LONGEST_PALINDROME = "text_data.longest_palindrome-v1"
DOC_LONGEST_PALINDROME = """Give a longest palindromic substring of a string (any of maximal length counts).

Verified: must be a substring, a palindrome and of maximal length. Not covered:
subsequences. Probes: the first character, the whole string.
"""


def _longest_palindrome_draw(rng: random.Random, difficulty: int) -> Draft:
    while True:
        s = "".join(rng.choice("abc"[: 2 + (difficulty > 1)]) for _ in range(5 + 4 * difficulty))
        best = max((s[i:j] for i in range(len(s)) for j in range(i + 1, len(s) + 1) if s[i:j] == s[i:j][::-1]),
                   key=len)
        if 1 < len(best) < len(s):
            break
    prompt = f"Give a longest palindromic substring (contiguous) of \"{s}\". Answer with the substring only."
    return Draft(prompt, public={"s": s}, hidden={"best": best})


def _longest_palindrome_reference(task: Task) -> str:
    return task.hidden["best"]


def _longest_palindrome_check(task: Task, answer: str) -> Score:
    got = (answer_text(answer) or "").strip().strip('"')
    ok = bool(got) and got in task.public["s"] and got == got[::-1] and len(got) == len(task.hidden["best"])
    v = 1.0 if ok else 0.0
    return Score(v, components={"palindrome": (v, 1.0)}, verifier_version=task.domain)


def _longest_palindrome_probes(task: Task) -> dict[str, str]:
    s = task.public["s"]
    return {"first_char": s[0], "whole": s}


register_domain(SingleTurnDomain(
    ID_LONGEST_PALINDROME, _longest_palindrome_draw, _longest_palindrome_check, _longest_palindrome_probes,
    reference=_longest_palindrome_reference, description=DOC_LONGEST_PALINDROME))


def wrap(words: list[str], width: int) -> list[str]:
    lines, cur = [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    return lines + [cur]


ID_WORD_WRAP = "text_data.word_wrap-v1"
DOC_WORD_WRAP = """Greedy word wrap: fill each line with as many words as fit within a width.

Partial credit per line, only for a faithful rewrap (same words, no line over the width)
with the right line count. Not covered: hyphenation,
justification. Probes: the unwrapped text, the wrap for width + 5 (when it differs).
"""


def _word_wrap_draw(rng: random.Random, difficulty: int) -> Draft:
    words = [rng.choice(TEXT_WORDS) for _ in range(6 + 5 * difficulty)]
    width = rng.randint(12, 20)
    prompt = (f"Wrap this text greedily to lines of at most {width} characters (put each word on the current line "
              f"if it fits, with single spaces; never split words):\n{' '.join(words)}\nAnswer with the wrapped "
              "lines only, one per line.")
    return Draft(prompt, answer=wrap(words, width),
                 hidden={"wider": wrap(words, width + 5)}, public={"text": " ".join(words), "width": width})


def _word_wrap_reference(task: Task) -> str:
    return "\n".join(task.hidden["answer"])


def _word_wrap_check(task: Task, answer: str) -> Score:
    t = answer_text(answer)
    got = None if t is None else [re.sub(r"\s+", " ", ln.strip()) for ln in t.strip().splitlines()]
    # Credit only a faithful rewrap: the same words in the same order, no line over the width.
    if got is not None and (" ".join(got).split() != task.public["text"].split()
                            or any(len(ln) > task.public["width"] for ln in got)):
        got = None
    v = sequence_score(got, task.hidden["answer"])
    return Score(v, components={"lines": (v, 1.0)}, verifier_version=task.domain)


def _word_wrap_probes(task: Task) -> dict[str, str]:
    out = {"unwrapped": task.public["text"]}
    if len(task.hidden["wider"]) != len(task.hidden["answer"]):
        out["wider"] = "\n".join(task.hidden["wider"])
    return out


register_domain(SingleTurnDomain(
    ID_WORD_WRAP, _word_wrap_draw, _word_wrap_check, _word_wrap_probes,
    reference=_word_wrap_reference, description=DOC_WORD_WRAP))


ID_RUN_LENGTH = "text_data.run_length-v1"
DOC_RUN_LENGTH = """Run-length encode a string as character followed by count (``aaab`` -> ``a3b1``).

Exact. Not covered: decoding. Probes: counts before characters, counts of 1 omitted
(when some run has length 1).
"""


def _run_length_draw(rng: random.Random, difficulty: int) -> Draft:
    s = "".join(rng.choice("abc") * rng.randint(1, 2 + 2 * difficulty) for _ in range(3 + 2 * difficulty))
    runs = [(m.group(0)[0], len(m.group(0))) for m in re.finditer(r"(.)\1*", s)]
    prompt = f"Run-length encode \"{s}\" as each character followed by its run length (e.g. aaab -> a3b1). Answer only the encoding."
    return Draft(prompt, answer="".join(f"{c}{n}" for c, n in runs), hidden={
                 "swapped": "".join(f"{n}{c}" for c, n in runs), "no_ones": "".join(c if n == 1 else f"{c}{n}" for c, n in runs)})


def _run_length_probes(task: Task) -> dict[str, str]:
    h = task.hidden
    return {k: h[k] for k in ("swapped", "no_ones") if h[k] != h["answer"]}


register_domain(SingleTurnDomain(
    ID_RUN_LENGTH, _run_length_draw, K.exact_text, _run_length_probes,
    reference=_REFERENCE, description=DOC_RUN_LENGTH))
