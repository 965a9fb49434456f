"""The embedding centroids' table (migration 000017): read by every process through its
tenant connection, written once per model by ``ibex migrate`` as the schema's owner."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import text

_READ = text("SELECT bucket, CAST(centroid AS real[]) AS centroid FROM embedding_centroids "
             "WHERE model = :model ORDER BY bucket")


def read(conn: Any, model: str) -> list[Any]:
    """``(bucket, centroid)`` rows of ``model``, in bucket order (a SQLAlchemy connection)."""
    return conn.execute(_READ, {"model": model}).all()


def any_loaded(conn: Any, model: str) -> bool:
    """Whether ``model`` has centroids (a psycopg connection of the owner)."""
    return conn.execute("SELECT 1 FROM embedding_centroids WHERE model = %s LIMIT 1", (model,)).fetchone() is not None


def load(conn: Any, model: str, literals: Sequence[str]) -> None:
    """Store ``model``'s centroids, bucket ``i`` the vector literal ``literals[i]`` (a psycopg connection)."""
    with conn.cursor() as cursor:
        cursor.executemany("INSERT INTO embedding_centroids (model, bucket, centroid) VALUES (%s, %s, %s::vector)",
                           [(model, bucket, literal) for bucket, literal in enumerate(literals)])
