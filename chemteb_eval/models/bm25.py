"""BM25 as a search model: MTEB 2.26's ``mteb/baseline-bm25s`` on English tasks, the lexical
reference a dense model must beat (issue 47).

The same parts and settings as MTEB's ``BM25Search``: ``bm25s`` (pinned in the ``lexical``
extra) with its English stopwords and PyStemmer's Snowball ``english`` stemmer, Lucene's BM25
with k1 = 1.5, b = 0.75 (delta 0.5, unused by Lucene's variant), each query's ``top_k`` best
documents (MTEB: ``max(k_values)``, 1,000) with their scores. A document is its title and
text joined by a line break, as MTEB joins them (the tokeniser splits on non-word characters,
so a space joins them alike). ``scoring.ranked`` scores the output as MTEB does.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from chemteb_eval.errors import require_extra

__all__ = ["BM25_NAME", "BM25_REVISION", "BM25Index", "bm25_search"]

# MTEB's record of this model (mteb/models/model_implementations/bm25.py, 2.26): its results
# sit beside the published BM25 rows under this name and revision.
BM25_NAME = "mteb/baseline-bm25s"
BM25_REVISION = "0_3_0"


def _require() -> tuple[Any, Any]:
    require_extra("lexical", "bm25s", "Stemmer", what="BM25")
    import bm25s
    import Stemmer

    found: tuple[Any, Any] = (bm25s, Stemmer)
    return found


class BM25Index:
    """A corpus indexed as MTEB's ``BM25Search.index`` indexes an English task's.

    Args:
        documents: the documents' texts (title and text already joined), in corpus order.
        k1, b, delta, method: bm25s's, at MTEB's values.
    """

    def __init__(
        self,
        documents: Sequence[str],
        *,
        k1: float = 1.5,
        b: float = 0.75,
        delta: float = 0.5,
        method: str = "lucene",
    ) -> None:
        bm25s, stemmer_module = _require()
        from bm25s import tokenization

        if not documents:
            raise ValueError("documents: an empty corpus has nothing to search.")
        self._bm25s = bm25s
        self._stopwords = list(frozenset(tokenization.STOPWORDS_EN))
        self._stemmer = stemmer_module.Stemmer("english")
        tokens = bm25s.tokenize(
            list(documents), stopwords=self._stopwords, stemmer=self._stemmer, show_progress=False
        )
        if not any(len(ids) for ids in tokens.ids):  # bm25s would fail on max() of nothing
            raise ValueError(
                "documents: no document has a word BM25 indexes (each word is a stopword or "
                "shorter than two characters); BM25 cannot rank this corpus."
            )
        self.retriever = bm25s.BM25(k1=k1, b=b, delta=delta, method=method)
        self.retriever.index(tokens, show_progress=False)
        self.size = len(documents)

    @property
    def index_bytes(self) -> int:
        """What the index weighs as bm25s saves it: its sparse matrix of term scores (values,
        column indices, row pointers) and its vocabulary (each term's UTF-8 bytes and an 8-byte
        id). The frontier's size of a BM25 row, beside a dense model's vectors."""
        scores = self.retriever.scores
        arrays = sum(int(v.nbytes) for v in scores.values() if hasattr(v, "nbytes"))
        vocab = self.retriever.vocab_dict or {}
        return arrays + sum(len(str(term).encode()) + 8 for term in vocab)

    def search(self, queries: Sequence[str], top_k: int) -> tuple[Any, Any]:
        """Row indices and scores of each query's ``min(top_k, corpus size)`` best documents
        (bm25s's ``retrieve``)."""
        tokens = self._bm25s.tokenize(
            list(queries), stopwords=self._stopwords, stemmer=self._stemmer, show_progress=False
        )
        rows, scores = self.retriever.retrieve(tokens, k=min(top_k, self.size), show_progress=False)
        return rows, scores

    def all_scores(self, queries: Sequence[str]) -> Iterator[Any]:
        """Each query's BM25 score of every document (a float32 array in corpus order), the
        scores ``search`` ranks by (bm25s's ``get_scores``): for a cut that does not depend on
        row order where scores tie (``search`` picks among tied documents by position)."""
        import numpy as np

        words = self._bm25s.tokenize(
            list(queries),
            stopwords=self._stopwords,
            stemmer=self._stemmer,
            return_ids=False,
            show_progress=False,
        )
        for tokens in words:
            known = [t for t in tokens if t in (self.retriever.vocab_dict or {})]
            if known:
                yield self.retriever.get_scores(known)
            else:  # no word of the query is in the corpus: every document scores 0
                yield np.zeros(self.size, dtype=np.float32)


def bm25_search(
    queries: Sequence[str],
    query_ids: Sequence[str],
    documents: Sequence[str],
    document_ids: Sequence[str],
    *,
    top_k: int = 1000,
) -> dict[str, dict[str, float]]:
    """``{query_id: {doc_id: score}}`` as MTEB's ``BM25Search.search`` returns it."""
    if len(queries) != len(query_ids) or len(documents) != len(document_ids):
        raise ValueError("queries and documents: one id per text.")
    index = BM25Index(documents)
    rows, scores = index.search(queries, top_k)
    return {
        str(qid): {
            str(document_ids[int(r)]): float(s) for r, s in zip(rows[i], scores[i], strict=True)
        }
        for i, qid in enumerate(query_ids)
    }
