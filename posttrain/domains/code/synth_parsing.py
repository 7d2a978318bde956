"""Parsing, function synthesis (single reply, hidden tests; see :mod:`._synth_common`).

Every domain here checks error handling: the driver records ``{"raises": "ValueError"}`` when
the submission raises ``ValueError`` (any other exception fails the test), so a spec saying
"raises ValueError on malformed input" is tested exactly.

- ``code.synth_arith-v1``: ``calc(expr)`` evaluates integer expressions without ``eval`` (the
  static gate bans it) — d1 ``+ -``, d2 with ``*`` precedence, d3 parentheses, unary minus and
  ``ValueError`` on malformed input.
- ``code.synth_csv-v1``: ``split_csv(line)`` — d1 plain split and strip, d2 quoted fields with
  commas inside, d3 doubled quotes and ``ValueError`` on an unterminated quote or text after a
  closing quote.
- ``code.synth_semver-v1``: ``compare_versions(a, b)`` → -1/0/1 — d1 three numeric parts,
  d2 one to four parts (missing = 0, leading zeros), d3 SemVer pre-release precedence, build
  metadata ignored, ``ValueError`` on invalid versions.
- ``code.synth_duration-v1``: ``parse_duration(s)`` → seconds — d1 ``1h30m``, d2 weeks/days,
  any order, spaces, ``ValueError`` on repeated/unknown units, d3 decimals, ``ms``, a sign.
- ``code.synth_ini-v1``: ``parse_ini(text)`` — d1 ``key=value`` lines, d2 sections and
  comments, d3 case-insensitive keys, ``=`` inside values, merged sections, ``ValueError`` on
  bad lines or empty keys.

Reward and probes: :class:`._synth_common.SynthDomain`.
"""

from __future__ import annotations

import random

from posttrain.domains.base import register_domain

from ._synth_common import Level, SynthDomain, raises_driver, word

_CALC = '''def calc(expr):
    toks, i = [], 0
    while i < len(expr):
        ch = expr[i]
        if ch.isspace():
            i += 1
        elif ch.isdigit():
            j = i
            while j < len(expr) and expr[j].isdigit():
                j += 1
            toks.append(int(expr[i:j]))
            i = j
        elif ch in "+-*()":
            toks.append(ch)
            i += 1
        else:
            raise ValueError("bad character")
    pos = [0]

    def peek():
        return toks[pos[0]] if pos[0] < len(toks) else None

    def take():
        if pos[0] >= len(toks):
            raise ValueError("unexpected end")
        pos[0] += 1
        return toks[pos[0] - 1]

    def factor():
        tok = take()
        if tok == "-":
            return -factor()
        if tok == "(":
            value = total()
            if take() != ")":
                raise ValueError("missing )")
            return value
        if not isinstance(tok, int):
            raise ValueError("expected a number")
        return tok

    def term():
        value = factor()
        while peek() == "*":
            take()
            value *= factor()
        return value

    def total():
        value = term()
        while peek() in ("+", "-"):
            op = take()
            rhs = term()
            value = value + rhs if op == "+" else value - rhs
        return value

    result = total()
    if pos[0] != len(toks):
        raise ValueError("trailing input")
    return result
'''


def _expr(r: random.Random, depth: int, ops: str, parens: bool, unary: bool) -> list[str]:
    if depth == 0 or r.random() < 0.3:
        toks = [str(r.randint(0, 20))]
    else:
        toks = _expr(r, depth - 1, ops, parens, unary) + [r.choice(ops)] + _expr(r, depth - 1, ops, parens, unary)
        if parens and r.random() < 0.5:
            toks = ["("] + toks + [")"]
    return (["-"] + toks) if unary and r.random() < 0.2 else toks


def _calc_gen(ops: str, parens: bool, bad: float):
    def gen(r: random.Random, c: dict) -> list:
        toks = _expr(r, 3, ops, parens, parens)
        if r.random() < bad:
            k = r.randrange(len(toks) + 1)
            how = r.choice(["op", "drop", "cut", "empty"])
            toks = {"op": toks[:k] + [r.choice("+*")] + toks[k:], "drop": toks[:k] + toks[k + 1:],
                    "cut": toks + [r.choice("+-*(")], "empty": []}[how]
        return ["".join(t + r.choice(["", "", " "]) for t in toks)]
    return gen


