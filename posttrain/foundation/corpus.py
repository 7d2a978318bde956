"""The foundation's pre-training corpus: documents of training seeds, a BPE tokenizer, a token file.

What it holds (``CorpusSpec`` chooses): for every selected domain, level and training seed,
the prompt and reference answer of a single-turn task laid out exactly as the engine's
one-turn episode (:func:`posttrain.trainer.sft_multiturn.single_turn_example`); for every
multi-turn domain, the reference demonstration (tool calls, the env's real tool results,
final answer) *played through the episode engine* and cut into the RL batch's own rows
(:func:`~posttrain.trainer.sft_multiturn.demonstration_examples`); plus, optionally, the
Python standard library's sources (tests excluded, sorted, up to ``stdlib_mb``).

How: demonstrations are played once with a byte-level renderer (lossless, so every action
and tool result is exact text), the BPE tokenizer is trained on all document text (special
tokens removed: they are atomic anyway), then every demonstration turn is re-tokenised with
it — prompt ids = the BPE ids of the rendered prompt, action ids = the action text's ids +
EOS — which is exactly what ``DemonstrationPolicy`` would record with the BPE renderer
(tested), without playing the episodes twice.

Packing: documents (each ending in EOS: the separator) are shuffled with ``shuffle_seed``,
concatenated and cut into rows of ``seq_len`` tokens (the tail that fills no row is dropped).
The rows are one ``tokens.npy`` (uint16, ``[rows, seq_len]``, opened as a memmap by the
trainer) beside ``tokenizer/`` and ``manifest.json``, in ``CACHE/<corpus_key>/``, written
atomically. ``corpus_hash`` = sha256 of the sha256 digests of the token file and ``tokenizer.json``.

Guarantees: deterministic (the same recipe on the same code and Python gives the same bytes,
in another process and under another PYTHONHASHSEED too — tested; adapter domains such as
reasoning-gym's are left out unless ``adapters: true``, because their tasks are not); tasks
are drawn only from ``[seed_start, seed_stop)`` (the recipe refuses held-out seeds and
:func:`corpus_tasks` checks every task again); a cached corpus
is reused only when its bytes still hash to its manifest. Not: reproducible across Python
versions when ``stdlib_mb > 0`` (the stdlib differs; the manifest records the version).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import sys
import sysconfig
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from posttrain.core.errors import ConfigError
from posttrain.core.types import Task, Trajectory
from posttrain.domains.base import DOMAINS, FAMILIES, get_domain, load_builtin_domains, sample_task
from posttrain.models.tokenizer import SPECIAL_TOKENS, train_subword_tokenizer
from posttrain.rollout import EpisodeLimits
from posttrain.trainer.batch import Segment
from posttrain.trainer.sft_multiturn import (check_training_seeds, demonstration_examples,
                                             play_demonstrations, single_turn_example)

from .recipe import CorpusSpec, FoundationRecipe, corpus_key

_SPECIAL = re.compile("|".join(re.escape(t) for t in SPECIAL_TOKENS))


class TemplateRenderer:
    """Renders a chat prompt to ids exactly as ``HFBackend.render`` does, without a model."""

    def __init__(self, tokenizer: Any):
        self.tokenizer = tokenizer

    def render(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = ()) -> list[int]:
        text = self.text(messages, tools)
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def text(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = ()) -> str:
        return self.tokenizer.apply_chat_template(
            [dict(m) for m in messages], tools=[dict(t) for t in tools] or None,
            add_generation_prompt=True, tokenize=False)


def byte_tokenizer() -> Any:
    """Specials + the 256 byte symbols, no merges: lossless, used to play demonstrations once."""
    return train_subword_tokenizer([], vocab_size=300)


def _native(dom: Any) -> bool:
    """Built-in generators; adapters (reasoning-gym) draw tasks whose text can depend on
    PYTHONHASHSEED (set order), which would make the corpus differ from process to process."""
    return bool(getattr(dom, "native", True)) and dom.id not in DOMAINS.plugin_ids


def select_domains(spec: CorpusSpec) -> list[Any]:
    """The domains of the recipe, sorted by id; unknown ids and an empty selection are errors."""
    load_builtin_domains()
    unknown = sorted(set(spec.families or ()) - set(FAMILIES))
    if unknown:
        raise ConfigError(f"corpus.families: unknown {unknown}; allowed: {', '.join(FAMILIES)}")
    chosen = {}
    for did in DOMAINS.ids():
        dom = get_domain(did)
        if spec.families is not None and dom.family not in spec.families:
            continue
        if not spec.adapters and not _native(dom):
            continue
        if getattr(dom, "tier", "light") in spec.tiers:
            chosen[dom.id] = dom
    for did in spec.include_domains:
        dom = get_domain(did)  # raises naming the unknown id
        chosen[dom.id] = dom
    for did in spec.exclude_domains:
        chosen.pop(get_domain(did).id, None)
    if not chosen:
        raise ConfigError(f"corpus selects no domain (families={spec.families}, tiers={spec.tiers})")
    return [chosen[k] for k in sorted(chosen)]


def corpus_tasks(spec: CorpusSpec) -> list[Task]:
    tasks = []
    for dom in select_domains(spec):
        levels = [d for d in dom.difficulties if spec.levels is None or d in spec.levels]
        tasks += [sample_task(dom, seed=s, difficulty=d) for d in levels
                  for s in range(spec.seed_start, spec.seed_stop)]
    check_training_seeds(tasks, spec.heldout_seed_offset)
    return tasks


def _multi(task: Task) -> bool:
    return callable(getattr(get_domain(task.domain), "make_env", None))


def relayout(traj: Trajectory, src_tok: Any, dst_tok: Any) -> Trajectory:
    """The trajectory as ``DemonstrationPolicy`` would record it with ``dst_tok``: each turn's
    prompt re-tokenised from its exact text, each action = its text's ids + EOS."""
    eos = int(dst_tok.eos_token_id)
    turns = []
    for turn in traj.turns:
        act = turn.action
        text = src_tok.decode(list(act.prompt_token_ids), skip_special_tokens=False)
        prompt = tuple(dst_tok(text, add_special_tokens=False)["input_ids"])
        ids = tuple(dst_tok(act.text, add_special_tokens=False)["input_ids"]) + (eos,)
        turns.append(replace(turn, action=replace(act, token_ids_T=ids, logprobs_T=(0.0,) * len(ids),
                                                  prompt_token_ids=prompt)))
    return replace(traj, turns=tuple(turns))


