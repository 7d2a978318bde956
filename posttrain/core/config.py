"""Run configuration: YAML files validated by pydantic, with ``--set a.b=value`` overrides.

Guarantees:
- a bad config fails in :func:`load_config`, before any work starts, with a
  :class:`ConfigError` naming every bad field (dotted path), the value given, and what is
  allowed (an unknown key gets "did you mean");
- overrides are parsed as YAML scalars (``--set rl.lr=1e-5`` gives a float,
  ``--set domains=[math.add-v1]`` a list) and applied before validation, so they are checked
  exactly like the file;
- ``config_hash`` is a stable hash of the validated config (used for lineage and caches).
"""

from __future__ import annotations

import difflib
import hashlib
import json
from pathlib import Path
from typing import Any, Literal, get_origin

import yaml
from pydantic import (BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator,
                      model_validator)

from .errors import ConfigError


def _numeric(annotation: Any) -> bool:
    """int/float, optionally in ``X | None``, a list of them, or a dict with them as values."""
    if annotation in (int, float):
        return True
    args = [a for a in getattr(annotation, "__args__", ()) if a is not type(None)]
    if get_origin(annotation) is dict:
        args = args[1:]  # the values'
    return bool(args) and all(_numeric(a) for a in args)


def _has_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return True
    if isinstance(value, (list, tuple)):
        return any(isinstance(v, bool) for v in value)
    return isinstance(value, dict) and any(isinstance(v, bool) for v in value.values())


