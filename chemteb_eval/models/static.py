"""model2vec static embedding models (a token-vector table: fast on any CPU)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from chemteb_eval.errors import ChemtebError

from .base import ModelMeta, Role
from .prompts import convention_prompt


class Model2VecEncoder:
    """A model2vec ``StaticModel`` from the Hub or a folder.

    Args:
        name: a Hub id or a local folder saved with ``StaticModel.save_pretrained``.
    """

    def __init__(self, name: str) -> None:
        try:
            from model2vec import StaticModel
        except ImportError:
            raise ChemtebError(
                "model2vec models need the model2vec package: `pip install model2vec`."
            ) from None
        self.model: Any = StaticModel.from_pretrained(name)
        vectors = getattr(self.model, "embedding", None)
        self.meta = ModelMeta(
            name=Path(name).name if Path(name).is_dir() else name,
            revision=None,
            n_parameters=int(np.asarray(vectors).size) if vectors is not None else None,
            embedding_dim=int(self.model.dim),
            max_tokens=getattr(self.model, "max_length", None),
            framework="model2vec",
            source=str(Path(name).resolve()) if Path(name).is_dir() else name,
        )

    def prompt(self, task_type: str, role: Role | None) -> str:
        return convention_prompt(self.meta.name, task_type, role)

    def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> NDArray[np.float32]:
        out = self.model.encode(
            [prompt + t for t in texts], batch_size=max(batch_size, 1024), show_progress_bar=False
        )
        return np.asarray(out, dtype=np.float32)
