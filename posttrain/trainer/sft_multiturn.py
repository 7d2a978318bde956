"""SFT on multi-turn demonstrations, in exactly the token layout RL trains.

What it is: a domain's reference trajectory (``reference_actions(task)``: tool calls, then a
final answer) is *played through the episode engine* by :class:`DemonstrationPolicy`, a
backend that answers each turn with the next scripted action tokenised as the policy would
have sampled it (the action text's ids, then EOS) and records the prompt ids the RL backend
renders for that turn (``renderer.render(messages, tools)``, the HF backend's own method).
The live env executes every tool call, so tool results are the env's real replies, and the
engine verifies the episode. The trajectory then goes through the RL batch's own
:func:`~posttrain.trainer.batch.trajectory_segments`: its action mask (the policy's own
tokens) is the SFT loss mask and everything else — system prompt, tool specs, user turns,
tool results, role tokens the template adds — is context only.

Guarantees:
- for the same trajectory the SFT example has the same token ids and the same trained
  positions as the RL :class:`~posttrain.trainer.batch.PolicyBatch` row (a context
  compaction starts a new example exactly where RL starts a new row);
- :func:`play_demonstrations` keeps only episodes that the env ended (``done``) with score
  1.0 — a demonstration that fails under the run's episode budgets is counted, not trained;
- :func:`pack_examples` puts several examples in one row of at most ``max_length`` tokens
  (first fit, in order): position ids restart at 0 for every example and the 4-D additive
  attention mask is block-diagonal causal, so no token attends across an example boundary
  and each example's logits equal those of the example alone (tested); the first token of
  every example is never a target (it is not predicted from its own context); an example
  longer than ``max_length`` is dropped and counted (cutting it would train positions RL
  never sees);
- :func:`multiturn_sft_batch` draws nothing itself: the caller passes tasks of training
  seeds (the SFT phase's task stream, positions ``0, 1, ...``; held-out seeds start at
  ``eval.seed_offset``, and :func:`check_training_seeds` refuses any task at or above it).

What it does not do: learn from logprobs (a demonstration has none), or match the layout of
a backend that renders prompts differently from the renderer given (pass the RL backend's).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import torch

from posttrain.core.types import Completion, Task, Trajectory
from posttrain.inference.base import SamplingParams
from posttrain.rollout import EpisodeLimits, ScriptedPolicy, play_groups

from .batch import Segment, trajectory_segments
from .sft import _ids

Script = Callable[[Task], Sequence[str]]


class DemonstrationPolicy:
    """An InferenceBackend that plays scripted actions as token ids the policy could sample.

    ``renderer`` has ``tokenizer`` and ``render(messages, tools) -> ids`` (an
    :class:`~posttrain.inference.hf.HFBackend`). An action is ``tokenizer(text)`` ids plus EOS,
    cut to ``params.max_new_tokens`` with ``finish_reason="length"`` when longer — what the
    sampler would have produced under the same cap. Logprobs are 0 (there is no sampler)."""

    per_prompt_tools = True  # like the HF backend: each prompt is rendered with its own tools

    def __init__(self, renderer: Any, tasks: Sequence[Task], script: Script,
                 policy_version: int = 0):
        self.tokenizer = renderer.tokenizer
        self._render = renderer.render
        self._script = ScriptedPolicy(tasks, script, policy_version)
        eos = self.tokenizer.eos_token_id
        if eos is None:
            raise ValueError("the tokenizer has no eos_token_id; a demonstration must end its turns")
        self._eos = int(eos)

    @property
    def policy_version(self) -> int:
        return self._script.policy_version

    def load_weights(self, version: int, weights: Any) -> None:
        self._script.load_weights(version, weights)

    def generate(self, prompts: Sequence[Sequence[Mapping[str, Any]]],
                 params: SamplingParams) -> list[list[Completion]]:
        tools_P = params.prompt_tools if params.prompt_tools is not None else [params.tools] * len(prompts)
        scripted = self._script.generate(prompts, replace(params, n=1))
        out = []
        for prompt, tools, (c,) in zip(prompts, tools_P, scripted):
            ids = _ids(self.tokenizer(c.text, add_special_tokens=False)) + [self._eos]
            reason = "stop"
            if len(ids) > params.max_new_tokens:
                ids, reason = ids[:params.max_new_tokens], "length"
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            one = Completion(text, tuple(ids), (0.0,) * len(ids), reason, self.policy_version,
                             tuple(self._render(prompt, tools)))
            out.append([one] * params.n)
        return out


def reference_script(task: Task) -> list[str]:
    """The domain's scripted reference episode (``reference_actions``; else ``[solve]``)."""
    from posttrain.domains.base import get_domain

    dom = get_domain(task.domain)
    ref = getattr(dom, "reference_actions", None)
    return list(ref(task)) if callable(ref) else [dom.solve(task)]