register_domain(SynthDomain("code.synth_arith-v1", "calc", {
    1: Level("calc(expr) evaluates a string of non-negative integers joined by + and - (spaces may "
             "appear between tokens) and returns the integer result.", _CALC, _calc_gen("+-", False, 0),
             bug=("value + rhs if op == \"+\" else value - rhs", "value + rhs")),
    2: Level("calc(expr) evaluates non-negative integers joined by +, - and * with the usual "
             "precedence (* binds tighter; left to right otherwise; spaces may appear between "
             "tokens) and returns the integer result.", _CALC, _calc_gen("+-*", False, 0),
             bug=("value *= factor()", "value += factor()")),
    3: Level("calc(expr) evaluates integer expressions with +, -, *, parentheses and unary minus "
             "(\"-(2+3)*-1\" is 5), * binding tighter, spaces allowed between tokens; it raises "
             "ValueError on a malformed expression (empty, unbalanced parentheses, a missing "
             "operand, two numbers in a row, any other character). Do not use eval.",
             _CALC, _calc_gen("+-*", True, 0.35),
             bug=("        if tok == \"-\":\n            return -factor()\n", "")),
}, driver=raises_driver("calc"),
    description="Write an integer expression evaluator (precedence, parentheses) without eval.\n\n" + __doc__))

_CSV_PLAIN = '''def split_csv(line):
    return [field.strip() for field in line.split(",")]
'''
_CSV = '''def split_csv(line):
    fields, i, n = [], 0, len(line)
    while True:
        if i < n and line[i] == '"':
            i += 1
            buf = []
            while True:
                if i >= n:
                    raise ValueError("unterminated quote")
                if line[i] == '"':
                    if i + 1 < n and line[i + 1] == '"':
                        buf.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                buf.append(line[i])
                i += 1
            if i < n and line[i] != ",":
                raise ValueError("text after a closing quote")
            fields.append("".join(buf))
        else:
            j = line.find(",", i)
            j = n if j < 0 else j
            fields.append(line[i:j])
            i = j
        if i >= n:
            return fields
        i += 1
'''


def _csv_gen(quotes: bool, escapes: bool):
    def field(r: random.Random) -> str:
        if quotes and r.random() < 0.45:
            inner = word(r, "ab, " + ('"' if escapes else ""), 0, 6)
            return '"' + inner.replace('"', '""') + '"'
        body = word(r, "abc", 0, 4)
        return (r.choice(["", " "]) + body + r.choice(["", "  "])) if not quotes else body

    def gen(r: random.Random, c: dict) -> list:
        line = ",".join(field(r) for _ in range(r.randint(1, 5)))
        if escapes and r.random() < 0.3:
            line = line + r.choice([',"ab', ',"a""', ',"ab"c', '"x"y,z'])
        return [line]
    return gen


register_domain(SynthDomain("code.synth_csv-v1", "split_csv", {
    1: Level("split_csv(line) splits a line on commas and strips surrounding whitespace from each "
             "field (\"a, b,\" gives [\"a\", \"b\", \"\"]).", _CSV_PLAIN, _csv_gen(False, False),
             bug=("field.strip()", "field.strip() or None")),
    2: Level("split_csv(line) splits a CSV line into fields: a field that starts with a double "
             "quote ends at the next double quote, and commas inside it are literal; the quotes "
             "are removed; fields are not stripped; an empty line is one empty field.", _CSV,
             _csv_gen(True, False), bug=("fields.append(\"\".join(buf))", "fields.append(\"\".join(buf).strip())")),
    3: Level("split_csv(line) splits a CSV line into fields: a field starting with a double quote "
             "is quoted, commas inside it are literal, \"\" inside it stands for one quote, and the "
             "enclosing quotes are removed; fields are not stripped; it raises ValueError on an "
             "unterminated quoted field or on characters between a closing quote and the next "
             "comma.", _CSV, _csv_gen(True, True),
             bug=("                        buf.append('\"')\n", "")),
}, driver=raises_driver("split_csv"),
    description="Write a CSV line splitter with quoting rules and errors.\n\n" + __doc__))

_VER_BASIC = '''def compare_versions(a, b):
    x = [int(p) for p in a.split(".")]
    y = [int(p) for p in b.split(".")]
    width = max(len(x), len(y))
    x += [0] * (width - len(x))
    y += [0] * (width - len(y))
    return (x > y) - (x < y)
'''
_SEMVER = '''def compare_versions(a, b):
    def parse(v):
        core, dash, pre = v.split("+", 1)[0].partition("-")
        parts = core.split(".")
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise ValueError(v)
        ids = pre.split(".") if dash else []
        if any(not x or not x.replace("-", "").isalnum() for x in ids):
            raise ValueError(v)
        return [int(p) for p in parts], ids

    def cmp(x, y):
        return (x > y) - (x < y)

    (na, ra), (nb, rb) = parse(a), parse(b)
    if na != nb:
        return cmp(na, nb)
    if not ra or not rb:
        return cmp(len(rb), len(ra)) if (ra or rb) else 0
    for x, y in zip(ra, rb):
        if x == y:
            continue
        if x.isdigit() and y.isdigit():
            return cmp(int(x), int(y))
        if x.isdigit() != y.isdigit():
            return -1 if x.isdigit() else 1
        return cmp(x, y)
    return cmp(len(ra), len(rb))
'''


