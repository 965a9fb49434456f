"""Stage 7, labels, against the real pipeline and schema: bad labels are refused before
anything is stored, omitted labels are synthesized, and the primary category on
``memories`` is a projection the database owns."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from tests.conftest import fetch_memory, memory, new_scope, query, submit_and_wait
from ibex_worker.db import tenant_tx
from ibex_worker.errors import ValidationFailed
from ibex_worker.submit import submit

CANARY = "canary-label-4e1d"


def write(engine: Any, producer: Any, settings: Any, content: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    org = new_scope()
    view = submit_and_wait(engine, producer, settings, memory(org, new_scope("agent"), content, **fields))
    assert (view["status"], view["outcome"]) == ("succeeded", "created"), view["error"]
    return org, view


def labels_of(engine: Any, memory_id: str) -> list[tuple[str, float]]:
    rows = query(engine, "SELECT label, confidence FROM memory_labels WHERE memory_id = :m ORDER BY label",
                 m=memory_id)
    return [(r.label, r.confidence) for r in rows]


def primary(engine: Any, memory_id: str) -> tuple[str | None, float | None]:
    row = fetch_memory(engine, memory_id)
    return row.category, row.confidence


def run_sql(engine: Any, org: str, sql: str, **params: Any) -> None:
    """As the application does: the tenant role, inside the org's transaction."""
    with tenant_tx(engine, org) as conn:
        conn.execute(text(sql), params)


# ---------------------------------------------------------------- refused at submit


@pytest.mark.parametrize(("labels", "field"), [
    pytest.param([], "labels", id="empty list"),
    pytest.param([{"label": f"{CANARY}-{i}", "confidence": 0.5} for i in range(6)], "labels", id="six labels"),
    pytest.param([{"label": CANARY, "confidence": 0.9}, {"label": CANARY.upper(), "confidence": 0.2}],
                 "labels[1].label", id="duplicate labels"),
])
def test_bad_labels_are_refused_with_a_field_error_and_nothing_is_stored(engine, producer, settings, labels, field):
    org = new_scope()
    body = memory(org, new_scope("agent"), f"Customer note {CANARY}.", labels=labels)

    with pytest.raises(ValidationFailed) as caught:
        submit(engine, producer, settings, body)

    error = caught.value
    assert [issue.field for issue in error.issues] == [field]
    body_json = json.dumps(error.as_dict())
    assert error.as_dict()["code"] == "VALIDATION_ERROR"
    assert field in body_json
    assert CANARY not in body_json and CANARY.upper() not in body_json and CANARY not in str(error)
    assert query(engine, "SELECT count(*) AS n FROM memory_write_jobs WHERE org_id = :o", o=org)[0].n == 0
    assert query(engine, "SELECT count(*) AS n FROM memories WHERE org_id = :o", o=org)[0].n == 0


# ---------------------------------------------------------------- synthesized


def test_omitted_labels_are_synthesized_from_category_and_confidence(engine, producer, settings, pipeline):
    _, view = write(engine, producer, settings, "User prefers dark mode in every editor.",
                    category="preference", confidence=0.8)
    assert labels_of(engine, view["memory_id"]) == [("preference", 0.8)]
    assert primary(engine, view["memory_id"]) == ("preference", 0.8)
    assert {"stage": "labels", "result": "synthesized", "count": 1} in view["decisions"]


def test_without_category_or_labels_the_memory_is_uncategorized_with_full_confidence(
        engine, producer, settings, pipeline):
    _, view = write(engine, producer, settings, "The release train leaves every second Thursday.")
    assert labels_of(engine, view["memory_id"]) == [("uncategorized", 1.0)]
    assert primary(engine, view["memory_id"]) == ("uncategorized", 1.0)


# ---------------------------------------------------------------- given labels and the projection


def test_the_primary_category_is_the_highest_confidence_label(engine, producer, settings, pipeline):
    _, view = write(engine, producer, settings, "Invoices are sent on the first working day of the month.",
                    category="preference", confidence=1.0,  # labels given: the scalar pair is not used
                    labels=[{"label": "  Billing ", "confidence": 0.4}, {"label": "Schedule", "confidence": 0.9},
                            {"label": "finance", "confidence": 0.7}])
    assert labels_of(engine, view["memory_id"]) == [("billing", 0.4), ("finance", 0.7), ("schedule", 0.9)]
    assert primary(engine, view["memory_id"]) == ("schedule", 0.9)
    assert {"stage": "labels", "result": "given", "count": 3} in view["decisions"]


