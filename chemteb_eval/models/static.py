"""Static embedding models: model2vec token tables, and word vectors (Word2Vec, FastText)."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._source import hub_access, load_error, local_folder, network_errors
from .backends import LoadOptions, framework_of
from .base import ModelMeta, Role
from .prompts import convention_prompt
from .spec import ModelSpec


class Model2VecEncoder:
    """A model2vec ``StaticModel`` from the Hub or a folder.

    Args:
        name: a Hub id or a local folder saved with ``StaticModel.save_pretrained``.
    """

    # a text's vector is the mean of its own tokens' rows: no batch changes it
    batch_invariant = True

    @classmethod
    def from_spec(cls, spec: ModelSpec, options: LoadOptions) -> Model2VecEncoder:
        """The backend table's loader (``model2vec``)."""
        return cls(spec.name)

    def __init__(self, name: str) -> None:
        ModelSpec("model2vec", name).require()
        folder = local_folder(name)
        source = str(folder) if folder is not None else name
        access = hub_access(source)  # a Hub model that cannot be had fails now, in one line
        from model2vec import StaticModel

        try:
            with access:
                self.model: Any = StaticModel.from_pretrained(source)
        except network_errors() as exc:
            raise load_error(name, exc) from None
        vectors = getattr(self.model, "embedding", None)
        self._whole: Any = None  # token_ids' tokenizer (built at its first call)
        self.meta = ModelMeta(
            name=folder.name if folder is not None else name,
            revision=None,
            n_parameters=int(np.asarray(vectors).size) if vectors is not None else None,
            embedding_dim=int(self.model.dim),
            max_tokens=getattr(self.model, "max_length", None),
            framework=framework_of("model2vec"),
            source=source,
        )

    def prompt(self, task_type: str, role: Role | None) -> str:
        return convention_prompt(self.meta.name, task_type, role)

    def token_ids(self, texts: list[str]) -> tuple[list[list[int]], int | None, int]:
        """Each text's token ids as model2vec's own tokenizer gives them (no special tokens:
        model2vec adds none), its unknown-token id (tokens it drops before averaging, so a
        text's unknown share is the share of it the vector never sees), and 0 specials."""
        if self._whole is None:
            # a copy that never cuts: model2vec's encode sets its own tokenizer's truncation to
            # max_length (512), which would clip every count there and hide the texts it cuts
            self._whole = copy.deepcopy(self.model.tokenizer)
            self._whole.no_truncation()
        found = self._whole.encode_batch_fast(texts, add_special_tokens=False)
        return [list(e.ids) for e in found], getattr(self.model, "unk_token_id", None), 0

    def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> NDArray[np.float32]:
        out = self.model.encode(
            [prompt + t for t in texts], batch_size=max(batch_size, 1024), show_progress_bar=False
        )
        return np.asarray(out, dtype=np.float32)


_WORD = re.compile(r"\w+(?:[-']\w+)*")


