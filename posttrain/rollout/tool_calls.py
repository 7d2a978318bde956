"""The strict tool-call format of posttrain's agent loop (its public home).

The format (the one the built-in chat template renders for assistant ``tool_calls``)::

    optional free text (reasoning)
    <tool_call>{"name": "shell", "arguments": {"cmd": "ls -la"}}</tool_call>
    <tool_call>{"name": "read_file", "arguments": {"path": "notes.txt"}}</tool_call>

or, to end the episode, a final answer::

    optional free text
    <answer>the final answer</answer>

Rules (each violation is a *malformed call*: returned to the policy as an error observation
with role ``tool`` and counted in ``turn.info``, never an exception):

- a block is ``<tool_call>`` + one JSON object + ``</tool_call>``; the object has exactly the
  keys ``name`` (a string) and ``arguments`` (an object); an unclosed block, a stray
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

The implementation lives in :mod:`posttrain.envs.tool_env` because the env layer parses
actions and may not import the rollout layer (DESIGN.md §2); this module is its stable name.
"""

from posttrain.envs.tool_env import (
    CLOSE,
    MAX_CALLS,
    OPEN,
    ParsedTurn,
    ToolCall,
    error_message,
    format_answer,
    format_call,
    format_calls,
    parse_turn,
    spec_name,
    spec_parameters,
    validate_arguments,
)

__all__ = [
    "CLOSE", "MAX_CALLS", "OPEN", "ParsedTurn", "ToolCall", "error_message", "format_answer",
    "format_call", "format_calls", "parse_turn", "spec_name", "spec_parameters",
    "validate_arguments",
]
