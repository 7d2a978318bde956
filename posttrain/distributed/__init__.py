"""posttrain.distributed: Ray placement of rollout workers, verifiers, sandbox pools and the trainer.

The only package that imports ray (DESIGN.md §2). Importing :mod:`.ray_pool` registers the
``"ray"`` producer pool, so ``AsyncConfig(executor="ray")`` runs the async loop on a Ray
cluster (local: ``ray.init()``; existing: ``ray_address="auto"`` or ``ray://host:10001``).
See docs/async.md.

The disaggregated placement (``placement:`` in the run config; docs/scale.md):
:mod:`.placement` (driver), :mod:`.trainer_group` (FSDP2 ranks as actors), :mod:`.engine_group`
(rollout engine actors; weights by :mod:`.ray_sync` or :mod:`.broadcast`), :mod:`.sandbox_hosts`
(sandbox / verifier actors).
"""


def register() -> None:
    """Register the Ray pool (imports ray; raises MissingExtraError without the ``ray`` extra)."""
    from posttrain.core.errors import require

    require("ray", "ray")
    from . import ray_pool  # noqa: F401  (registers "ray" in posttrain.trainer.producers.POOLS)
