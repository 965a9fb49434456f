"""The embedders with the real MiniLM weights (no infrastructure): a batch is encoded in short
forward passes of similar-length texts, a text's vector does not depend on the batch it came
in (near-dup decisions at 0.92 must not change with load), and the ONNX backend gives the
PyTorch backend's vectors from a graph exported once."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import numpy as np
import pytest

from ibex_worker.adapters.embedder import (ENCODE_TEXTS_PER_THREAD, SentenceTransformerEmbedder,
                                           default_model_path, texts_per_pass)
from ibex_worker.adapters.onnx_embedder import OnnxEmbedder, export
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


@pytest.fixture(scope="module")
def onnx_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("onnx")


@pytest.fixture(scope="module")
def onnx_embedder(onnx_dir) -> OnnxEmbedder:
    return OnnxEmbedder(default_model_path(), "all-MiniLM-L6-v2", threads=1, cache_dir=str(onnx_dir),
                        texts_per_pass=texts_per_pass(1))


def test_the_onnx_backend_gives_the_pytorch_vectors(embedder, onnx_embedder) -> None:
    reference = np.asarray(embedder.embed_many(TEXTS), dtype=np.float32)
    vectors = np.asarray(onnx_embedder.embed_many(TEXTS), dtype=np.float32)
    assert vectors.shape == (len(TEXTS), EMBEDDING_DIM)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.sum(reference * vectors, axis=1).min() > 0.99999
    alone = np.asarray([onnx_embedder.embed_many([t])[0] for t in reversed(TEXTS)], dtype=np.float32)[::-1]
    assert np.sum(alone * vectors, axis=1).min() > 0.99999  # order and batch do not matter


def test_the_exported_graph_is_kept_readable_and_reused(onnx_embedder, onnx_dir) -> None:
    [graph] = list(onnx_dir.glob("*.onnx"))
    assert stat.S_IMODE(graph.stat().st_mode) == 0o644 and not list(onnx_dir.glob("*.partial"))
    written = graph.stat().st_mtime_ns
    assert export(Path(default_model_path()), onnx_dir) == graph and graph.stat().st_mtime_ns == written


def test_a_model_the_onnx_backend_does_not_reproduce_is_refused(tmp_path) -> None:
    model = tmp_path / "cls-model"
    shutil.copytree(default_model_path(), model)
    (model / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    with pytest.raises(RuntimeError, match="IBEX_EMBEDDING_BACKEND=torch"):
        OnnxEmbedder(str(model), "cls", threads=1, cache_dir=str(tmp_path / "onnx"), texts_per_pass=4)
    assert not (tmp_path / "onnx").exists()
