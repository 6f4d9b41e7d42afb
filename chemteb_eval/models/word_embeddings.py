"""Word-level embeddings of tokenised sentences, for probes such as NER.

Contextual models (sentence-transformers, transformers) embed each sentence once, split into
words, and pool each word's sub-tokens (``first`` or ``mean``); other encoders (static models,
APIs) embed each distinct word on its own. A word with no vector (out of vocabulary) gets zeros.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from .base import DEFAULT_BATCH_SIZE

__all__ = ["word_embeddings"]

Pooling = Literal["first", "mean"]


def _contextual(
    model: Any,
    tokenizer: Any,
    sentences: Sequence[Sequence[str]],
    *,
    pooling: Pooling,
    batch_size: int,
    max_length: int,
    progress: bool,
) -> list[NDArray[np.float32]]:
    import torch
    from tqdm.auto import tqdm

    device = next(model.parameters()).device
    out: list[NDArray[np.float32]] = [np.zeros((0, 0), np.float32)] * len(sentences)
    # Sentences in order of their sub-token count, so that a batch pads to a similar length:
    # BC5CDR's 4,560 training sentences run 26 words on average and up to 150.
    lengths = (
        [
            len(ids)
            for ids in tokenizer(
                [list(s) for s in sentences],
                is_split_into_words=True,
                truncation=True,
                max_length=max_length,
            )["input_ids"]
        ]
        if sentences
        else []
    )
    order = np.argsort(np.asarray(lengths, dtype=np.int64), kind="stable")
    bar = tqdm(total=len(sentences), desc="word embeddings", unit="sent", disable=not progress)
    with torch.inference_mode(), bar:
        for start in range(0, len(sentences), batch_size):
            rows = order[start : start + batch_size]
            batch = [list(sentences[i]) for i in rows]
            enc = tokenizer(
                batch,
                is_split_into_words=True,
                truncation=True,
                max_length=max_length,
                padding=True,
                return_tensors="pt",
            )
            hidden = model(**{k: v.to(device) for k, v in enc.items()}).last_hidden_state
            hidden = hidden.float().cpu().numpy()
            for row, (index, words) in enumerate(zip(rows, batch, strict=True)):
                out[index] = _pool_words(hidden[row], enc.word_ids(row), len(words), pooling)
            bar.update(len(batch))
    return out


def _pool_words(
    hidden: NDArray[np.float32], word_ids: Sequence[int | None], n_words: int, pooling: Pooling
) -> NDArray[np.float32]:
    """One vector per word from one sentence's sub-token states (array operations: a Python
    loop over sub-tokens was most of the NER probe's feature building). Words cut off by
    truncation keep zeros (no context reached them)."""
    ids = np.array([-1 if w is None else w for w in word_ids], dtype=np.int64)
    positions = np.flatnonzero(ids >= 0)
    vectors = np.zeros((n_words, hidden.shape[-1]), dtype=np.float32)
    if pooling == "first":
        words, first = np.unique(ids[positions], return_index=True)
        vectors[words] = hidden[positions[first]]
        return vectors
    # sub-tokens added in sentence order, as a loop would (the same float sums)
    np.add.at(vectors, ids[positions], hidden[positions])
    counts = np.bincount(ids[positions], minlength=n_words)
    return (vectors / np.maximum(counts, 1)[:, None]).astype(np.float32)


def word_embeddings(
    encoder: Any,
    sentences: Sequence[Sequence[str]],
    *,
    pooling: Pooling = "first",
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: bool = False,
) -> list[NDArray[np.float32]]:
    """One (n_words, dim) array per sentence.

    Args:
        encoder: an encoder from ``chemteb_eval.models.load_encoder``.
        sentences: tokenised sentences.
        pooling: ``first`` sub-token per word (the usual NER probe) or ``mean`` of them.
        batch_size: sentences per forward pass.
        progress: show a progress bar (contextual models).
    """
    if pooling not in ("first", "mean"):
        raise ValueError(f"pooling: {pooling!r}; use 'first' or 'mean'.")
    st_model: Any = getattr(encoder, "model", None)
    if hasattr(st_model, "tokenizer") and hasattr(st_model, "__getitem__"):  # sentence-transformers
        first = st_model[0]
        auto = getattr(first, "auto_model", None)
        if auto is not None and getattr(st_model.tokenizer, "is_fast", False):
            limit = int(getattr(first, "max_seq_length", 512) or 512)
            return _contextual(
                auto,
                st_model.tokenizer,
                sentences,
                pooling=pooling,
                batch_size=batch_size,
                max_length=limit,
                progress=progress,
            )
    tokenizer = getattr(encoder, "tokenizer", None)
    if tokenizer is not None and getattr(tokenizer, "is_fast", False) and st_model is not None:
        limit = int(getattr(encoder, "max_length", 512) or 512)
        return _contextual(
            st_model,
            tokenizer,
            sentences,
            pooling=pooling,
            batch_size=batch_size,
            max_length=limit,
            progress=progress,
        )
    vocab = sorted({w for s in sentences for w in s})
    vectors = (
        encoder.encode(vocab, prompt="", batch_size=max(batch_size, 256))
        if vocab
        else np.zeros((0, 1))
    )
    table: NDArray[np.float32] = np.nan_to_num(np.asarray(vectors, dtype=np.float32), nan=0.0)
    index = {w: i for i, w in enumerate(vocab)}
    return [
        table[[index[w] for w in s]] if s else np.zeros((0, table.shape[1]), np.float32)
        for s in sentences
    ]
