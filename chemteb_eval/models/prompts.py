"""Prompt conventions of common embedding-model families.

A model's own prompts (sentence-transformers ``prompts`` in its config) win; otherwise the
family's published convention applies, as MTEB's model wrappers use them.
"""

from __future__ import annotations

from collections.abc import Mapping

_BGE_QUERY = "Represent this sentence for searching relevant passages: "

# family test (substring of the lowercased model name) -> {task type or role: prompt}
CONVENTIONS: tuple[tuple[str, Mapping[str, str]], ...] = (
    # E5: "query: " on the query side and on symmetric tasks, "passage: " on documents.
    ("e5", {"query": "query: ", "document": "passage: ", "*": "query: "}),
    # BGE English models: an instruction on retrieval queries only.
    ("bge-", {"query": _BGE_QUERY}),
    # Nomic embed: task prefixes everywhere.
    (
        "nomic-embed",
        {
            "query": "search_query: ",
            "document": "search_document: ",
            "Classification": "classification: ",
            "Clustering": "clustering: ",
            "PairClassification": "classification: ",
            "BitextMining": "classification: ",
        },
    ),
)


def convention_prompt(
    model_name: str,
    task_type: str,
    role: str | None,
    own_prompts: Mapping[str, str] | None = None,
) -> str:
    """The prompt for a model, task type and role (``query``/``document``/None).

    Args:
        model_name: the model id.
        task_type: Classification, Clustering, PairClassification, BitextMining or Retrieval.
        role: ``query`` or ``document`` for retrieval, else ``None``.
        own_prompts: the model's own named prompts, if it ships any.

    Returns:
        The prompt ('' when the model uses none).
    """
    for table in ([own_prompts] if own_prompts else []) + [
        conv for key, conv in CONVENTIONS if key in model_name.lower()
    ]:
        for key in (role, task_type, "*"):
            if key and key in table:
                return table[key]
    return ""