def test_a_confidence_tie_is_broken_by_label_text(engine, producer, settings, pipeline):
    _, view = write(engine, producer, settings, "The office plants are watered on Fridays.",
                    labels=[{"label": "work", "confidence": 0.7}, {"label": "travel", "confidence": 0.7},
                            {"label": "office", "confidence": 0.2}])
    assert primary(engine, view["memory_id"]) == ("travel", 0.7)


@pytest.mark.parametrize("assignment", ["category = 'x'", "confidence = 0.5", "category = NULL, confidence = NULL"])
def test_application_code_cannot_write_the_primary_category(engine, producer, settings, pipeline, assignment):
    org, view = write(engine, producer, settings, "Deploys are frozen during the last week of December.",
                      category="policy", confidence=0.9)

    with pytest.raises(IntegrityError) as caught:
        run_sql(engine, org, f"UPDATE memories SET {assignment} WHERE id = :id", id=view["memory_id"])

    assert caught.value.orig.sqlstate == "23514"
    assert "projected from memory_labels" in str(caught.value.orig)
    assert primary(engine, view["memory_id"]) == ("policy", 0.9)


def test_a_memory_cannot_be_inserted_with_a_primary_category(engine):
    org = new_scope()
    with pytest.raises(IntegrityError) as caught:
        run_sql(engine, org, "INSERT INTO memories (org_id, agent_id, content, content_hash, source, category) "
                             "VALUES (:o, 'agent', 'x', :h, 'chat', 'x')", o=org, h="0" * 64)
    assert caught.value.orig.sqlstate == "23514"
    assert "projected from memory_labels" in str(caught.value.orig)
    assert query(engine, "SELECT count(*) AS n FROM memories WHERE org_id = :o", o=org)[0].n == 0


def test_label_changes_re_project_the_primary_category(engine, producer, settings, pipeline):
    org, view = write(engine, producer, settings, "Support tickets are triaged within four hours.",
                      labels=[{"label": "support", "confidence": 0.6}, {"label": "sla", "confidence": 0.3}])
    memory_id = view["memory_id"]
    assert primary(engine, memory_id) == ("support", 0.6)

    set_confidence = "UPDATE memory_labels SET confidence = :c WHERE memory_id = :m AND label = 'sla'"
    run_sql(engine, org, set_confidence, c=0.9, m=memory_id)
    assert primary(engine, memory_id) == ("sla", 0.9)

    run_sql(engine, org, "INSERT INTO memory_labels (org_id, memory_id, label, confidence) "
                         "VALUES (:o, :m, 'ops', 0.95)", o=org, m=memory_id)
    assert primary(engine, memory_id) == ("ops", 0.95)

    run_sql(engine, org, "DELETE FROM memory_labels WHERE memory_id = :m AND label = 'ops'", m=memory_id)
    assert primary(engine, memory_id) == ("sla", 0.9)

    run_sql(engine, org, set_confidence, c=0.1, m=memory_id)
    assert primary(engine, memory_id) == ("support", 0.6)

    run_sql(engine, org, "DELETE FROM memory_labels WHERE memory_id = :m", m=memory_id)
    assert primary(engine, memory_id) == (None, None)


def test_moving_a_label_to_another_memory_re_projects_both(engine, producer, settings, pipeline):
    org, agent = new_scope(), new_scope("agent")
    first = submit_and_wait(engine, producer, settings, memory(
        org, agent, "Backups are verified every Sunday night.",
        labels=[{"label": "ops", "confidence": 0.9}, {"label": "misc", "confidence": 0.1}]))
    second = submit_and_wait(engine, producer, settings, memory(
        org, agent, "Laptops are replaced every three years.",
        labels=[{"label": "hardware", "confidence": 0.5}]))
    assert primary(engine, first["memory_id"]) == ("ops", 0.9)

    run_sql(engine, org, "UPDATE memory_labels SET memory_id = :to WHERE memory_id = :frm AND label = 'ops'",
            to=second["memory_id"], frm=first["memory_id"])

    assert primary(engine, second["memory_id"]) == ("ops", 0.9)
    assert labels_of(engine, first["memory_id"]) == [("misc", 0.1)]
    assert primary(engine, first["memory_id"]) == ("misc", 0.1)


def test_labels_of_another_org_are_invisible_to_the_tenant_role(engine, producer, settings, pipeline):
    org, view = write(engine, producer, settings, "Quarterly reviews happen in the first week of the quarter.",
                      category="process", confidence=0.7)
    stranger = new_scope()
    with tenant_tx(engine, stranger) as conn:
        seen = conn.execute(text("UPDATE memory_labels SET confidence = 0.0 WHERE memory_id = :m RETURNING label"),
                            {"m": view["memory_id"]}).all()
    assert seen == []
    assert labels_of(engine, view["memory_id"]) == [("process", 0.7)]
    assert primary(engine, view["memory_id"]) == ("process", 0.7)