def _ver_gen(parts: tuple[int, int], zeros: bool):
    def one(r: random.Random) -> str:
        ps = [str(r.randint(0, 2)) for _ in range(r.randint(*parts))]
        return ".".join(("0" + p) if zeros and r.random() < 0.2 else p for p in ps)

    def gen(r: random.Random, c: dict) -> list:
        a = one(r)
        b = a if r.random() < 0.3 else one(r)
        if zeros and r.random() < 0.3:
            b = a + ".0" * r.randint(1, 2)
        return [a, b]
    return gen


def _semver_gen(r: random.Random, c: dict) -> list:
    def one() -> str:
        v = ".".join(str(r.randint(0, 1)) for _ in range(3))
        if r.random() < 0.6:
            v += "-" + ".".join(r.choice(["alpha", "beta", "rc", "1", "2", "11", "x-y"])
                                for _ in range(r.randint(1, 3)))
        if r.random() < 0.2:
            v += "+build." + str(r.randint(1, 9))
        if r.random() < 0.12:
            v = r.choice(["1.2", "1.2.x", v + "-", v.replace(".", "..", 1), "v" + v, "1.0.0-a..b"])
        return v
    a = one()
    return [a, a.split("+")[0] + "+other" if r.random() < 0.15 else one()]


register_domain(SynthDomain("code.synth_semver-v1", "compare_versions", {
    1: Level("compare_versions(a, b) compares two versions \"MAJOR.MINOR.PATCH\" (non-negative "
             "integers) numerically part by part and returns -1 if a < b, 0 if equal, 1 if a > b.",
             _VER_BASIC, _ver_gen((3, 3), False), bug=("(x > y) - (x < y)", "(x > y) - (x <= y)")),
    2: Level("compare_versions(a, b) compares dotted versions of one to four non-negative integer "
             "parts (leading zeros allowed: \"1.02\" equals \"1.2\"; missing parts count as 0: "
             "\"1.2\" equals \"1.2.0\") and returns -1, 0 or 1.", _VER_BASIC, _ver_gen((1, 4), True),
             bug=("    x += [0] * (width - len(x))\n", "")),
    3: Level("compare_versions(a, b) returns -1, 0 or 1 by Semantic Versioning 2.0.0 precedence: "
             "MAJOR.MINOR.PATCH numerically, then a version with a pre-release (\"-alpha.1\") is "
             "lower than without; pre-release identifiers compare left to right (numeric ones "
             "numerically and lower than alphanumeric ones, which compare in ASCII order; a "
             "shorter list of equal prefix is lower); build metadata (\"+...\") is ignored. It "
             "raises ValueError for an invalid version (not exactly three numeric parts, an empty "
             "pre-release identifier, other characters).", _SEMVER, _semver_gen,
             bug=("cmp(len(rb), len(ra)) if", "cmp(len(ra), len(rb)) if")),
}, driver=raises_driver("compare_versions"),
    description="Write a version comparison function (numeric parts, SemVer precedence).\n\n" + __doc__))

_DURATION = '''import re

UNITS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1, "ms": 0.001}
PART = r"(\\d+(?:\\.\\d+)?)(ms|[wdhms])"


def parse_duration(s):
    m = re.fullmatch(r"\\s*(-?)\\s*((?:" + PART + r"\\s*)+)", s)
    if not m:
        raise ValueError("malformed duration")
    total, seen = 0, set()
    for num, unit in re.findall(PART, m.group(2)):
        if unit in seen:
            raise ValueError("repeated unit")
        seen.add(unit)
        total += (float(num) if "." in num else int(num)) * UNITS[unit]
    return -total if m.group(1) else total
'''


def _dur_gen(units: str, shuffle: bool, bad: float, dec: bool):
    def gen(r: random.Random, c: dict) -> list:
        us = [u for u in units.split(",") if r.random() < 0.5] or [r.choice(units.split(","))]
        if shuffle:
            r.shuffle(us)
        parts = [(f"{r.randint(0, 9)}.{r.randint(1, 9)}" if dec and r.random() < 0.3 else str(r.randint(1, 90))) + u
                 for u in us]
        sep = " " if shuffle and r.random() < 0.5 else ""
        text = ("-" if dec and r.random() < 0.2 else "") + sep.join(parts)
        if r.random() < bad:
            text = r.choice([text + parts[0], text + "5x", text + " 15", "", text + "m", "1.h"])
        return [text]
    return gen


