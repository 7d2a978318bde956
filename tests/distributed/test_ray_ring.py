"""Ray's object-store weight sync keeps the deterministic schedule's ring: a worker installs
exactly the version its job is scheduled with, older or newer than the one it holds, a
resumed run's older versions can be put back, and an evicted version is refused."""

import pytest
import torch

ray = pytest.importorskip("ray")

from posttrain.trainer.weight_sync import WeightVersionError  # noqa: E402

pytestmark = pytest.mark.ray


class _Backend:
    policy_version = -1

    def load_weights(self, version, weights):
        self.policy_version, self.w = version, float(weights["w"][0])


def test_object_store_ring_installs_exactly_the_scheduled_version():
    from posttrain.distributed.ray_pool import ensure_ray
    from posttrain.distributed.ray_sync import RayWeightSync

    ensure_ray(None, num_cpus=1)
    try:
        sync = RayWeightSync(keep=3)
        for v in range(5):
            sync.publish(v, {"w": torch.full((2,), float(v))})
        assert sync.held() == [2, 3, 4]
        b = _Backend()
        assert sync.pull(b, 3) == 3 and b.w == 3.0
        assert sync.pull(b, 2) == 2 and b.w == 2.0  # back to an older version: exact
        assert sync.pull(b) == 4 and b.w == 4.0  # free-running: the newest
        with pytest.raises(WeightVersionError):
            sync.pull(b, 1)
        resumed = RayWeightSync(keep=3)  # a resume: the current version, then the older ones
        resumed.publish(7, {"w": torch.full((2,), 7.0)})
        resumed.preload({5: {"w": torch.full((2,), 5.0)}, 6: {"w": torch.full((2,), 6.0)}})
        assert resumed.held() == [5, 6, 7] and resumed.latest_version() == 7
        assert resumed.pull(b, 5) == 5 and b.w == 5.0
        assert float(resumed.weights(6)["w"][0]) == 6.0
        ray.kill(sync.store)
        ray.kill(resumed.store)
    finally:
        ray.shutdown()
