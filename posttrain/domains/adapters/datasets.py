"""Local datasets as domains: a JSONL file, a Parquet file or a Hugging Face ``datasets``
folder with a question column and an answer column becomes a registered domain.

Use::

    from posttrain.domains.adapters.datasets import register_dataset_domain
    register_dataset_domain("data/capitals.jsonl", id="text_data.capitals-v1",
                            family="text_data", verifier="exact")

What it guarantees:

- the file is read once, at registration; a missing column, an empty question or answer, an
  unknown verifier or too few rows raise :class:`ConfigError` naming the field, the value and
  what is allowed (never a half-registered domain);
- tasks are rows: ``generate(rng, d)`` picks a row of difficulty bucket ``d`` with the given
  rng only, so ``(seed, difficulty)`` always gives the same row; the answer goes to
  ``task.hidden`` only, the row number to ``task.metadata``;
- difficulty: with ``difficulty_column`` its integer values 1..k are the levels as they are
  (3 <= k <= 10); any other values are cut into ``levels`` quantile buckets; without the
  column, into ``levels`` quantiles of question length, then answer length (short = easy);
- verifiers are strict (whole extracted answer, no partial credit for padding): ``exact``
  (case-insensitive, whitespace-normalised), ``exact_case``, ``numeric`` (one number,
  relative tolerance 1e-6), ``json`` (one JSON document, deep-equal), ``choice`` (one option
  letter such as ``B``), or any callable ``(answer_text, expected) -> float in [0, 1]``;
- the domain is flagged ``native = False`` and ``source = "dataset:<path>"``.

What it does not do: download anything (a folder written by ``Dataset.save_to_disk`` is read
with ``datasets.load_from_disk``, the ``datasets`` extra), stream files larger than memory,
or judge free-form answers (no model-graded verifier).
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from posttrain.core.errors import ConfigError, MissingExtraError
from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain
from posttrain.verifiers.structured import json_equal, parse_json
from posttrain.verifiers.text import exact_match, extract_answer, numeric_match, parse_number

MAX_ANSWER_CHARS = 20_000
_CHOICE = re.compile(r"^\(?([A-Za-z])\)?[.)]?$")


def _choice(answer: str, expected: Any) -> float:
    m = _CHOICE.match(extract_answer(answer))
    want = _CHOICE.match(str(expected).strip())
    return 1.0 if m and want and m.group(1).upper() == want.group(1).upper() else 0.0


def _json(answer: str, expected: Any) -> float:
    ok, got = parse_json(answer)
    return 1.0 if ok and json_equal(got, expected) else 0.0


VERIFIERS: dict[str, Callable[[str, Any], float]] = {
    "exact": lambda a, e: exact_match(a, str(e)),
    "exact_case": lambda a, e: exact_match(a, str(e), case=True),
    "numeric": lambda a, e: numeric_match(a, float(e)),
    "json": _json,
    "choice": _choice,
}


@dataclass(frozen=True)
class Row:
    question: str
    answer: Any  # str, or a float for ``numeric``, or a JSON value for ``json``
    index: int


def read_rows(path: str | Path, *, split: str | None = None) -> list[dict[str, Any]]:
    """Rows of a JSONL file, a Parquet file or a ``save_to_disk`` folder, as dicts."""
    p = Path(path)
    if p.is_dir():
        return _read_hf_folder(p, split)
    if not p.is_file():
        raise ConfigError(f"dataset path={str(p)!r}: no such file or folder")
    suffix = "".join(p.suffixes[-2:]) if p.suffix == ".gz" else p.suffix
    if suffix in (".jsonl", ".ndjson", ".jsonl.gz"):
        return _read_jsonl(p)
    if suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        return pq.read_table(p).to_pylist()
    raise ConfigError(f"dataset path={str(p)!r}: allowed are .jsonl, .jsonl.gz, .parquet or a "
                      "folder written by datasets' save_to_disk")


def _read_jsonl(p: Path) -> list[dict[str, Any]]:
    import gzip

    opener = gzip.open if p.suffix == ".gz" else open
    rows = []
    with opener(p, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise ConfigError(f"dataset {str(p)!r} line {n}: not JSON ({exc})") from exc
            if not isinstance(row, dict):
                raise ConfigError(f"dataset {str(p)!r} line {n}: expected an object, got "
                                  f"{type(row).__name__}")
            rows.append(row)
    return rows


def _read_hf_folder(p: Path, split: str | None) -> list[dict[str, Any]]:
    try:
        import datasets
    except ImportError as exc:
        raise MissingExtraError("datasets", "datasets") from exc
    ds = datasets.load_from_disk(str(p))
    if isinstance(ds, datasets.DatasetDict):
        names = list(ds)
        chosen = split or ("train" if "train" in names else names[0] if len(names) == 1 else None)
        if chosen not in names:
            raise ConfigError(f"dataset split={chosen!r}: allowed values are {names}")
        ds = ds[chosen]
    return [dict(r) for r in ds]


def _column(rows: Sequence[Mapping[str, Any]], name: str, field: str) -> None:
    if rows and name not in rows[0]:
        raise ConfigError(f"{field}={name!r}: no such column; columns are {sorted(rows[0])}")


def _answer_value(raw: Any, verifier: str | Callable, where: str) -> Any:
    if verifier == "numeric":
        v = parse_number(str(raw))
        if v is None:
            raise ConfigError(f"{where}: answer {raw!r} is not a number (verifier='numeric')")
        return v
    if verifier == "json":
        if isinstance(raw, str):
            try:
                return json.loads(raw)
            except ValueError:
                return raw
        return raw
    return str(raw).strip()


def bucket_levels(values: Sequence[Any], levels: int) -> list[int]:
    """Level 1..``levels`` of each value by quantile rank (ties stay in one bucket)."""
    order = sorted(set(values))
    rank = {v: i for i, v in enumerate(order)}
    n = len(order)
    return [min(levels, 1 + rank[v] * levels // n) for v in values]


def _difficulties(rows: Sequence[Mapping[str, Any]], parsed: Sequence[Row],
                  column: str | None, levels: int) -> list[int]:
    if column is None:  # longer questions (then longer answers) are harder
        return bucket_levels([(len(r.question), len(str(r.answer))) for r in parsed], levels)
    raw = [r.get(column) for r in rows]
    if all(isinstance(v, int) and not isinstance(v, bool) for v in raw):
        distinct = sorted(set(raw))
        if distinct[0] >= 1 and len(distinct) >= 3 and len(distinct) <= 10:
            return list(raw)  # the dataset's own levels, kept as written
    try:
        return bucket_levels([float(v) for v in raw], levels)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"difficulty_column={column!r}: values must be numbers "
                          f"(got {raw[:3]!r}...)") from exc


class DatasetDomain:
    """A domain over the rows of one local dataset (see the module docstring)."""

    env_kind = "single_turn"
    native = False

    def __init__(self, *, id: str, family: str, rows: Sequence[Row], levels: Sequence[int],
                 verifier: str | Callable[[str, Any], float], source: str,
                 system: str | None = None, instruction: str | None = None):
        self.id, self.family, self.source = id, family, source
        self.verifier_name = verifier if isinstance(verifier, str) else getattr(verifier, "__name__", "custom")
        self._verify = VERIFIERS[verifier] if isinstance(verifier, str) else verifier
        self._system, self._instruction = system, instruction
        self._buckets: dict[int, list[Row]] = {}
        for row, d in zip(rows, levels):
            self._buckets.setdefault(int(d), []).append(row)
        self.difficulties = tuple(sorted(self._buckets))
        self.description = f"Rows of {source} (question -> answer, verifier {self.verifier_name})."

    def rows(self, difficulty: int) -> list[Row]:
        return list(self._buckets[difficulty])

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        row = rng.choice(self._buckets[difficulty])
        prompt = row.question + (f"\n\n{self._instruction}" if self._instruction else "")
        return make_task(self.id, difficulty, prompt, answer=row.answer, system=self._system,
                         metadata={"source": self.source, "row": row.index})

    def render(self, value: Any) -> str:
        """An answer value written as the verifier expects it."""
        if self.verifier_name == "json":
            return json.dumps(value)
        if self.verifier_name == "numeric":
            return str(int(value)) if float(value).is_integer() else repr(float(value))
        return str(value)

    def solve(self, task: Task) -> str:
        return self.render(task.hidden["answer"])

    def score(self, task: Task, answer: str) -> Score:
        if len(answer or "") > MAX_ANSWER_CHARS:
            return Score(0.0, reason="answer too long", verifier_version=self.id)
        try:
            v = float(self._verify(answer or "", task.hidden["answer"]))
        except Exception as exc:  # a user's callable crashing is a verifier failure, not a 0
            from posttrain.core.errors import ErrorInfo

            return Score(0.0, error=ErrorInfo.from_exception(exc), verifier_version=self.id)
        return Score(v, components={self.verifier_name: (v, 1.0)},
                     reason="match" if v >= 1.0 else "mismatch", verifier_version=self.id)

    def probes(self, task: Task) -> dict[str, str]:
        """Other rows' answers (wrong for this task), the answer with a wrong one appended,
        and the question's own lines and sentences restated (:mod:`._restate`)."""
        from ._restate import restate_probes

        mine = self.solve(task)
        others = [r for r in self._buckets.get(task.difficulty, []) if r.index != task.metadata.get("row")]
        users = [m for m in task.prompt if m.get("role") == "user"]
        out: dict[str, str] = dict(restate_probes(
            str(users[-1]["content"]) if users else "", mine,
            instruction=f"\n\n{self._instruction}" if self._instruction else "",
            others=[r.question for r in others[:2]]).probes)
        for r in others[:3]:
            text = self.render(r.answer)
            if self._verify(text, task.hidden["answer"]) == 0.0:
                out[f"row_{r.index}_answer"] = text
                out[f"mine_then_row_{r.index}"] = f"{mine} {text}"
        return out


