"""Re-embedding after an embedding-model change, on real workers: near-duplicate search never
compares vectors of two models, and ``ibex reembed`` (through the embed queue, resumable)
leaves no vector of the old model, after which the search finds the old memories again."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import uuid
from pathlib import Path

from ibex_worker import reembed
from ibex_worker.celery_app import create_app
from tests.conftest import isolated_queues, make_settings, memory, new_scope, query, start_worker, submit_and_wait

ROOT = Path(__file__).resolve().parents[2]
RENAMED = "all-MiniLM-L6-v2@renamed"


def _models(engine, org: str) -> dict[str, str | None]:
    return {r.content: r.embedding_model for r in query(
        engine, "SELECT content, embedding_model FROM memories WHERE org_id = :o AND embedding IS NOT NULL", o=org)}


def test_a_model_change_never_mixes_vectors_and_reembed_brings_the_old_ones_over(
        infra, engine, producer, settings, pipeline):
    org, agent, other = new_scope(), new_scope("agent"), new_scope("agent")
    old = [submit_and_wait(engine, producer, settings, memory(org, agent, text))
           for text in ("The staging server uses port 8080.", "User prefers tea over coffee in the morning.")]
    elsewhere = submit_and_wait(engine, producer, settings, memory(org, other, "The backup runs at 02:30."))
    assert {v["outcome"] for v in old + [elsewhere]} == {"created"}

    overrides = {**isolated_queues(f"ibex.test.reembed.{uuid.uuid4().hex[:8]}"), "embedding_model_name": RENAMED}
    renamed = make_settings(infra, **overrides)
    app = create_app(renamed)
    worker = start_worker(infra, "reembed-worker", queues=",".join(renamed.all_queues), **overrides)
    try:
        unmixed = submit_and_wait(engine, app, renamed, memory(org, agent, "The staging server uses port 8081."))
        assert unmixed["status"] == "succeeded"
        # Found by the lexical signal alone, which needs no vector: none of another model is compared.
        assert [(n["memory_id"], n["similarity"]) for n in unmixed["result"]["near_duplicates"]] == \
            [(old[0]["memory_id"], None)]

        lines = io.StringIO()
        progress = reembed.Progress(2, out=lines)
        done, left = reembed.run(engine, app, renamed, org, agent_id=agent, batch=1, progress=progress.show)
        assert (done, left) == (2, 0)
        assert "reembed: 2/2 (100%)" in lines.getvalue() and "ETA" in lines.getvalue()
        models = _models(engine, org)
        assert {text: model for text, model in models.items() if text != "The backup runs at 02:30."} == {
            "The staging server uses port 8080.": RENAMED, "User prefers tea over coffee in the morning.": RENAMED,
            "The staging server uses port 8081.": RENAMED}
        assert models["The backup runs at 02:30."] == settings.embedding_model_name  # another agent: not asked for

        done = subprocess.run([sys.executable, "-m", "ibex_worker.cli", "reembed", "--org", org],
                              env=infra.env(**overrides), cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == {"model": RENAMED, "reembedded": 1, "left": 0}
        assert set(_models(engine, org).values()) == {RENAMED}

        found = submit_and_wait(engine, app, renamed, memory(org, agent, "The staging server uses port 8082."))
        near = {n["memory_id"] for n in found["result"]["near_duplicates"]}
        assert old[0]["memory_id"] in near and unmixed["memory_id"] in near
    finally:
        worker.stop()


def test_reembed_stops_with_the_rest_left_when_no_worker_embeds_with_its_model(infra, engine, producer, settings,
                                                                                pipeline):
    org, agent = new_scope(), new_scope("agent")
    submit_and_wait(engine, producer, settings, memory(org, agent, "The staging server uses port 8080."))
    nobody = make_settings(infra, **isolated_queues(f"ibex.test.reembed-nobody.{uuid.uuid4().hex[:8]}"),
                           embedding_model_name=RENAMED)
    done, left = reembed.run(engine, create_app(nobody), nobody, org, stall_seconds=1.0,
                             progress=lambda *_: None)
    assert (done, left) == (0, 1)
    assert set(_models(engine, org).values()) == {settings.embedding_model_name}
