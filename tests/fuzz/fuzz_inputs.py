"""Hostile inputs for the fuzz tests and ``bench/fuzz.py``, and the harness that plays them.

What it is:
- :func:`hostile_texts` — the named corpus of outputs a policy can produce that a verifier
  must survive: random bytes, invalid UTF-8 (lone surrogates, as ``surrogateescape`` decodes
  it, and U+FFFD), 100k-character and 10 MB answers, deeply nested JSON and tool-call JSON,
  unicode look-alike digits and signs (alone and substituted into the reference answer),
  NaN/inf and huge-number strings, and answers in the wrong format (code, SQL, JSON, tags);
- :func:`hostile_text` — a ``hypothesis`` strategy drawing from the same families, with
  random contents, for property-based runs;
- :func:`play` — one episode of a domain's task with given action texts, through the one
  episode engine (:func:`posttrain.rollout.scripted.replay`), classified as an
  :class:`Outcome`: a Score, a recorded failure, or an *escape* (a crash of the verifier or
  env on the policy's text, a call over the time bound, a hang);
- :func:`tool_call_texts` — hostile tool calls for a task's offered tools.

An escape is what the boundary must never let through. A Score with ``error`` set is a
recorded failure (counted); it is an escape when its error is a crash of our own code on the
policy's text (``verifier``/``env`` kinds: the hostile output is excluded from the loss
instead of scored 0, a reward hole), and not when the infrastructure says so (a sandbox or
timeout error, which the scheduler retries).
"""

from __future__ import annotations

import json
import random
import threading
import time
from dataclasses import dataclass
from typing import Any, Sequence

from hypothesis import strategies as st

from posttrain.core.types import Task

MB = 1 << 20
LONG = 100_000
HUGE = 10 * MB
NEST = 100_000  # nesting depth of the deep-JSON cases (far past any recursion limit)

# Look-alikes of 0-9 that str.isdigit() or int()/float() may accept, and of the signs.
LOOKALIKE_DIGITS = {
    "fullwidth": "０１２３４５６７８９",
    "arabic_indic": "٠١٢٣٤٥٦٧٨٩",
    "devanagari": "०१२३४५६७८९",
    "math_bold": "𝟎𝟏𝟐𝟑𝟒𝟓𝟔𝟕𝟖𝟗",
    "superscript": "⁰¹²³⁴⁵⁶⁷⁸⁹",  # isdigit() True, int() raises
    "circled": "⓪①②③④⑤⑥⑦⑧⑨",  # isdigit() True, int() raises
}
LOOKALIKE_SIGNS = {"-": "−‐‑‒–—﹣－", "+": "＋﹢", ".": "․。．", "/": "⁄∕／", "=": "＝"}
NUMBER_STRINGS = ["nan", "NaN", "-nan", "inf", "-inf", "+Infinity", "Infinity", "1e309", "-1e309",
                  "1e999999", "0x1p1024", "1_000", "9" * 5000, "1/0", "0/0", "nan/nan", "1e-400",
                  "10**10**10", "9**9**9", "2^1000000", "--1", "1e", ".", "-", "∞", "NaN%", "$inf"]


def lookalike(text: str, family: str, *, signs: bool = True) -> str:
    """``text`` with every ASCII digit (and sign) swapped for a look-alike of ``family``."""
    digits = LOOKALIKE_DIGITS[family]
    out = "".join(digits[ord(c) - 48] if "0" <= c <= "9" else c for c in text)
    if signs:
        out = "".join(LOOKALIKE_SIGNS[c][0] if c in LOOKALIKE_SIGNS else c for c in out)
    return out


def nested_json(depth: int, *, kind: str = "list") -> str:
    if kind == "list":
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


