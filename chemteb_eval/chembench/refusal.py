"""A refusal classifier for ChemBench scoring: a transformers text-classification model.

The default is ``ProtectAI/distilroberta-base-rejection-v1`` (labels ``NORMAL`` / ``REJECTION``),
downloaded from the Hub when it is reachable. Long completions are judged in overlapping
windows of the model's maximum length; any window judged a rejection makes it a refusal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chemteb_eval.errors import ChemtebError, require_extra

__all__ = ["DEFAULT_REFUSAL_MODEL", "load_refusal_classifier"]

DEFAULT_REFUSAL_MODEL = "ProtectAI/distilroberta-base-rejection-v1"


def load_refusal_classifier(
    model: str = DEFAULT_REFUSAL_MODEL, *, threshold: float = 0.5, device: str | None = None
) -> Callable[[str], bool]:
    """A callable text -> is a refusal, for ``score_chembench(refusal_classifier=...)``.

    Args:
        model: a Hub id or a local folder of a text-classification model whose labels include
            ``REJECTION`` (any case).
        threshold: the rejection probability above which a window counts as a refusal.
        device: the torch device.

    Raises:
        ChemtebError: when the model cannot be loaded (offline, no local copy), or the
            ``chembench`` extra (torch, transformers) is not installed.
    """
    require_extra("chembench", "torch", "transformers", what="the refusal classifier")
    from transformers import pipeline

    try:
        classify: Any = pipeline("text-classification", model=model, device=device, top_k=None)
    except (OSError, ValueError) as exc:
        raise ChemtebError(
            f"refusal classifier {model}: could not be loaded ({exc}). It comes from the Hub: "
            "connect once (or pass a local folder), or score with keyword detection only."
        ) from exc
    labels = {str(v).lower() for v in classify.model.config.id2label.values()}
    if "rejection" not in labels:
        raise ValueError(f"model: {model} has labels {sorted(labels)}, none of them 'REJECTION'.")
    tokenizer = classify.tokenizer
    window = min(int(getattr(tokenizer, "model_max_length", 512) or 512), 512) - 2
    stride = max(window // 2, 1)

    def is_refusal(text: str) -> bool:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        chunks = [ids[i : i + window] for i in range(0, max(len(ids) - window, 0) + 1, stride)] or [
            ids
        ]
        pieces = [tokenizer.decode(chunk) for chunk in chunks]
        for scores in classify(pieces, truncation=True):
            for item in scores:
                if str(item["label"]).lower() == "rejection" and item["score"] >= threshold:
                    return True
        return False

    return is_refusal
