"""The sentence-transformers embedder with the real MiniLM weights (no infrastructure): a batch
is encoded in short forward passes of similar-length texts, and a text's vector does not
depend on the batch it came in (near-dup decisions at 0.92 must not change with load)."""

from __future__ import annotations

import numpy as np
import pytest

from ibex_worker.adapters.embedder import ENCODE_TEXTS_PER_THREAD, SentenceTransformerEmbedder
from ibex_worker.store.vectors import EMBEDDING_DIM

TEXTS = [
    "User prefers tea.",
    "The quarterly report is due on the first Monday of April and goes to the finance team.",
    "Deploys happen on Tuesdays.",
    "The customer asked us to keep all invoices for seven years, in PDF, in the shared archive "
    "folder that the auditors can read, and to send a reminder one month before each deletion.",
    "Standup is at 9:30.",
    "Alex leads the data platform team since March and owns the ingestion budget.",
    "The staging database is refreshed from production every Sunday night at two.",
    "Prefers short answers.",
    "Our office moved to the third floor; badges for the new floor are handed out at reception.",
]


@pytest.fixture(scope="module")
def embedder() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder("", "all-MiniLM-L6-v2", threads=1)


def test_a_batch_runs_as_short_forward_passes(embedder, monkeypatch) -> None:
    model = embedder._model
    sizes: list[int] = []
    real = model.forward

    def counting(features, **kwargs):
        sizes.append(int(features["input_ids"].shape[0]))
        return real(features, **kwargs)

    monkeypatch.setattr(model, "forward", counting)
    vectors = embedder.embed_many(TEXTS)
    assert len(vectors) == len(TEXTS) and all(len(v) == EMBEDDING_DIM for v in vectors)
    assert sizes and max(sizes) == ENCODE_TEXTS_PER_THREAD and sum(sizes) == len(TEXTS)


def test_a_texts_vector_does_not_depend_on_its_batch(embedder) -> None:
    together = np.asarray(embedder.embed_many(TEXTS), dtype=np.float32)
    alone = np.asarray([embedder.embed_many([t])[0] for t in TEXTS], dtype=np.float32)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-4)
    cosines = np.sum(together * alone, axis=1)
    assert cosines.min() > 0.9999