class WordVectorEncoder:
    """Word2Vec / GloVe-style word vectors, or FastText with sub-word fallback (via gensim).

    A text's embedding is the mean of its words' vectors. A word is looked up as written, then
    lower-cased. With plain word vectors an unknown word has no vector; a text none of whose
    words are known gets a row of NaN (no vector) — the STS metric's ``oov_policy`` decides
    what that means, instead of the encoder hiding it. FastText builds unknown words from
    character n-grams. ``stats`` counts tokens, out-of-vocabulary tokens, sub-word fallbacks and
    texts without a vector.

    Args:
        vectors: a gensim ``KeyedVectors`` (``FastTextKeyedVectors`` for sub-words).
        name: the model's name for results.
        source: where the vectors came from.
    """

    # a text's vector is the mean of its own words' vectors: no batch changes it
    batch_invariant = True

    # a text none of whose words is known encodes as a row of NaN: the engine's cache keeps
    # such rows for this encoder (for any other model a NaN row is damage)
    no_vector_rows = True

    def __init__(self, vectors: Any, *, name: str, source: str) -> None:
        self.vectors = vectors
        self.subwords = (
            hasattr(vectors, "get_vector") and type(vectors).__name__ == "FastTextKeyedVectors"
        )
        self.stats = {"tokens": 0, "oov_tokens": 0, "subword_tokens": 0, "texts_without_vector": 0}
        self.meta = ModelMeta(
            name=name,
            revision=None,
            n_parameters=int(np.asarray(vectors.vectors).size),
            embedding_dim=int(vectors.vector_size),
            max_tokens=None,
            # sub-word vectors say fasttext, whichever prefix loaded them
            framework=framework_of("fasttext" if self.subwords else "word2vec"),
            source=source,
        )

    @classmethod
    def from_spec(cls, spec: ModelSpec, options: LoadOptions) -> WordVectorEncoder:
        """The backend table's loader (``word2vec``, ``fasttext``)."""
        return cls.load(spec.name, kind=spec.backend)

    @classmethod
    def load(cls, path: str, *, kind: str = "word2vec") -> WordVectorEncoder:
        """Read vectors: ``word2vec`` text (``.txt``/``.vec``) or binary (``.bin``) format, a
        gensim ``KeyedVectors``/``FastText`` save (``.kv``/``.model``), or a Facebook FastText
        ``.bin`` (``kind="fasttext"``)."""
        ModelSpec("fasttext" if kind == "fasttext" else "word2vec", path).require()
        from gensim.models import FastText, KeyedVectors
        from gensim.models.fasttext import load_facebook_vectors

        file = Path(path)
        if not file.is_file():
            raise ValueError(f"model: {path} is not a file of word vectors.")
        if kind == "fasttext":
            vectors = (
                FastText.load(path).wv if file.suffix == ".model" else load_facebook_vectors(path)
            )
        elif file.suffix in (".kv", ".model"):
            vectors = KeyedVectors.load(path)
        else:
            vectors = KeyedVectors.load_word2vec_format(path, binary=file.suffix == ".bin")
        return cls(vectors, name=file.stem, source=str(file.resolve()))

    def prompt(self, task_type: str, role: Role | None) -> str:
        return ""

    def _word(self, word: str) -> NDArray[np.float32] | None:
        keys = self.vectors.key_to_index
        for candidate in (word, word.lower()):
            if candidate in keys:
                return np.asarray(self.vectors[candidate], dtype=np.float32)
        self.stats["oov_tokens"] += 1
        if self.subwords:
            vector = np.asarray(self.vectors.get_vector(word), dtype=np.float32)
            if np.any(vector):
                self.stats["subword_tokens"] += 1
                return vector
        return None

    def oov_counts(self, texts: list[str]) -> tuple[int, int]:
        """The words of ``texts`` and how many of them the vectors do not hold (as written or
        lower-cased): a word model's answer to "how does it cut chemical strings"."""
        keys = self.vectors.key_to_index
        words = [w for t in texts for w in _WORD.findall(t)]
        unknown = sum(1 for w in words if w not in keys and w.lower() not in keys)
        return len(words), unknown

    def untruncated_lengths(self, texts: list[str], *, prompt: str) -> list[int]:
        """The words of each text: a word-vector model reads every one (``max_tokens`` None:
        nothing is ever cut)."""
        return [len(_WORD.findall(prompt + t)) for t in texts]

    def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> NDArray[np.float32]:
        out = np.full((len(texts), self.meta.embedding_dim), np.nan, dtype=np.float32)
        for i, text in enumerate(texts):
            words = _WORD.findall(prompt + text)
            self.stats["tokens"] += len(words)
            found = [v for v in map(self._word, words) if v is not None]
            if found:
                out[i] = np.mean(found, axis=0)
            else:
                self.stats["texts_without_vector"] += 1
        return out
