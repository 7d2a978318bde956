"""Shared test set-up: one torch thread per worker (2-core machines), no tokenizer threads."""

import os

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    pass
