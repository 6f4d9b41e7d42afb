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
)


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
        **protocol,
    ):
        return score_retrieval(
            query_embeddings, corpus_embeddings, query_ids, corpus_ids, qrels, **protocol
        )
