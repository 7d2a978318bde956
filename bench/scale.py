"""Benchmark: full fine-tuning vs LoRA vs 2-process FSDP2 on a ~50M-parameter Llama, weight sync.

The model: ``transformers.LlamaConfig`` (hidden 512, 13 layers, 8 heads, intermediate 1408,
vocab 8192, untied head: ~50M parameters), random weights, float32, CPU. The step: one GRPO
update of :func:`posttrain.trainer.fsdp.update.sharded_policy_update` (the same code with one
process or two ranks) on fixed PolicyBatches of ``--rows`` rows of ``--seq`` tokens (half
prompt, half actions), fused AdamW, grad clip 1.0.

Each variant runs in a fresh process so that its peak memory is its own: ``full`` (every
weight trains), ``lora_r8``/``lora_r16`` (``peft.get_peft_model``, LoraConfig on q/k/v/o/gate/
up/down projections, alpha 2r; only adapters in the optimizer), ``fsdp2`` (2 gloo ranks via
``torch.multiprocessing``, ``fully_shard`` per decoder layer + root). Step time: median of
``--steps`` steps after one warm-up step. Memory, per process (per rank for FSDP), taken right after the steps: the peak RSS
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``: model, optimizer, activations, the Python and
library heap — what the OS had to give the process; an FSDP rank builds the whole model before
sharding it, as the entry does, so its peak includes one full copy at start-up) and the RSS
then (``VmRSS``; glibc keeps freed pages, so it is not the live set either), and exactly the
bytes of parameters + gradients + optimizer state the process holds (``state_mb``: its own
shards under FSDP) — the part sharding divides.

FSDP parity: ``fsdp2`` trains on the same batches from the same weights as ``full`` and rank 0
compares the gathered final weights with ``full``'s: ``fsdp2_parity_max_abs_diff``.

Weight sync (seconds per 100 MB, one publish + one pull into a real HF backend's model):
``inprocess`` and ``shm`` (:mod:`posttrain.trainer.weight_sync`; the shm pull here is in the
same process, a worker process would pay the same copy), ``torch_dist`` (gloo broadcast rank 0
-> rank 1, timed inside the FSDP ranks), and LoRA's in-process sync of the adapter tensors only
(``lora_sync_mb``: adapter bytes). Ray's object-store transport is not measured here
(bench/ray_overhead.py covers Ray).

Placement overhead (``--placement-steps N``, 0 skips it; ``--placement-only`` runs just this
part): the same sharded RL run (configs/scale/cpu-placement.yaml: the tiny model after 30 SFT
steps, math.add + math.compare, 2 gloo ranks) ``embedded`` (torchrun, rank 0 samples with its
in-process HF engine) and ``placed`` on a local Ray cluster (2 rank actors, 1 engine actor,
1 sandbox host) with the object-store and the broadcast transport; per-step time is the
median ``time/step_s`` (sample + update + weight sync) of steps 2..N of each run's
metrics.jsonl, so actor start-up is reported apart (``placement_startup_s``).

Threads: 1 per process (``torch.set_num_threads(1)``, ``OMP_NUM_THREADS=1``); the load average
before and after is printed. Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
SHAPE = dict(vocab_size=8192, hidden_size=512, num_hidden_layers=13, num_attention_heads=8,
             num_key_value_heads=8, intermediate_size=1408, max_position_embeddings=512,
             tie_word_embeddings=False)


def build_model():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(**SHAPE))


def batches(n: int, rows: int, seq: int):
    """Fixed GRPO batches: groups of 4 rows sharing a prompt, random advantages."""
    from posttrain.trainer.batch import PolicyBatch, Segment, pad_segments

    out = []
    g = torch.Generator().manual_seed(1)
    for _ in range(n):
        segs = []
        for r in range(rows):
            if r % 4 == 0:
                prompt = torch.randint(3, SHAPE["vocab_size"], (seq // 2,), generator=g).tolist()
            acts = torch.randint(3, SHAPE["vocab_size"], (seq - seq // 2,), generator=g).tolist()
            segs.append(Segment(tuple(prompt + acts), (False,) * len(prompt) + (True,) * len(acts),
                                (0.0,) * len(prompt) + (-9.0,) * len(acts), 0))
        adv = torch.randn(rows, generator=g)
        out.append(PolicyBatch(**pad_segments(segs, 0), advantages=adv,
                               group_ids=torch.arange(rows) // 4, sample_ids=torch.arange(rows),
                               sample_weights=torch.ones(rows)))
    return out


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def rss_now_mb() -> float:
    """Resident memory now (VmRSS): the steady state after the steps, start-up peaks aside."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def state_mb(model, opt) -> float:
    """Bytes this process holds in parameters, gradients and optimizer state (its shards only
    under FSDP): the part of memory that sharding divides, exact where RSS is not (glibc keeps
    freed pages, e.g. the whole model an FSDP rank builds before sharding it)."""
    def local(t):
        t = t.to_local() if hasattr(t, "to_local") else t
        return t.numel() * t.element_size()

    total = sum(local(p) + (local(p.grad) if p.grad is not None else 0) for p in model.parameters())
    total += sum(local(v) for st in opt.state.values() for v in st.values() if torch.is_tensor(v))
    return total / 1e6


