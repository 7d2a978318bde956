"""Shared fixtures for trainer tests: a tiny real Llama, a real char tokenizer, trajectory builders."""

from __future__ import annotations

import torch

from posttrain.core.errors import ErrorInfo
from posttrain.core.types import Completion, Observation, Score, Task, Trajectory, TrajectoryGroup, Turn

torch.set_num_threads(1)  # 2 shared cores: one thread is faster and steadier

TASK = Task(domain="test.toy-v1", seed=0, difficulty=1, prompt=({"role": "user", "content": "x"},))


def tiny_llama(seed: int = 0, vocab_size: int = 32, **overrides):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    shape = dict(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2,
                 num_attention_heads=2, intermediate_size=64, max_position_embeddings=64)
    cfg = LlamaConfig(**{**shape, **overrides})
    return LlamaForCausalLM(cfg).eval()


def char_tokenizer():
    """A real HF fast tokenizer over single characters, with a chat template."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "<eos>": 1, "<bos>": 2}
    for c in "0123456789+=QA: ":
        vocab[c] = len(vocab)
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    tk.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="<eos>",
                                  bos_token="<bos>")
    tok.chat_template = ("{{ bos_token }}{% for m in messages %}Q:{{ m['content'] }}{% endfor %}"
                         "{% if add_generation_prompt %}A:{% endif %}")
    return tok


def completion(prompt, tokens, logprobs=None, version=0):
    logprobs = logprobs if logprobs is not None else [-1.0] * len(tokens)
    return Completion(text="", token_ids_T=tuple(tokens), logprobs_T=tuple(logprobs),
                      policy_version=version, prompt_token_ids=tuple(prompt))


def traj(prompt, tokens, reward, logprobs=None, version=0, error=False):
    turn = Turn(observation=Observation(messages=()), action=completion(prompt, tokens, logprobs, version))
    return Trajectory(task=TASK, turns=(turn,), score=Score(reward),
                      error=ErrorInfo("sandbox", "boom") if error else None)


def multi_turn_traj(turns, reward):
    """turns: list of (prompt_ids, action_ids, logprobs, version)."""
    built = tuple(Turn(observation=Observation(messages=()), action=completion(p, a, lp, v))
                  for p, a, lp, v in turns)
    return Trajectory(task=TASK, turns=built, score=Score(reward))


def group(*trajs, version=0):
    return TrajectoryGroup(task=TASK, trajectories=tuple(trajs), policy_version=version)
