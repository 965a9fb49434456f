"""The connection pool's liveness check (ibex_worker.db.make_engine), against the real PostgreSQL:
a connection that sat idle is pinged and replaced if its server session is gone; a busy one
is not pinged (no extra round trip per transaction); a session killed while busy costs one
transaction, reported as a TransientError, and the next one works; a pool whose connections
are all busy past its timeout is a TransientError too (the API answers 503, not 500)."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from sqlalchemy import text

from tests.conftest import Infra
from ibex_worker import db, migrate
from ibex_worker.errors import TransientError


def _pid(engine: Any) -> int:
    with db.maint_tx(engine) as conn:
        return int(conn.execute(text("SELECT pg_backend_pid()")).scalar_one())


def _terminate(infra: Infra, pid: int) -> None:
    """From a session of its own (the engine under test has one pooled connection)."""
    with psycopg.connect(migrate.libpq_url(infra.pg.url), autocommit=True) as conn:
        assert conn.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,)).fetchone()[0]


@pytest.fixture
def pings(monkeypatch: pytest.MonkeyPatch, infra: Infra) -> Any:
    engine = db.make_engine(infra.pg.url, pool_size=1)
    calls: list[int] = []
    real = engine.dialect.do_ping

    def counting(dbapi_connection: Any) -> bool:
        calls.append(1)
        return real(dbapi_connection)

    monkeypatch.setattr(engine.dialect, "do_ping", counting)
    yield engine, calls
    engine.dispose()


def test_a_busy_connection_is_not_pinged(pings) -> None:
    engine, calls = pings
    first = _pid(engine)
    for _ in range(20):
        assert _pid(engine) == first  # one pooled connection, reused
    assert calls == []


def test_an_idle_connection_whose_session_died_is_replaced_before_use(pings, monkeypatch, infra) -> None:
    engine, calls = pings
    monkeypatch.setattr(db, "PING_AFTER_IDLE_SECONDS", 0.0)  # every checkout counts as idle
    victim = _pid(engine)
    calls.clear()
    _terminate(infra, victim)
    fresh = _pid(engine)  # no error: the failed ping dropped it and the pool connected again
    assert fresh != victim
    assert len(calls) >= 1


def test_a_busy_connection_killed_fails_one_transaction_as_transient_then_recovers(pings, infra) -> None:
    engine, calls = pings
    victim = _pid(engine)
    _terminate(infra, victim)
    with pytest.raises(TransientError):
        _pid(engine)
    assert _pid(engine) != victim
    assert calls == []


def test_an_exhausted_pool_is_a_transient_error_not_a_crash(infra: Infra) -> None:
    engine = db.make_engine(infra.pg.url, pool_size=1, max_overflow=0, pool_timeout=0.5)
    try:
        with db.maint_tx(engine):  # the only connection, held
            with pytest.raises(TransientError) as caught:
                with db.maint_tx(engine):
                    pass
        assert caught.value.code == "DATABASE_UNAVAILABLE"
        with db.maint_tx(engine) as conn:  # given back: the next transaction works
            assert conn.execute(text("SELECT 1")).scalar_one() == 1
    finally:
        engine.dispose()
