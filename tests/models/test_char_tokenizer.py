"""The built-in character tokenizer: round trips, unknowns, the compact chat format, save/load."""

from __future__ import annotations

import json
import string

import pytest
from transformers import AutoTokenizer

from posttrain.models.tokenizer import ROLE_TOKENS, VOCAB_SIZE, build_char_tokenizer


@pytest.fixture(scope="module")
def tok():
    return build_char_tokenizer()


def test_printable_ascii_round_trips_one_id_per_character(tok):
    text = "".join(c for c in string.printable if c not in "\r\x0b\x0c") + '{"a": [1, 2.5, "x y"]}\n\t'
    ids = tok.encode(text, add_special_tokens=False)
    assert len(ids) == len(text) and tok.decode(ids) == text
    assert len(tok) == VOCAB_SIZE == 105 and max(ids) < VOCAB_SIZE


def test_unknown_characters_become_unk(tok):
    ids = tok.encode("a\u00e9b\u4e2d", add_special_tokens=False)
    assert ids[1] == ids[3] == tok.unk_token_id and len(ids) == 4
    assert tok.decode(ids, skip_special_tokens=True) == "ab"


def test_special_ids_are_fixed(tok):
    assert (tok.pad_token_id, tok.bos_token_id, tok.eos_token_id, tok.unk_token_id) == (0, 1, 2, 3)
    assert tok.convert_tokens_to_ids(list(ROLE_TOKENS)) == [4, 5, 6, 7]


def test_chat_prompt_is_compact(tok):
    messages = [{"role": "user", "content": "12+34="}]
    text = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert text == "<|user|>12+34=<|assistant|>"
    assert len(tok(text, add_special_tokens=False)["input_ids"]) == 8


def test_history_tools_and_tool_results_render(tok):
    tool = {"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}
    call = {"type": "function", "function": {"name": "add", "arguments": {"a": 1, "b": 2}}}
    messages = [{"role": "system", "content": "Be brief."},
                {"role": "user", "content": [{"type": "text", "text": "1+2?"}]},
                {"role": "assistant", "content": "", "tool_calls": [call]},
                {"role": "tool", "content": json.dumps({"result": 3})},
                {"role": "assistant", "content": "3"}]
    text = tok.apply_chat_template(messages, tools=[tool], tokenize=False)
    assert text == ('<|system|>' + json.dumps(tool) + '\n<|system|>Be brief.<|user|>1+2?<|assistant|>'
                    '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call><eos>'
                    '<|tool|>{"result": 3}<|assistant|>3<eos>')
    ids = tok(text, add_special_tokens=False)["input_ids"]
    assert tok.unk_token_id not in ids and tok.decode(ids) == text


def test_unknown_role_is_an_error(tok):
    with pytest.raises(Exception, match="unknown chat role"):
        tok.apply_chat_template([{"role": "narrator", "content": "x"}], tokenize=False)


def test_save_and_load_through_auto_tokenizer(tok, tmp_path):
    tok.save_pretrained(tmp_path)
    again = AutoTokenizer.from_pretrained(tmp_path, local_files_only=True)
    messages = [{"role": "user", "content": "7+8="}]
    assert again.apply_chat_template(messages, add_generation_prompt=True, tokenize=False) == \
        tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    sample = 'x = {"k": [1, 2]}\n\u00e9'
    assert again.encode(sample, add_special_tokens=False) == tok.encode(sample, add_special_tokens=False)
    assert again.eos_token == "<eos>" and again.pad_token_id == 0 and again.padding_side == "left"
