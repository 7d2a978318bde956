"""The vision-language backend: sampling from any local ``*ForConditionalGeneration`` VLM folder.

What it is: an :class:`~posttrain.inference.base.InferenceBackend` (registered as ``"vlm"``)
over a transformers image-text-to-text model and its ``AutoProcessor`` (LLaVA-, Idefics3 /
SmolVLM- or Qwen2-VL-style folders, or the built-in one of ``posttrain foundation
build-vision``). Prompts are chat messages whose content may hold OpenAI-style image parts
(:mod:`posttrain.core.images`).

How a call runs:
1. each prompt's image parts become the processor's ``{"type": "image"}`` placeholders; the
   processor's chat template renders the text (``tools=`` passed through) and
   ``processor(text=..., images=...)`` gives the prompt ids — image tokens expanded — and the
   pixel inputs;
2. **prompt sharing**: one prefill per distinct prompt (the vision tower runs once), then
   its KV cache is repeated for the ``n`` samples — never ``n`` prefills;
3. decode: the ``n`` rows of a prompt sample together from :func:`~.sampling.sample` (the
   text backend's sampler: same logprob semantics, same per-row seeding with
   ``prompt_seeds``); prompts are decoded one after another.

Each Completion carries ``prompt_token_ids`` (image tokens included) and ``prompt_images``
(the base64 PNGs in processor order): the trainer recomputes logprobs from exactly those
ids and pixels (:func:`vision_forward_kwargs`), equal to the sampler's within float tolerance
(tested).

Guarantees: an action never holds an image placeholder token (its logit is suppressed in the
sampler and in the trainer's recomputation alike, :func:`suppress_placeholders`); as the
text backend — ``finish_reason`` ``stop`` (eos or a stop string) or
``length``; an eos is kept in the ids and left out of ``text``; ``params.seed`` /
``prompt_seeds`` make a call reproducible; ``load_weights`` copies weights in place and bumps
``policy_version`` (no cache outlives a call, so no stale KV).

What it does not do: batch prefills across prompts, a prefix cache, sliding windows, video.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any, Mapping, Sequence

import torch

from posttrain.core.errors import ConfigError, InferenceError
from posttrain.core.images import part_image, prompt_images
from posttrain.core.types import Completion, Message

from .base import SamplingParams, check_sampling_params
from .sampling import generators, sample

PROCESSOR_ATTR = "posttrain_processor"
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
# Image processors whose batch is one list of images per row (pixel_values [B, N, ...]).
_NESTED_IMAGES = ("idefics3", "smolvlm", "idefics2")


def decode_png(png_b64: str) -> Any:
    """A PIL RGB image from base64 PNG bytes."""
    from PIL import Image

    return Image.open(io.BytesIO(base64.b64decode(png_b64))).convert("RGB")


def attach_processor(model: Any, processor: Any) -> Any:
    """Bind ``processor`` to ``model`` so the trainer can rebuild pixel inputs; returns the model."""
    setattr(model, PROCESSOR_ATTR, processor)  # a plain attribute: not a module, not saved
    return model


FROZEN_ATTR = "posttrain_frozen_modules"  # config.json: submodules its builder kept fixed


def freeze_declared(model: Any) -> list[str]:
    """Turn off gradients of the submodules ``config.posttrain_frozen_modules`` names (its
    builder kept them fixed and the rest learned around them: the built-in chart VLM's
    random vision tower, whose features its decoder reads at a fine scale that a few
    optimizer steps on the tower would wash out); returns the names."""
    names = list(getattr(model.config, FROZEN_ATTR, None) or [])
    for name in names:
        try:
            module = model.get_submodule(name)
        except AttributeError as exc:
            raise ConfigError(f"{FROZEN_ATTR} names {name!r}, which the model does not have") from exc
        for p in module.parameters():
            p.requires_grad_(False)
    return names


def load_vlm(path: str | Path, dtype: str = "float32") -> tuple[Any, Any]:
    """``(model, processor)`` from a local VLM folder, the processor bound to the model;
    the submodules its config declares frozen (:func:`freeze_declared`) get no gradients."""
    from transformers import AutoModelForImageTextToText, AutoProcessor

    folder = Path(path).expanduser()
    if not (folder / "config.json").is_file():
        raise ConfigError(f"model path {str(folder)!r} is not a model folder (no config.json)")
    if dtype not in DTYPES:
        raise ConfigError(f"model.dtype={dtype!r} is not allowed; use one of {sorted(DTYPES)}")
    try:
        processor = AutoProcessor.from_pretrained(folder, local_files_only=True)
        model = AutoModelForImageTextToText.from_pretrained(folder, local_files_only=True,
                                                            dtype=DTYPES[dtype])
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(f"could not load a vision-language model from {str(folder)!r}: {exc}") from exc
    model.eval()
    freeze_declared(model)
    return attach_processor(model, processor), processor


def hf_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Chat messages in the processor's form: every content a list of text/image parts."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, (list, tuple)):
            parts = [{"type": "image"} if part_image(p) is not None else dict(p) for p in content]
        else:
            parts = [{"type": "text", "text": "" if content is None else str(content)}]
        out.append({**dict(m), "content": parts})
    return out


# Config fields naming the tokens that stand for pixels (LLaVA, Idefics3, Qwen2-VL families).
_PLACEHOLDER_FIELDS = ("image_token_id", "image_token_index", "video_token_id",
                       "vision_start_token_id", "vision_end_token_id")
# What a placeholder's logit becomes: finite, so a prompt position whose target *is* a
# placeholder gets a finite logprob (it is masked out of every loss; -inf * 0 would be NaN).
_SUPPRESSED = -1e9


def placeholder_ids(model: Any) -> tuple[int, ...]:
    """The ids of the model's image (and video) placeholder tokens, from its config."""
    cfg = getattr(model, "config", None)
    ids = {getattr(cfg, f, None) for f in _PLACEHOLDER_FIELDS}
    return tuple(sorted(int(i) for i in ids if isinstance(i, int) and i >= 0))


