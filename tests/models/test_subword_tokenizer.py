"""The subword tokenizer: same framing as the character tokenizer, lossless, deterministic."""

from posttrain.models.tokenizer import SPECIAL_TOKENS, build_char_tokenizer, train_subword_tokenizer

CORPUS = ["def add(a, b):\n    return a + b\n" * 20,
          '<tool_call>{"name": "get_weather", "arguments": {"city": "Porto"}}</tool_call>\n' * 20,
          "Replace the host name in every file under app/ (sub-folders included).\n" * 20]


def test_framing_matches_the_character_tokenizer():
    sub, char = train_subword_tokenizer(CORPUS, vocab_size=400), build_char_tokenizer()
    for t in SPECIAL_TOKENS:
        assert sub.convert_tokens_to_ids(t) == char.convert_tokens_to_ids(t), t
    msgs = [{"role": "user", "content": "12+34="}, {"role": "assistant", "content": "46"}]
    text = sub.apply_chat_template(msgs, tokenize=False)
    assert text == char.apply_chat_template(msgs, tokenize=False) == "<|user|>12+34=<|assistant|>46<eos>"
    ids = sub(text, add_special_tokens=False)["input_ids"]
    assert ids[0] == sub.convert_tokens_to_ids("<|user|>") and ids[-1] == sub.eos_token_id


def test_lossless_shorter_digits_split_and_deterministic():
    sub = train_subword_tokenizer(CORPUS, vocab_size=400)
    for s in ["    return a + b", "héllo → 世界\t\n", "x = 12345", CORPUS[1][:90]]:
        ids = sub(s, add_special_tokens=False)["input_ids"]
        assert sub.decode(ids) == s
    call = CORPUS[1][:80]
    assert len(sub(call, add_special_tokens=False)["input_ids"]) < len(call) / 2
    digits = sub.convert_ids_to_tokens(sub("x = 12345", add_special_tokens=False)["input_ids"])
    assert [t for t in digits if any(c.isdigit() for c in t)] == list("12345")
    assert train_subword_tokenizer(CORPUS, vocab_size=400).get_vocab() == sub.get_vocab()