def _stdlib_sources(mb: float) -> list[str]:
    budget, out = int(mb * 1e6), []
    for f in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        if budget <= 0:
            break
        if {"test", "tests", "idle_test"} & set(f.parts) or "site-packages" in f.parts:
            continue
        src = f.read_text(errors="ignore")
        out.append(src)
        budget -= len(src)
    return out


@dataclass
class Documents:
    single: list[tuple[Task, str]]  # (task, reference answer)
    demos: list[Trajectory]  # played with the byte tokenizer
    stdlib: list[str]
    stats: dict[str, float]


def build_documents(spec: CorpusSpec) -> Documents:
    """Tasks of training seeds, their reference answers and played demonstrations, stdlib text."""
    tasks = corpus_tasks(spec)
    single = [(t, get_domain(t.domain).solve(t)) for t in tasks if not _multi(t)]
    multi = [t for t in tasks if _multi(t)]
    stats = {"tasks": float(len(tasks)), "single_turn": float(len(single)), "demos": 0.0,
             "demos_failed": 0.0}
    demos: list[Trajectory] = []
    if spec.demonstrations and multi:
        limits = EpisodeLimits(max_turns=spec.max_turns, max_total_tokens=1 << 24,
                               env_workers=spec.env_workers)
        played = play_demonstrations(TemplateRenderer(byte_tokenizer()), multi, limits=limits)
        demos = played.trajectories
        stats["demos"] = float(len(demos))
        stats["demos_failed"] = played.stats.get("sft/demos_failed", 0.0)
    stdlib = _stdlib_sources(spec.stdlib_mb)
    stats["stdlib_files"] = float(len(stdlib))
    return Documents(single, demos, stdlib, stats)


def _texts(docs: Documents) -> list[str]:
    """Every document's text, cut at special tokens (they are atomic in every tokenizer)."""
    byte = byte_tokenizer()
    render = TemplateRenderer(byte)
    whole = [render.text(list(t.prompt)) + answer for t, answer in docs.single]
    for traj in docs.demos:
        whole += [byte.decode(list(s.token_ids), skip_special_tokens=False)
                  for s in demonstration_examples([traj])]
    whole += docs.stdlib
    return [piece for text in whole for piece in _SPECIAL.split(text) if piece]


