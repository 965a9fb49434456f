"""The embedding buckets' centroids as shipped and as a process reads them
(``ibex_worker.adapters.centroids``): pure logic; the database's side is tests/integration/test_embedding_buckets.py."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ibex_worker.adapters import centroids
from ibex_worker.adapters.centroids import Buckets


def _rows(n, seed=1):
    rows = np.random.default_rng(seed).normal(size=(n, 384)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_the_shipped_centroids_are_unit_rows_of_the_schema_s_dimension():
    shipped = centroids.shipped()
    assert "all-MiniLM-L6-v2" in shipped
    matrix = shipped["all-MiniLM-L6-v2"]
    assert matrix.shape[1] == 384 and len(matrix) >= 256
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    assert len({row.tobytes() for row in matrix}) == len(matrix)  # no two buckets share a centroid


def test_int8_rows_keep_each_centroid_within_a_hundredth_of_its_direction():
    rows = _rows(64)
    back = centroids.dequantize(*centroids.quantize(rows))
    assert (back * rows).sum(axis=1).min() > 0.999


class _Conn:
    """Answers the centroid query with ``rows`` (or none) and counts the calls."""

    def __init__(self, rows):
        self.rows, self.calls = rows, 0

    def execute(self, statement, params):
        self.calls += 1
        return SimpleNamespace(all=lambda: [SimpleNamespace(centroid=list(r)) for r in self.rows])


def test_a_process_reads_a_model_s_centroids_once_and_asks_again_later_when_there_were_none():
    rows = _rows(32)
    buckets, conn = Buckets(recheck_seconds=3600), _Conn(rows)
    vector = rows[7] + 0.01 * rows[3]
    assert buckets.nearest(conn, "m", vector / np.linalg.norm(vector)) == 7
    assert buckets.probes(conn, "m", rows[7], 4)[0] == 7
    assert conn.calls == 1
    empty = _Conn([])
    assert buckets.probes(empty, "other", rows[0], 4) is None and buckets.probes(empty, "other", rows[0], 4) is None
    assert empty.calls == 1  # absent: not asked again before recheck_seconds
    assert Buckets(recheck_seconds=0).matrix(empty, "other") is None and empty.calls == 2
    assert buckets.nearest(conn, None, rows[0]) is None  # no model, no bucket


def test_probes_are_the_most_similar_centroids_most_similar_first():
    rows = _rows(100, seed=2)
    query = rows[10] + 0.5 * rows[20]
    query /= np.linalg.norm(query)
    probes = Buckets().probes(_Conn(rows), "m", query, 8)
    scores = rows @ query
    assert probes == [int(i) for i in np.argsort(-scores)[:8]]
    assert Buckets().probes(_Conn(rows[:3]), "m", query, 8) == [int(i) for i in np.argsort(-(rows[:3] @ query))]
