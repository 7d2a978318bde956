"""The built-in character-level tokenizer of the tiny model, made offline (no downloads).

What it is: a ``tokenizers`` WordLevel model whose vocabulary is the special tokens, tab,
newline and the 95 printable ASCII characters (105 ids in all), with a pre-tokenizer that
isolates every character and a decoder that fuses them back. It is wrapped as a
``transformers.PreTrainedTokenizerFast`` with a jinja ``chat_template``, so the rest of the
system uses it through the same API as any Hugging Face tokenizer (``apply_chat_template``,
``save_pretrained``, ``AutoTokenizer.from_pretrained``).

Guarantees:
- ``decode(encode(s)) == s`` for any string of printable ASCII, tab and newline (tool-call
  JSON and tool results included); any other character becomes ``<unk>`` (never a crash);
- no BOS/EOS is added by ``encode``: the chat template is the only place tokens are framed;
- the rendered prompt is compact: ``[{"role": "user", "content": "12+34="}]`` with a
  generation prompt is ``<|user|>12+34=<|assistant|>`` (8 ids); an assistant turn in the
  history ends with ``<eos>``, which is also ``eos_token``, the end of an answer;
- ids are fixed: ``<pad>``=0, ``<bos>``=1, ``<eos>``=2, ``<unk>``=3, then the role tokens.

Chat format (one role token per message, no separators)::

    [<|system|>SYSTEM][<|system|>TOOLS_JSON_LINES]<|user|>USER<|assistant|>ANSWER<eos><|tool|>RESULT...

Tools (``tools=`` of ``apply_chat_template``) render as one JSON object per line after a
``<|system|>`` token, before the messages, so a shared tool list is a shared prompt prefix.
An assistant message's ``tool_calls`` render after its content as
``<tool_call>{"name": ..., "arguments": ...}</tool_call>``; a rollout layer that keeps the
model's raw text as ``content`` should omit ``tool_calls`` to avoid rendering them twice.

What it does not do: sub-word merges (a character per token is the point: the tiny model
learns arithmetic digit by digit), or any non-ASCII text beyond mapping it to ``<unk>``.
:func:`train_subword_tokenizer` builds the sub-word alternative with the same framing
(byte-level BPE trained on a given corpus; ``bench/tokenizer.py`` measures how much it
shortens posttrain's prompts and demonstrations).
"""

from __future__ import annotations

import string

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
ROLE_TOKENS = ("<|system|>", "<|user|>", "<|assistant|>", "<|tool|>")
SPECIAL_TOKENS = (PAD, BOS, EOS, UNK, *ROLE_TOKENS)
# Printable ASCII without \r \x0b \x0c: tab, newline, then space..tilde.
CHARACTERS = ("\t", "\n") + tuple(chr(c) for c in range(32, 127))

# Roles outside this map are a template error, not silently some other role.
CHAT_TEMPLATE = (
    "{%- set role_token = {'system': '<|system|>', 'developer': '<|system|>', "
    "'user': '<|user|>', 'assistant': '<|assistant|>', 'tool': '<|tool|>', "
    "'ipython': '<|tool|>'} -%}"
    "{%- macro content_text(c) -%}"
    "{%- if c is none -%}{%- elif c is string -%}{{ c }}"
    "{%- else -%}{%- for part in c -%}{%- if part['type'] == 'text' -%}{{ part['text'] }}"
    "{%- endif -%}{%- endfor -%}{%- endif -%}"
    "{%- endmacro -%}"
    "{%- if tools -%}<|system|>{%- for t in tools -%}{{ t | tojson }}{{ '\\n' }}{%- endfor -%}{%- endif -%}"
    "{%- for m in messages -%}"
    "{%- if m['role'] not in role_token -%}"
    "{{ raise_exception('unknown chat role: ' ~ m['role']) }}"
    "{%- endif -%}"
    "{{ role_token[m['role']] }}{{ content_text(m['content'] if 'content' in m else none) }}"
    "{%- if m['role'] == 'assistant' -%}"
    "{%- for call in (m['tool_calls'] if 'tool_calls' in m and m['tool_calls'] else []) -%}"
    "{%- set f = call['function'] if 'function' in call else call -%}"
    "<tool_call>{{ {'name': f['name'], 'arguments': f['arguments']} | tojson }}</tool_call>"
    "{%- endfor -%}<eos>"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|assistant|>{%- endif -%}"
)


def _backend_tokenizer() -> Tokenizer:
    vocab = {tok: i for i, tok in enumerate(SPECIAL_TOKENS + CHARACTERS)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    # [\s\S] so that newline is one character like any other.
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    # Special tokens are matched atomically before the per-character split.
    tok.add_special_tokens(list(SPECIAL_TOKENS))
    return tok


def build_char_tokenizer() -> PreTrainedTokenizerFast:
    """The tiny model's tokenizer, built from scratch in a few milliseconds."""
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=_backend_tokenizer(),
        pad_token=PAD, bos_token=BOS, eos_token=EOS, unk_token=UNK,
        padding_side="left",
        model_max_length=1 << 20,
        clean_up_tokenization_spaces=False,
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


VOCAB_SIZE = len(SPECIAL_TOKENS) + len(CHARACTERS)
assert set(string.printable) - {"\r", "\x0b", "\x0c"} == set(CHARACTERS)


def train_subword_tokenizer(texts, vocab_size: int = 4096, min_frequency: int = 2,
                            split_digits: bool = True) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained on ``texts`` (an iterable of strings), framed exactly
    like the character tokenizer: the same special tokens at the same ids (``<pad>``=0 ...
    the role tokens), the same ``chat_template``, no BOS/EOS added by ``encode``.

    Byte-level: every string (any Unicode) encodes and ``decode(encode(s)) == s``; there is no
    ``<unk>`` in practice. ``split_digits``: every digit is its own token (no merges across
    digits), so arithmetic stays digit by digit as with characters. Deterministic: the same
    texts and sizes give the same vocabulary.
    The caller chooses the corpus — the foundation's must hold training seeds only.
    """
    from tokenizers import trainers

    tok = Tokenizer(models.BPE(unk_token=UNK))
    # No prefix space: "12+34=" must not become " 12+34=" (prompts are spliced after role tokens).
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.pre_tokenizer = (pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r"[0-9]"), behavior="isolated"), byte_level])
        if split_digits else byte_level)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                  special_tokens=list(SPECIAL_TOKENS),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token=PAD, bos_token=BOS, eos_token=EOS, unk_token=UNK,
        padding_side="left", model_max_length=1 << 20, clean_up_tokenization_spaces=False)
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer
