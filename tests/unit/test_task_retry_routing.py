"""The thin stage task sends each retry to the stage its job row is at: its own stage through
Celery's retry (with the delivery's retry budget), a later stage (reached inline) as a
delayed message of that stage's task."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.conftest import make_settings
from ibex_worker import tasks
from ibex_worker.errors import TransientError
from ibex_worker.pipeline import runner, settling
from ibex_worker.pipeline.settling import StageReport


class Retry(Exception):
    pass


class FakeTask:
    max_retries = 5

    def __init__(self):
        self.request = SimpleNamespace(retries=0, delivery_info={"routing_key": "ibex.pipeline"})
        self.app = object()
        self.retried = []

    def retry(self, args, countdown, exc):
        self.retried.append((args, countdown))
        return Retry()


@pytest.fixture
def wiring(monkeypatch):
    published = []
    deps = SimpleNamespace(settings=make_settings(retry_backoff_base=1.0, retry_backoff_cap=60.0))
    monkeypatch.setattr(tasks.runtime, "current", lambda: deps)
    monkeypatch.setattr(settling, "publish", lambda app, settings, stage, ids, countdown=None, retries=0:
                        published.append((stage, list(ids), countdown, retries)) or True)
    return published


def _report(**retry):
    report = StageReport()
    report.publish["pii"].append("j-next")
    for stage, ids in retry.items():
        report.retry[stage].extend(ids)
    report.retry_error = TransientError("model crashed", code="EMBEDDING_FAILED")
    return report


def test_retries_go_to_the_stage_the_job_row_is_at(monkeypatch, wiring):
    monkeypatch.setattr(runner, "run_stage", lambda *a, **k: _report(validate=["j-own"], embed=["j-later"]))
    task = FakeTask()
    with pytest.raises(Retry):
        tasks._run(task, "validate", ["j-own", "j-later", "j-next"])
    assert wiring[0] == ("pii", ["j-next"], None, 0)
    [(stage, ids, countdown, retries)] = wiring[1:]
    assert (stage, ids, retries) == ("embed", ["j-later"], 1) and 0 < countdown <= 60
    assert [args for args, _ in task.retried] == [[["j-own"]]]


def test_only_later_stage_retries_do_not_retry_the_delivery_itself(monkeypatch, wiring):
    monkeypatch.setattr(runner, "run_stage", lambda *a, **k: _report(embed=["j-later"]))
    task = FakeTask()
    tasks._run(task, "validate", ["j-later"])
    assert [stage for stage, *_ in wiring] == ["pii", "embed"] and task.retried == []
