"""SFT on multi-turn demonstrations: the RL layout, masks, packing, and a real run that learns.

- the SFT example of a trajectory has the RL batch row's ids and trained positions, for a
  trajectory the real HF backend sampled over several turns;
- the loss mask of a reference trajectory covers exactly each scripted action and its EOS,
  never a tool result or the prompt;
- packing: block-diagonal attention and restarted positions give every example the logits
  it has alone; first tokens are never targets; too-long examples are dropped and counted;
- a short real SFT run on ``tools.single_call`` demonstrations of training seeds raises the
  log-likelihood of the reference actions of held-out seeds.
"""

from __future__ import annotations

import torch
from trainer_helpers import tiny_llama

from posttrain.core.config import TinyModelConfig
from posttrain.domains.base import get_domain, load_builtin_domains, sample_task
from posttrain.envs.factory import make_env
from posttrain.inference.base import SamplingParams
from posttrain.inference.hf import HFBackend
from posttrain.models.tiny import build_tiny_model
from posttrain.rollout import EpisodeLimits, play_groups
from posttrain.trainer.batch import Segment, build_policy_batch
from posttrain.trainer.logprobs import forward_logits
from posttrain.trainer.optim import build_lr_schedule, build_optimizer
from posttrain.trainer.sft import sft_loss, sft_step
from posttrain.trainer.sft_multiturn import (
    block_causal_mask, check_training_seeds, demonstration_examples, pack_examples,
    play_demonstrations, reference_script,
)

load_builtin_domains()
DOMAIN = "tools.single_call-v1"


def _policy(positions=2048, hidden=16, layers=1, seed=0):
    shape = TinyModelConfig(hidden_size=hidden, num_layers=layers, num_heads=2,
                            intermediate_size=2 * hidden, max_position_embeddings=positions)
    model, tok = build_tiny_model(shape, seed=seed)
    return model, tok, HFBackend(model, tok, fast=False)


def _tasks(seeds, domain=DOMAIN):
    dom = get_domain(domain)
    levels = list(dom.difficulties)
    return [sample_task(dom, seed=s, difficulty=levels[i % len(levels)]) for i, s in enumerate(seeds)]


def _answer_required(task):
    """The domain's env, but only an <answer> block ends it: a random policy plays many turns."""
    env = make_env(get_domain(task.domain), task)
    env.require_answer = True
    return env


def _spans(ids, mask):
    """Maximal runs of masked-in tokens, as lists of ids."""
    out, cur = [], []
    for t, m in zip(ids, mask):
        if m:
            cur.append(t)
        elif cur:
            out, cur = out + [cur], []
    return out + ([cur] if cur else [])


def test_sft_example_trains_exactly_the_rl_rows_positions_of_a_sampled_trajectory():
    model, tok, backend = _policy()
    limits = EpisodeLimits(max_turns=3)
    params = SamplingParams(n=4, temperature=1.0, max_new_tokens=40, seed=3)
    task = _tasks([0])[0]
    groups, _ = play_groups(backend, [task], params, limits=limits, make_env=_answer_required)
    trajs = list(groups[0].trajectories)
    assert all(len(t.turns) == 3 for t in trajs), [len(t.turns) for t in trajs]
    assert {t.turns[0].action.finish_reason for t in trajs} | {"stop", "length"} == {"stop", "length"}
    rl = build_policy_batch(groups, [[1.0] * len(trajs)], tok.pad_token_id)
    for i, traj in enumerate(trajs):
        script = [turn.action.text for turn in traj.turns]  # what the engine's history kept
        demo = play_demonstrations(backend, [task], script=lambda _t, s=script: s,
                                   max_new_tokens=params.max_new_tokens, limits=limits,
                                   make_env=_answer_required, keep_failed=True)
        (example,) = demonstration_examples(demo.trajectories)
        packed = pack_examples([example], tok.pad_token_id, 4096)
        row = (rl.sample_ids == i).nonzero().flatten().tolist()
        assert len(row) == 1
        n = int(rl.attention_mask[row[0]].sum())
        assert packed.input_ids[0, :n].tolist() == rl.input_ids[row[0], :n].tolist()
        assert packed.loss_mask[0, :n].tolist() == rl.action_mask[row[0], :n].tolist()
        assert int(packed.loss_mask.sum()) == int(rl.action_mask[row[0]].sum())


