"""The vlm backend and the trainer agree on another VLM family: Idefics3 (SmolVLM's layout).

A tiny random-weight Idefics3ForConditionalGeneration with its Idefics3Processor (one list of
images per row, pixel-shuffle connector, no image splitting) built from configs here, played
through the episode engine on a two-turn image env; the trainer's recomputed logprobs equal
the sampler's. (Qwen2-VL's processor needs torchvision, which this environment lacks.)
"""

import torch

from posttrain.inference.base import SamplingParams
from posttrain.inference.vlm import VLMBackend
from posttrain.models.tokenizer import build_char_tokenizer
from posttrain.rollout.engine import play_groups
from posttrain.rollout.episode import EpisodeLimits
from posttrain.trainer.batch import build_policy_batch
from posttrain.trainer.logprobs import token_logprobs
from posttrain.vision.tiny_vlm import VLM_CHAT_TEMPLATE

from vision_helpers import ColourEnv, task


def _tiny_idefics3():
    from transformers import (Idefics3Config, Idefics3ForConditionalGeneration, Idefics3ImageProcessor,
                              Idefics3Processor)

    tok = build_char_tokenizer()
    tok.add_special_tokens({"additional_special_tokens": [
        "<fake_token_around_image>", "<image>", "<end_of_utterance>", "<global-img>"]})
    images = Idefics3ImageProcessor(do_image_splitting=False, size={"longest_edge": 32},
                                    max_image_size={"longest_edge": 32})
    processor = Idefics3Processor(image_processor=images, tokenizer=tok, image_seq_len=4,
                                  chat_template=VLM_CHAT_TEMPLATE)
    text = dict(model_type="llama", vocab_size=len(tok), hidden_size=64, intermediate_size=128,
                num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
                max_position_embeddings=512, bos_token_id=tok.bos_token_id,
                eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    vision = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                  image_size=32, patch_size=8)
    config = Idefics3Config(text_config=text, vision_config=vision, scale_factor=2,
                            image_token_id=tok.convert_tokens_to_ids("<image>"), pad_token_id=tok.pad_token_id)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = Idefics3ForConditionalGeneration(config).eval()
    return model, processor


def test_idefics3_sampler_and_trainer_agree():
    model, processor = _tiny_idefics3()
    backend = VLMBackend(model, processor)
    groups, _ = play_groups(backend, [task(0), task(1)], SamplingParams(n=2, max_new_tokens=4, seed=5),
                            make_env=ColourEnv, limits=EpisodeLimits(max_turns=2))
    for g in groups:
        for traj in g.trajectories:
            assert traj.error is None and len(traj.turns) == 2
            assert len(traj.turns[1].action.prompt_images) == 2
    batch = build_policy_batch(groups, [[1.0, -1.0]] * 2, pad_id=processor.tokenizer.pad_token_id)
    assert batch.num_rows == 4
    with torch.no_grad():
        lp = token_logprobs(model, batch)
    diff = (lp - batch.behaviour_logprobs).abs()[batch.action_mask]
    assert diff.numel() > 8 and float(diff.max()) < 1e-4
