"""SFT cold start of a vision-language policy: single-turn demonstrations with their images.

What it is: the VLM's side of :func:`posttrain.trainer.phases.run_sft`. A demonstration is a
training task's prompt with the task's images attached to its newest message — what the
episode engine shows the policy (:func:`posttrain.envs.base.task_images`) — and the domain's
reference answer. The prompt is rendered by the run's own ``vlm`` backend (the processor's
chat template, image placeholders expanded to image tokens), so SFT trains on the token
layout RL samples, and the batch keeps each row's images so the trainer's forward sees the
same pixels (:func:`posttrain.trainer.logprobs.forward_logits`).

Guarantees: a row's ``images`` are its prompt's, in order; a row with images is never cut
(one too long for the model is left out and counted in ``sft/dropped``); text-only tasks in
the mix get plain rows (``images`` ``()``).

Does not: multi-turn demonstrations — a VLM run with SFT and a multi-turn domain is refused
when the config loads (``trainer/validate.py``).
"""

from __future__ import annotations

from typing import Any, Sequence

from posttrain.core.images import attach_images
from posttrain.core.types import Task
from posttrain.domains.base import get_domain
from posttrain.envs.base import task_images

from .sft import SFTBatch, TokenizedExample, _ids, collate_sft


def vision_demonstration(task: Task) -> tuple[list[dict[str, Any]], str]:
    """``(prompt messages with the task's images, reference answer)``."""
    return attach_images(task.prompt, task_images(task)), get_domain(task.domain).solve(task)


def tokenize_vision_examples(renderer: Any, examples: Sequence[tuple[Sequence[Any], str]]
                             ) -> list[TokenizedExample]:
    """Prompt ids (rendered by ``renderer``, a :class:`~posttrain.inference.vlm.VLMBackend`),
    answer ids + EOS, and the prompt's images, for each ``(messages, answer)``."""
    tok = renderer.tokenizer
    if tok.eos_token_id is None:
        raise ValueError("the tokenizer has no eos_token_id; SFT must teach the model to stop")
    out = []
    for messages, answer in examples:
        ids, images, _pixels = renderer.render(messages)
        answer_ids = _ids(tok(answer, add_special_tokens=False))
        out.append(TokenizedExample(tuple(ids), tuple(answer_ids) + (int(tok.eos_token_id),),
                                    tuple(images)))
    return out


def vision_sft_batch(renderer: Any, tasks: Sequence[Task], pad_id: int,
                     max_length: int | None = None) -> SFTBatch:
    """The SFT batch of ``tasks``' demonstrations (see the module docstring)."""
    examples = [vision_demonstration(t) for t in tasks]
    return collate_sft(tokenize_vision_examples(renderer, examples), pad_id, max_length)
