"""The built-in vision-language foundation: recipe validation, a real (short) build, save/load.

The build pre-trains the real tiny VLM with real torch on pictures posttrain draws, saves
it with save_pretrained, and the saved folder loads through AutoProcessor +
AutoModelForImageTextToText (load_vlm) and samples through the vlm backend.
"""

import json

import pytest
import torch
from typer.testing import CliRunner

from posttrain.core.errors import ConfigError
from posttrain.core.images import attach_images
from posttrain.foundation.build import weight_files
from posttrain.foundation.vision import build_vision_foundation, load_vision_recipe
from posttrain.inference.base import SamplingParams
from posttrain.inference.vlm import VLMBackend, load_vlm
from posttrain.vision.render import KINDS, example

SMALL = ["training.steps=12", "training.batch_size=4", "data.baseline_per_kind=8", "data.heldout_per_kind=2",
         "data.kinds=[colour,shape]", "model.image_size=32"]


def test_recipe_errors_name_the_field():
    with pytest.raises(ConfigError, match="data.kinds"):
        load_vision_recipe(None, ["data.kinds=[colour,spirals]"])
    with pytest.raises(ConfigError, match="image_size"):
        load_vision_recipe(None, ["model.image_size=50"])  # not a multiple of patch_size 8
    res = CliRunner().invoke(__import__("posttrain.cli.main", fromlist=["app"]).app,
                             ["foundation", "build-vision", "--out", "/nonexistent/x",
                              "--set", "training.steps=0"])
    assert res.exit_code == 2 and "training.steps" in res.output


def test_pictures_are_deterministic_and_answerable():
    for kind in KINDS:
        a, b = example(kind, 7), example(kind, 7)
        assert a == b and a.answer.startswith("<answer>") and a.answer.endswith("</answer>")
        some = [example(kind, s) for s in range(30)]
        assert len({e.answer for e in some}) >= 2
        if kind.startswith(("bar_", "line_")):  # phrasings vary; both directions are always named
            assert len({e.question for e in some}) >= 10
            assert all("higher or lower" in e.question for e in some if kind.endswith("_ends"))
        else:  # one question per kind: only the picture tells the answers apart
            assert len({e.question for e in some}) == 1


@pytest.mark.parametrize("shape", ["bar", "line"])
def test_chart_pictures_have_no_prior_to_exploit(shape):
    ends = [example(f"{shape}_ends", s).answer for s in range(400)]
    assert 0.42 < ends.count("<answer>higher</answer>") / len(ends) < 0.58
    tops = [int(example(f"{shape}_top", s).answer[8:-9]) for s in range(400)]
    # the peak's position is uniform (a random walk alone peaks at its ends far more often)
    assert max(tops.count(i) for i in set(tops)) / len(tops) < (0.25 if shape == "bar" else 0.15)


def test_a_frozen_vision_tower_stays_at_its_initialisation_and_frozen_when_loaded(tmp_path):
    from posttrain.vision.tiny_vlm import build_tiny_vlm, TinyVLMConfig

    over = ["training.vision_lr_scale=0", "data.kinds=[bar_ends]"]
    recipe = load_vision_recipe(None, [x for x in SMALL if not x.startswith("data.kinds")] + over)
    build_vision_foundation(recipe, tmp_path / "vlm", register=False)
    built, _ = load_vlm(tmp_path / "vlm")
    fresh, _ = build_tiny_vlm(TinyVLMConfig(**recipe.model.model_dump()), seed=recipe.seed)
    pairs = [(n, p, dict(fresh.named_parameters())[n]) for n, p in built.named_parameters()]
    assert all(torch.equal(p, q) for n, p, q in pairs if "vision_tower" in n)
    assert not all(torch.equal(p, q) for n, p, q in pairs if "projector" in n)
    # the folder declares it, so SFT and RL keep it fixed too; the rest still learns
    assert all(not p.requires_grad for n, p, _ in pairs if "vision_tower" in n)
    assert all(p.requires_grad for n, p, _ in pairs if "vision_tower" not in n)
    assert json.loads((tmp_path / "vlm" / "config.json").read_text())["posttrain_frozen_modules"]


def test_build_saves_a_loadable_vlm_and_registers_it(tmp_path):
    recipe = load_vision_recipe(None, SMALL)
    info = build_vision_foundation(recipe, tmp_path / "vlm", registry=tmp_path / "reg.sqlite")
    doc = json.loads((tmp_path / "vlm" / "foundation.json").read_text())
    assert doc["weights_sha256"] == weight_files(tmp_path / "vlm") and doc["version_id"] == info["version_id"]
    assert set(doc["heldout_accuracy"]) == {"colour", "shape"} and doc["final_loss"] < doc["first_loss"]
    model, processor = load_vlm(tmp_path / "vlm")
    e = example("colour", 3, 32)
    prompt = attach_images([{"role": "user", "content": e.question}], [e.image])
    backend = VLMBackend(model, processor)
    got = backend.generate([prompt], SamplingParams(n=2, max_new_tokens=6, seed=0))[0]
    assert len(got) == 2 and got[0].prompt_images == (e.image,)
    assert len(got[0].prompt_token_ids) > 17  # 16 patches + class token + the question
    # the reloaded weights are the built ones: same greedy answer as a second load
    again = VLMBackend(*load_vlm(tmp_path / "vlm")).generate([prompt], SamplingParams(greedy=True))[0][0]
    first = backend.generate([prompt], SamplingParams(greedy=True))[0][0]
    assert again.token_ids_T == first.token_ids_T
    assert torch.allclose(torch.tensor(again.logprobs_T), torch.tensor(first.logprobs_T))
