"""What an in-process vLLM engine changes in its caller's process, and undoing it.

vLLM assumes it owns its process; with posttrain's CPU default the engine runs inside the
trainer's. Two of its process-wide changes broke the trainer and are undone right after the
engine starts (``VLLMBackend.__init__``): the torch thread setter (:func:`keep_torch_threads`)
and transformers' own model classes (:func:`restore_transformers_classes`). Both are tested
in ``tests/inference/test_vllm_architectures.py``.
"""

from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def keep_torch_threads():
    """Keep the caller's torch thread count and ``torch.set_num_threads`` across engine start.

    vllm's CPU worker replaces ``torch.set_num_threads`` with a no-op for the whole process
    (it guards the OpenMP binding of its own threads); with the in-process engine that would
    freeze the trainer's thread setting too. The engine runs its forward passes in the
    caller's intra-op pool, so it then uses the caller's count."""
    import torch

    setter, threads = torch.set_num_threads, torch.get_num_threads()
    try:
        yield
    finally:
        torch.set_num_threads = setter
        setter(threads)


def restore_transformers_classes() -> list[str]:
    """Give transformers' model classes back their own ``__init__``/``__call__``; their names.

    Architectures without a vLLM-native implementation (GPT-NeoX in vLLM 0.32) run through
    vLLM's Transformers modeling backend, which decorates the *transformers* decoder class
    (``GPTNeoXModel``) for torch.compile: a new base class, a new ``__init__`` and a
    ``__call__`` that reads an attribute only the new ``__init__`` sets. With the engine in
    this process, every instance the caller built before — the trainer's policy — then fails
    on its next forward (``AttributeError: ... 'do_not_compile'``). Called only when the
    engine runs eagerly in this process, where the decoration does nothing (its ``__call__``
    just calls ``forward``): the engine's own instance keeps working through the restored
    ``nn.Module.__call__``."""
    import transformers
    from vllm.compilation.decorators import IGNORE_COMPILE_KEY
    from vllm.compilation.wrapper import TorchCompileWithNoGuardsWrapper as wrapper

    restored, todo, seen = [], [transformers.PreTrainedModel], set()
    while todo:
        cls = todo.pop()
        todo.extend(c for c in cls.__subclasses__() if c not in seen)
        seen.add(cls)
        if wrapper not in cls.__bases__:
            continue
        init = cls.__dict__["__init__"]
        cells = dict(zip(init.__code__.co_freevars, init.__closure__ or ()))
        cls.__init__ = cells["old_init"].cell_contents  # the class's own, kept by the wrapper
        for name in ("__call__", "save_aot_compiled_function", IGNORE_COMPILE_KEY):
            if name in cls.__dict__:
                delattr(cls, name)
        cls.__bases__ = tuple(b for b in cls.__bases__ if b is not wrapper)
        restored.append(f"{cls.__module__}.{cls.__qualname__}")
    return restored
