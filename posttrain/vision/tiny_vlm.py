"""The built-in tiny vision-language model: LLaVA-style, built from a config, no downloads.

What it is: ``transformers.LlavaForConditionalGeneration`` with a small CLIP vision tower
(``image_size`` pixels, ``patch_size`` patches: ``(image_size / patch_size)^2`` image tokens
per image), a two-layer projector and a small Llama text decoder over posttrain's character
tokenizer plus one ``<image>`` token, and a ``LlavaProcessor`` (a CLIP image processor that
resizes every image to ``image_size``; a chat template in the character tokenizer's format
where an image part renders as ``<image>``). It saves and loads with
``save_pretrained``/``AutoProcessor``/``AutoModelForImageTextToText`` like any HF VLM folder,
and :class:`~posttrain.inference.vlm.VLMBackend` samples from it.

Guarantees: ``build_tiny_vlm(cfg, seed)`` is deterministic in ``(cfg, seed)`` and leaves the
caller's global torch RNG as it was; the model is float32, in eval mode, with the processor
bound (:func:`~posttrain.inference.vlm.attach_processor`).

What it does not do: pre-training (``posttrain foundation build-vision`` does, see
:mod:`posttrain.foundation.vision`), image tiling, or any other resolution than ``image_size``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import torch

from posttrain.inference.vlm import attach_processor
from posttrain.models.tokenizer import CHAT_TEMPLATE, build_char_tokenizer

IMAGE_TOKEN = "<image>"
# The character tokenizer's template, with an image part rendered as the image token.
VLM_CHAT_TEMPLATE = CHAT_TEMPLATE.replace(
    "{%- if part['type'] == 'text' -%}{{ part['text'] }}",
    "{%- if part['type'] == 'text' -%}{{ part['text'] }}"
    "{%- elif part['type'] in ('image', 'image_url') -%}" + IMAGE_TOKEN)
assert VLM_CHAT_TEMPLATE != CHAT_TEMPLATE, "the character chat template changed; update VLM_CHAT_TEMPLATE"


@dataclass(frozen=True)
class TinyVLMConfig:
    """Shape of the tiny VLM (defaults: about 0.73M parameters, 17 image tokens per image:
    16 patches and CLIP's class token). Field names are the vision recipe's ``model.*``."""

    image_size: int = 32
    patch_size: int = 8
    vision_hidden: int = 64
    vision_layers: int = 2
    vision_heads: int = 4
    text_hidden: int = 128
    text_layers: int = 3
    text_heads: int = 4
    text_intermediate: int = 320
    max_positions: int = 512

    def check(self) -> None:
        from posttrain.core.errors import ConfigError

        if self.image_size % self.patch_size:
            raise ConfigError(f"model.image_size={self.image_size} must be a multiple of "
                              f"model.patch_size={self.patch_size}")
        for hidden, heads, name in ((self.vision_hidden, self.vision_heads, "vision"),
                                    (self.text_hidden, self.text_heads, "text")):
            if hidden % heads:
                raise ConfigError(f"model.{name}_hidden={hidden} must be a multiple of model.{name}_heads={heads}")

    @property
    def image_tokens(self) -> int:
        return (self.image_size // self.patch_size) ** 2


def build_processor(cfg: TinyVLMConfig) -> Any:
    """The ``LlavaProcessor`` of the tiny VLM (character tokenizer + ``<image>``)."""
    from transformers import CLIPImageProcessor, LlavaProcessor

    tokenizer = build_char_tokenizer()
    tokenizer.add_special_tokens({"additional_special_tokens": [IMAGE_TOKEN]})
    tokenizer.chat_template = VLM_CHAT_TEMPLATE
    size = {"height": cfg.image_size, "width": cfg.image_size}
    images = CLIPImageProcessor(size=size, crop_size=size, do_center_crop=False,
                                do_convert_rgb=True, resample=3)
    return LlavaProcessor(image_processor=images, tokenizer=tokenizer, patch_size=cfg.patch_size,
                          vision_feature_select_strategy="full", chat_template=VLM_CHAT_TEMPLATE,
                          image_token=IMAGE_TOKEN, num_additional_image_tokens=1)


def tiny_vlm_config(cfg: TinyVLMConfig, tokenizer: Any) -> Any:
    """The ``LlavaConfig`` for a shape and the processor's tokenizer."""
    from transformers import CLIPVisionConfig, LlamaConfig, LlavaConfig

    cfg.check()
    vision = CLIPVisionConfig(hidden_size=cfg.vision_hidden, intermediate_size=cfg.vision_hidden * 4,
                              num_hidden_layers=cfg.vision_layers, num_attention_heads=cfg.vision_heads,
                              image_size=cfg.image_size, patch_size=cfg.patch_size, num_channels=3)
    text = LlamaConfig(vocab_size=len(tokenizer), hidden_size=cfg.text_hidden,
                       intermediate_size=cfg.text_intermediate, num_hidden_layers=cfg.text_layers,
                       num_attention_heads=cfg.text_heads, num_key_value_heads=cfg.text_heads,
                       max_position_embeddings=cfg.max_positions, rms_norm_eps=1e-5,
                       pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
                       eos_token_id=tokenizer.eos_token_id, tie_word_embeddings=False)
    # "full" keeps every patch (CLIP's class token too: the processor counts it below).
    config = LlavaConfig(vision_config=vision, text_config=text,
                         image_token_index=tokenizer.convert_tokens_to_ids(IMAGE_TOKEN),
                         image_seq_length=cfg.image_tokens + 1, vision_feature_layer=-1,
                         vision_feature_select_strategy="full")
    config.posttrain_tiny_vlm = asdict(cfg)
    return config


def build_tiny_vlm(cfg: TinyVLMConfig | None = None, seed: int = 0) -> tuple[Any, Any]:
    """``(model, processor)``: a freshly initialised tiny VLM, deterministic in ``seed``."""
    from transformers import LlavaForConditionalGeneration

    cfg = cfg or TinyVLMConfig()
    processor = build_processor(cfg)
    tokenizer = processor.tokenizer
    config = tiny_vlm_config(cfg, tokenizer)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlavaForConditionalGeneration(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.eval()
    return attach_processor(model, processor), processor
