"""A trainer-side process holding a process producer pool, to be SIGKILLed (test_chaos.py).

``python orphan_run.py``: start a ProcessProducerPool of two workers around the tiny model,
print the workers' pids as one JSON line once both are up, then wait to be killed.
"""

import json
import time

import torch

from posttrain.core.config import TinyModelConfig
from posttrain.models.tiny import build_tiny_model
from posttrain.trainer.producers import ProcessProducerPool, RolloutSettings

torch.set_num_threads(1)

if __name__ == "__main__":
    model, tok = build_tiny_model(TinyModelConfig(hidden_size=32, num_layers=2, num_heads=2,
                                                  intermediate_size=64))
    pool = ProcessProducerPool(model, tok, 0, RolloutSettings(), num_workers=2)
    while not all(p.proc.is_alive() for p in pool._procs):
        time.sleep(0.05)
    print(json.dumps([p.proc.pid for p in pool._procs]), flush=True)
    time.sleep(600)