class _Strict(BaseModel):
    """Every config section: unknown keys are errors, floats must be finite (``.inf`` as a
    timeout or a learning rate is a typo, not a setting), and ``true``/``false`` are not numbers
    (pydantic's lax mode would read ``group_size: true`` as 1 and ``lr: yes`` as 1.0)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_as_number(cls, value: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields.get(info.field_name or "")
        if field is not None and _has_bool(value) and _numeric(field.annotation):
            raise ValueError("a boolean is not a number here")
        return value


class TinyModelConfig(_Strict):
    """Shape of the built-in tiny Llama-style model (about 1.8M parameters by default)."""

    hidden_size: int = Field(192, ge=8, le=4096)
    num_layers: int = Field(4, ge=1, le=64)
    num_heads: int = Field(4, ge=1, le=64)
    intermediate_size: int = Field(512, ge=8)
    max_position_embeddings: int = Field(256, ge=16)


LORA_DEFAULT_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


class LoraConfig(_Strict):
    """A LoRA adapter (peft) over the policy: only its matrices train. ``target_modules`` are
    names of the model's linear layers (the last component of the module path), checked
    against the model when the run starts (``posttrain.trainer.validate``); the default
    covers every projection of a Llama-style block (the built-in tiny model's)."""

    r: int = Field(8, ge=1)
    alpha: float = Field(16.0, gt=0)
    dropout: float = Field(0.0, ge=0, lt=1)
    target_modules: list[str] = Field(default_factory=lambda: list(LORA_DEFAULT_TARGETS),
                                      min_length=1)


class ModelConfig(_Strict):
    path: str | None = Field(None, description="local HF causal LM folder; None builds the tiny model")
    tiny: TinyModelConfig = TinyModelConfig()
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    lora: LoraConfig | None = Field(None, description="None: full fine-tuning")
    activation_checkpointing: bool = Field(
        False, description="recompute each decoder layer's activations in the backward pass")
    autocast: Literal["none", "bf16", "fp16"] = Field(
        "none", description="mixed precision of training forwards where the device computes it "
                            "natively; float32 elsewhere (posttrain.trainer.precision)")


class DomainSpec(_Strict):
    """One domain of the mixture; ``id`` and ``difficulties`` are checked against the domain
    registry when the run starts (``posttrain.trainer.validate``)."""

    id: str
    weight: float = Field(1.0, gt=0)
    difficulties: list[int] | None = Field(None, min_length=1, description="None: every level")


class SFTConfig(_Strict):
    steps: int = Field(300, ge=0)
    batch_size: int = Field(64, ge=1)
    lr: float = Field(3e-3, gt=0)
    warmup_steps: int = Field(20, ge=0)
    weight_decay: float = Field(0.0, ge=0)


class RLConfig(_Strict):
    algorithm: str = Field("grpo", description="an id of posttrain.trainer.algorithms.ALGORITHMS")
    steps: int = Field(100, ge=0)
    prompts_per_step: int = Field(8, ge=1)
    group_size: int = Field(8, ge=1)
    lr: float = Field(1e-4, gt=0)
    temperature: float = Field(1.0, gt=0)
    top_p: float = Field(1.0, gt=0, le=1)
    max_new_tokens: int = Field(16, ge=1)
    clip_low: float = Field(0.2, ge=0)
    clip_high: float = Field(0.28, ge=0)
    kl_coef: float = Field(0.0, ge=0)
    filter_zero_variance: bool = True
    max_policy_lag: int = Field(0, ge=0, description="0: synchronous reference loop; >= 1: async")
    grad_clip: float = Field(1.0, gt=0)
    ppo_epochs: int = Field(1, ge=1)
    tis_cap: float | None = Field(2.0, gt=0, description="truncation of importance weights; None: off")
    correction: str = Field("tis", description="behaviour correction, an id of posttrain.trainer."
                            "corrections.CORRECTIONS: none, tis, seq_mis, icepop")
    correction_low: float = Field(0.5, gt=0, description="seq_mis/icepop: lowest ratio kept")
    correction_high: float = Field(2.0, gt=0, description="seq_mis/icepop: highest ratio kept")
    weight_decay: float = Field(0.0, ge=0)
    checkpoint_every: int = Field(0, ge=0, description="0: only at the end of RL")
    warmup_steps: int = Field(0, ge=0)
    shared_prefix: bool = Field(True, description="update computes each group's prompt once (exact)")


class DPOConfig(_Strict):
    steps: int = Field(0, ge=0)
    beta: float = Field(0.1, gt=0)
    lr: float = Field(1e-4, gt=0)
    batch_size: int = Field(16, ge=1)


class EvalConfig(_Strict):
    heldout_per_domain: int = Field(100, ge=1)
    seed_offset: int = Field(10_000_000, ge=0)
    max_new_tokens: int = Field(16, ge=1)
    every_steps: int = Field(0, ge=0, description="held-out eval every N RL steps (eval/heldout/*); 0: off")


class AsyncConfig(_Strict):
    """Knobs of the asynchronous loop (the staleness bound itself is ``rl.max_policy_lag``).

    The loop runs when ``rl.max_policy_lag >= 1``; ``executor`` is the one field that moves a
    run from threads on this machine to Ray actors, ``work_store`` the one that makes its
    rollouts survive a crash (``docs/async.md``).
    """

    executor: str = Field("thread", description="a producer pool of posttrain.trainer.producers.POOLS")
    num_producers: int | None = Field(None, ge=1, description="default max(1, max_policy_lag)")
    max_inflight: int | None = Field(None, ge=1, description="jobs out at once; default lag + 1")
    gate: bool = Field(True, description="job k waits for version k - max_policy_lag")
    schedule: Literal["deterministic", "free_running"] = Field(
        "deterministic", description="deterministic: step s is sampled with exactly version "
        "max(first, v_s - max_policy_lag), so a seed fixes the weights and a resume is bit-exact; "
        "free_running: the newest weights available (and partial_rollouts), timing-dependent")
    stale: Literal["drop", "downweight"] = "drop"
    stale_weight: float = Field(0.5, gt=0, le=1)
    partial_rollouts: bool = Field(False, description="multi-turn episodes pull new weights between turns")
    max_attempts: int = Field(2, ge=1, description="runs of a job whose worker died")
    wait_timeout_s: float = Field(900.0, gt=0)
    work_store: Literal["memory", "sqlite"] = Field(
        "memory", description="sqlite: jobs, results and outcomes in <run dir>/work.sqlite (crash-safe)")
    lease_s: float = Field(60.0, gt=0, description="sqlite: a job claim not renewed within it is re-run")
    worker_imports: list[str] = Field(default_factory=list, description="modules workers import (plugins)")
    ray_address: str | None = Field(None, description="ray executor: 'auto', ray://host:port, None = local")
    ray_cpus_per_worker: float = Field(1.0, gt=0)
    ray_resources: dict[str, float] = Field(default_factory=dict, description="extra actor resources")


class EpisodeConfig(_Strict):
    """Budgets and context management of every episode, read by every caller that plays them:
    the reference loop, the async producers and held-out evaluation (one section, one set of
    defaults; the per-turn token cap is ``rl.max_new_tokens`` / ``eval.max_new_tokens``)."""

    max_turns: int = Field(8, ge=1)
    max_total_tokens: int = Field(4096, ge=1)
    timeout_s: float = Field(300.0, gt=0)
    max_context_chars: int | None = Field(16_000, ge=100, description="None: never compact")
    keep_recent_tool_outputs: int = Field(2, ge=0)
    old_tool_output_chars: int = Field(200, ge=0)
    summary: bool = True
    working_memory: bool = True
    env_workers: int = Field(4, ge=1)
    max_sandbox_episodes: int = Field(8, ge=1, description="sandboxed episodes live at once (<= half the pool)")
    infra_retries: int = Field(2, ge=0, description="replays of a group hit by an infrastructure failure")
    retry_backoff_s: float = Field(0.5, ge=0, description="base of the exponential backoff between replays")
    step_timeout_s: float = Field(120.0, gt=0, description="one env reset/step call; longer: abandoned, retried as infrastructure")
    verify_timeout_s: float = Field(300.0, gt=0, description="one verification; longer: abandoned, recorded as a verifier timeout")
    checkpoint_every: int = Field(4, ge=0, description="rounds between episode checkpoints (a replayed or resumed job goes on from there); 0: never")
    overlap_env_steps: bool = Field(True, description="start an episode's env step as soon as its action is sampled, while the round's call goes on decoding the longer actions (backends that stream prompts: hf)")


class FilterConfig(_Strict):
    """Which finished trajectories and groups the trainer never sees (both loops apply them
    through :class:`posttrain.scheduler.filters.GroupFilter`; counters ``filter/*``).

    Zero-variance groups are dropped by ``rl.filter_zero_variance`` (or the algorithm's own
    recipe); trajectories that failed (an error, no score) are always dropped."""

    truncated: bool = Field(False, description="drop trajectories cut by a token cap (DAPO's overlong filter)")
    dedup_within_group: bool = Field(False, description="drop a trajectory whose actions repeat an earlier one's in its group")
    min_group_size: int = Field(1, ge=1, description="usable trajectories a group needs to be trained on")


class SandboxSection(_Strict):
    """The run's own sandbox pool: every episode and verifier of the run leases from it, and
    the run closes it when it ends (``posttrain/envs/tool_env.use_pool``). Process and Ray
    producers use their own process's default pool."""

    backend: Literal["auto", "isolated", "process"] = Field(
        "auto", description="auto: isolated (bubblewrap) when available, else process")
    pool_size: int = Field(16, ge=2, description="sandboxes at most; >= 2 x episode.max_sandbox_episodes")
    wall_s: float = Field(10.0, gt=0, description="per command, wall clock")
    cpu_s: float = Field(10.0, gt=0, description="per command, CPU seconds")


class CurriculumSection(_Strict):
    """Let the curriculum (``posttrain.scheduler.Curriculum``) choose each task's cell.

    Off: tasks come from the weighted mixture of ``domains``. ``config`` holds
    ``CurriculumConfig`` fields (validated when the run starts, before any work).
    """

    enabled: bool = False
    config: dict[str, Any] = Field(default_factory=dict)


class InferenceConfig(_Strict):
    """The policy's sampling engine in training (checked when the run starts: only engines the
    pipeline can sample and sync weights into; ``posttrain eval --backend`` takes the others).

    The other fields configure the ``vllm`` engine and are ignored by ``hf``:
    ``kv_cache_gib`` (CPU build: the KV cache, whole GiB, at least 1), ``max_model_len``
    (null: the model's positions), ``enforce_eager`` (null: eager on CPU, vLLM's default on
    GPU), ``gpu_memory_utilization`` (GPU: the share of device memory each engine takes)."""

    backend: str = "hf"
    kv_cache_gib: float = Field(1.0, gt=0)
    max_model_len: int | None = Field(None, ge=2)
    enforce_eager: bool | None = None
    gpu_memory_utilization: float = Field(0.5, gt=0, le=1)


class DistributedConfig(_Strict):
    """Sharded training (FSDP2) for ``torchrun ... -m posttrain.trainer.fsdp.run CONFIG``; the
    single-process ``posttrain train`` does not read it. The number of ranks is torchrun's
    ``--nproc-per-node``. ``backend``: ``auto`` picks nccl on CUDA, gloo on CPU.
    ``micro_batch_tokens``: gradient accumulation, each rank's share of a step cut into
    micro-batches of at most this many real tokens (whole trajectories; 0: one micro-batch).
    ``reshard_after_forward``: free gathered layers after the forward (less memory, a second
    all-gather in the backward)."""

    backend: Literal["auto", "gloo", "nccl"] = "auto"
    micro_batch_tokens: int = Field(0, ge=0)
    reshard_after_forward: bool = True


class ActorGroupSpec(_Strict):
    """One group of Ray actors of a placement: how many, and what each one asks the cluster
    for (Ray's ``num_cpus``/``num_gpus`` and custom resources such as ``{sandbox: 1}``)."""

    count: int = Field(1, ge=0)  # trainer and engines need >= 1 (trainer/validate.py)
    num_cpus: float = Field(1.0, ge=0)
    num_gpus: float = Field(0.0, ge=0)
    resources: dict[str, float] = Field(default_factory=dict)

    @field_validator("resources")
    @classmethod
    def _non_negative(cls, value: dict[str, float]) -> dict[str, float]:
        bad = {k: v for k, v in value.items() if v < 0}
        if bad:
            raise ValueError(f"resource amounts must be >= 0 (got {bad})")
        return value


class PlacementConfig(_Strict):
    """Disaggregated placement on Ray (``posttrain/distributed/placement.py``; docs/scale.md):
    a trainer group (``trainer.count`` FSDP ranks), ``engines.count`` rollout engine actors
    and ``sandboxes.count`` sandbox/verifier actors, each with its declared resources.
    ``weight_transport``: how new weights reach the engines (``object_store``: Ray's object
    store; ``broadcast``: a torch.distributed broadcast from trainer rank 0, gloo on CPU,
    NCCL on GPUs). ``ray_address``: null starts a local cluster with ``cluster_cpus`` CPUs
    and ``cluster_resources``; ``auto`` or ``ray://host:10001`` joins an existing one."""

    enabled: bool = False
    ray_address: str | None = None
    cluster_cpus: int | None = Field(None, ge=1)
    cluster_gpus: int | None = Field(None, ge=0)
    cluster_resources: dict[str, float] = Field(default_factory=dict)
    weight_transport: Literal["object_store", "broadcast"] = "object_store"
    trainer: ActorGroupSpec = ActorGroupSpec()
    engines: ActorGroupSpec = ActorGroupSpec()
    sandboxes: ActorGroupSpec = ActorGroupSpec(count=1, resources={})
    sandbox_pool_size: int = Field(2, ge=1)


class RunConfig(_Strict):
    run_name: str = "run"
    seed: int = 0
    out: str = "runs/run"
    torch_threads: int = Field(1, ge=1)
    model: ModelConfig = ModelConfig()
    domains: list[DomainSpec] = Field(default_factory=lambda: [DomainSpec(id="math.add-v1")])
    sft: SFTConfig = SFTConfig()
    rl: RLConfig = RLConfig()
    dpo: DPOConfig = DPOConfig()
    eval: EvalConfig = EvalConfig()
    inference: InferenceConfig = InferenceConfig()
    distributed: DistributedConfig = DistributedConfig()
    placement: PlacementConfig = PlacementConfig()
    async_rl: AsyncConfig = AsyncConfig()
    episode: EpisodeConfig = EpisodeConfig()
    filters: FilterConfig = FilterConfig()
    curriculum: CurriculumSection = CurriculumSection()
    sandbox: SandboxSection = SandboxSection()

    @model_validator(mode="after")
    def _domains_nonempty(self) -> "RunConfig":
        if not self.domains:
            raise ValueError("at least one domain is required")
        return self


def _set_dotted(data: dict[str, Any], dotted: str, value: Any) -> None:
    node: Any = data
    parts = dotted.split(".")
    for part in parts[:-1]:
        if isinstance(node, list):
            node = node[int(part)]
            continue
        nxt = node.get(part)
        if nxt is None:
            nxt = node[part] = {}
        node = nxt
    if isinstance(node, list):
        node[int(parts[-1])] = value
    else:
        node[parts[-1]] = value


def parse_override(text: str) -> tuple[str, Any]:
    """``"rl.lr=1e-5"`` -> ``("rl.lr", 1e-05)``; values are parsed as YAML."""
    if "=" not in text:
        raise ConfigError(f"override {text!r} must look like key.path=value")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not key:
        raise ConfigError(f"override {text!r} has an empty key")
    try:
        value = yaml.safe_load(raw)
    except yaml.YAMLError:
        value = raw
    # YAML reads 1e-5 as a string; numbers in scientific notation should be floats.
    if isinstance(value, str):
        try:
            value = float(value) if any(c in value for c in "eE.") else value
        except ValueError:
            pass
    return key, value


def _allowed(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    node: Any = model
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = getattr(node, "model_fields", {}).get(part)
        if field is None:
            return []
        ann = field.annotation
        args = getattr(ann, "__args__", None)
        node = args[0] if args and isinstance(args[0], type) else ann
    return sorted(getattr(node, "model_fields", {}).keys())


# Fields that moved or went away: an old config gets the usual unknown-field error plus where
# the setting lives now (paths of RunConfig only).
RENAMED: dict[str, str] = {
    "agent": "renamed to 'episode' (one section for every loop's episode budgets)",
    "async_rl.max_turns": "renamed to 'episode.max_turns' (one section for every loop)",
    "async_rl.env_workers": "renamed to 'episode.env_workers' (one section for every loop)",
    "async_rl.verify_workers": "removed: each episode is verified on its live env, on the "
                               "env workers (episode.env_workers)",
    "inference.base_url": "removed: training samples in process; "
                          "`posttrain eval --backend openai --base-url URL` talks to a server",
}


def format_validation_error(err: ValidationError, model: type[BaseModel] = RunConfig) -> str:
    lines = []
    for e in err.errors():
        loc = tuple(e["loc"])
        path = ".".join(str(p) for p in loc) or "<root>"
        value = e.get("input")
        if e["type"] == "extra_forbidden":
            allowed = _allowed(model, loc)
            close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            if model is RunConfig and path in RENAMED:
                hint = f"; {RENAMED[path]}"
            lines.append(f"{path}: unknown field{hint} (allowed: {', '.join(allowed)})")
        else:
            shown = json.dumps(value, default=str)[:120]
            lines.append(f"{path}: got {shown}; {e['msg']}")
    return "invalid config:\n  " + "\n  ".join(lines)


def validate_config(data: dict[str, Any], model: type[BaseModel] = RunConfig) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise ConfigError(format_validation_error(err, model)) from None


def load_config(path: str | Path | None = None, overrides: list[str] | None = None,
                model: type[BaseModel] = RunConfig) -> Any:
    """Read YAML (or start from defaults), apply ``key=value`` overrides, validate."""
    data: dict[str, Any] = {}
    if path is not None:
        p = Path(path)
        if not p.exists():
            raise ConfigError(f"config file {str(p)!r} does not exist")
        try:
            loaded = yaml.safe_load(p.read_text())
        except yaml.YAMLError as exc:
            raise ConfigError(f"config file {str(p)!r} is not valid YAML: {exc}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"config file {str(p)!r} must hold a mapping at the top level")
        data = loaded or {}
    for text in overrides or []:
        key, value = parse_override(text)
        try:
            _set_dotted(data, key, value)
        except (AttributeError, IndexError, ValueError, TypeError):
            raise ConfigError(f"override {text!r}: cannot set {key!r} in this config") from None
    return validate_config(data, model)


def config_hash(cfg: BaseModel) -> str:
    """Stable short hash of a validated config."""
    blob = json.dumps(cfg.model_dump(mode="json"), sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
