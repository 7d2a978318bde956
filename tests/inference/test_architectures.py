"""The HF backend on the causal-LM families posttrain claims to support, sampled past the window.

Each family is a small random-weight model built from its transformers config (no downloads),
with posttrain's own tokenizer, written with ``save_pretrained`` and read back through
``posttrain.models.loading.load_model`` (``from_pretrained``). Sliding-window families get a
window of 8 tokens, far shorter than prompt + completion here, and mixed layer types where
the family has them (Qwen2/3, Gemma 2/3). For each: the whole backend conformance suite, and
the behaviour logprobs against (a) an unpadded forward, (b) the trainer's plain batch
forward and (c) its packed shared-prefix forward, on prompts that share a system prompt
(the prefix cache) and have different lengths (left padding).
"""

from __future__ import annotations

import inspect

import pytest
import test_backend_conformance as conformance
import torch
import transformers
from inference_helpers import addition_prompts, max_logprob_error

from posttrain.core.types import Observation, Score, Task, Trajectory, TrajectoryGroup, Turn
from posttrain.inference import make_backend
from posttrain.inference.base import SamplingParams
from posttrain.inference.windows import layer_windows
from posttrain.models.loading import load_model, save_model
from posttrain.models.tokenizer import build_char_tokenizer
from posttrain.trainer.batch import build_policy_batch
from posttrain.trainer.logprobs import frozen_logprobs
from posttrain.trainer.shared_prefix import frozen_policy_logprobs, plan_packing

WINDOW = 8
TOL = 1e-4


def _shape(tok) -> dict:
    return dict(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                eos_token_id=tok.eos_token_id, tie_word_embeddings=False)


def _configs(tok) -> dict:
    s = _shape(tok)
    mixed = ["sliding_attention", "full_attention"]
    return {
        "llama": transformers.LlamaConfig(**s),
        "qwen2": transformers.Qwen2Config(**s, use_sliding_window=True, sliding_window=WINDOW,
                                          max_window_layers=1),
        "qwen3": transformers.Qwen3Config(**s, head_dim=8, use_sliding_window=True,
                                          sliding_window=WINDOW, max_window_layers=1),
        "mistral": transformers.MistralConfig(**s, head_dim=8, sliding_window=WINDOW),
        "gemma2": transformers.Gemma2Config(**s, head_dim=8, sliding_window=WINDOW, layer_types=mixed),
        "gemma3": transformers.Gemma3TextConfig(**s, head_dim=8, sliding_window=WINDOW, layer_types=mixed),
        "phi3": transformers.Phi3Config(**s, sliding_window=WINDOW, original_max_position_embeddings=256),
        "gpt_neox": transformers.GPTNeoXConfig(
            vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=4, max_position_embeddings=256, pad_token_id=tok.pad_token_id,
            bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, tie_word_embeddings=False),
    }


ARCHS = sorted(_configs(build_char_tokenizer()))
SLIDING = {"qwen2", "qwen3", "mistral", "gemma2", "gemma3", "phi3"}


def _build(config, seed: int):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = transformers.AutoModelForCausalLM.from_config(config)
    return model.float().eval()


@pytest.fixture(scope="module", params=ARCHS)
def family(request, tmp_path_factory):
    """(arch, model loaded with from_pretrained, tokenizer, a second state dict)."""
    tok = build_char_tokenizer()
    config = _configs(tok)[request.param]
    folder = save_model(_build(config, 0), tok, tmp_path_factory.mktemp(request.param))
    model, tok = load_model(folder)
    return request.param, model, tok, _build(config, 1).state_dict()


def _case_arity() -> int:
    # The suite's `case` is (backend, weights) or, since the vLLM tier, (backend, weights,
    # reference model); read which from how its tests unpack it, so both states run.
    src = inspect.getsource(conformance.test_seeded_calls_repeat)
    return src.split("= case")[0].splitlines()[-1].count(",") + 1


@pytest.fixture(scope="module")
def case(family):
    """The conformance suite's fixture: (backend, weights for load_weights[, reference model])."""
    _, model, tok, other = family
    full = (make_backend("hf", model=model, tokenizer=tok), other, model)
    return full[:_case_arity()]


# The whole conformance suite, run on every family (collected here with this module's `case`).
for _name in dir(conformance):
    if _name.startswith("test_"):
        globals()[_name] = getattr(conformance, _name)


PAIRS = [(1, 2), (345, 6789), (12, 34)]


def _batch(groups, pad_id):
    task = Task(domain="test.arch-v1", seed=0, difficulty=1, prompt=({"role": "user", "content": "x"},))
    built = []
    for g in groups:
        trajs = tuple(Trajectory(task=task, turns=(Turn(observation=Observation(messages=()), action=c),),
                                 score=Score(1.0)) for c in g)
        built.append(TrajectoryGroup(task=task, trajectories=trajs, policy_version=0))
    return build_policy_batch(built, [[1.0] * len(g) for g in groups], pad_id)


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_logprobs_past_the_window_match_the_trainer(family, temperature):
    arch, model, tok, _ = family
    # min_prefix_tokens 4: the shared system prompt goes through the prefix cache.
    backend = make_backend("hf", model=model, tokenizer=tok, min_prefix_tokens=4)
    params = SamplingParams(n=3, max_new_tokens=24, seed=5, temperature=temperature)
    # A shared system prompt (computed once, then left-padded suffixes: pads mid-row), and
    # plain left padding.
    groups = backend.generate(addition_prompts(PAIRS, system=True), params)
    groups += backend.generate(addition_prompts(PAIRS[1:], system=True), params)  # a cache hit
    assert backend.stats.prefix_misses == 1 and backend.stats.prefix_hits == 1
    groups += backend.generate(addition_prompts(PAIRS), params)
    longest = max(len(c.prompt_token_ids) + len(c.token_ids_T) for g in groups for c in g)
    assert longest > 3 * WINDOW
    assert max_logprob_error(model, groups, temperature) < TOL, arch  # unpadded full forward
    batch = _batch(groups, tok.pad_token_id)
    mask = batch.action_mask
    plain = frozen_logprobs(model, batch, temperature)
    assert float((plain - batch.behaviour_logprobs)[mask].abs().max()) < TOL, arch
    assert plan_packing(batch) is not None  # the trainer's packed path really runs
    packed = frozen_policy_logprobs(model, batch, temperature, share=True)
    assert float((packed - batch.behaviour_logprobs)[mask].abs().max()) < TOL, arch


def test_the_window_is_real(family):
    """Teeth: on these sequences the window changes the distribution, so a sampler (or
    trainer) that ignored it — or applied it by cache index — would fail the test above."""
    arch, model, tok, _ = family
    windows = layer_windows(model.config)
    assert (any(w == WINDOW for w in windows) if arch in SLIDING else set(windows) == {None})
    if arch not in SLIDING:
        return
    ids = torch.tensor([tok(f"<|user|>{'1234567890' * 3}=<|assistant|>")["input_ids"]])
    # The same weights with a window longer than the sequence: full attention in effect.
    full_cfg = type(model.config).from_dict({**model.config.to_dict(), "sliding_window": 4096})
    unwindowed = transformers.AutoModelForCausalLM.from_config(full_cfg).float().eval()
    unwindowed.load_state_dict(model.state_dict())
    with torch.no_grad():
        gap = (model(ids).logits - unwindowed(ids).logits).abs().max()
    assert float(gap) > 1e-3, arch