def tool_call(name: Any, arguments: Any) -> str:
    """A ``<tool_call>`` block; ``arguments`` may be pre-rendered text (a raw JSON fragment)."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return f'<tool_call>{{"name": {json.dumps(name)}, "arguments": {args}}}</tool_call>'


def hostile_texts(task: Task, reference: str, *, huge: bool = True) -> dict[str, str]:
    """The named hostile corpus for one task (``huge``: include the 10 MB answers)."""
    rng = random.Random(f"fuzz|{task.key}")
    raw = bytes(rng.randrange(256) for _ in range(4096))
    ref = reference or "42"
    cases = {
        "random_bytes_latin1": raw.decode("latin-1"),
        "invalid_utf8_surrogates": raw.decode("utf-8", "surrogateescape"),
        "invalid_utf8_replaced": raw.decode("utf-8", "replace"),
        "reference_with_surrogate": ref + "\udcff",
        "nul_and_controls": f"\x00{ref}\x00\x1b[2J\r\x08\u202e{ref}\ufeff",
        "long_100k": ("".join(rng.choice("0123456789 -.,e") for _ in range(97)) + "\n") * (LONG // 98 + 1),
        "long_100k_one_line": "9" * LONG,
        "deep_json_list": nested_json(NEST),
        "deep_json_object": nested_json(NEST, kind="object"),
        "deep_json_in_answer": f"<answer>{nested_json(NEST)}</answer>",
        "deep_tool_call": tool_call("shell", nested_json(NEST, kind="object")),
        "tool_call_unclosed": '<tool_call>{"name": "shell", "arguments": {"command": "ls"}',
        "tool_call_nan_args": tool_call("shell", '{"command": "ls", "timeout": NaN}'),
        "tool_call_then_answer": tool_call("x", {}) + f"<answer>{ref}</answer>",
        "nested_answer_tags": f"<answer><answer>{ref}</answer></answer>" + "<answer>" * 1000,
        "wrong_format_json": json.dumps({"answer": ref, "value": [ref], "nan": float("nan")}),
        "wrong_format_code": "```python\nimport os\ndef solve(*a, **k):\n    return float('nan')\n```",
        "wrong_format_sql": "SELECT * FROM t; DROP TABLE t; -- " + ref,
        "wrong_format_recursive_sql": ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
                                       "FROM c) SELECT x FROM c"),
        "wrong_format_markdown": f"# {ref}\n\n| a | b |\n|---|---|\n| {ref} | {ref} |\n```\n```",
        "wrong_format_xml": "<?xml version='1.0'?><!DOCTYPE a [<!ENTITY b '" + "x" * 1000 + "'>]><a>&b;&b;</a>",
    }
    for family in LOOKALIKE_DIGITS:
        cases[f"lookalike_{family}"] = lookalike(ref, family)
        cases[f"lookalike_{family}_digits_only"] = lookalike(ref, family, signs=False)
    for i, s in enumerate(NUMBER_STRINGS):
        cases[f"number_{i}"] = s
    cases["numbers_in_answer_tag"] = "<answer>nan</answer>"
    cases["numbers_mixed"] = " ".join(NUMBER_STRINGS[:12]) + " " + ref
    if huge:
        cases["huge_10mb_digits"] = "9" * HUGE
        cases["huge_10mb_reference_repeat"] = ((ref + "\n") * (HUGE // (len(ref) + 1) + 1))[:HUGE]
        cases["huge_10mb_in_answer"] = "<answer>" + "1 " * (HUGE // 2) + "</answer>"
    return cases


def tool_call_texts(tools: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Hostile calls of every offered tool: wrong types, NaN/inf, huge, nested, unknown keys."""
    out: dict[str, str] = {}
    for spec in tools:
        fn = spec.get("function", spec)
        name = str(fn.get("name", ""))
        props = dict((fn.get("parameters") or {}).get("properties") or {})
        filler: list[tuple[str, Any]] = [
            ("nan", "NaN"), ("inf", "Infinity"), ("neg_inf", "-Infinity"), ("big_int", "1" + "0" * 400),
            ("huge_str", json.dumps("x" * LONG)), ("surrogate", '"\\udcff\\ud800"'), ("null", "null"),
            ("bool", "true"), ("list", "[1, [2, [3]]]"), ("object", '{"a": {"b": 1}}'),
            ("deep", nested_json(2000)), ("empty_str", '""'), ("path_escape", '"../../../etc/passwd"'),
            ("nul_str", '"a\\u0000b"'), ("neg", "-1"), ("float", "1.5"), ("lookalike", '"١٢٣"'),
        ]
        for label, raw in filler:
            body = "{" + ", ".join(f"{json.dumps(k)}: {raw}" for k in props) + "}" if props else "{}"
            out[f"{name}:{label}"] = tool_call(name, body)
        out[f"{name}:unknown_key"] = tool_call(name, {"zz_unknown": 1})
        out[f"{name}:arguments_not_object"] = tool_call(name, "[1, 2]")
    out["unknown_tool"] = tool_call("no_such_tool", {})
    out["name_not_string"] = tool_call(["shell"], {})
    return out


# ------------------------------------------------------------------------- hypothesis
def _lookalike_numbers() -> st.SearchStrategy[str]:
    chars = "".join(LOOKALIKE_DIGITS.values()) + "".join(LOOKALIKE_SIGNS.values()) + "0123456789.-+e/"
    return st.text(alphabet=chars, min_size=1, max_size=40)


def _surrogate_text() -> st.SearchStrategy[str]:
    return st.binary(max_size=300).map(lambda b: b.decode("utf-8", "surrogateescape"))