def test_loss_mask_is_each_action_and_its_eos_and_never_a_tool_result():
    _, tok, backend = _policy()
    tasks = _tasks([0, 1, 2])
    demos = play_demonstrations(backend, tasks, limits=EpisodeLimits(max_turns=8))
    assert demos.stats == {"sft/demos": 3.0, "sft/demos_failed": 0.0}
    for traj in demos.trajectories:
        (ex,) = demonstration_examples([traj])
        packed = pack_examples([ex], tok.pad_token_id, 4096)
        ids, mask = packed.input_ids[0].tolist(), packed.loss_mask[0].tolist()
        actions = reference_script(traj.task)
        assert len(actions) >= 2  # a tool call, then the final answer
        spans = [tok.decode(s, skip_special_tokens=False) for s in _spans(ids, mask)]
        assert spans == [a + tok.eos_token for a in actions]
        context = tok.decode([t for t, m in zip(ids, mask) if not m], skip_special_tokens=False)
        results = [m["content"] for turn in traj.turns for m in (turn.observation.messages or ())
                   if m.get("role") == "tool"]
        assert results and all(r in context for r in results)
        trained = "".join(spans)
        assert not any(r in trained for r in results if len(r) > 8)


def test_demonstrations_that_fail_are_dropped_and_counted():
    _, _, backend = _policy()
    wrong = lambda _t: ["<answer>no idea</answer>"]  # noqa: E731
    demos = play_demonstrations(backend, _tasks([0, 1]), script=wrong)
    assert demos.trajectories == [] and demos.stats["sft/demos_failed"] == 2.0


def test_held_out_seeds_are_refused():
    check_training_seeds(_tasks([0, 9_999_999]), 10_000_000)
    try:
        check_training_seeds(_tasks([10_000_000]), 10_000_000)
    except ValueError as exc:
        assert "held-out" in str(exc)
    else:
        raise AssertionError("a held-out seed was accepted as SFT data")


def _segment(ids, mask):
    return Segment(tuple(ids), tuple(mask), (0.0,) * len(ids), 0)


def test_packed_examples_get_the_logits_they_have_alone():
    torch.manual_seed(0)
    model = tiny_llama(0, max_position_embeddings=64)
    exs = [_segment(torch.randint(3, 32, (n,)).tolist(), [j % 3 != 0 for j in range(n)])
           for n in (7, 12, 5, 20, 9)]
    packed = pack_examples(exs, 0, 32)
    assert packed.input_ids.shape[0] < len(exs)  # several examples share rows
    logits = forward_logits(model, packed)
    for i, ex in enumerate(exs):
        b, cols = (packed.example_ids == i).nonzero(as_tuple=True)
        assert packed.position_ids[b, cols].tolist() == list(range(len(ex.token_ids)))
        alone = model(input_ids=torch.tensor([ex.token_ids])).logits[0]
        assert torch.allclose(logits[b, cols], alone, atol=1e-5), i
        want = list(ex.action_mask)
        want[0] = False
        assert packed.loss_mask[b, cols].tolist() == want
    # a mask that lets examples see each other (plain causal) changes the logits
    leaky = packed.example_ids.clamp(min=0) * 0
    leaky_logits = model(input_ids=packed.input_ids, attention_mask=block_causal_mask(leaky),
                         position_ids=packed.position_ids).logits
    assert not torch.allclose(leaky_logits, logits, atol=1e-3)


def test_packed_loss_is_the_token_mean_over_all_examples():
    model = tiny_llama(1, max_position_embeddings=64)
    exs = [_segment([5, 6, 7, 8, 9], [False, False, True, True, True]),
           _segment([10, 11, 12], [False, True, True])]
    packed = pack_examples(exs, 0, 16)
    assert packed.input_ids.shape == (1, 8)
    loss, metrics = sft_loss(model, packed)
    nll = []
    for ex in exs:
        lp = torch.log_softmax(model(input_ids=torch.tensor([ex.token_ids])).logits[0, :-1], -1)
        for t in range(1, len(ex.token_ids)):
            if ex.action_mask[t]:
                nll.append(-lp[t - 1, ex.token_ids[t]])
    assert abs(loss.item() - torch.stack(nll).mean().item()) < 1e-5
    assert metrics["sft/tokens"] == 5


