"""The strict tool-call format: how a policy turn calls tools or gives its final answer.

The format (the one the built-in chat template renders for assistant ``tool_calls``)::

    optional free text (reasoning)
    <tool_call>{"name": "shell", "arguments": {"cmd": "ls -la"}}</tool_call>
    <tool_call>{"name": "read_file", "arguments": {"path": "notes.txt"}}</tool_call>

or, to end the episode, a final answer::

    optional free text
    <answer>the final answer</answer>

Rules (each violation is a *malformed call*: returned to the policy as an error observation
with role ``tool`` and counted in ``turn.info``, never an exception):

- a block is ``<tool_call>`` + one JSON object (strict JSON: no ``NaN``/``Infinity``) +
  ``</tool_call>``; the object has exactly the keys ``name`` (a string) and ``arguments`` (an object); an unclosed block, a stray
  ``</tool_call>``, invalid JSON, missing or extra keys are malformed;
- the name must be one of the offered tools and the arguments must satisfy its JSON schema
  (:func:`validate_arguments`: types, ``required``, ``additionalProperties: false``, ``enum``,
  ``items``, numeric bounds, ``maxLength``; the validator of :mod:`posttrain.tools`) — else the call is *invalid* (counted apart);
- after the last block only whitespace may follow (a model that keeps talking after calling a
  tool has not produced a clean call);
- a turn holds either tool calls or an ``<answer>``, not both;
- at most ``max_calls`` calls per turn (default 8); the extra ones are rejected and counted.

A turn with no ``<tool_call>``/``</tool_call>`` at all ends the episode: its final answer is
the last ``<answer>...</answer>`` block, or (``format_ok`` False) the whole text.

What it does not do: execute anything (:class:`posttrain.envs.tool_env.ToolEnv` does), or
accept lenient variants (Python-style dicts, single quotes, bare JSON without tags) — a
lenient parser rewards sloppy formats and makes the L2 "tool-call validity" layer meaningless.

It lives in the tool layer (DESIGN.md §2) so that envs (which parse actions) and the rollout
layer share one parser; :class:`posttrain.envs.tool_env.ToolEnv` re-exports its names.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence



def clip(text: str, limit: int) -> str:
    """At most ``limit`` characters: head and tail kept, the cut said in the middle."""
    if len(text) <= limit:
        return text
    half = max(0, limit // 2 - 40)
    return f"{text[:half]}\n... [{len(text) - 2 * half} characters cut] ...\n{text[-half:]}"


# --------------------------------------------------------------------- the tool-call format
OPEN, CLOSE = "<tool_call>", "</tool_call>"
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S)
MAX_CALLS = 8


@dataclass(frozen=True)
class ToolCall:
    """One well-formed call (``valid`` False when the name or arguments fail the schema)."""

    name: str
    arguments: Mapping[str, Any]
    valid: bool = True
    error: str = ""


@dataclass(frozen=True)
class ParsedTurn:
    """What a policy turn asked for: calls, a final answer, and every format error found."""

    calls: tuple[ToolCall, ...] = ()
    answer: str | None = None  # text of the last <answer> block; None when there is none
    errors: tuple[str, ...] = ()  # malformed blocks and turn-level format errors
    text: str = ""

    @property
    def is_final(self) -> bool:
        """No tool call was attempted: the turn ends the episode."""
        return OPEN not in self.text and CLOSE not in self.text

    @property
    def format_ok(self) -> bool:
        """Strictly formatted: clean calls, or exactly one final ``<answer>`` block."""
        if self.errors:
            return False
        return bool(self.calls) or self.answer is not None

    @property
    def invalid_calls(self) -> int:
        return sum(not c.valid for c in self.calls)

    @property
    def malformed(self) -> int:
        return len(self.errors)

    def final_answer(self) -> str:
        """The answer of a final turn: the ``<answer>`` content, else the whole text."""
        return (self.answer if self.answer is not None else self.text).strip()


def parse_turn(text: str, tools: Sequence[Mapping[str, Any]] = (), *,
               max_calls: int = MAX_CALLS) -> ParsedTurn:
    """Parse one assistant turn against the offered tool specs (OpenAI function format)."""
    text = text or ""
    specs = {spec_name(s): s for s in tools}
    calls: list[ToolCall] = []
    errors: list[str] = []
    pos, first = 0, text.find(OPEN)
    while True:
        start = text.find(OPEN, pos)
        if start < 0:
            break
        end = text.find(CLOSE, start)
        if end < 0:
            errors.append("call: unclosed <tool_call> block")
            pos = len(text)
            break
        body = text[start + len(OPEN):end]
        pos = end + len(CLOSE)
        call, err = _parse_call(body, specs)
        if err:
            errors.append(f"call {len(calls) + len(errors) + 1}: {err}")
        elif call is not None:
            calls.append(call)
    if first >= 0 and text[pos:].strip():
        errors.append("call: text after the last </tool_call> (a call turn must end with its calls)")
    if CLOSE in text[:first if first >= 0 else len(text)]:
        errors.append("call: </tool_call> without an opening <tool_call>")
    answers = _ANSWER.findall(text)
    if answers and first >= 0:
        errors.append("turn: both tool calls and an <answer> (a turn is one or the other)")
    if len(answers) > 1:
        errors.append("turn: more than one <answer> block")
    if len(calls) > max_calls:
        errors.append(f"call: {len(calls)} calls in one turn (at most {max_calls}); extra ones dropped")
        calls = calls[:max_calls]
    return ParsedTurn(tuple(calls), answers[-1] if answers else None, tuple(errors), text)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_call(body: str, specs: Mapping[str, Mapping[str, Any]]) -> tuple[ToolCall | None, str]:
    try:
        # strict JSON: Python's reader takes NaN/Infinity, and a NaN slipped past every
        # numeric bound (a shell timeout of NaN ran a command with no wall-clock limit)
        obj = json.loads(body, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        return None, f"invalid JSON ({str(exc)[:80]})"
    if not isinstance(obj, dict):
        return None, "the call must be a JSON object"
    if set(obj) != {"name", "arguments"}:
        return None, f"the call must have exactly the keys name and arguments, not {sorted(obj)}"
    name, args = obj["name"], obj["arguments"]
    if not isinstance(name, str) or not isinstance(args, dict):
        return None, "name must be a string and arguments an object"
    if name not in specs:
        known = ", ".join(sorted(specs)) or "none"
        return ToolCall(name, args, False, f"unknown tool {name!r} (available: {known})"), ""
    problems = validate_arguments(spec_parameters(specs[name]), args)
    if problems:
        return ToolCall(name, args, False, "; ".join(problems[:5])), ""
    return ToolCall(name, args), ""


def spec_name(spec: Mapping[str, Any]) -> str:
    """The function name of an OpenAI-style tool spec (``{"type": "function", "function": ...}``)."""
    fn = spec.get("function", spec)
    return str(fn.get("name", ""))


def spec_parameters(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    fn = spec.get("function", spec)
    return fn.get("parameters") or {"type": "object", "properties": {}}


def validate_arguments(schema: Mapping[str, Any], value: Any, where: str = "arguments") -> list[str]:
    """Problems of ``value`` against a tool's JSON schema (empty: valid); never raises.

    The schema subset of :func:`posttrain.tools.validate` (types, ``required``,
    ``additionalProperties: false``, ``enum``, bounds, ``items``): one validator for the
    parser and the tool layer, so a call the parser accepts is one the tools accept.
    """
    from posttrain.tools import validate

    return list(validate(value, dict(schema), where))


def format_call(name: str, arguments: Mapping[str, Any]) -> str:
    """The canonical text of one call (what a reference policy writes)."""
    return f"{OPEN}{json.dumps({'name': name, 'arguments': dict(arguments)})}{CLOSE}"


def format_calls(*calls: tuple[str, Mapping[str, Any]]) -> str:
    return "\n".join(format_call(n, a) for n, a in calls)


def format_answer(text: str) -> str:
    return f"<answer>{text}</answer>"


def error_message(errors: Sequence[str]) -> dict[str, Any]:
    """The ``tool`` message telling the policy what was wrong with its turn's format."""
    lines = "\n".join(f"- {e}" for e in errors)
    return {"role": "tool", "name": "format_error",
            "content": f"error: malformed tool call(s):\n{lines}\nFormat: "
                       f'{OPEN}{{"name": "...", "arguments": {{...}}}}{CLOSE} or <answer>...</answer>'}
