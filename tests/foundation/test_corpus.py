"""The corpus builder: deterministic bytes, cached by key, rows packed with EOS separators, and
multi-turn demonstrations in exactly the token layout the RL backend renders.

Real pieces: registered domains, the episode engine playing reference demonstrations through
live envs, ``tokenizers`` BPE training, the HF backend's own prompt rendering.
"""

from __future__ import annotations

import numpy as np
from foundation_helpers import tiny_recipe

from posttrain.domains.base import get_domain, sample_task
from posttrain.foundation.corpus import (TemplateRenderer, build_corpus, byte_tokenizer, relayout)
from posttrain.models.tokenizer import CHAT_TEMPLATE, train_subword_tokenizer
from posttrain.rollout import EpisodeLimits
from posttrain.trainer.sft_multiturn import demonstration_examples, play_demonstrations

SMALL = {"seed_stop": 6}


def test_same_recipe_same_bytes_other_seeds_other_hash(tmp_path):
    a = build_corpus(tiny_recipe(corpus=SMALL), tmp_path / "a")
    b = build_corpus(tiny_recipe(corpus=SMALL), tmp_path / "b")
    assert a.corpus_hash == b.corpus_hash
    assert (a.folder / "tokens.npy").read_bytes() == (b.folder / "tokens.npy").read_bytes()
    assert a.manifest["demos"] == 6 and a.manifest["demos_failed"] == 0  # tools.single_call, level 1
    other = build_corpus(tiny_recipe(corpus={"seed_start": 6, "seed_stop": 12}), tmp_path / "a")
    assert other.corpus_hash != a.corpus_hash and other.folder != a.folder


def test_rows_cache_and_damage(tmp_path):
    recipe = tiny_recipe(corpus=SMALL)
    c = build_corpus(recipe, tmp_path)
    rows = np.load(c.folder / "tokens.npy")
    m = c.manifest
    assert rows.dtype == np.uint16 and rows.shape == (m["rows"], recipe.training.seq_len)
    assert m["rows"] * m["seq_len"] <= m["document_tokens"] < (m["rows"] + 1) * m["seq_len"]
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(c.tokenizer_dir))
    assert tok.chat_template == CHAT_TEMPLATE and len(tok) == recipe.tokenizer.vocab_size
    # every document ends with EOS: the separators are there (all but the cut tail's)
    assert (rows == tok.eos_token_id).sum() >= m["documents"] - 2
    # cached: the same folder comes back without a rebuild
    again = build_corpus(recipe, tmp_path)
    assert again.folder == c.folder and again.manifest["build_s"] == m["build_s"]
    # damaged: rebuilt, not reused, and the rebuild has the original bytes again
    data = bytearray((c.folder / "tokens.npy").read_bytes())
    data[-1] ^= 0xFF
    (c.folder / "tokens.npy").write_bytes(bytes(data))
    rebuilt = build_corpus(recipe, tmp_path)
    assert rebuilt.corpus_hash == m["corpus_hash"]


def test_relayout_is_the_rl_layout():
    """Demonstrations played once with the byte tokenizer and re-tokenised equal demonstrations
    played with the BPE tokenizer itself; the renderer equals the HF backend's."""
    from posttrain.foundation.train import build_model
    from posttrain.inference.hf import HFBackend

    dom = get_domain("tools.single_call-v1")
    tasks = [sample_task(dom, seed=s, difficulty=d) for s in range(2) for d in (1, 2)]
    limits = EpisodeLimits(max_total_tokens=1 << 24)
    byte = byte_tokenizer()
    played = play_demonstrations(TemplateRenderer(byte), tasks, limits=limits).trajectories
    texts = [byte.decode(list(s.token_ids)) for s in demonstration_examples(played)]
    bpe = train_subword_tokenizer(texts * 4, vocab_size=400)
    direct = play_demonstrations(TemplateRenderer(bpe), tasks, limits=limits).trajectories
    assert len(played) == len(direct) == 4
    want = demonstration_examples(direct)
    got = demonstration_examples([relayout(t, byte, bpe) for t in played])
    assert [s.token_ids for s in got] == [s.token_ids for s in want]
    assert [s.action_mask for s in got] == [s.action_mask for s in want]
    assert any(len(t.turns) > 1 for t in direct)  # multi-turn: tool results between actions
    from posttrain.foundation.recipe import ShapeSpec

    backend = HFBackend(build_model(ShapeSpec(hidden_size=16, intermediate_size=32, num_hidden_layers=1),
                                    bpe, 0), bpe, fast=False)
    msgs, tools = list(tasks[0].prompt), [dict(t) for t in dom.make_env(tasks[0]).reset().tools]
    assert backend.render(msgs, tools) == TemplateRenderer(bpe).render(msgs, tools)


_BUILD = """
import sys
sys.path.insert(0, {helpers!r})
from foundation_helpers import tiny_recipe
from posttrain.foundation.corpus import build_corpus
recipe = tiny_recipe(corpus={{"families": ["text_data"], "seed_stop": 2}})
print(build_corpus(recipe, {cache!r}).corpus_hash)
"""


def test_same_bytes_in_another_process(tmp_path):
    """Two processes with different PYTHONHASHSEEDs build the same bytes (set order must not
    leak into a document: reasoning-gym adapters' tasks do, so they are left out by default)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    helpers = str(Path(__file__).parent)
    procs = [subprocess.Popen([sys.executable, "-c", _BUILD.format(helpers=helpers, cache=str(tmp_path / str(h)))],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env={**os.environ, "PYTHONHASHSEED": str(h), "OMP_NUM_THREADS": "1"})
             for h in (1, 2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs[0][1].decode()[-2000:]
    hashes = [o.decode().strip().splitlines()[-1] for o, _ in outs]
    assert hashes[0] == hashes[1] and len(hashes[0]) == 64
