"""Images from env to optimizer: reset -> backend inputs -> stored trajectory -> trainer inputs.

Real components throughout: a tiny random-weight LLaVA-style VLM built from a config
(posttrain.vision.tiny_vlm), the VLM backend's own decode loop, the episode engine, the
content-addressed image store, the trainer's batch builder and its logprob forward.
"""

import json

import pytest
import torch

from posttrain.core import serde
from posttrain.core.images import ImageStore, attach_images, prompt_images
from posttrain.core.types import TrajectoryGroup
from posttrain.inference.base import SamplingParams
from posttrain.inference.vlm import VLMBackend
from posttrain.rollout.engine import play_groups
from posttrain.rollout.episode import EpisodeLimits
from posttrain.trainer.batch import build_policy_batch
from posttrain.trainer.logprobs import token_logprobs
from posttrain.vision.tiny_vlm import TinyVLMConfig, build_tiny_vlm

from vision_helpers import COLOURS, DOMAIN, ColourEnv, png, task


@pytest.fixture(scope="module")
def vlm():
    return build_tiny_vlm(TinyVLMConfig(), seed=0)


def _expected(t):
    """The images each turn's prompt shows: the task's, then the second turn's too."""
    first = t.public["images"][0]
    return [(first,), (first, png(t.hidden["answers"][1], "square"))]


def test_image_round_trip_bit_for_bit_and_trainer_logprobs(vlm, tmp_path):
    model, processor = vlm
    backend = VLMBackend(model, processor)
    sent = []  # what the backend was given, prompt by prompt
    inner = backend.generate
    backend.generate = lambda prompts, params: (sent.extend(prompts), inner(prompts, params))[1]
    tasks = [task(0), task(1)]
    groups, _ = play_groups(backend, tasks, SamplingParams(n=2, max_new_tokens=4, seed=5),
                            make_env=ColourEnv, limits=EpisodeLimits(max_turns=2))
    expected = {t.key: _expected(t) for t in tasks}
    # 1. backend inputs: first turn one prompt per task (shared), then one per episode
    assert [prompt_images(p) for p in sent] == [e[0] for e in expected.values()] + \
        [e[1] for e in expected.values() for _ in range(2)]
    for g in groups:
        for traj in g.trajectories:
            assert traj.error is None, traj.error
            assert [t.action.prompt_images for t in traj.turns] == expected[g.task.key]
            assert traj.turns[1].observation.images == expected[g.task.key][1][1:]
    # 2. on disk: each distinct image stored once, rows hold references only
    store = ImageStore(tmp_path / "images")
    lines = [serde.dumps(g, images=store) for g in groups]
    assert len(list((tmp_path / "images").iterdir())) == 4  # 2 tasks x 2 images
    assert not any(img in line for line in lines for e in expected.values() for img in e[1])
    loaded = [serde.loads(TrajectoryGroup, line, images=store) for line in lines]
    assert loaded == groups
    # 3. trainer inputs: the same pixels per row, and the sampler's logprobs
    batch = build_policy_batch(loaded, [[1.0, -1.0]] * 2, pad_id=processor.tokenizer.pad_token_id)
    assert batch.num_rows == 4  # one row per two-turn episode (turn 2's prompt extends turn 1's)
    assert list(batch.images) == [expected[t.key][1] for t in tasks for _ in range(2)]
    with torch.no_grad():
        lp = token_logprobs(model, batch)
    mask = batch.action_mask
    assert int(mask.sum()) > 8
    diff = (lp - batch.behaviour_logprobs).abs()[mask]
    assert float(diff.max()) < 1e-4, float(diff.max())


def test_trainer_sees_the_pixels(vlm):
    """Changing the stored image changes the trainer's logprobs: pixels are really used."""
    model, processor = vlm
    backend = VLMBackend(model, processor)
    prompt = attach_images([{"role": "user", "content": "Colour?"}], [png("red")])
    c = backend.generate([prompt], SamplingParams(n=1, max_new_tokens=3, seed=1))[0][0]
    from dataclasses import replace

    from posttrain.core.types import Trajectory, Turn, Observation, Score
    from vision_helpers import task as mk

    def batch_of(images):
        traj = Trajectory(mk(0), (Turn(Observation(()), replace(c, prompt_images=images)),), Score(1.0))
        return build_policy_batch([TrajectoryGroup(mk(0), (traj,))], [[1.0]], pad_id=0)

    with torch.no_grad():
        same = token_logprobs(model, batch_of(c.prompt_images))
        other = token_logprobs(model, batch_of((png("blue"),)))
    m = batch_of(c.prompt_images).action_mask
    assert torch.allclose(same[m], torch.tensor(c.logprobs_T[-int(m.sum()):]), atol=1e-4)
    assert not torch.allclose(same[m], other[m], atol=1e-4)