def suppress_placeholders(logits: torch.Tensor, ids: Sequence[int]) -> torch.Tensor:
    """``logits`` with the placeholder tokens made impossible (a new tensor; gradients flow).

    Why: a placeholder in a sampled action has no pixels behind it, so the conversation could
    not be rendered or trained on again. The sampler draws from these logits and the trainer
    recomputes logprobs from them too, so both see the same distribution."""
    if not ids:
        return logits
    index = torch.tensor(list(ids), device=logits.device)
    return logits.index_fill(-1, index, _SUPPRESSED)


def _model_type(model: Any) -> str:
    return str(getattr(getattr(model, "config", None), "model_type", ""))


def vision_forward_kwargs(model: Any, images_B: Sequence[Sequence[str]]) -> dict[str, torch.Tensor]:
    """The pixel inputs of a batch whose row ``b`` shows ``images_B[b]`` (base64 PNGs, prompt
    order): the processor's image outputs (``pixel_values`` and its companions), on the
    model's device. The trainer passes them with the row ids; see the module docstring."""
    processor = getattr(model, PROCESSOR_ATTR, None)
    if processor is None:
        raise InferenceError(f"the batch has images but the model ({type(model).__name__}) has no "
                             "processor bound; load it with posttrain.inference.vlm.load_vlm")
    if _model_type(model) in _NESTED_IMAGES:
        images: Any = [[decode_png(i) for i in row] for row in images_B]
    else:
        images = [decode_png(i) for row in images_B for i in row]
    out = processor.image_processor(images=images, return_tensors="pt")
    device = next(model.parameters()).device
    return {k: v.to(device) for k, v in out.items() if isinstance(v, torch.Tensor)}


