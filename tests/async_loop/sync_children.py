"""Child-process bodies for the weight-sync tests (a light module: spawned children import it)."""

import os

import torch


def child_pull(sync, q):
    class B:
        policy_version = -1

        def load_weights(self, v, w):
            self.policy_version, self.w = v, w

    sync.wait_for(1, 30)
    b = B()
    sync.pull(b)
    q.put((b.policy_version, float(b.w["w"].sum())))


def dist_worker(rank, port, q):
    import torch.distributed as dist

    from posttrain.trainer.weight_sync import TorchDistributedWeightSync

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    sd = {"a": torch.full((2, 2), 3.0 if rank == 0 else 0.0), "b": torch.arange(3.0) * (rank == 0)}
    sync = TorchDistributedWeightSync(sd)
    sync.publish(7, sd)

    class B:
        policy_version = 0

        def load_weights(self, v, w):
            self.policy_version, self.w = v, {k: t.clone() for k, t in w.items()}

    b = B()
    sync.pull(b)
    q.put((rank, b.policy_version, float(b.w["a"].sum()), float(b.w["b"].sum())))
    dist.destroy_process_group()