def train_steps(model, args) -> tuple[list[float], float]:
    from posttrain.core.config import RLConfig
    from posttrain.trainer.fsdp.update import sharded_policy_update
    from posttrain.trainer.optim import build_optimizer

    rl = RLConfig(algorithm="grpo", lr=1e-4, grad_clip=1.0, max_new_tokens=args.seq)
    opt = build_optimizer(model, 1e-4)
    times = []
    for b in batches(args.steps + 1, args.rows, args.seq):
        t0 = time.perf_counter()
        sharded_policy_update(model, opt, b, rl, "grpo")
        times.append(time.perf_counter() - t0)
    # the first step warms the allocator and builds optimizer state
    return times[1:], state_mb(model, opt)


def lora_model(r: int):
    from peft import LoraConfig, get_peft_model

    return get_peft_model(build_model(), LoraConfig(r=r, lora_alpha=2 * r, lora_dropout=0.0,
                                                    target_modules=LORA_TARGETS))


def sync_s_per_100mb(sd: dict) -> dict[str, float]:
    """One publish + one pull into a real HF backend, for the in-process and shm transports."""
    from posttrain.inference import make_backend
    from posttrain.models.tokenizer import build_char_tokenizer
    from posttrain.trainer.weight_sync import InProcessWeightSync, SharedMemoryWeightSync

    mb = sum(t.numel() * t.element_size() for t in sd.values()) / 1e6
    backend = make_backend("hf", model=build_model().eval(), tokenizer=build_char_tokenizer())
    out = {}
    for name, sync in (("inprocess", InProcessWeightSync(0, None)),
                       ("shm", SharedMemoryWeightSync(sd, 0))):
        t0 = time.perf_counter()
        sync.publish(1 + len(out), sd)
        sync.pull(backend)
        out[name] = (time.perf_counter() - t0) * 100.0 / mb
    return out


def variant(name: str, args) -> dict:
    torch.set_num_threads(1)
    if name == "full":
        model = build_model()
        times, state = train_steps(model, args)
        mem = {"peak_rss_mb": peak_rss_mb(), "rss_after_mb": rss_now_mb(), "state_mb": state}
        torch.save(model.state_dict(), Path(args.tmp) / "full_final.pt")
        params = sum(p.numel() for p in model.parameters())
        sd = {k: v.detach().clone() for k, v in model.state_dict().items()}
        return {"step_s": statistics.median(times), **mem, "params": params,
                "sync": sync_s_per_100mb(sd)}
    if name.startswith("lora_r"):
        from posttrain.trainer.weight_sync import InProcessWeightSync
        from peft import get_peft_model_state_dict, set_peft_model_state_dict

        model = lora_model(int(name[6:]))
        times, state = train_steps(model, args)
        mem = {"peak_rss_mb": peak_rss_mb(), "rss_after_mb": rss_now_mb(), "state_mb": state}
        adapter = {k: v.detach().clone() for k, v in get_peft_model_state_dict(model).items()}
        mb = sum(t.numel() * t.element_size() for t in adapter.values()) / 1e6
        sync = InProcessWeightSync(0, None)
        t0 = time.perf_counter()
        sync.publish(1, adapter)
        set_peft_model_state_dict(model, sync.weights(1))  # as the receiving side installs it
        sync_s = time.perf_counter() - t0
        trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
        return {"step_s": statistics.median(times), **mem, "trainable": trainable, "sync_mb": mb, "sync_s": sync_s,
                "sync_s_per_100mb": sync_s * 100.0 / max(mb, 1e-9)}
    if name == "fsdp2":
        from posttrain.trainer.fsdp.dist import spawn

        spawn(fsdp_rank, 2, args.steps, args.rows, args.seq, args.tmp, backend="gloo")
        return json.loads((Path(args.tmp) / "fsdp2.json").read_text())
    raise SystemExit(f"unknown variant {name}")


