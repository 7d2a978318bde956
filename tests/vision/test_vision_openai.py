"""Image parts over HTTP: the openai backend against the real ``posttrain serve`` app over the vlm backend.

The client sends the image as an ``image_url`` content part, the served vlm backend reads it,
and the Completions equal the in-process backend's for the same seed (ids, text, logprobs),
each recording the image it was prompted with.
"""

import sys
from pathlib import Path

import pytest

from posttrain.core.images import attach_images, prompt_images
from posttrain.inference.base import SamplingParams
from posttrain.inference.openai_compat import OpenAICompatBackend
from posttrain.inference.vlm import VLMBackend
from posttrain.vision.tiny_vlm import build_tiny_vlm

from vision_helpers import png

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "inference"))
from openai_server import serve  # noqa: E402  (the real app behind a request log)


def test_image_parts_round_trip_through_posttrain_serve():
    backend = VLMBackend(*build_tiny_vlm(seed=3))
    prompt = attach_images([{"role": "user", "content": "Colour?"}], [png("blue")])
    params = SamplingParams(n=2, temperature=0.9, max_new_tokens=6, seed=4)
    direct = backend.generate([prompt], params)[0]
    with serve(backend) as (url, log):
        remote = OpenAICompatBackend(url).generate([prompt], params)[0]
    sent = log[0]["messages"][0]["content"]
    assert sent[0]["type"] == "image_url" and prompt_images(log[0]["messages"]) == (png("blue"),)
    for d, r in zip(direct, remote):
        assert (r.text, r.token_ids_T, r.prompt_token_ids) == (d.text, d.token_ids_T, d.prompt_token_ids)
        assert r.logprobs_T == pytest.approx(d.logprobs_T, abs=1e-6)
        assert r.prompt_images == d.prompt_images == (png("blue"),)