@dataclass(frozen=True)
class Demonstrations:
    """Trajectories kept as demonstrations and the counts of those that were not."""

    trajectories: list[Trajectory]
    stats: dict[str, float] = field(default_factory=dict)


def _distinct_prompts(tasks: Sequence[Task]) -> list[list[Task]]:
    """Tasks in batches without two equal prompts: the scripted policy finds a task by its
    prompt, and two seeds may share a prompt while their tools return different data."""
    batches: list[tuple[set[str], list[Task]]] = []
    for task in tasks:
        key = json.dumps(list(task.prompt), sort_keys=True, default=str)
        for keys, batch in batches:
            if key not in keys:
                keys.add(key)
                batch.append(task)
                break
        else:
            batches.append(({key}, [task]))
    return [batch for _, batch in batches]


def play_demonstrations(renderer: Any, tasks: Sequence[Task], *, script: Script = reference_script,
                        max_new_tokens: int = 1 << 20, limits: EpisodeLimits | None = None,
                        make_env: Any = None, keep_failed: bool = False) -> Demonstrations:
    """One scripted episode per task through the engine; only ``done`` episodes scoring 1.0
    are kept (unless ``keep_failed``). ``max_new_tokens`` and ``limits``: the RL run's."""
    params = SamplingParams(n=1, max_new_tokens=max_new_tokens)
    played: list[Trajectory] = []
    for batch in _distinct_prompts(tasks):
        policy = DemonstrationPolicy(renderer, batch, script)
        groups, _ = play_groups(policy, batch, params, limits=limits, make_env=make_env)
        played += [g.trajectories[0] for g in groups]
    kept, failed = [], 0
    for t in played:
        ok = t.usable and t.stop_reason == "done" and t.reward >= 1.0 - 1e-9
        failed += int(not ok)
        if ok or keep_failed:
            kept.append(t)
    return Demonstrations(kept, {"sft/demos": float(len(kept)), "sft/demos_failed": float(failed)})


def demonstration_examples(trajectories: Sequence[Trajectory]) -> list[Segment]:
    """SFT examples of trajectories: the RL batch's own segments (the action mask is the loss mask)."""
    return [s for t in trajectories for s in trajectory_segments(t) if any(s.action_mask[1:])]


def check_training_seeds(tasks: Sequence[Task], seed_offset: int) -> None:
    """Refuse a held-out task (seed at or above ``seed_offset``) as SFT data."""
    bad = [t.key for t in tasks if t.seed >= seed_offset]
    if bad:
        raise ValueError(f"held-out seeds (>= {seed_offset}) must never be SFT data: {bad[:3]}")


@dataclass(frozen=True)
class PackedSFTBatch:
    """Rows of several examples each; ``sft_loss``/``sft_step`` take it like an SFTBatch."""

    input_ids: torch.Tensor  # [B, L] long, right-padded
    attention_mask: torch.Tensor  # [B, 1, L, L] float, 0 where allowed, dtype min elsewhere
    position_ids: torch.Tensor  # [B, L] long, from 0 in every example
    loss_mask: torch.Tensor  # [B, L] bool, True on the policy's own tokens
    example_ids: torch.Tensor  # [B, L] long, index of the example in the input; -1 on padding
    stats: Mapping[str, float] = field(default_factory=dict)


def _first_fit(lengths: Sequence[int], max_length: int) -> list[list[int]]:
    rows: list[list[int]] = []
    room: list[int] = []
    for i, n in enumerate(lengths):
        for r, left in enumerate(room):
            if n <= left:
                rows[r].append(i)
                room[r] -= n
                break
        else:
            rows.append([i])
            room.append(max_length - n)
    return rows


