"""The run config's semantic checks, and the one conversion of its ``episode`` section.

:func:`check_run_config` is what makes "a bad config fails before any work" true for the
rules pydantic cannot see: every registry-valued field (``rl.algorithm``, ``rl.correction``, ``domains[].id``
and their ``difficulties``, ``inference.backend``, ``async_rl.executor``, the curriculum's
``config``) and every rule that ties two fields together. ``posttrain train``/``quickstart``
call it right after :func:`~posttrain.core.config.load_config`, and
:func:`~posttrain.trainer.pipeline.run_pipeline` at its top, so Python callers get the same
:class:`ConfigError` before a file is written.

Guarantees: one ConfigError listing every problem, each line ``dotted.path: got VALUE; what
is allowed`` (registries add "did you mean"); torch-free and fast (about a second, most of it
importing the domain library), so a typo fails at once. Not covered: whether the tasks of a
valid domain fit the model's context (``model.tiny.max_position_embeddings``), which depends
on each generated prompt.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any, Callable

from pydantic import ValidationError

from posttrain.core.config import EpisodeConfig, RunConfig, format_validation_error
from posttrain.core.errors import ConfigError, RegistryError
from posttrain.models.folders import is_vision_folder
from posttrain.rollout import ContextConfig, EpisodeLimits
from posttrain.trainer.algorithms import ALGORITHMS, check_correction, get_algorithm

# Engines the pipeline can sample with and copy new weights into after every step
# (trainer/engines.py builds them). The other inference backends (openai, fake) serve
# `posttrain eval --backend ...`.
TRAINING_BACKENDS = ("hf", "vllm")
# Pools trainer/producers.py registers on import; "ray" comes from posttrain.distributed.
BUILTIN_POOLS = ("thread", "process")
RAY_EXTRA_HINT = "needs the ray extra: pip install 'posttrain[ray]'"
VLLM_EXTRA_HINT = ("needs the vllm extra: pip install 'posttrain[vllm]' (GPU), or on CPU "
                   "`make setup-vllm` and run from .venv-vllm (see docs/inference.md, \"vLLM\")")

Check = Callable[[RunConfig], list[str]]


def _show(value: Any) -> str:
    return json.dumps(value, default=str)


def episode_limits(episode: EpisodeConfig) -> EpisodeLimits:
    """The rollout layer's budgets from the run config's ``episode`` section (every loop)."""
    ctx = ContextConfig(max_context_chars=episode.max_context_chars,
                        keep_recent_tool_outputs=episode.keep_recent_tool_outputs,
                        old_tool_output_chars=episode.old_tool_output_chars,
                        summary=episode.summary, working_memory=episode.working_memory)
    return EpisodeLimits(max_turns=episode.max_turns, max_total_tokens=episode.max_total_tokens,
                         timeout_s=episode.timeout_s, context=ctx, env_workers=episode.env_workers,
                         max_sandbox_episodes=episode.max_sandbox_episodes,
                         infra_retries=episode.infra_retries,
                         retry_backoff_s=episode.retry_backoff_s,
                         step_timeout_s=episode.step_timeout_s,
                         verify_timeout_s=episode.verify_timeout_s,
                         checkpoint_every=episode.checkpoint_every,
                         overlap_env_steps=episode.overlap_env_steps)


# registry-valued fields ------------------------------------------------------------------
def _algorithm(cfg: RunConfig) -> list[str]:
    problems = []
    for check, value in ((get_algorithm, cfg.rl.algorithm), (check_correction, cfg.rl.correction)):
        try:
            check(value)
        except ConfigError as exc:
            problems.append(str(exc))
    rl = cfg.rl
    if rl.correction_low >= rl.correction_high:
        problems.append(f"rl.correction_low: got {rl.correction_low} with rl.correction_high "
                        f"{rl.correction_high}; allowed: a band, correction_low < correction_high")
    return problems


def _domains(cfg: RunConfig) -> list[str]:
    from posttrain.domains.base import get_domain

    problems, seen = [], {}
    for i, spec in enumerate(cfg.domains):
        try:
            dom = get_domain(spec.id)
        except RegistryError as exc:
            problems.append(f"domains.{i}.id: got {_show(spec.id)}; {exc}"
                            " (`posttrain domains list` shows them all)")
            continue
        if dom.id in seen:
            problems.append(f"domains.{i}.id: got {_show(spec.id)}, the same domain as "
                            f"domains.{seen[dom.id]}.id ({dom.id}); allowed: each domain once "
                            "(weight sets its share)")
        seen.setdefault(dom.id, i)
        levels = list(dom.difficulties)
        bad = [d for d in spec.difficulties or () if d not in levels]
        if bad or len(set(spec.difficulties or ())) != len(spec.difficulties or ()):
            problems.append(f"domains.{i}.difficulties: got {_show(spec.difficulties)}; "
                            f"allowed: distinct levels of {dom.id}: {levels}")
    return problems


def _inference(cfg: RunConfig) -> list[str]:
    backend = cfg.inference.backend
    if backend == "vllm":
        return _vllm(cfg)
    if backend in TRAINING_BACKENDS:
        return []
    return [f"inference.backend: got {_show(backend)}; the training pipeline "
            f"samples with {', '.join(map(repr, TRAINING_BACKENDS))} only (allowed: "
            f"{', '.join(TRAINING_BACKENDS)}; `posttrain eval --backend` takes openai, vllm, fake)"]


def _vllm(cfg: RunConfig) -> list[str]:
    """The vLLM engine's own limits, checked before the (tens of seconds) engine start."""
    head, rl = 'inference.backend: got "vllm"', cfg.rl
    if not _installed("vllm"):  # the other rules would not matter: say the one thing to do
        return [f"{head}; vllm is not importable here: it {VLLM_EXTRA_HINT}"]
    problems = []
    if rl.top_p < 1:
        problems.append(f"rl.top_p: got {rl.top_p} with inference.backend \"vllm\"; vLLM's behaviour "
                        "logprobs are of the top-p-truncated distribution, the trainer's are not, so "
                        "every importance ratio would be off: allowed 1.0 with vllm")
    if rl.temperature > 2:
        problems.append(f"rl.temperature: got {rl.temperature} with inference.backend \"vllm\"; "
                        "vLLM samples at temperatures up to 2: allowed (0, 2]")
    n_max = cfg.inference.max_model_len
    for path, n in (("rl.max_new_tokens", rl.max_new_tokens),
                    ("eval.max_new_tokens", cfg.eval.max_new_tokens)):
        if n_max is not None and n >= n_max:
            problems.append(f"{path}: got {n} with inference.max_model_len {n_max}; allowed: fewer "
                            "than the engine's positions (the prompt needs some)")
    return problems


