"""The in-process Hugging Face backend: batched sampling from any transformers causal LM.

What it is: an :class:`~posttrain.inference.base.InferenceBackend` over a
``transformers`` causal LM and its tokenizer, with its own decode loop (one
``model(input_ids, attention_mask, position_ids, past_key_values, use_cache=True)`` call per
new token for the whole batch), not ``model.generate``.

How a call runs:
1. every prompt (a chat message list) is rendered with the tokenizer's chat template
   (``params.tools``, or the prompt's own list in ``params.prompt_tools``, passed as
   ``tools=``) and tokenized; identical prompts are merged;
2. **prefix cache**: the longest common token prefix of the distinct prompts (e.g. a shared
   system prompt or tool list), when at least ``min_prefix_tokens`` long, is run once and
   its KV cache kept in a small LRU keyed by ``(policy_version, weight fingerprint, prefix
   ids)``; a later call reuses the longest run of leading tokens it shares with a cached
   prefix (the KV of a causal prefix's first m tokens is a slice of it);
3. **prompt sharing**: one prefill per distinct prompt (its suffix after the prefix, left
   padded, batched); the ``n`` samples of a prompt start on that one cache row — never ``n``
   prefills, and no copy per sample;
4. decode, **history sharing**: all P×n rows sample together, each from the logits of its
   own history, but rows with the same history (same prompt, same tokens so far) read one
   cache row, so a forward computes each distinct history once; a cache row is copied only
   when its rows draw different tokens (a trained policy's samples of a prompt mostly
   agree: 4x fewer rows per decode step on the 2-digit-addition bench). Rows that finish
   (eos or a stop string) stop being recorded at once; their cache rows are dropped when
   the cache is copied anyway or at most half of it is still read.

Logprob semantics (the trainer must recompute the same way): the behaviour logprob of a
sampled token is ``log_softmax(logits / temperature)`` at that token, taken *before* top-p
truncation; with ``greedy`` (or temperature 0) it is ``log_softmax(logits)``. It equals a
full forward pass over ``prompt + completion`` to float32 rounding (tested to 1e-4).

Guarantees:
- ``finish_reason`` is ``"stop"`` (eos or a stop string) or ``"length"``; an eos token is
  kept in ``token_ids_T`` (with its logprob) and left out of ``text``; a stop string is cut
  from ``text`` while the ids are kept up to and including the token that completed it;
- ``params.seed`` makes a call reproducible (same prompts, same weights, same result);
  ``params.prompt_seeds`` (one per prompt, ``per_prompt_seeds``) gives each sample row a
  generator of its own, seeded by (its prompt's seed, its sample index): a row's draws do not
  depend on how many other rows the call holds or when they finish, so the episode engine can
  put episodes at different turns into one call; ``params.prompt_max_new_tokens``
  (``per_prompt_budgets``) stops each prompt's rows at its own cap (finish reason ``length``);
- ``load_weights(version, state_dict)`` copies weights in place, sets ``policy_version`` and
  drops the prefix cache; in-place edits of the weights without ``load_weights`` (a shared
  module stepped by an optimizer) are caught by the weight fingerprint (tensor version
  counters), so a stale KV cache is never reused.

Sliding-window models (Mistral, Qwen2/3 with ``use_sliding_window``, Gemma 2/3, Phi-3 with a
``sliding_window``): the cache keeps every key (a plain ``DynamicCache``) and the backend
passes its own 4-D masks (:mod:`.windows`), built from each token's *position*: so the
mask always describes the keys the cache holds, and a window counts the row's tokens, not
the pads between a shared prefix and a left-padded suffix. Sampling past the window gives the
logprobs of the trainer's forward (tested per architecture in
``tests/inference/test_architectures.py``). Memory grows with the whole sequence, not the window.

Fast path: Llama-family models (Llama, Qwen2, Mistral without sliding window) decode through
:class:`~posttrain.inference.fast_decoder.FastDecoder`, a lean forward over the same
weights that is checked against the transformers forward at construction (``fast=False``
turns it off; any other model uses ``model(...)``).

What it does not do: bound a sliding-window model's cache by its window, chunked attention
(Llama 4), continuous batching, paged attention or speculative decoding (use the
vllm or openai backends for serving), stop strings that span a special token, or concurrent
``generate`` calls from several threads (one call at a time; a server puts a lock around it).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import torch

from posttrain.core.errors import InferenceError
from posttrain.core.types import Completion, Message

from .base import PromptDone, SamplingParams, check_sampling_params
from .fast_decoder import FastDecoder, KVCache
from .sampling import generators, sample
from .windows import has_window, layer_windows, window_masks


@dataclass
class HFStats:
    """Counters a caller (or a test) can read to see what the cache did."""

    prefill_rows: int = 0  # distinct prompts prefilled
    prefix_hits: int = 0
    prefix_misses: int = 0
    decode_steps: int = 0
    decode_rows: int = 0  # cache rows computed over all decode steps (rows sharing a history count once)


@dataclass
class _Rows:
    """Per cache row state of the live decode batch."""

    mask: torch.Tensor  # (B, K) attention mask over the cache
    next_pos: torch.Tensor  # (B, 1) position id of the next token
    key_pos: torch.Tensor  # (B, K) position id of every cached key (sliding windows count these)


def _names_to_load(own: Mapping[str, Any], state: Mapping[str, Any]) -> list[str]:
    """The keys ``load_weights`` copies: all of the model's, or only its LoRA adapter's when
    ``state`` holds exactly those (an adapter-only sync); anything else is an error."""
    missing = sorted(set(own) - set(state))
    if not missing:
        return list(own)
    adapter = [k for k in own if "lora_" in k]
    if adapter and set(state) == set(adapter):
        return adapter
    raise InferenceError(f"load_weights: {len(missing)} weights missing, e.g. {missing[:3]}")


class HFBackend:
    """Batched sampling over a transformers causal LM (see the module docstring)."""

    per_prompt_tools = True  # renders each prompt with its own tool list (``prompt_tools``)
    per_prompt_seeds = True  # samples each prompt's rows with generators of their own (``prompt_seeds``)
    per_prompt_budgets = True  # stops each prompt's rows at its own cap (``prompt_max_new_tokens``)
    streams_prompts = True  # hands each prompt's completions out as its rows end (``on_prompt``)

    def __init__(self, model: Any, tokenizer: Any, *, device: str = "cpu", policy_version: int = 0,
                 min_prefix_tokens: int = 16, prefix_cache_size: int = 4, fast: bool = True):
        self.device = torch.device(device)
        self.model = model.to(self.device)
        # Llama-family models decode through a checked lean forward (fast_decoder.py).
        self.fast = FastDecoder.maybe(self.model) if fast else None
        # Per layer window; when any is set the backend builds the masks by position (.windows).
        windows = layer_windows(model.config)
        self.windows = windows if has_window(windows) else None
        self.tokenizer = tokenizer
        self.policy_version = policy_version
        self.min_prefix_tokens = max(1, min_prefix_tokens)
        self.prefix_cache_size = prefix_cache_size
        self.stats = HFStats()
        self._prefix_cache: OrderedDict[tuple, list[tuple[torch.Tensor, torch.Tensor]]] = OrderedDict()
        self._pad_id = _first_id(tokenizer.pad_token_id, tokenizer.eos_token_id, 0)
        gen_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        eos = [tokenizer.eos_token_id] + (gen_eos if isinstance(gen_eos, list) else [gen_eos])
        self.eos_ids = frozenset(int(e) for e in eos if e is not None)
        self.max_positions = getattr(model.config, "max_position_embeddings", None)

    # ---------------------------------------------------------------- weights
    def load_weights(self, version: int, weights: Any) -> None:
        """Copy ``weights`` (a state dict or a module; None: already in place) and set the version.

        Over a LoRA (peft) model, a state dict of exactly its adapter tensors is accepted too:
        the frozen base stays as it is and only the adapter is copied."""
        if weights is not None:
            state = weights.state_dict() if hasattr(weights, "state_dict") else weights
            own = self.model.state_dict()
            names = _names_to_load(own, state)
            with torch.no_grad():
                for name in names:
                    own[name].copy_(state[name])
        self.policy_version = int(version)
        self._prefix_cache.clear()

    def _fingerprint(self) -> int:
        # Tensor version counters move on every in-place write (optimizer steps included).
        return sum(p._version for p in self.model.parameters())

    # ---------------------------------------------------------------- prompts
    def render(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = ()) -> list[int]:
        """Prompt token ids of one chat prompt, with the generation prompt appended."""
        try:
            text = self.tokenizer.apply_chat_template(
                [dict(m) for m in messages], tools=[dict(t) for t in tools] or None,
                add_generation_prompt=True, tokenize=False)
        except Exception as exc:  # jinja errors are not typed; name the boundary instead
            raise InferenceError(f"chat template failed: {exc}") from exc
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    # ---------------------------------------------------------------- generate
    def generate(self, prompts: Sequence[Sequence[Message]], params: SamplingParams,
                 on_prompt: PromptDone | None = None) -> list[list[Completion]]:
        """Completions per prompt. ``on_prompt(i, completions)`` is called once per prompt, as
        soon as all its rows have ended (a short answer is handed out while the call goes on
        decoding the longer ones; the rest when decoding ends), from the calling thread."""
        check_sampling_params(params)
        if not prompts:
            return []
        tools_P = params.prompt_tools if params.prompt_tools is not None else [params.tools] * len(prompts)
        if len(tools_P) != len(prompts):
            raise InferenceError(f"{len(tools_P)} tool lists for {len(prompts)} prompts")
        return self.generate_ids([tuple(self.render(p, t)) for p, t in zip(prompts, tools_P)], params,
                                 on_prompt)

    def generate_ids(self, ids_P: Sequence[Sequence[int]], params: SamplingParams,
                     on_prompt: PromptDone | None = None) -> list[list[Completion]]:
        """Like :meth:`generate` on already rendered prompts (token ids): the same ids and
        params give the same samples as ``generate`` (it calls this)."""
        check_sampling_params(params)
        if not ids_P:
            return []
        was_training = self.model.training
        if was_training:  # a module shared with the trainer; eval() walks every submodule
            self.model.eval()
        try:
            with torch.inference_mode():
                return self._generate_ids([tuple(int(i) for i in p) for p in ids_P], params, on_prompt)
        finally:
            if was_training:
                self.model.train()

    def _generate_ids(self, ids_P: list[tuple[int, ...]], params: SamplingParams,
                      on_prompt: PromptDone | None = None) -> list[list[Completion]]:
        distinct = list(dict.fromkeys(ids_P))
        if not all(distinct):
            raise InferenceError("a prompt rendered to no tokens")
        longest = max(len(d) for d in distinct)
        if self.max_positions and longest >= self.max_positions:
            raise InferenceError(f"prompt of {longest} tokens does not fit the model's "
                                 f"{self.max_positions} positions")
        budget = params.max_new_tokens
        if self.max_positions:
            budget = min(budget, self.max_positions - longest)
        version = self.policy_version
        slot = {d: i for i, d in enumerate(distinct)}
        # Output row r = prompt p, sample j; rows of one prompt are contiguous.
        src_U = [slot[ids_P[r // params.n]] for r in range(len(ids_P) * params.n)]
        cache, logits_U, mask_U, pos_U, keys_U = self._prefill(distinct)
        caps = params.prompt_max_new_tokens
        if caps is not None and len(caps) != len(ids_P):
            raise InferenceError(f"{len(caps)} token caps for {len(ids_P)} prompts")
        row_caps = None if caps is None else [min(budget, c) for c in caps for _ in range(params.n)]
        out: list[list[Completion] | None] = [None] * len(ids_P)
        left = [params.n] * len(ids_P)  # rows of each prompt still decoding

        def emit(p: int, toks, lps, reasons) -> None:
            rows = range(p * params.n, (p + 1) * params.n)
            out[p] = [Completion(self._text(toks[r], params.stop), tuple(toks[r]), tuple(lps[r]),
                                 reasons[r], version, ids_P[p]) for r in rows]
            if on_prompt is not None:
                on_prompt(p, out[p])

        def ended(rows: set[int], toks, lps, reasons) -> None:
            for r in sorted(rows):
                left[r // params.n] -= 1
                if left[r // params.n] == 0:
                    emit(r // params.n, toks, lps, reasons)

        # Every row starts on its prompt's prefilled cache row (no copy per sample).
        toks, lps, reasons = self._decode(cache, logits_U, _Rows(mask_U, pos_U, keys_U), src_U, params,
                                          budget if caps is None else min(budget, max(caps)), row_caps,
                                          ended if on_prompt is not None else None)
        for p in range(len(ids_P)):  # rows cut by the call's budget, or without early ends
            if out[p] is None:
                emit(p, toks, lps, reasons)
        return out  # type: ignore[return-value]

    def _text(self, ids: list[int], stop: Sequence[str]) -> str:
        text = self.tokenizer.decode(ids, skip_special_tokens=True)
        cuts = [i for i in (text.find(s) for s in stop) if i >= 0]
        return text[:min(cuts)] if cuts else text

    # ---------------------------------------------------------------- prefill
    def _prefill(self, distinct: list[tuple[int, ...]]):
        """KV cache, last logits, attention mask, next position and key positions per prompt."""
        prefix = self._prefix_for(distinct)
        L = len(prefix[0]) if prefix else 0
        suffixes = [d[L:] for d in distinct]
        U, S = len(distinct), max(len(s) for s in suffixes)
        ids = torch.full((U, S), self._pad_id, dtype=torch.long)
        real = torch.zeros((U, S), dtype=torch.long)
        for u, s in enumerate(suffixes):
            ids[u, S - len(s):] = torch.tensor(s, dtype=torch.long)
            real[u, S - len(s):] = 1
        pos = (L + real.cumsum(1) - 1).clamp(min=L)
        mask = torch.cat([torch.ones((U, L), dtype=torch.long), real], 1)
        kv = [(k.expand(U, -1, -1, -1), v.expand(U, -1, -1, -1)) for k, v in prefix[1]] if prefix else None
        cache = self._new_cache(kv)
        key_pos = torch.cat([torch.arange(L).expand(U, L), pos], 1)
        logits = self._forward(ids, mask, pos, cache, key_pos)
        self.stats.prefill_rows += U
        return (cache, logits, mask.to(self.device), pos[:, -1:].to(self.device) + 1,
                key_pos.to(self.device))

    def _new_cache(self, kv=None):
        """An empty cache, or one holding ``kv`` (per-layer (keys, values)), for ``_forward``."""
        if self.fast is not None:
            return KVCache.from_pairs(kv, self.fast.num_layers)
        from transformers import DynamicCache

        if self.windows is not None:  # keep every key: the masks say which ones each layer sees
            return DynamicCache(ddp_cache_data=kv)
        return DynamicCache(ddp_cache_data=kv, config=self.model.config)

    def _forward(self, ids, mask, pos, cache, key_pos=None) -> torch.Tensor:
        """Logits (B, V) of the last position; the cache grows by ``ids.shape[1]``.

        ``key_pos`` (B, K): positions of every key after this call (needed with windows)."""
        if self.fast is not None:
            return self.fast.forward(ids.to(self.device), mask.to(self.device), pos.to(self.device), cache)
        attention = mask.to(self.device)
        if self.windows is not None:
            attention = self._window_masks(attention, pos.to(self.device), key_pos.to(self.device))
        out = self.model(input_ids=ids.to(self.device), attention_mask=attention,
                         position_ids=pos.to(self.device), past_key_values=cache, use_cache=True,
                         logits_to_keep=1)  # the vocabulary projection of earlier positions is wasted work
        return out.logits[:, -1].float()

    def _window_masks(self, mask: torch.Tensor, pos: torch.Tensor, key_pos: torch.Tensor):
        """The model's 4-D masks: causal by position, padding out, each query sees itself."""
        T, K = pos.shape[1], mask.shape[1]
        allowed = mask.bool()[:, None, :] & (key_pos[:, None, :] <= pos[:, :, None])
        own = torch.zeros((T, K), dtype=torch.bool, device=mask.device)
        own[torch.arange(T), torch.arange(K - T, K)] = True  # a left pad would see nothing (NaN)
        dtype = next(self.model.parameters()).dtype
        return window_masks(allowed | own, pos, key_pos, self.windows, dtype)

    def _prefix_for(self, distinct: list[tuple[int, ...]]):
        """``(prefix ids, per-layer KV)`` shared by all prompts, or None when not worth it."""
        # The last prompt token must stay in the suffix: its logits start the answer.
        cap = min(len(d) for d in distinct) - 1
        common = _common_prefix(distinct, cap)
        stamp = (self.policy_version, self._fingerprint())
        best, best_len = None, 0
        for key in self._prefix_cache:
            shared = len(_common_prefix([key[1], common], len(common))) if key[0] == stamp else 0
            if shared > best_len:
                best, best_len = key, shared
        if best is not None and best_len >= self.min_prefix_tokens:
            self._prefix_cache.move_to_end(best)
            self.stats.prefix_hits += 1
            # Causal attention: the KV of the first m tokens of a cached prefix is its slice.
            kv = [(k[:, :, :best_len], v[:, :, :best_len]) for k, v in self._prefix_cache[best]]
            return common[:best_len], kv
        # A new prefix is only worth a separate forward when several prompts share it.
        if len(distinct) < 2 or len(common) < self.min_prefix_tokens:
            return None
        cache = self._new_cache()
        n = len(common)
        self._forward(torch.tensor([common]), torch.ones((1, n), dtype=torch.long),
                      torch.arange(n).unsqueeze(0), cache, torch.arange(n).unsqueeze(0))
        kv = [(layer.keys, layer.values) for layer in cache.layers]
        self.stats.prefix_misses += 1
        self._prefix_cache[(stamp, common)] = kv
        while len(self._prefix_cache) > self.prefix_cache_size:
            self._prefix_cache.popitem(last=False)
        return common, kv

    # ---------------------------------------------------------------- decode
    def _decode(self, cache, logits, rows: _Rows, node: list[int], params: SamplingParams,
                budget: int, caps: list[int] | None = None,
                ended: Callable[..., None] | None = None):
        """Sample every output row; ``node[r]``: the cache row output row ``r`` reads.

        Rows with the same history (same prompt, same tokens so far) read one cache row: a
        forward computes each distinct history once and every row draws its own token from
        those logits, so the rows' samples are what separate cache rows would give (equal
        logits) for a fraction of the arithmetic when samples agree — a trained policy's
        samples of one prompt mostly do."""
        B = len(node)
        toks: list[list[int]] = [[] for _ in range(B)]
        lps: list[list[float]] = [[] for _ in range(B)]
        reasons = ["length"] * B
        if budget <= 0:
            return toks, lps, reasons
        gens = generators(params, B, self.device)
        stops = tuple(params.stop)
        window = max((len(s) for s in stops), default=0) + 2
        active = [r for r in range(B) if caps is None or caps[r] > 0]  # rows still generating
        for step in range(budget):
            if not active:
                break
            gen = gens if isinstance(gens, torch.Generator) else [gens[r] for r in active]
            index = torch.tensor([node[r] for r in active], device=self.device)
            tok_A, lp_A = sample(logits[index], params, gen)
            tok = dict(zip(active, tok_A.tolist()))
            done = set()
            for r, lp in zip(active, lp_A.tolist()):
                toks[r].append(tok[r])
                lps[r].append(lp)
                if tok[r] in self.eos_ids:
                    reasons[r] = "stop"
                    done.add(r)
            if stops:
                done |= self._stopped([r for r in active if r not in done], toks, stops, window, reasons)
            if caps is not None:  # rows at their own cap end with "length"
                done |= {r for r in active if r not in done and len(toks[r]) >= caps[r]}
            active = [r for r in active if r not in done]
            if ended is not None and done:
                ended(done, toks, lps, reasons)
            if step == budget - 1 or not active:
                break
            ids = self._branch(cache, rows, node, active, tok)
            rows.mask = torch.cat([rows.mask, rows.mask.new_ones((len(ids), 1))], 1)
            rows.key_pos = torch.cat([rows.key_pos, rows.next_pos], 1)
            logits = self._forward(ids.unsqueeze(1), rows.mask, rows.next_pos, cache, rows.key_pos)
            rows.next_pos = rows.next_pos + 1
            self.stats.decode_steps += 1
            self.stats.decode_rows += len(ids)
        return toks, lps, reasons

    def _stopped(self, cand, toks, stops, window, reasons) -> set[int]:
        """Rows whose newest token completed a stop string (decoding only a short tail)."""
        tails = self.tokenizer.batch_decode([toks[r][-window:] for r in cand], skip_special_tokens=True)
        hit = set()
        for r, tail in zip(cand, tails):
            if any(s in tail for s in stops):
                reasons[r] = "stop"
                hit.add(r)
        return hit

    def _branch(self, cache, rows: _Rows, node: list[int], active: list[int],
                tok: dict[int, int]) -> torch.Tensor:
        """The next forward's input ids, one per cache row; moves ``node`` and the cache.

        Each distinct (cache row, sampled token) of the active rows needs a cache row of its
        own. While no cache row splits and at least half of them are still read, the cache
        stays as it is (rows nobody reads decode a pad: cheaper than copying the cache every
        time a row finishes); otherwise the cache is gathered to exactly the rows needed."""
        child: dict[tuple[int, int], int] = {}
        for r in active:
            child.setdefault((node[r], tok[r]), len(child))
        parents = [n for n, _ in child]
        N = rows.mask.shape[0]
        if len(set(parents)) == len(parents) and 2 * len(parents) > N:
            ids = [self._pad_id] * N
            for n, t in child:
                ids[n] = t
            return torch.tensor(ids, device=self.device)
        index = torch.tensor(parents, device=self.device)
        cache.batch_select_indices(index)
        rows.mask, rows.next_pos, rows.key_pos = rows.mask[index], rows.next_pos[index], rows.key_pos[index]
        for r in active:
            node[r] = child[(node[r], tok[r])]
        return torch.tensor([t for _, t in child], device=self.device)


def _common_prefix(seqs: list[tuple[int, ...]], cap: int) -> tuple[int, ...]:
    first = seqs[0][:max(cap, 0)]
    n = len(first)
    for s in seqs[1:]:
        i = 0
        while i < n and s[i] == first[i]:
            i += 1
        n = i
    return first[:n]


def _first_id(*candidates: int | None) -> int:
    return next(int(c) for c in candidates if c is not None)
