"""What to evaluate and with what: ``--domains`` specs and the backend behind ``--model``.

Domain spec: comma-separated entries, each ``all``, a family (``math``, ``logic``...), or a
domain id (``math.add`` resolves to its latest version, ``math.add-v1`` to exactly that).
Resolution order is kept and duplicates dropped; an unknown entry raises the registry's
"did you mean" error.

Backends: a local HF causal LM folder (``--model PATH``; the weights hash is the cache key),
any OpenAI-compatible server (``--backend openai --base-url URL``; vLLM, SGLang, llama.cpp
servers; cached only under an explicit ``--model-version``, never by the served name), vLLM
in process (``--backend vllm --model PATH``), or a scripted fake (tests, smoke runs).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Mapping

from posttrain.core.errors import ConfigError


def resolve_domains(spec: str) -> dict[str, Any]:
    """Exact domain id → domain object for a ``--domains`` spec."""
    from posttrain.domains.base import DOMAINS, FAMILIES, get_domain, load_builtin_domains

    load_builtin_domains()
    out: dict[str, Any] = {}
    entries = [e.strip() for e in spec.split(",") if e.strip()]
    if not entries:
        raise ConfigError("--domains is empty; give ids (math.add-v1), families (math) or 'all'")
    for entry in entries:
        if entry == "all":
            ids = DOMAINS.ids()
        elif entry in FAMILIES:
            ids = [i for i in DOMAINS.ids() if i.startswith(entry + ".")]
            if not ids:
                raise ConfigError(f"family {entry!r} has no registered domain")
        else:
            ids = [DOMAINS.resolve(entry)]
        for i in ids:
            out.setdefault(i, get_domain(i))
    return out


def build_backend(backend: str, model: str | None, base_url: str | None = None,
                  served_model: str | None = None, model_version: str | None = None,
                  fake_script: str | None = None, dtype: str = "float32") -> tuple[Any, dict]:
    """``(backend, meta)``; ``meta["weights_id"]`` is the cache identity (None = do not cache)."""
    from posttrain.inference import make_backend
    from posttrain.models.versions import weights_hash

    if backend == "hf":
        if not model:
            raise ConfigError("--model PATH (a local Hugging Face model folder) is required for --backend hf")
        from posttrain.models.loading import load_model, policy_backend

        m, tok = load_model(model, dtype=dtype)
        be = policy_backend(m, tok)  # a vision-language folder samples through the vlm backend
        return be, {"model": str(model), "backend": "hf", "weights_id": weights_hash(model)}
    if backend == "vllm":
        if not model:
            raise ConfigError("--model PATH is required for --backend vllm")
        be = make_backend("vllm", model=str(model))
        return be, {"model": str(model), "backend": "vllm", "weights_id": weights_hash(model)}
    if backend == "openai":
        if not base_url:
            raise ConfigError("--base-url URL is required for --backend openai")
        be = make_backend("openai", base_url=base_url, model=served_model or model)
        wid = f"served:{model_version}" if model_version else None
        return be, {"model": served_model or model or base_url, "backend": "openai",
                    "base_url": base_url, "weights_id": wid}
    if backend == "fake":
        if not fake_script:
            raise ConfigError("--backend fake needs --fake-script FILE (a JSON list or dict of replies)")
        text = Path(fake_script).read_text()
        script = json.loads(text)
        wid = "fake:" + hashlib.sha256(text.encode()).hexdigest()
        return make_backend("fake", script=script), {"model": f"fake:{Path(fake_script).name}",
                                                     "backend": "fake", "weights_id": wid}
    raise ConfigError(f"--backend must be one of hf, openai, vllm, fake; got {backend!r}")


SCRIPTED = ("reference", "wrong")


def reference_script(task: Any) -> list[str]:
    """Each domain's own reference episode: its reference actions, or its reference answer."""
    from posttrain.domains.base import get_domain

    dom = get_domain(task.domain)
    if callable(getattr(dom, "make_env", None)):
        return list(dom.reference_actions(task))
    return [dom.solve(task)]


def wrong_script(task: Any) -> list[str]:
    """A policy that gives up at once: a final answer that no task accepts."""
    from posttrain.tools.calls import format_answer

    return [format_answer("I cannot do this task")]


def scripted_backend(name: str, domains: Mapping[str, Any], rset: Any) -> tuple[Any, dict]:
    """``--backend reference | wrong``: a scripted policy over the evaluation's own tasks —
    the ceiling every domain's verifier must give its reference (1.0), and the floor of a
    policy that does nothing — through exactly the path a model takes."""
    from posttrain.rollout.scripted import ScriptedPolicy

    tasks = [t for d in domains.values() for t in rset.domain_tasks(d)]
    script = reference_script if name == "reference" else wrong_script
    return ScriptedPolicy(tasks, script), {"model": f"scripted:{name}", "backend": name,
                                           "weights_id": None}