def register_dataset_domain(path: str | Path, *, id: str, family: str, question: str = "question",
                            answer: str = "answer",
                            verifier: str | Callable[[str, Any], float] = "exact",
                            difficulty_column: str | None = None, levels: int = 3,
                            split: str | None = None, system: str | None = None,
                            instruction: str | None = None) -> DatasetDomain:
    """Read ``path`` and register a :class:`DatasetDomain` under ``id``; returns it."""
    if isinstance(verifier, str) and verifier not in VERIFIERS:
        raise ConfigError(f"verifier={verifier!r}: allowed values are {sorted(VERIFIERS)} or a callable")
    if levels < 3:
        raise ConfigError(f"levels={levels}: at least 3 difficulty levels are required")
    raw = read_rows(path, split=split)
    if len(raw) < levels:
        raise ConfigError(f"dataset {str(path)!r} has {len(raw)} rows; need at least levels={levels}")
    _column(raw, question, "question")
    _column(raw, answer, "answer")
    if difficulty_column is not None:
        _column(raw, difficulty_column, "difficulty_column")
    rows = []
    for i, r in enumerate(raw):
        q, a = r.get(question), r.get(answer)
        if not isinstance(q, str) or not q.strip() or a is None or str(a).strip() == "":
            raise ConfigError(f"dataset {str(path)!r} row {i}: empty {question!r} or {answer!r}")
        rows.append(Row(q.strip(), _answer_value(a, verifier, f"dataset {str(path)!r} row {i}"), i))
    levels_of = _difficulties(raw, rows, difficulty_column, levels)
    dom = DatasetDomain(id=id, family=family, rows=rows, levels=levels_of, verifier=verifier,
                        source=f"dataset:{Path(path).name}", system=system, instruction=instruction)
    if len(dom.difficulties) < 3:
        raise ConfigError(f"dataset {str(path)!r}: rows fall into {len(dom.difficulties)} difficulty "
                          "levels; need at least 3 (give difficulty_column or more varied rows)")
    register_domain(dom)
    return dom
