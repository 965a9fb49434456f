"""The retry decisions of a delivery, as pure logic: which delivery retries, after how long,
with which retry count, and when the budget is spent; a failed batch call retried job by job."""

from __future__ import annotations

from types import SimpleNamespace

from tests.conftest import make_settings
from ibex_worker.errors import LeaseLost
from ibex_worker.pipeline.context import WriteContext
from ibex_worker.pipeline.settling import StageReport, guard_batch, retries_at_later_stages, retry_delivery

SETTINGS = make_settings(retry_backoff_base=1.0, retry_backoff_cap=8.0)


def ctx(job_id):
    return WriteContext(job_id=job_id, org_id="org", agent_id="agent", request={})


def test_a_delivery_retry_waits_a_capped_backoff_that_grows_with_its_attempt():
    for retries in range(5):
        again = retry_delivery("embed", ["j-1"], SETTINGS, retries=retries, max_retries=5)
        assert (again.stage, again.job_ids, again.retries) == ("embed", ["j-1"], retries + 1)
        assert 0.0 <= again.countdown <= min(8.0, 2.0 ** retries)


def test_a_delivery_that_spent_its_retry_budget_is_not_retried():
    assert retry_delivery("embed", ["j-1"], SETTINGS, retries=5, max_retries=5) is None
    assert retry_delivery("embed", ["j-1"], SETTINGS, retries=0, max_retries=0) is None


def test_a_delivery_that_could_not_claim_is_retried_even_without_job_ids():
    again = retry_delivery("validate", [], SETTINGS, retries=0, max_retries=5)
    assert again is not None and again.job_ids == []


def test_jobs_reached_inline_are_retried_as_their_stages_second_delivery():
    later = retries_at_later_stages("validate", {"validate": ["j-own"], "embed": ["j-e"], "pii": ["j-p"]}, SETTINGS)
    assert sorted((r.stage, r.job_ids, r.retries) for r in later) == [("embed", ["j-e"], 1), ("pii", ["j-p"], 1)]
    assert all(0.0 <= r.countdown <= 1.0 for r in later)


def test_a_failed_batch_call_is_retried_job_by_job_so_only_the_bad_job_is_settled():
    calls = []

    def call(batch):
        calls.append([c.job_id for c in batch])
        if len(batch) > 1 or batch[0].job_id == "j-bad":
            raise LeaseLost("gone")

    report = StageReport()
    done = guard_batch("embed", [ctx("j-ok"), ctx("j-bad")], SimpleNamespace(), report, call)
    assert [c.job_id for c in done] == ["j-ok"] and report.dropped == 1
    assert calls == [["j-ok", "j-bad"], ["j-ok"], ["j-bad"]]


def test_a_batch_call_that_succeeds_hands_on_every_job_the_stage_did_not_refuse():
    jobs = [ctx("j-1"), ctx("j-2")]
    report = StageReport()
    assert guard_batch("pii", jobs, SimpleNamespace(), report, lambda batch: None) == jobs
    assert report.dropped == 0 and not report.retry and not report.failed
