"""Readable symbols for a trained model's tokens, and the tokenizer the model panels use.

Ids 0.. are the task's special tokens (``<bos>``, ``<sep>``), then the
content symbols in this order: A–Z, a–z, 0–9, Greek α–ω, then ``t<n>``
beyond these 86 single characters. So a vocab-48 induction model reads
``<bos> Q d F ... Q d F``, and the model panels accept text like
``ABCDEFGH ABCDEFGH``.
"""

from __future__ import annotations

import string

from .config import TrainConfig

_SINGLE = (string.ascii_uppercase + string.ascii_lowercase + string.digits
           + "".join(chr(c) for c in range(0x3B1, 0x3CA) if c != 0x3C2))  # Greek without final ς


def symbols(config: TrainConfig) -> list[str]:
    """The token string of every id, ``len == config.vocab``."""
    specials = list(config.specials)
    n = config.n_content
    content = [_SINGLE[i] if i < len(_SINGLE) else f"t{i}" for i in range(n)]
    return specials + content


class SymbolTokenizer:
    """Text → ids for a trained run, shaped like the part of a Hugging Face tokenizer that
    :class:`engine.models.LoadedModel` uses (``__call__``, ``convert_ids_to_tokens``,
    ``model_max_length``).

    The text is split at whitespace; a word that is a symbol (``<sep>``, ``t70``) is that
    token, any other word gives one token per character that is a symbol (trying the other
    letter case when only that one is in the vocabulary). Characters the vocabulary lacks are
    skipped. A ``<bos>`` is put first, as in training.
    """

    def __init__(self, config: TrainConfig) -> None:
        self.vocab = symbols(config)
        self.ids = {s: i for i, s in enumerate(self.vocab)}
        self.model_max_length = config.seq_len

    def encode(self, text: str) -> list[int]:
        out = [0]
        for word in text.split():
            if word in self.ids:
                out.append(self.ids[word])
                continue
            for ch in word:
                i = self.ids.get(ch, self.ids.get(ch.swapcase()))
                if i is not None:
                    out.append(i)
        if len(out) > 1 and out[1] == 0:  # the text began with its own <bos>
            out.pop(0)
        return out

    def __call__(self, text: str, truncation: bool = False, max_length: int | None = None,
                 **_: object) -> dict[str, list[int]]:
        ids = self.encode(text)
        if truncation and max_length is not None:
            ids = ids[:max_length]
        return {"input_ids": ids}

    def convert_ids_to_tokens(self, ids: list[int]) -> list[str]:
        return [self.vocab[i] for i in ids]