register_domain(SynthDomain("code.synth_duration-v1", "parse_duration", {
    1: Level("parse_duration(s) returns the number of seconds in a duration such as \"1h30m\" or "
             "\"2h5s\": integers followed by units h, m, s, each unit at most once, in that order.",
             _DURATION, _dur_gen("h,m,s", False, 0, False), bug=("\"m\": 60", "\"m\": 100")),
    2: Level("parse_duration(s) returns the seconds in a duration made of parts <integer><unit> "
             "with units w (week), d, h, m, s, in any order, each at most once, optionally "
             "separated by spaces; it raises ValueError when the text is empty, a unit repeats, a "
             "unit is unknown or a number has no unit.", _DURATION, _dur_gen("w,d,h,m,s", True, 0.3, False),
             bug=("            raise ValueError(\"repeated unit\")\n", "            pass\n")),
    3: Level("parse_duration(s) returns the seconds (int, or float when fractional) in a duration "
             "made of parts <number><unit>: numbers may have a decimal part (\"1.5h\"), units w, d, "
             "h, m, s and ms (milliseconds), any order, each at most once, optional spaces between "
             "parts, and an optional leading minus for the whole duration; it raises ValueError on "
             "empty text, repeated or unknown units, numbers without a unit or a bare dot.",
             _DURATION, _dur_gen("w,d,h,m,s,ms", True, 0.3, True),
             bug=("return -total if m.group(1) else total", "return total")),
}, driver=raises_driver("parse_duration"),
    description="Write a duration parser (units, decimals, errors) returning seconds.\n\n" + __doc__))

_INI_FLAT = '''def parse_ini(text):
    out = {}
    for line in text.splitlines():
        if line.strip():
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out
'''
_INI = '''def parse_ini(text):
    out, section = {}, None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            out.setdefault(section, {})
            continue
        if "=" not in line:
            raise ValueError("not a key=value line")
        key, _, value = line.partition("=")
        key = key.strip().lower()
        if not key:
            raise ValueError("empty key")
        out.setdefault("default" if section is None else section, {})[key] = value.strip()
    return out
'''


def _ini_gen(sections: bool, hard: bool):
    def gen(r: random.Random, c: dict) -> list:
        lines = []
        for _ in range(r.randint(1, 6)):
            roll = r.random()
            if sections and roll < 0.25:
                lines.append(f"[{r.choice(['db', 'web', 'Log'])}]")
            elif sections and roll < 0.35:
                lines.append(r.choice(["# note", "; x = 1", "   "]))
            else:
                key = r.choice(["host", "port", "Name", "mode"] if hard else ["host", "port", "name"])
                val = word(r, "ab1=" if hard else "ab1", 0, 4)
                lines.append(f"{r.choice(['', ' '])}{key}{r.choice(['', ' '])}={r.choice(['', ' '])}{val}")
        if hard and r.random() < 0.2:
            lines.insert(r.randrange(len(lines) + 1), r.choice(["oops", "= v", "[x"]))
        return ["\n".join(lines)]
    return gen


register_domain(SynthDomain("code.synth_ini-v1", "parse_ini", {
    1: Level("parse_ini(text) parses lines \"key=value\" into a dict (key and value stripped of "
             "surrounding spaces; blank lines ignored; a later key overrides an earlier one).",
             _INI_FLAT, _ini_gen(False, False), bug=("value.strip()", "value")),
    2: Level("parse_ini(text) returns {section: {key: value}} from INI text: \"[name]\" starts a "
             "section (it appears even with no keys), \"key=value\" lines (stripped) go to the "
             "current section, or to \"default\" before any header; blank lines and lines "
             "starting with # or ; are ignored; a later key overrides an earlier one.", _INI,
             _ini_gen(True, False), bug=("out.setdefault(section, {})\n", "pass\n")),
    3: Level("parse_ini(text) returns {section: {key: value}}: \"[name]\" starts (or reopens, "
             "merging) a section that appears even with no keys; \"key=value\" lines split at the "
             "first = (values may contain =), key lowercased, both stripped, go to the current "
             "section or \"default\"; blank lines and lines starting with # or ; are ignored; it "
             "raises ValueError on any other line and on an empty key.", _INI, _ini_gen(True, True),
             bug=("key = key.strip().lower()", "key = key.strip()")),
}, driver=raises_driver("parse_ini"),
    description="Write an INI parser (sections, comments, errors).\n\n" + __doc__))