def block_causal_mask(example_ids: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """``[B, 1, L, L]`` additive mask: query ``i`` sees key ``j <= i`` of its own example only.
    Padding queries see only themselves (a finite row, so no NaN in the softmax)."""
    L = example_ids.shape[1]
    same = example_ids[:, :, None] == example_ids[:, None, :]
    causal = torch.ones(L, L, dtype=torch.bool).tril()
    allowed = same & causal & (example_ids >= 0)[:, None, :]
    allowed |= torch.eye(L, dtype=torch.bool)
    mask = torch.zeros(allowed.shape, dtype=dtype).masked_fill(~allowed, torch.finfo(dtype).min)
    return mask[:, None]


def pack_examples(examples: Sequence[Segment], pad_id: int, max_length: int) -> PackedSFTBatch:
    """Pack examples into rows (see the module docstring); raises when none fits."""
    fits = [i for i, e in enumerate(examples) if len(e.token_ids) <= max_length]
    if not fits:
        raise ValueError(f"no SFT example fits max_length={max_length} "
                         f"(shortest has {min((len(e.token_ids) for e in examples), default=0)} tokens)")
    rows = _first_fit([len(examples[i].token_ids) for i in fits], max_length)
    L = max(sum(len(examples[fits[k]].token_ids) for k in row) for row in rows)
    B = len(rows)
    input_ids = torch.full((B, L), int(pad_id), dtype=torch.long)
    position_ids = torch.zeros((B, L), dtype=torch.long)
    loss_mask = torch.zeros((B, L), dtype=torch.bool)
    example_ids = torch.full((B, L), -1, dtype=torch.long)
    for b, row in enumerate(rows):
        at = 0
        for k in row:
            ex = examples[fits[k]]
            n = len(ex.token_ids)
            input_ids[b, at:at + n] = torch.tensor(ex.token_ids, dtype=torch.long)
            position_ids[b, at:at + n] = torch.arange(n)
            mask = torch.tensor(ex.action_mask, dtype=torch.bool)
            mask[0] = False  # nothing of its own example predicts an example's first token
            loss_mask[b, at:at + n] = mask
            example_ids[b, at:at + n] = fits[k]
            at += n
    stats = {"sft/rows": float(B), "sft/examples": float(len(fits)),
             "sft/too_long": float(len(examples) - len(fits)),
             "sft/tokens": float(loss_mask.sum()),
             "sft/fill": float((example_ids >= 0).sum()) / float(B * L)}
    return PackedSFTBatch(input_ids, block_causal_mask(example_ids), position_ids, loss_mask,
                          example_ids, stats)


def single_turn_example(renderer: Any, task: Task, answer: str) -> Segment:
    """The one-turn example of a single-turn task: the layout the engine gives its episode
    (the prompt rendered without tools, the answer's ids and EOS trained), built without
    playing it — its reference passed conformance and its verifier may need a sandbox."""
    tok = renderer.tokenizer
    prompt = list(renderer.render(list(task.prompt), ()))
    answer_ids = _ids(tok(answer, add_special_tokens=False)) + [int(tok.eos_token_id)]
    return Segment(tuple(prompt + answer_ids), (False,) * len(prompt) + (True,) * len(answer_ids),
                   (0.0,) * (len(prompt) + len(answer_ids)), 0)


def multiturn_sft_batch(renderer: Any, tasks: Sequence[Task], pad_id: int, max_length: int, *,
                        max_new_tokens: int = 1 << 20, limits: EpisodeLimits | None = None,
                        ) -> tuple[PackedSFTBatch | None, dict[str, float]]:
    """A packed batch of the tasks' reference demonstrations (None when no example fits).

    Multi-turn tasks (domains with ``make_env``) are played by :func:`play_demonstrations`;
    single-turn tasks give :func:`single_turn_example` of ``solve(task)``."""
    from posttrain.domains.base import get_domain

    own_env = [callable(getattr(get_domain(t.domain), "make_env", None)) for t in tasks]
    multi = [t for t, m in zip(tasks, own_env) if m]
    single = [t for t, m in zip(tasks, own_env) if not m]
    examples = [single_turn_example(renderer, t, get_domain(t.domain).solve(t)) for t in single]
    stats: dict[str, float] = {"sft/demos": 0.0, "sft/demos_failed": 0.0}
    if multi:
        demos = play_demonstrations(renderer, multi, max_new_tokens=max_new_tokens, limits=limits)
        examples += demonstration_examples(demos.trajectories)
        stats.update(demos.stats)
    stats["sft/single_turn"] = float(len(single))
    if not any(len(e.token_ids) <= max_length for e in examples):
        return None, {**stats, "sft/too_long": float(len(examples)), "sft/examples": 0.0}
    batch = pack_examples(examples, pad_id, max_length)
    return batch, {**stats, **batch.stats}