def fsdp_rank(rank: int, steps: int, rows: int, seq: int, tmp: str) -> None:
    import torch.distributed as dist

    from posttrain.trainer.fsdp.dist import shard_model
    from posttrain.trainer.fsdp.state import full_model_state
    from posttrain.trainer.weight_sync import TorchDistributedWeightSync

    args = argparse.Namespace(steps=steps, rows=rows, seq=seq)
    model = shard_model(build_model())
    times, state = train_steps(model, args)
    mem = [peak_rss_mb(), rss_now_mb(), state]  # before the parity gather and the sync buffers
    t0 = time.perf_counter()
    full = full_model_state(model)
    gather_s = time.perf_counter() - t0
    template = full if rank == 0 else build_model().state_dict()
    mb = sum(t.numel() * t.element_size() for t in template.values()) / 1e6
    sync = TorchDistributedWeightSync(template)
    dist.barrier()
    t0 = time.perf_counter()
    sync.publish(1, full)
    bcast_s = time.perf_counter() - t0
    stats = torch.tensor([statistics.median(times), *mem], dtype=torch.float64)
    gathered = [torch.zeros_like(stats) for _ in range(2)]
    dist.all_gather(gathered, stats)
    if rank == 0:
        ref = torch.load(Path(tmp) / "full_final.pt")
        diff = max(float((ref[k] - full[k]).abs().max()) for k in ref)
        out = {"step_s": max(float(g[0]) for g in gathered),
               "peak_rss_mb_per_rank": [float(g[1]) for g in gathered],
               "rss_after_mb_per_rank": [float(g[2]) for g in gathered],
               "state_mb_per_rank": [float(g[3]) for g in gathered],
               "parity_max_abs_diff": diff, "gather_s_per_100mb": gather_s * 100.0 / mb,
               "torch_dist_s_per_100mb": bcast_s * 100.0 / mb}
        (Path(tmp) / "fsdp2.json").write_text(json.dumps(out))


CPU_PLACEMENT = Path(__file__).resolve().parents[1] / "configs" / "scale" / "cpu-placement.yaml"
WARM = ["domains=[{id: math.add-v1, difficulties: [1]}, {id: math.compare-v1, difficulties: [1]}]"]


def _median_step(out: Path, key: str = "time/step_s") -> float:
    rows = [json.loads(ln) for ln in (out / "metrics.jsonl").read_text().splitlines()]
    return statistics.median(r[key] for r in rows[1:])  # step 1 warms up


def _run_cmd(cmd: list[str], what: str) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"})
    if proc.returncode:
        raise SystemExit(f"{what} failed:\n{proc.stderr[-4000:]}")