def tokenize_documents(docs: Documents, tok: Any) -> list[list[int]]:
    """Token ids of every document in the RL layout, each ending with EOS."""
    eos = int(tok.eos_token_id)
    render = TemplateRenderer(tok)
    segs: list[Segment] = [single_turn_example(render, t, a) for t, a in docs.single]
    byte = byte_tokenizer()
    segs += demonstration_examples([relayout(t, byte, tok) for t in docs.demos])
    out = [list(s.token_ids) for s in segs]
    out += [list(tok(src, add_special_tokens=False)["input_ids"]) for src in docs.stdlib]
    return [d if d and d[-1] == eos else d + [eos] for d in out]


def pack(documents: list[list[int]], seq_len: int, shuffle_seed: int) -> np.ndarray:
    """Shuffle documents, concatenate, cut into ``[rows, seq_len]`` uint16 (tail dropped)."""
    order = list(range(len(documents)))
    random.Random(shuffle_seed).shuffle(order)
    stream = np.fromiter((i for k in order for i in documents[k]), dtype=np.int64)
    rows = len(stream) // seq_len
    if rows < 2:
        raise ConfigError(f"the corpus holds {len(stream)} tokens: fewer than 2 rows of "
                          f"seq_len={seq_len}; add seeds, domains or stdlib_mb")
    if stream.max() >= 1 << 16:
        raise ConfigError("token ids exceed uint16; vocab_size must stay below 65536")
    return stream[: rows * seq_len].reshape(rows, seq_len).astype(np.uint16)


def file_sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


@dataclass(frozen=True)
class Corpus:
    folder: Path
    manifest: dict[str, Any]

    @property
    def tokens(self) -> np.ndarray:
        return np.load(self.folder / "tokens.npy", mmap_mode="r")

    @property
    def tokenizer_dir(self) -> Path:
        return self.folder / "tokenizer"

    @property
    def corpus_hash(self) -> str:
        return str(self.manifest["corpus_hash"])


def _corpus_hash(folder: Path) -> str:
    parts = (file_sha256(folder / "tokens.npy"), file_sha256(folder / "tokenizer" / "tokenizer.json"))
    return hashlib.sha256(" ".join(parts).encode()).hexdigest()


def cached_corpus(cache_root: Path, key: str) -> Corpus | None:
    folder = cache_root / key
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
        if _corpus_hash(folder) == manifest["corpus_hash"]:
            return Corpus(folder, manifest)
    except (OSError, ValueError, KeyError):
        pass
    return None


def build_corpus(recipe: FoundationRecipe, cache_root: str | Path, log: Any = None) -> Corpus:
    """The recipe's corpus from the cache, else built, written atomically and cached."""
    cache_root, key = Path(cache_root), corpus_key(recipe)
    hit = cached_corpus(cache_root, key)
    if hit is not None:
        return hit
    say = log or (lambda _msg: None)
    t0 = time.perf_counter()
    docs = build_documents(recipe.corpus)
    say(f"corpus: {int(docs.stats['tasks'])} tasks, {int(docs.stats['demos'])} demonstrations, "
        f"{len(docs.stdlib)} stdlib files ({time.perf_counter() - t0:.0f} s)")
    texts = _texts(docs)
    tok = train_subword_tokenizer(texts, vocab_size=recipe.tokenizer.vocab_size,
                                  min_frequency=recipe.tokenizer.min_frequency)
    documents = tokenize_documents(docs, tok)
    rows = pack(documents, recipe.training.seq_len, recipe.corpus.shuffle_seed)
    tmp = cache_root / f".{key}.{uuid.uuid4().hex[:8]}"
    tmp.mkdir(parents=True)
    np.save(tmp / "tokens.npy", rows)
    tok.save_pretrained(str(tmp / "tokenizer"))
    manifest = {"corpus_key": key, "corpus_hash": _corpus_hash(tmp), "rows": int(rows.shape[0]),
                "seq_len": int(rows.shape[1]), "tokens": int(rows.size), "documents": len(documents),
                "document_tokens": int(sum(map(len, documents))), "chars": int(sum(map(len, texts))),
                "vocab_size": len(tok), "python": sys.version.split()[0],
                "build_s": round(time.perf_counter() - t0, 1),
                **{k: int(v) for k, v in docs.stats.items()}}
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
    final = cache_root / key
    if final.exists():  # a stale or damaged entry: replaced, never reused
        shutil.rmtree(final)
    os.replace(tmp, final)
    return Corpus(final, manifest)