def _pool_ids() -> list[str]:
    # Registering a pool means importing producers.py; until then only its built-ins exist,
    # so the (torch-heavy) module is read only when something already loaded it.
    mod = sys.modules.get("posttrain.trainer.producers")
    return sorted(mod.POOLS.ids()) if mod is not None else list(BUILTIN_POOLS)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # ValueError: a module set to None in sys.modules
        return False


def ray_installed() -> bool:
    return _installed("ray")


def _executor(cfg: RunConfig, registering: tuple[str, ...] = ()) -> list[str]:
    name, pools = cfg.async_rl.executor, _pool_ids()
    if name in pools or name in registering:
        return []
    head = f"async_rl.executor: got {_show(name)}"
    if name == "ray":
        if not ray_installed():
            return [f"{head}; the ray executor {RAY_EXTRA_HINT}"]
        return [f"{head}; not registered: call posttrain.distributed.register() before "
                "run_pipeline (posttrain train does it)"]
    import difflib

    close = difflib.get_close_matches(str(name), pools + ["ray"], n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return [f"{head}{hint} (allowed: {', '.join(sorted(set(pools) | {'ray'}))})"]


def _curriculum(cfg: RunConfig) -> list[str]:
    from posttrain.scheduler.config import CurriculumConfig

    try:  # checked even when disabled: a typo in it is still a typo
        cur = CurriculumConfig.model_validate({"seed": cfg.seed, **cfg.curriculum.config})
    except ValidationError as err:
        lines = format_validation_error(err, CurriculumConfig).split("\n  ")[1:]
        return [("curriculum.config" + ("" if ln.startswith("<root>") else ".") +
                 ln.removeprefix("<root>")) for ln in lines]
    from posttrain.domains.base import get_domain

    ids = []
    for spec in cfg.domains:
        try:
            ids.append(get_domain(spec.id).id)
        except RegistryError:
            pass  # reported by _domains
    unknown = sorted(set(cur.domains) - set(ids))
    if unknown:
        return [f"curriculum.config.domains: got {_show(unknown)}; allowed: ids of this run's "
                f"domains, versioned as listed: {ids}"]
    return []


# cross-field rules -----------------------------------------------------------------------
def _async(cfg: RunConfig) -> list[str]:
    a, lag = cfg.async_rl, cfg.rl.max_policy_lag
    problems = []
    if lag < 1 and a.work_store == "sqlite":
        problems.append("async_rl.work_store: got \"sqlite\" with rl.max_policy_lag 0; the work store "
                        "runs the asynchronous loop: allowed are rl.max_policy_lag >= 1 (with "
                        "async_rl.max_inflight: 1 for on-policy steps) or work_store \"memory\"")
    if lag < 1 and a.executor != "thread":
        problems.append(f"async_rl.executor: got {_show(a.executor)} with rl.max_policy_lag 0; "
                        "executors run the asynchronous loop, lag 0 runs the synchronous one "
                        "in this process: allowed are rl.max_policy_lag >= 1 or executor \"thread\"")
    if lag >= 1 and a.max_inflight is not None and a.max_inflight > lag + 1:
        problems.append(f"async_rl.max_inflight: got {a.max_inflight} with rl.max_policy_lag {lag}; "
                        "a job beyond lag + 1 would wait at the gate or be sampled too stale: "
                        f"allowed 1..{lag + 1} (or null: lag + 1)")
    if lag >= 1 and a.partial_rollouts and a.schedule == "deterministic":
        problems.append("async_rl.partial_rollouts: got true with async_rl.schedule \"deterministic\"; "
                        "newer weights between turns depend on timing: allowed are partial_rollouts: "
                        "false, or schedule: free_running")
    for i, mod in enumerate(a.worker_imports):
        try:
            found = importlib.util.find_spec(mod) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            problems.append(f"async_rl.worker_imports.{i}: got {_show(mod)}; allowed: importable "
                            "module names (workers import them to register plugins)")
    return problems


def _model(cfg: RunConfig) -> list[str]:
    m, problems = cfg.model, []
    if m.path is not None:
        p = Path(m.path).expanduser()
        if not p.is_dir():
            problems.append(f"model.path: got {_show(m.path)}; allowed: an existing local folder "
                            "of a Hugging Face causal LM (or null: the built-in tiny model)")
        elif not (p / "config.json").is_file():
            problems.append(f"model.path: got {_show(m.path)}; the folder has no config.json: "
                            "allowed: a folder written by save_pretrained")
        elif is_vision_folder(p):
            problems += _vision(cfg)
        return problems
    if m.dtype != "float32":
        problems.append(f"model.dtype: got {_show(m.dtype)} with the built-in tiny model (model.path "
                        "null), which trains in float32: allowed float32, or a model.path")
    t = m.tiny
    if t.hidden_size % t.num_heads or (t.hidden_size // t.num_heads) % 2:
        problems.append(f"model.tiny.hidden_size: got {t.hidden_size} with num_heads {t.num_heads}; "
                        "allowed: a multiple of num_heads with an even head size (rotary)")
    for path, n in (("rl.max_new_tokens", cfg.rl.max_new_tokens),
                    ("eval.max_new_tokens", cfg.eval.max_new_tokens)):
        if n >= t.max_position_embeddings:
            problems.append(f"{path}: got {n} with model.tiny.max_position_embeddings "
                            f"{t.max_position_embeddings}; allowed: fewer than the positions "
                            "(the prompt needs some)")
    return problems


def _vision(cfg: RunConfig) -> list[str]:
    """A vision-language ``model.path``: what its run supports (docs/vision.md, "Training a VLM")."""
    why = "with a vision-language model.path"
    problems = []
    if cfg.inference.backend != "hf":
        problems.append(f"inference.backend: got {_show(cfg.inference.backend)} {why}; it samples "
                        "in process through the vlm backend: allowed \"hf\"")
    if cfg.dpo.steps:
        problems.append(f"dpo.steps: got {cfg.dpo.steps} {why}; DPO pairs carry no images yet: "
                        "allowed 0")
    if cfg.model.lora is not None:
        problems.append(f"model.lora: set {why}; adapters are tested on causal LMs only: allowed null")
    if cfg.placement.enabled:
        problems.append(f"placement.enabled: got true {why}; the placed engines are text backends: "
                        "allowed false")
    if cfg.rl.max_policy_lag and cfg.async_rl.executor != "thread":
        problems.append(f"async_rl.executor: got {_show(cfg.async_rl.executor)} {why}; worker "
                        "processes build text backends: allowed \"thread\"")
    if cfg.sft.steps:
        from posttrain.domains.base import get_domain

        multi = []
        for d in cfg.domains:
            try:
                if callable(getattr(get_domain(d.id), "make_env", None)):
                    multi.append(d.id)
            except RegistryError:  # an unknown id is _domains' to report
                continue
        if multi:
            problems.append(f"sft.steps: got {cfg.sft.steps} {why} and multi-turn domains "
                            f"{multi}; a VLM's SFT trains on single-turn demonstrations only: "
                            "allowed 0, or single-turn domains")
    return problems


def _rl(cfg: RunConfig) -> list[str]:
    rl, problems = cfg.rl, []
    algo = ALGORITHMS.get(rl.algorithm)
    filtering = rl.filter_zero_variance or (algo is not None and algo.filter_zero_variance)
    if rl.group_size < 2 and filtering and rl.steps:
        problems.append("rl.group_size: got 1 with zero-variance filtering on (rl.filter_zero_variance"
                        " or the dapo recipe): every one-sample group is dropped and RL never "
                        "updates; allowed: group_size >= 2")
    if cfg.dpo.steps and rl.group_size < 2:
        problems.append(f"dpo.steps: got {cfg.dpo.steps} with rl.group_size 1; DPO pairs the best and "
                        "worst sample of a group: allowed dpo.steps 0 or rl.group_size >= 2")
    every = cfg.eval.every_steps
    if every and every > rl.steps:
        problems.append(f"eval.every_steps: got {every} with rl.steps {rl.steps}; it would never run: "
                        f"allowed 0 (off) or 1..{rl.steps}")
    return problems


def _sandbox(cfg: RunConfig) -> list[str]:
    need = 2 * cfg.episode.max_sandbox_episodes
    if cfg.sandbox.pool_size < need:
        return [f"sandbox.pool_size: got {cfg.sandbox.pool_size} with episode.max_sandbox_episodes "
                f"{cfg.episode.max_sandbox_episodes}; allowed: >= {need} (a live episode holds "
                f"one sandbox and its verifier may lease one more)"]
    return []


def _lora(cfg: RunConfig) -> list[str]:
    """``model.lora``: peft importable, target modules among the model's linear layers (read
    from a weightless meta-device copy), and the engines/transports that carry an adapter."""
    lora = cfg.model.lora
    if lora is None:
        return []
    if not _installed("peft"):
        return ["model.lora: peft is not importable here: pip install 'posttrain[lora]'"]
    problems = []
    from posttrain.trainer.lora import meta_linear_names  # torch-heavy: only for LoRA runs

    try:
        names = meta_linear_names(cfg.model)
    except Exception as exc:  # an unreadable folder is _model's to report
        names = None
        if cfg.model.path is None:
            problems.append(f"model.lora.target_modules: got {_show(lora.target_modules)}; not "
                            f"checked: could not build the tiny model's shape ({exc})")
    unknown = [t for t in lora.target_modules if names is not None and t not in names]
    if unknown:
        problems.append(f"model.lora.target_modules: got {unknown}, not linear layers of the model; "
                        f"allowed: {', '.join(names)}")
    if cfg.inference.backend not in ("hf", "vllm"):
        problems.append(f"model.lora: set with inference.backend {_show(cfg.inference.backend)}; the "
                        "adapter reaches the hf and vllm engines only: allowed hf, vllm")
    elif cfg.inference.backend == "vllm" and lora.r > _vllm_lora_ranks()[-1]:
        problems.append(f"model.lora.r: got {lora.r} with inference.backend \"vllm\"; vLLM's LoRA "
                        f"ranks go up to {_vllm_lora_ranks()[-1]}: allowed 1..{_vllm_lora_ranks()[-1]}")
    if cfg.rl.max_policy_lag >= 1 and cfg.async_rl.executor != "thread":
        problems.append(f"model.lora: set with async_rl.executor {_show(cfg.async_rl.executor)}; "
                        "adapter-only weight sync runs in-process: allowed executor thread")
    return problems


def _vllm_lora_ranks() -> tuple[int, ...]:
    from posttrain.inference.vllm_lora import VLLM_LORA_RANKS  # read only for LoRA + vllm

    return VLLM_LORA_RANKS


def _placement(cfg: RunConfig) -> list[str]:
    """``placement:`` (posttrain/distributed/placement.py): the sharded trainer's rules, actor
    counts, and, on a local cluster of declared size, that every actor fits in it."""
    pl = cfg.placement
    if not pl.enabled:
        return []
    problems = [] if ray_installed() else [f"placement.enabled: got true; the placement {RAY_EXTRA_HINT}"]
    why = "with placement.enabled; the placed trainer runs the synchronous sharded RL loop"
    for field, value in (("rl.max_policy_lag", cfg.rl.max_policy_lag), ("sft.steps", cfg.sft.steps),
                         ("dpo.steps", cfg.dpo.steps)):
        if value:
            problems.append(f"{field}: got {value} {why} (start it from an SFT'd model.path): allowed 0")
    for name in ("trainer", "engines"):
        if getattr(pl, name).count < 1:
            problems.append(f"placement.{name}.count: got {getattr(pl, name).count}; allowed: >= 1")
    if cfg.distributed.backend == "nccl" and pl.trainer.num_gpus < 1:
        problems.append(f"placement.trainer.num_gpus: got {_show(pl.trainer.num_gpus)} with "
                        "distributed.backend \"nccl\"; NCCL needs one GPU per rank: allowed >= 1")
    if cfg.model.lora is not None:
        problems.append("placement.enabled: got true with model.lora set; the placed trainer is the "
                        "FSDP group, which trains the full model: allowed false, or model.lora: null")
    if pl.ray_address is None:
        problems += _fits(cfg)
    return problems


def _fits(cfg: RunConfig) -> list[str]:
    """Every actor's request within the declared local cluster (else Ray waits forever)."""
    pl, problems = cfg.placement, []
    groups = {"trainer": pl.trainer, "engines": pl.engines, "sandboxes": pl.sandboxes}
    totals = {"num_cpus": (pl.cluster_cpus, "cluster_cpus"), "num_gpus": (pl.cluster_gpus, "cluster_gpus")}
    for key, (have, field) in totals.items():
        need = sum(getattr(g, key) * g.count for g in groups.values())
        if have is not None and need > have:
            problems.append(f"placement.{field}: got {have}; the actors ask for {need:g} {key} "
                            f"in all ({', '.join(f'{n}: {g.count} x {getattr(g, key):g}' for n, g in groups.items())}): "
                            f"allowed >= {need:g}")
    names = {r for g in groups.values() for r in g.resources}
    for r in sorted(names):
        need = sum(g.resources.get(r, 0.0) * g.count for g in groups.values())
        have = pl.cluster_resources.get(r)
        if have is None or need > have:
            problems.append(f"placement.cluster_resources: got {_show(pl.cluster_resources)}; the "
                            f"actors ask for {need:g} {r!r} in all: allowed {r} >= {need:g}")
    return problems


CHECKS: tuple[Check, ...] = (_algorithm, _domains, _inference, _curriculum, _async, _model, _rl,
                             _sandbox, _lora, _placement)


def check_run_config(cfg: RunConfig, *, registering: tuple[str, ...] = ()) -> RunConfig:
    """Raise one :class:`ConfigError` listing every problem of ``cfg``; return it when valid.

    ``registering``: executor names the caller registers right after a successful check (the
    CLI: ``"ray"``, whose import is slow, so that a typo elsewhere fails without it)."""
    problems = [line for check in CHECKS for line in check(cfg)] + _executor(cfg, registering)
    if problems:
        raise ConfigError("invalid config:\n  " + "\n  ".join(problems))
    return cfg


def _sharded(cfg: RunConfig) -> list[str]:
    """What the FSDP entry (``posttrain.trainer.fsdp.run``) runs: the synchronous loop, RL only."""
    problems = []
    if cfg.rl.max_policy_lag:
        problems.append(f"rl.max_policy_lag: got {cfg.rl.max_policy_lag} with the sharded trainer; it "
                        "runs the synchronous reference loop: allowed 0")
    if cfg.inference.backend != "hf":
        problems.append(f"inference.backend: got {_show(cfg.inference.backend)} with the sharded "
                        "trainer; rank 0 samples with the in-process engine: allowed \"hf\"")
    if cfg.sft.steps or cfg.dpo.steps:
        problems.append(f"sft.steps/dpo.steps: got {cfg.sft.steps}/{cfg.dpo.steps} with the sharded "
                        "trainer; it runs RL only (start it from an SFT'd model.path): allowed 0/0")
    return problems


def check_sharded_config(cfg: RunConfig) -> RunConfig:
    """:func:`check_run_config` plus the sharded entry's own rules, in one ConfigError."""
    problems = [line for check in CHECKS for line in check(cfg)] + _executor(cfg) + _sharded(cfg)
    if problems:
        raise ConfigError("invalid config:\n  " + "\n  ".join(problems))
    return cfg