def _json_text() -> st.SearchStrategy[str]:
    leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
                     st.text(max_size=20))
    tree = st.recursive(leaf, lambda kids: st.one_of(st.lists(kids, max_size=4),
                                                     st.dictionaries(st.text(max_size=8), kids, max_size=4)),
                        max_leaves=30)
    return tree.map(lambda v: json.dumps(v))


def hostile_text() -> st.SearchStrategy[str]:
    """Random members of the corpus's families (kept small: hypothesis runs many)."""
    return st.one_of(
        st.text(max_size=200),
        st.binary(max_size=300).map(lambda b: b.decode("latin-1")),
        _surrogate_text(),
        _lookalike_numbers(),
        st.sampled_from(NUMBER_STRINGS),
        _json_text(),
        st.integers(1, 3000).map(nested_json),
        st.tuples(st.text(max_size=12), _json_text()).map(lambda p: tool_call(p[0], p[1])),
        st.text(max_size=60).map(lambda s: f"<answer>{s}</answer>"),
    )


# ------------------------------------------------------------------------- the harness
INFRA_KINDS = ("sandbox", "timeout", "inference", "scheduler", "cancelled")


@dataclass(frozen=True)
class Outcome:
    """What one hostile episode gave: ``kind`` is ``score``, ``failure`` (recorded, not an
    escape), or an escape: ``crash`` (our code raised on the policy's text), ``slow`` (over
    the time bound), ``hang`` (did not return), ``bad_score`` (not a Score in [0, 1])."""

    kind: str
    value: float | None
    wall_s: float
    detail: str = ""

    @property
    def escaped(self) -> bool:
        return self.kind not in ("score", "failure")


def _classify(traj: Any) -> tuple[str, float | None, str]:
    from posttrain.core.types import Score

    score, err = traj.score, traj.error
    if err is not None and score is None:
        kind = "failure" if err.kind in INFRA_KINDS else "crash"
        return kind, None, f"{err.kind}: {err.message[:300]}"
    if not isinstance(score, Score):
        return "bad_score", None, repr(score)[:200]
    v = score.value
    if not isinstance(v, float) or not 0.0 <= v <= 1.0:
        return "bad_score", None, f"value {v!r}"
    if score.error is not None:
        kind = "failure" if score.error.kind in INFRA_KINDS else "crash"
        return kind, v, f"{score.error.kind}: {score.error.message[:300]}"
    if err is not None:  # an env step that raised, recorded on a trajectory that was scored
        kind = "failure" if err.kind in INFRA_KINDS else "crash"
        return kind, v, f"{err.kind}: {err.message[:300]}"
    return "score", v, ""


def play(domain: Any, task: Task, actions: Sequence[str], *, bound_s: float,
         hang_s: float | None = None) -> Outcome:
    """One episode through the engine in a worker thread; ``bound_s`` is the per-call time
    bound, ``hang_s`` (default 4 x bound) how long we wait before calling it a hang (the thread
    is then left behind: the caller reports the escape)."""
    from posttrain.rollout.scripted import replay

    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["traj"] = replay(domain, task, list(actions))
        except BaseException as exc:  # noqa: BLE001 - an exception out of the engine is the finding
            box["exc"] = exc

    t0 = time.perf_counter()
    th = threading.Thread(target=run, daemon=True, name=f"fuzz-{task.domain}")
    th.start()
    th.join(hang_s if hang_s is not None else 4 * bound_s)
    wall = time.perf_counter() - t0
    if th.is_alive():
        return Outcome("hang", None, wall, f"no result after {wall:.1f} s")
    if "exc" in box:
        exc = box["exc"]
        return Outcome("crash", None, wall, f"raised {type(exc).__name__}: {str(exc)[:300]}")
    kind, value, detail = _classify(box["traj"])
    if kind in ("score", "failure") and wall > bound_s:
        return Outcome("slow", value, wall, f"{wall:.2f} s > bound {bound_s:g} s; {detail}")
    return Outcome(kind, value, wall, detail)


def actions_for(domain: Any, text: str) -> list[str]:
    """The hostile text as a whole episode: a final answer for single-turn domains; for
    multi-turn ones first as a turn of its own, then again inside ``<answer>`` (so both the
    step parser and the final verifier see it)."""
    if callable(getattr(domain, "make_env", None)):
        return [text, f"<answer>{text}</answer>"]
    return [text]


def bound_for(text: str, needs_sandbox: bool) -> float:
    """Per-call time bound: generous for sandboxes on a shared 2-core machine, and scaled for
    the 10 MB answers (reading 10 MB once is fine; anything quadratic is not)."""
    base = 30.0 if needs_sandbox else 5.0
    return base * (3 if len(text) > MB else 1)