def placement_overhead(steps: int, tmp: str) -> dict:
    """Embedded vs placed per-step time of one sharded RL run (module docstring)."""
    from posttrain.core.config import load_config
    from posttrain.models.loading import save_model
    from posttrain.trainer.fsdp.dist import free_port
    from posttrain.trainer.phases import load_policy, run_sft

    cfg = load_config(CPU_PLACEMENT, WARM + ["sft.steps=30", "sft.batch_size=16", "sft.lr=0.01",
                                             "sft.warmup_steps=2"])
    model, tok = load_policy(cfg)
    run_sft(model, tok, cfg)
    sets = WARM + [f"model.path={save_model(model, tok, Path(tmp) / 'warm')}", f"rl.steps={steps}",
                   "rl.temperature=1.0", "rl.checkpoint_every=0", "placement.engines.count=1"]
    args = [a for s in sets for a in ("--set", s)]
    root = Path(tmp) / "placement"
    _run_cmd([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
              "--master-addr", "127.0.0.1", "--master-port", str(free_port()), "-m",
              "posttrain.trainer.fsdp.run", str(CPU_PLACEMENT), "--out", str(root / "embedded"), *args],
             "embedded run")
    out = {"placement_steps": steps, "embedded_step_s": round(_median_step(root / "embedded"), 4)}
    for transport in ("object_store", "broadcast"):
        run = root / transport
        _run_cmd([sys.executable, "-m", "posttrain", "train", str(CPU_PLACEMENT), "--out", str(run),
                  *args, "--set", f"placement.weight_transport={transport}"], f"placed run ({transport})")
        summary = json.loads((run / "summary.json").read_text())
        key = "placed" if transport == "object_store" else "placed_broadcast"
        out[f"{key}_step_s"] = round(_median_step(run), 4)
        out[f"{key}_sync_s"] = round(_median_step(run, "time/sync_s"), 4)
        out[f"{key}_startup_s"] = round(summary["placement_wall_s"] - summary["wall_s"], 1)
    out["embedded_sync_s"] = round(_median_step(root / "embedded", "time/sync_s"), 4)
    out["placement_overhead_s_per_step"] = round(out["placed_step_s"] - out["embedded_step_s"], 4)
    out["placement_overhead_ratio"] = round(out["placed_step_s"] / out["embedded_step_s"], 3)
    out["placement_broadcast_overhead_s_per_step"] = round(
        out["placed_broadcast_step_s"] - out["embedded_step_s"], 4)
    out["placement_startup_s"] = out.pop("placed_startup_s")
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=3, help="measured steps (after one warm-up)")
    p.add_argument("--rows", type=int, default=8)
    p.add_argument("--seq", type=int, default=64)
    p.add_argument("--variant", default=None, help=argparse.SUPPRESS)
    p.add_argument("--tmp", default=None, help=argparse.SUPPRESS)
    p.add_argument("--placement-steps", type=int, default=12, help="steps of each placement run (0: skip)")
    p.add_argument("--placement-only", action="store_true", help="only the placement overhead")
    args = p.parse_args()
    if args.placement_only:
        load_before = os.getloadavg()
        with tempfile.TemporaryDirectory() as tmp:
            res = placement_overhead(args.placement_steps, tmp)
        print(json.dumps({**res, "load_before": [round(x, 1) for x in load_before],
                          "load_after": [round(x, 1) for x in os.getloadavg()]}))
        return
    if args.variant:  # a child: one variant, its JSON on the last line
        print(json.dumps(variant(args.variant, args)))
        return
    load_before = os.getloadavg()
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("full", "lora_r8", "lora_r16", "fsdp2"):  # full first: fsdp2 compares to it
            cmd = [sys.executable, __file__, "--variant", name, "--tmp", tmp, "--steps",
                   str(args.steps), "--rows", str(args.rows), "--seq", str(args.seq)]
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True,
                                  env={**os.environ, "OMP_NUM_THREADS": "1"})
            if proc.returncode:
                raise SystemExit(f"{name} failed:\n{proc.stderr[-4000:]}")
            res[name] = json.loads(proc.stdout.strip().splitlines()[-1])
            print(f"{name}: {res[name]} ({time.perf_counter() - t0:.0f} s)", flush=True)
        placed = placement_overhead(args.placement_steps, tmp) if args.placement_steps else {}
    full, fsdp = res["full"], res["fsdp2"]
    summary = {
        "params_m": round(full["params"] / 1e6, 1), "rows": args.rows, "seq": args.seq,
        "steps": args.steps,
        "full_step_s": round(full["step_s"], 3), "full_peak_rss_mb": round(full["peak_rss_mb"]),
        "full_rss_after_mb": round(full["rss_after_mb"]),
        "lora_r8_rss_after_mb": round(res["lora_r8"]["rss_after_mb"]),
        "lora_r16_rss_after_mb": round(res["lora_r16"]["rss_after_mb"]),
        "fsdp2_rss_after_mb_per_rank": [round(x) for x in fsdp["rss_after_mb_per_rank"]],
        "full_state_mb": round(full["state_mb"]),
        "lora_r8_state_mb": round(res["lora_r8"]["state_mb"]),
        "lora_r16_state_mb": round(res["lora_r16"]["state_mb"]),
        "fsdp2_state_mb_per_rank": [round(x) for x in fsdp["state_mb_per_rank"]],
        "lora_step_s": round(res["lora_r8"]["step_s"], 3),
        "lora_r8_step_s": round(res["lora_r8"]["step_s"], 3),
        "lora_r16_step_s": round(res["lora_r16"]["step_s"], 3),
        "lora_r8_peak_rss_mb": round(res["lora_r8"]["peak_rss_mb"]),
        "lora_r16_peak_rss_mb": round(res["lora_r16"]["peak_rss_mb"]),
        "lora_r8_trainable_m": round(res["lora_r8"]["trainable"] / 1e6, 2),
        "lora_r16_trainable_m": round(res["lora_r16"]["trainable"] / 1e6, 2),
        "fsdp2_step_s": round(fsdp["step_s"], 3),
        "fsdp2_peak_rss_mb_per_rank": [round(x) for x in fsdp["peak_rss_mb_per_rank"]],
        "fsdp2_parity_max_abs_diff": fsdp["parity_max_abs_diff"],
        "sync_s_per_100mb": {**{k: round(v, 4) for k, v in full["sync"].items()},
                             "torch_dist_gloo": round(fsdp["torch_dist_s_per_100mb"], 4),
                             "fsdp_gather": round(fsdp["gather_s_per_100mb"], 4)},
        "lora_r8_sync_mb": round(res["lora_r8"]["sync_mb"], 2),
        "lora_r8_sync_s": round(res["lora_r8"]["sync_s"], 4),
        "lora_r16_sync_mb": round(res["lora_r16"]["sync_mb"], 2),
        "lora_r16_sync_s": round(res["lora_r16"]["sync_s"], 4),
        **placed,
        "threads_per_process": 1,
        "load_before": [round(x, 1) for x in load_before],
        "load_after": [round(x, 1) for x in os.getloadavg()],
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
