"""The embedding buckets' centroids (migration 000017): for each embedding model the project
ships, a fixed set of unit vectors of its space (spherical k-means over texts the corpus does
not hold, built by ``ops/embedding/train_centroids.py``), kept in
``ibex_worker/data/centroids/<model>.npz`` as int8 rows with a scale each.

``ibex migrate`` loads them into ``embedding_centroids`` (``ensure``): the database's copy is
the one every process uses. A memory is filed under its nearest centroid when it is stored
(``Buckets.nearest``, by persist; a trigger does it for any other writer), and the
near-duplicate search of a large agent reads only the buckets nearest the query
(``Buckets.probes``, ``ibex_worker.store.vectors``). A model's centroids are loaded once and
never replaced: the rows already filed under them would no longer be in their nearest bucket.
A model without centroids has no buckets; its agents are always searched whole.
"""

from __future__ import annotations

import threading
import time
from importlib import resources
from typing import Any

import numpy as np
import structlog

from ibex_worker.store import centroids as centroid_store

log = structlog.get_logger("ibex.centroids")

_SUFFIX = ".npz"


def shipped() -> dict[str, np.ndarray]:
    """``{model: centroids}`` of every model the package ships centroids for (float32, unit rows)."""
    found: dict[str, np.ndarray] = {}
    folder = resources.files("ibex_worker") / "data" / "centroids"
    if not folder.is_dir():
        return found
    for entry in folder.iterdir():
        if entry.name.endswith(_SUFFIX):
            with entry.open("rb") as handle, np.load(handle) as data:
                found[entry.name[:-len(_SUFFIX)]] = dequantize(data["q"], data["scale"])
    return found


def quantize(centroids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row as int8 and its scale (the row's largest magnitude over 127)."""
    scale = np.abs(centroids).max(axis=1) / 127.0
    return np.round(centroids / scale[:, None]).astype(np.int8), scale.astype(np.float32)


def dequantize(q: np.ndarray, scale: np.ndarray) -> np.ndarray:
    rows = q.astype(np.float32) * scale[:, None]
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def ensure(conn: Any, available: dict[str, np.ndarray] | None = None) -> dict[str, int]:
    """Load the centroids of every shipped model that has none in the database yet (a psycopg
    connection of the schema's owner); ``{model: centroids loaded}``."""
    loaded = {}
    for model, centroids in sorted((shipped() if available is None else available).items()):
        with conn.transaction():
            if centroid_store.any_loaded(conn, model):
                continue
            centroid_store.load(conn, model, [_literal(vector) for vector in centroids])
        loaded[model] = len(centroids)
        log.info("centroids_loaded", model=model, centroids=len(centroids))
    return loaded


def _literal(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{float(x):.8g}" for x in vector) + "]"


class Buckets:
    """The centroids of each model as the database holds them, read once per process (they never
    change once loaded); a model found without any is asked again after ``recheck_seconds``."""

    def __init__(self, recheck_seconds: float = 60.0) -> None:
        self._matrices: dict[str, np.ndarray] = {}
        self._absent: dict[str, float] = {}
        self._lock = threading.Lock()
        self.recheck_seconds = recheck_seconds

    def matrix(self, conn: Any, model: str) -> np.ndarray | None:
        with self._lock:
            if model in self._matrices:
                return self._matrices[model]
            if time.monotonic() - self._absent.get(model, -self.recheck_seconds) < self.recheck_seconds:
                return None
        rows = centroid_store.read(conn, model)
        with self._lock:
            if not rows:
                self._absent[model] = time.monotonic()
                return None
            matrix = np.asarray([row.centroid for row in rows], dtype=np.float32)
            self._matrices[model] = matrix
            return matrix

    def nearest(self, conn: Any, model: str | None, vector: Any) -> int | None:
        """The bucket ``vector`` is filed under: its most similar centroid (None: no centroids)."""
        matrix = self.matrix(conn, model) if model else None
        return None if matrix is None else int(np.argmax(_similarities(matrix, vector)))

    def probes(self, conn: Any, model: str, vector: Any, count: int) -> list[int] | None:
        """The ``count`` buckets whose centroids are most similar to ``vector``, most similar first."""
        matrix = self.matrix(conn, model)
        if matrix is None:
            return None
        scores = _similarities(matrix, vector)
        count = min(count, len(scores))
        best = np.argpartition(-scores, count - 1)[:count]
        return [int(b) for b in best[np.argsort(-scores[best])]]


def _similarities(matrix: np.ndarray, vector: Any) -> np.ndarray:
    """``matrix @ vector`` in numpy's own loop: BLAS would run it on threads that keep spinning
    after the call (6 ms of CPU for a 0.4 ms product, measured in a pool process), taking the
    cores the other pool processes need."""
    return np.einsum("ij,j->i", matrix, np.asarray(vector, dtype=np.float32))


BUCKETS = Buckets()
