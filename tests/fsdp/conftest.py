import torch

torch.set_num_threads(1)  # 2 shared cores: one thread per process
