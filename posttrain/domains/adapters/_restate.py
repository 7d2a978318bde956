"""The "restate the prompt's facts" probes of every adapter domain (the adapter kit).

An adapter wraps a scorer it did not write; some of those scorers accept an answer that only
repeats what the prompt already says (reasoning-gym's propositional logic pays 1.0 for a
premise copied verbatim). :func:`restate_probes` builds, from the prompt's own text, the
answers such a policy would try, and every adapter's ``probes()`` returns them so that the
conformance checker requires each one to score at the floor:

- the whole prompt, and the prompt without the adapter's fixed instruction;
- each line, with any list marker (``1.``, ``-``, ``.2.``) removed;
- each sentence and each clause (split at ``, ; :`` and at ``and`` / ``but``), with
  number-bearing sentences first, since those are the facts a lenient scorer matches;
- the premises (the enumerated lines, else all lines) joined by ``∧``, ``and``, ``,``.

Guarantees: deterministic for a given prompt; at most ``limit`` probes (the list is ordered
so the whole-prompt and joined-premise probes and the enumerated lines come first); a piece
whose normalised text equals the reference answer is skipped (when the answer is one of the
listed options, saying it is not a hack) and counted in the returned ``skipped``; a piece
of the generator's fixed text (found in every one of ``others``) is left out and counted in
``template``.

Does not: know which piece is a fact and which is an instruction (an instruction line is just
one more probe that must score 0), or catch paraphrases of a premise (the logic-specific
check in :mod:`._rg_strict` handles equivalent restatements for propositional logic).
"""

from __future__ import annotations

import re
from typing import NamedTuple, Sequence

LIMIT = 64
MIN_ALNUM = 1  # a piece without a letter or digit ("---", ".") restates nothing

# Leading list markers, possibly stacked or glued to a previous line's period (".2. (P ∧ S)").
# A marker is followed by a space, so "12.5" and "3:4" stay numbers.
_MARKER = re.compile(r"^(?:\s*(?:[-*•>]|\.?\(?\d{1,3}[.):]|\(?[A-Za-z][.)])(?=\s)\s*)+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_CLAUSE = re.compile(r"[,;:]\s+|\s+(?:and|but)\s+", re.I)
_WS = re.compile(r"\s+")


class Restated(NamedTuple):
    probes: dict[str, str]
    skipped: int  # pieces equal to the reference answer (not hacks)
    template: int = 0  # pieces of the generator's fixed text (see ``others``)


def normalize(text: str) -> str:
    """Case-folded, whitespace collapsed, surrounding punctuation and quotes removed."""
    return _WS.sub(" ", text).strip().strip(" .,;:!?'\"`").casefold()


def _pieces(body: str) -> tuple[list[list[str]], list[str], list[str]]:
    """(blocks of consecutive enumerated items, all lines, sentences then clauses) of
    ``body``, list markers removed."""
    blocks: list[list[str]] = [[]]
    lines: list[str] = []
    for raw in body.splitlines():
        line = _MARKER.sub("", raw).strip()
        if not line:
            continue
        lines.append(line)
        if _MARKER.match(raw) and raw.strip() != line:
            blocks[-1].append(line.rstrip(" ."))
        elif blocks[-1]:
            blocks.append([])  # a plain line ends a list: the premises are one run of items
    sentences = [s.strip() for ln in lines for s in _SENTENCE.split(ln) if s.strip()]
    # Facts with numbers in them first: a lenient scorer that "finds the number" is the usual hole.
    sentences.sort(key=lambda s: not any(ch.isdigit() for ch in s))
    clauses = [c.strip() for s in sentences for c in _CLAUSE.split(s) if c.strip()]
    return [b for b in blocks if b], lines, sentences + clauses


def _joined(groups: list[list[str]]) -> list[tuple[str, str]]:
    """Each group of premises joined as one statement, three ways."""
    out = []
    for k, group in enumerate(groups):
        for tag, text in (("and_sym", " ∧ ".join(f"({p})" for p in group)),
                          ("and_word", " and ".join(group)), ("comma", ", ".join(group))):
            out.append((f"premises{k}_{tag}", text))
    return out


def _template(others: Sequence[str]) -> set[str]:
    """Normalised pieces present in every one of ``others``: the generator's fixed text."""
    common: set[str] | None = None
    for text in others:
        blocks, lines, finer = _pieces(text)
        keys = {normalize(p) for p in [*lines, *finer, *(q for b in blocks for q in b)]}
        common = keys if common is None else common & keys
    return common or set()


def restate_probes(prompt: str, reference: str, *, instruction: str = "",
                   others: Sequence[str] = (), limit: int = LIMIT) -> Restated:
    """Probes that only restate ``prompt`` (see the module docstring); each must score 0.

    ``others``: prompts of other tasks of the same generator. A line or piece found in all of
    them is the generator's fixed text, not this task's facts (quantum_lock's "for example:
    A → B → C" is a right answer whenever the task's answer has that length), so it is left
    out and counted in ``template``; the whole-prompt and joined-premise probes always stay.
    """
    body = prompt[:-len(instruction)] if instruction and prompt.endswith(instruction) else prompt
    blocks, lines, finer = _pieces(body)
    # Without a list, every line is a premise; a list of one item restates only that item.
    groups = [b for b in blocks if len(b) > 1] if blocks else [lines]
    items = [p for b in blocks for p in b]
    whole = [("prompt", prompt), ("prompt_body", body.strip())] + _joined(groups)
    parts = [(f"item_{i}", p) for i, p in enumerate(items)]
    parts += [(f"line_{i}", p) for i, p in enumerate(lines)]
    parts += [(f"piece_{i}", p) for i, p in enumerate(finer)]
    fixed = _template(others) if others else set()
    want = normalize(reference)
    out: dict[str, str] = {}
    seen: set[str] = set()
    skipped = template = 0
    for n, (name, text) in enumerate(whole + parts):
        key = normalize(text)
        if key in seen or sum(ch.isalnum() for ch in key) < MIN_ALNUM:
            continue
        seen.add(key)
        if key == want:
            skipped += 1
        elif n >= len(whole) and key in fixed:
            template += 1
        elif len(out) < limit:
            out[f"restate_{name}"] = text
    return Restated(out, skipped, template)
