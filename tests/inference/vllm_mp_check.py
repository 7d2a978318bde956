"""Run as a script (by test_vllm_backend.py): VLLMBackend with the engine core in another process.

That is vllm's default on GPU hosts; here it runs on the CPU build with
``VLLM_ENABLE_V1_MULTIPROCESSING=1``, so weight updates take the out-of-process path (a
safetensors file the worker reads), and ``close()`` must end the engine core process (child
processes counted before start, while running, after close). A fresh interpreter is needed
because vllm caches its environment once an engine has started. Prints one JSON line with
what the test asserts.
"""

from __future__ import annotations

import json
import os
import sys

os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "1"


def main(folder: str) -> None:
    from inference_helpers import addition_prompts, max_logprob_error, tiny

    from posttrain.inference import make_backend
    from posttrain.inference.base import SamplingParams

    import psutil

    (old, tok), (new, _) = tiny(0), tiny(1)
    me = psutil.Process()
    children_before = len(me.children(recursive=True))
    backend = make_backend("vllm", model=folder, dtype="float32", max_model_len=256)
    children_running = len(me.children(recursive=True))
    prompts = addition_prompts([(1, 2), (12, 34), (5, 66), (90, 1)])
    long = [[{"role": "system", "content": "You are a careful calculator. " * 6}] + p for p in prompts]
    greedy = SamplingParams(greedy=True, max_new_tokens=6)

    def answers(b):
        return [g[0].token_ids_T for g in b.generate(prompts, greedy)]

    hf_old = answers(make_backend("hf", model=old, tokenizer=tok))
    hf_new = answers(make_backend("hf", model=new, tokenizer=tok))
    before = answers(backend)
    backend.generate(long, SamplingParams(n=2, max_new_tokens=4, seed=0))  # fills the prefix cache
    backend.load_weights(5, new.state_dict())
    after = backend.generate(long, SamplingParams(n=2, max_new_tokens=4, seed=0))
    after_answers = answers(backend)
    staging = backend._weights_dir
    backend.close()
    left = [" ".join(p.cmdline()) for p in me.children(recursive=True)
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    print(json.dumps({
        "children": [children_before, children_running], "left": left,
        "staging_removed": staging is not None and not os.path.exists(staging),
        "out_of_process": not backend._in_process,
        "answers_differ": hf_old != hf_new, "before_is_old": before == hf_old,
        "after_is_new": after_answers == hf_new,
        "versions": sorted({c.policy_version for g in after for c in g}),
        "cached_prompt_error_new": max_logprob_error(new, after),
    }))


if __name__ == "__main__":  # vllm spawns its engine core process: the guard is required
    main(sys.argv[1])