def test_text_only_model_names_domain_and_model():
    from posttrain.inference.hf import HFBackend
    from posttrain.models.tiny import build_tiny_model

    model, tok = build_tiny_model(seed=0)
    groups, _ = play_groups(HFBackend(model, tok), [task(0)], SamplingParams(n=2, max_new_tokens=3, seed=0),
                            make_env=ColourEnv)
    for traj in groups[0].trajectories:
        assert traj.error is not None and traj.error.kind == "inference"
        assert DOMAIN in traj.error.message and "LlamaForCausalLM" in traj.error.message
        assert "text only" in traj.error.message and not traj.turns


def test_openai_backend_sends_image_parts():
    from posttrain.inference.openai_compat import OpenAICompatBackend

    img = png("green")
    prompt = attach_images([{"role": "user", "content": "Colour?"}], [img])
    body = OpenAICompatBackend("http://127.0.0.1:9")._body("m", prompt, SamplingParams())
    parts = body["messages"][0]["content"]
    assert parts[0] == {"type": "image_url", "image_url": {"url": "data:image/png;base64," + img}}
    assert parts[1] == {"type": "text", "text": "Colour?"}
    json.dumps(body)  # what goes over the wire


def test_image_store_refuses_bad_input_and_detects_corruption(tmp_path):
    store = ImageStore(tmp_path)
    img = png(COLOURS[0])
    ref = store.put(img)
    assert store.put(img) == ref and store.get(ref) == img
    with pytest.raises(ValueError, match="base64"):  # a line break: refused, not silently changed
        store.put(img[:60] + "\n" + img[60:])
    with pytest.raises(ValueError, match="not valid base64"):
        store.put("not base64!")
    store.path(ref.split(":")[1]).write_bytes(b"tampered")
    with pytest.raises(ValueError, match="corrupted"):
        store.get(ref)


def test_policy_gradient_reaches_the_vision_tower(vlm):
    """The reference loop's logprob path (shared_prefix.policy_logprobs) on an image batch:
    the loss's gradient reaches the vision encoder, so RL trains what the policy sees with."""
    from posttrain.trainer.shared_prefix import policy_logprobs

    model, processor = build_tiny_vlm(TinyVLMConfig(), seed=1)  # its own copy: it is trained
    backend = VLMBackend(model, processor)
    groups, _ = play_groups(backend, [task(2)], SamplingParams(n=2, max_new_tokens=3, seed=1),
                            make_env=ColourEnv, limits=EpisodeLimits(max_turns=1))
    batch = build_policy_batch(groups, [[1.0, -1.0]], pad_id=processor.tokenizer.pad_token_id)
    model.train()
    lp, _ = policy_logprobs(model, batch)
    loss = -(batch.advantages[:, None] * lp * batch.action_mask).sum()
    loss.backward()
    grads = {n: p.grad for n, p in model.named_parameters() if "vision_tower" in n}
    patches = [g for n, g in grads.items() if "patch_embedding" in n]
    assert patches and float(patches[0].abs().sum()) > 0  # down to the pixels' first layer
    # (CLIP's pooler and final norm are unused by the projector: no gradient there)
    assert sum(g is not None for g in grads.values()) > 0.8 * len(grads)


def test_one_rl_step_on_a_visual_domain():
    """The synchronous reference loop, one step on a real visual domain with the vlm backend."""
    from posttrain.core.config import DomainSpec, RLConfig
    from posttrain.trainer.reference_loop import train_rl
    from posttrain.trainer.tasks import TaskStream

    model, processor = build_tiny_vlm(TinyVLMConfig(), seed=2)
    backend = VLMBackend(model, processor)
    seen = []
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    rl = RLConfig(steps=1, prompts_per_step=1, group_size=2, max_new_tokens=4,
                  filter_zero_variance=False, lr=1e-2)
    state = train_rl(model, torch.optim.AdamW(model.parameters(), lr=rl.lr), backend,
                     TaskStream([DomainSpec(id="finance.chart_peak-v1", difficulties=[1])], seed=0),
                     rl, pad_id=processor.tokenizer.pad_token_id, on_groups=seen.extend)
    assert state.step == 1 and state.policy_version == 1
    traj = seen[0].trajectories[0]
    assert traj.error is None and traj.turns[0].action.prompt_images == tuple(seen[0].task.public["images"])
    # all-zero rewards give zero advantages: the step ran, whatever it moved
    assert all(torch.isfinite(p).all() for p in model.parameters())
    assert set(before) == {n for n, _ in model.named_parameters()}
