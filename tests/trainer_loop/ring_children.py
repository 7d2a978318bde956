"""Child-process bodies for the weight-ring tests (a light module: spawned children import it)."""


class Backend:
    """What ``pull`` needs from a backend: a version and ``load_weights``."""

    def __init__(self, version=-1):
        self.policy_version, self.w = version, None

    def load_weights(self, version, weights):
        self.policy_version, self.w = version, {k: t.clone() for k, t in weights.items()}


def pull_versions(sync, versions, q):
    """Pull each version exactly (in the given order, some going back) and report what came."""
    from posttrain.trainer.weight_sync import WeightVersionError

    b = Backend()
    got = []
    for v in versions:
        try:
            got.append((sync.pull(b, v), float(b.w["w"][0])))
        except WeightVersionError as exc:
            got.append(("missing", str(v) in str(exc)))
    q.put(got)