def test_packing_first_fit_and_too_long_examples():
    exs = [_segment([1] * n, [True] * n) for n in (6, 3, 11, 4, 2)]
    packed = pack_examples(exs, 0, 10)
    assert packed.stats["sft/too_long"] == 1.0 and packed.stats["sft/examples"] == 4.0
    rows = [sorted(set(r.tolist()) - {-1}) for r in packed.example_ids]
    assert rows == [[0, 1], [3, 4]]  # 6+3 fit, 11 is dropped, 4+2 in the next row
    try:
        pack_examples([_segment([1] * 20, [True] * 20)], 0, 10)
    except ValueError:
        pass
    else:
        raise AssertionError("an unpackable batch must raise")


def _action_nll(model, examples, pad_id):
    with torch.no_grad():
        return float(sft_loss(model.eval(), pack_examples(examples, pad_id, 2048))[0])


def test_a_short_sft_run_on_multi_turn_demonstrations_raises_their_likelihood():
    torch.manual_seed(0)
    model, tok, backend = _policy(positions=2048, hidden=32, layers=2, seed=0)
    limits = EpisodeLimits(max_turns=8)
    train = demonstration_examples(play_demonstrations(backend, _tasks(range(32)), limits=limits).trajectories)
    held_tasks = _tasks(range(10_000_000, 10_000_006))
    held = demonstration_examples(play_demonstrations(backend, held_tasks, limits=limits).trajectories)
    assert len(train) == 32 and len(held) == 6
    before = _action_nll(model, held, tok.pad_token_id)
    opt = build_optimizer(model, lr=1e-2)
    steps = 16
    sched = build_lr_schedule(opt, warmup_steps=3, total_steps=steps)
    for step in range(steps):
        rows = [train[(step * 4 + j) % len(train)] for j in range(4)]
        sft_step(model, opt, pack_examples(rows, tok.pad_token_id, 2048), lr_scheduler=sched)
    after = _action_nll(model, held, tok.pad_token_id)
    # near-uniform at first (ln 105 = 4.65 nats per token); the tool-call JSON, the tool's
    # name and argument names and the answer format are shared by every task (measured:
    # 4.67 -> 2.03 nats per action token)
    assert before > 4.0 and after < 0.6 * before, (before, after)
    print(f"multi-turn SFT on {DOMAIN}: held-out action NLL {before:.3f} -> {after:.3f}")


def _cfg(**eval_kw):
    from posttrain.core.config import (DomainSpec, EvalConfig, ModelConfig, RLConfig, RunConfig,
                                       SFTConfig)

    tiny = TinyModelConfig(hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32,
                           max_position_embeddings=2048)
    return RunConfig(domains=[DomainSpec(id=DOMAIN), DomainSpec(id="math.add-v1")],
                     model=ModelConfig(tiny=tiny), sft=SFTConfig(steps=2, batch_size=6, lr=1e-2),
                     rl=RLConfig(max_new_tokens=256), eval=EvalConfig(**eval_kw))


def test_the_sft_phase_trains_on_multi_turn_demonstrations_of_training_seeds():
    from posttrain.trainer.phases import load_policy, run_sft

    cfg = _cfg()
    model, tok = load_policy(cfg)
    logged = []
    run_sft(model, tok, cfg, on_step=lambda s, m: logged.append(m))
    assert len(logged) == 2
    for m in logged:  # both kinds of example in every step, packed, and trained
        assert m["sft/demos"] >= 1 and m["sft/demos_failed"] == 0 and m["sft/single_turn"] >= 1
        assert m["sft/examples"] == m["sft/demos"] + m["sft/single_turn"]
        assert m["sft/rows"] < m["sft/examples"] and m["sft/loss"] > 0
    # the SFT stream's seeds are positions 0, 1, ...: an offset inside them is refused
    cfg = _cfg(seed_offset=3)
    model, tok = load_policy(cfg)
    try:
        run_sft(model, tok, cfg)
    except ValueError as exc:
        assert "held-out" in str(exc)
    else:
        raise AssertionError("SFT drew held-out seeds")


def test_a_cut_demonstration_is_not_trained():
    from posttrain.trainer.phases import load_policy, run_sft

    from posttrain.core.config import RLConfig

    cfg = _cfg().model_copy(update={"rl": RLConfig(max_new_tokens=8)})
    model, tok = load_policy(cfg)
    logged = []
    run_sft(model, tok, cfg, on_step=lambda s, m: logged.append(m))
    # every tool call is longer than RL's 8-token turns: the demonstrations fail, are
    # counted, and only the single-turn answers are trained
    assert all(m["sft/demos"] == 0 and m["sft/demos_failed"] >= 1 for m in logged)
    assert all(m["sft/examples"] == m["sft/single_turn"] for m in logged)
