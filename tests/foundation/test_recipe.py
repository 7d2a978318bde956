"""Foundation recipes: validation names the bad field, held-out seeds are refused, hashes are stable.

Covers the committed recipes (they validate), unknown and out-of-range fields (ConfigError and
``posttrain foundation build`` exiting 2 with the dotted field), held-out seed ranges (refused by
the recipe and, independently, by the corpus builder), and what the recipe hash and the corpus
key depend on.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from foundation_helpers import TINY, tiny_recipe
from typer.testing import CliRunner

from posttrain.core.errors import ConfigError
from posttrain.foundation.recipe import (HELDOUT_SEED_OFFSET, FoundationRecipe, corpus_key,
                                         load_recipe, recipe_hash)

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["smoke.yaml", "tiny-bpe4k.yaml"])
def test_committed_recipes_validate(name):
    recipe = load_recipe(ROOT / "configs" / "foundation" / name)
    assert recipe.corpus.seed_stop <= recipe.corpus.heldout_seed_offset
    assert recipe.training.seq_len <= recipe.model.max_position_embeddings


def _write(tmp_path, data) -> Path:
    p = tmp_path / "r.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def test_unknown_and_bad_fields_name_themselves(tmp_path):
    with pytest.raises(ConfigError, match=r"training\.tokenz: unknown field; did you mean 'tokens'"):
        load_recipe(_write(tmp_path, {"training": {"tokenz": 5}}))
    with pytest.raises(ConfigError, match=r"tokenizer\.vocab_size: got 100"):
        load_recipe(_write(tmp_path, {"tokenizer": {"vocab_size": 100}}))
    with pytest.raises(ConfigError, match=r"model\.hidden_size: got true; .*boolean"):
        load_recipe(None, ["model.hidden_size=true"])
    with pytest.raises(ConfigError, match="num_attention_heads"):
        load_recipe(None, ["model.hidden_size=100", "model.num_attention_heads=3"])
    with pytest.raises(ConfigError, match="exceeds model.max_position_embeddings"):
        load_recipe(None, ["training.seq_len=4096", "model.max_position_embeddings=2048"])


def test_cli_exits_2_naming_the_field(tmp_path):
    from posttrain.cli.main import app

    res = CliRunner().invoke(app, ["foundation", "build", "--recipe", str(_write(tmp_path, {"modle": {}})),
                                   "--out", str(tmp_path / "out")])
    assert res.exit_code == 2
    assert "modle: unknown field; did you mean 'model'" in res.output
    assert not (tmp_path / "out").exists()  # refused before any work


def test_heldout_seeds_are_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"corpus.*seed_stop=10000001 reaches held-out seeds"):
        load_recipe(None, [f"corpus.seed_stop={HELDOUT_SEED_OFFSET + 1}"])
    # the boundary: seed_stop is exclusive, so stopping exactly at the offset is allowed
    assert load_recipe(None, [f"corpus.seed_stop={HELDOUT_SEED_OFFSET}"]).corpus.seed_stop == HELDOUT_SEED_OFFSET
    # a run with a lower eval.seed_offset: the recipe says so and is held to it
    with pytest.raises(ConfigError, match="heldout_seed_offset=50"):
        load_recipe(None, ["corpus.heldout_seed_offset=50", "corpus.seed_stop=60"])
    from posttrain.cli.main import app

    res = CliRunner().invoke(app, ["foundation", "build", "--recipe", str(_write(tmp_path, {})),
                                   "--out", str(tmp_path / "o"), "--set", "corpus.seed_start=9999999",
                                   "--set", "corpus.seed_stop=20000000"])
    assert res.exit_code == 2 and "held-out" in res.output


def test_corpus_builder_rechecks_seeds():
    """Even a recipe object built around validation cannot draw a held-out task."""
    from posttrain.foundation.corpus import corpus_tasks

    spec = tiny_recipe().corpus.model_copy(update={"seed_start": 5, "seed_stop": 7, "heldout_seed_offset": 6})
    with pytest.raises(ValueError, match="held-out seeds"):
        corpus_tasks(spec)


def test_hashes():
    a = tiny_recipe()
    reordered = FoundationRecipe.model_validate({k: TINY[k] for k in reversed(list(TINY))})
    assert recipe_hash(a) == recipe_hash(reordered)
    lr = tiny_recipe(training={"lr": 0.001})
    assert recipe_hash(lr) != recipe_hash(a) and corpus_key(lr) == corpus_key(a)
    seeds = tiny_recipe(corpus={"seed_stop": 25})
    assert corpus_key(seeds) != corpus_key(a)
    assert corpus_key(tiny_recipe(training={"seq_len": 64})) != corpus_key(a)


def test_unknown_domains_and_families_exit_2_before_work(tmp_path):
    from posttrain.cli.main import app

    for sets, words in ((["corpus.include_domains=[math.nope-v1]"], "math.nope"),
                        (["corpus.families=[mathz]"], "mathz")):
        res = CliRunner().invoke(app, ["foundation", "build", "--recipe", str(_write(tmp_path, {})),
                                       "--out", str(tmp_path / "o"), *[a for s in sets for a in ("--set", s)]])
        assert res.exit_code == 2 and words in res.output, res.output
        assert not (tmp_path / "o").exists()