class VLMBackend:
    """Sampling over a vision-language model (see the module docstring)."""

    vision = True
    per_prompt_tools = True
    per_prompt_seeds = True
    per_prompt_budgets = True

    def __init__(self, model: Any, processor: Any | None = None, *, device: str = "cpu",
                 policy_version: int = 0, model_name: str | None = None):
        if isinstance(model, (str, Path)):
            model_name = model_name or str(model)
            model, processor = load_vlm(model)
        if processor is None:
            processor = getattr(model, PROCESSOR_ATTR, None)
        if processor is None:
            raise ConfigError("VLMBackend needs a processor (processor=... or load_vlm(folder))")
        self.device = torch.device(device)
        self.model = attach_processor(model.to(self.device), processor)
        self.processor = processor
        self.tokenizer = processor.tokenizer  # the engine decodes actions with it
        self.policy_version = policy_version
        self.model_name = model_name or getattr(model.config, "_name_or_path", "") or None
        gen_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        eos = [self.tokenizer.eos_token_id] + (gen_eos if isinstance(gen_eos, list) else [gen_eos])
        self.eos_ids = frozenset(int(e) for e in eos if e is not None)
        self.placeholders = placeholder_ids(self.model)  # never sampled: see suppress_placeholders

    def load_weights(self, version: int, weights: Any) -> None:
        """Copy ``weights`` (a state dict or a module; None: already in place); set the version."""
        if weights is not None:
            state = weights.state_dict() if hasattr(weights, "state_dict") else weights
            own = self.model.state_dict()
            missing = sorted(set(own) - set(state))
            if missing:
                raise InferenceError(f"load_weights: {len(missing)} weights missing, e.g. {missing[:3]}")
            with torch.no_grad():
                for name, tensor in own.items():
                    tensor.copy_(state[name])
        self.policy_version = int(version)

    def render(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = ()
               ) -> tuple[tuple[int, ...], tuple[str, ...], dict[str, torch.Tensor]]:
        """``(prompt ids, images, pixel inputs)`` of one chat prompt, generation prompt appended."""
        images = prompt_images(messages)
        try:
            text = self.processor.apply_chat_template(
                hf_messages(messages), tools=[dict(t) for t in tools] or None,
                add_generation_prompt=True, tokenize=False)
            kw = {"images": [decode_png(i) for i in images]} if images else {}
            enc = self.processor(text=[text], return_tensors="pt", add_special_tokens=False, **kw)
        except Exception as exc:  # template and processor errors are untyped; name the boundary
            raise InferenceError(f"vision processor failed on a prompt with {len(images)} "
                                 f"image(s): {exc}") from exc
        ids = tuple(int(i) for i in enc["input_ids"][0])
        pixels = {k: v for k, v in enc.items() if k not in ("input_ids", "attention_mask")
                  and isinstance(v, torch.Tensor)}
        return ids, images, pixels

    def generate(self, prompts: Sequence[Sequence[Message]],
                 params: SamplingParams) -> list[list[Completion]]:
        check_sampling_params(params)
        P = len(prompts)
        tools_P = params.prompt_tools or (params.tools,) * P
        caps_P = params.prompt_max_new_tokens or (params.max_new_tokens,) * P
        if len(tools_P) != P or len(caps_P) != P:
            raise InferenceError(f"{len(tools_P)} tool lists and {len(caps_P)} token caps "
                                 f"for {P} prompts")
        gens = generators(params, P * params.n, self.device) if P else None
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.inference_mode():
                out = []
                for p, (msgs, tools, cap) in enumerate(zip(prompts, tools_P, caps_P)):
                    ids, images, pixels = self.render(msgs, tools)
                    rows = gens if isinstance(gens, torch.Generator) else gens[p * params.n:(p + 1) * params.n]
                    out.append(self._sample(ids, images, pixels, params, cap, rows))
                return out
        finally:
            if was_training:
                self.model.train()

    def _sample(self, ids, images, pixels, params: SamplingParams, cap: int, gen) -> list[Completion]:
        """``params.n`` completions of one prompt: one prefill, its cache repeated per row."""
        n = params.n
        x = torch.tensor([ids], device=self.device)
        out = self.model(input_ids=x, attention_mask=torch.ones_like(x), use_cache=True,
                         **{k: v.to(self.device) for k, v in pixels.items()})
        cache = out.past_key_values
        cache.batch_repeat_interleave(n)
        logits = suppress_placeholders(out.logits[:, -1].float(), self.placeholders).expand(n, -1)
        toks: list[list[int]] = [[] for _ in range(n)]
        lps: list[list[float]] = [[] for _ in range(n)]
        reasons = ["length"] * n
        live = [cap > 0] * n
        mask = torch.ones((n, len(ids)), dtype=torch.long, device=self.device)
        for step in range(cap):
            tok_B, lp_B = sample(logits, params, gen)
            for r, (t, lp) in enumerate(zip(tok_B.tolist(), lp_B.tolist())):
                if not live[r]:
                    continue
                toks[r].append(t)
                lps[r].append(lp)
                if t in self.eos_ids or self._stopped(toks[r], params.stop):
                    reasons[r], live[r] = "stop", False
            if not any(live) or step == cap - 1:
                break
            mask = torch.cat([mask, mask.new_ones((n, 1))], 1)
            logits = suppress_placeholders(
                self.model(input_ids=tok_B.unsqueeze(1), attention_mask=mask,
                           past_key_values=cache, use_cache=True).logits[:, -1].float(),
                self.placeholders)
        return [Completion(self._text(t, params.stop), tuple(t), tuple(lp), reason,
                           self.policy_version, ids, images)
                for t, lp, reason in zip(toks, lps, reasons)]

    def _stopped(self, ids: list[int], stops: Sequence[str]) -> bool:
        if not stops:
            return False
        tail = self.tokenizer.decode(ids[-(max(map(len, stops)) + 2):], skip_special_tokens=True)
        return any(s in tail for s in stops)

    def _text(self, ids: list[int], stops: Sequence[str]) -> str:
        text = self.tokenizer.decode(ids, skip_special_tokens=True)
        cuts = [i for i in (text.find(s) for s in stops) if i >= 0]
        return text[:min(cuts)] if cuts else text
