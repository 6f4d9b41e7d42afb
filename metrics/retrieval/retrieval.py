"""ChemTEB retrieval: exact cosine search scored by nDCG@10 and friends (an evaluate module)."""

import evaluate

from chemteb_eval import metric_docs  # From: chemteb-eval
from chemteb_eval.evaluate_support import DirectCompute, metric_info  # From: chemteb-eval
from chemteb_eval.scoring import score_retrieval  # From: chemteb-eval

_DESCRIPTION = """\
Scores retrieval the way ChemTEB (through MTEB and pytrec_eval) does: an exact cosine search of
the corpus for every query, then nDCG, MAP, recall and precision at k by trec_eval's conventions
(graded gain, log2 discount, ties broken by document id descending) and MTEB's MRR at k.
"""

_KWARGS_DESCRIPTION = metric_docs.inputs_description(
    score_retrieval,
    """\
    query_embeddings: (n_queries, dim) embeddings of the queries.
    corpus_embeddings: (n_docs, dim) embeddings of the documents.
    query_ids: one id (string or int) per query row.
    corpus_ids: one id per document row.
    qrels: {query_id: {doc_id: grade}}; grade > 0 means relevant.""",
    "    {ndcg,map,recall,precision,mrr}_at_{k} for every k, main_score (ndcg_at_10).",
    """\
    Two queries, three documents; ``Retrieval()`` stands for
    ``evaluate.load("chemteb/retrieval")`` (the class is what that call instantiates; the Hub is
    not needed to run these):

    >>> metric = Retrieval()  # evaluate.load("chemteb/retrieval")
    >>> queries = [[1.0, 0.0], [0.0, 1.0]]
    >>> docs = [[0.9, 0.1], [0.1, 0.9], [0.7, 0.7]]
    >>> out = metric.compute(
    ...     query_embeddings=queries,
    ...     corpus_embeddings=docs,
    ...     query_ids=["q1", "q2"],
    ...     corpus_ids=["d1", "d2", "d3"],
    ...     qrels={"q1": {"d1": 1}, "q2": {"d3": 1}},
    ...     k_values=[1, 3],
    ... )
    >>> out["ndcg_at_1"], out["ndcg_at_3"], out["recall_at_3"], out["mrr_at_3"]
    (0.5, 0.81546, 1.0, 0.75)

    Integer ids and graded relevance (d3 is the better answer to query 1):

    >>> out = metric.compute(
    ...     query_embeddings=queries,
    ...     corpus_embeddings=docs,
    ...     query_ids=[1, 2],
    ...     corpus_ids=[1, 2, 3],
    ...     qrels={1: {1: 1, 3: 2}, 2: {2: 1}},
    ...     k_values=[1, 3],
    ... )
    >>> out["ndcg_at_1"], out["ndcg_at_3"], out["map_at_3"]
    (0.75, 0.92986, 1.0)
""",
)
DEFAULTS = metric_docs.keyword_defaults(score_retrieval)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Retrieval(DirectCompute, evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return metric_info(_DESCRIPTION, _KWARGS_DESCRIPTION, "query_ids", ("string", "int64"))

    def _compute(
        self,
        query_ids,
        query_embeddings=None,
        corpus_embeddings=None,
        corpus_ids=None,
        qrels=None,
        k_values=DEFAULTS["k_values"],
        decimals=DEFAULTS["decimals"],
        chunk_size=DEFAULTS["chunk_size"],
        return_items=DEFAULTS["return_items"],
        zero_rows=DEFAULTS["zero_rows"],
        no_relevant=DEFAULTS["no_relevant"],
    ):
        return score_retrieval(
            query_embeddings,
            corpus_embeddings,
            query_ids,
            corpus_ids,
            qrels,
            k_values=k_values,
            decimals=decimals,
            chunk_size=chunk_size,
            return_items=return_items,
            zero_rows=zero_rows,
            no_relevant=no_relevant,
        )
