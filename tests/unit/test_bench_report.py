"""The benchmark's committed record: one headline line per full run in ``ops/bench/runs.jsonl``
(the tables of RESULTS.md are read from it), and no generated output in git."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ops.bench import report

ROOT = Path(__file__).resolve().parents[2]


def _result(date: str, batched: float, naive: float) -> dict:
    mode = {"steps": [{"label": "s1", "other_cores_send": 0.12, "after_step": {}}]}
    return {
        "date": date, "machine": {"cpus": 2}, "load_average": {"start": [0.5], "end": [1.5]},
        "code": {"commit": "abc1234", "modified_product_files": []},
        "bound": {"passes": [{"other_cores": 0.3}]},
        "modes": {"batched": mode, "naive": mode},
        "summary": {"bound_items_per_s": 50.0, "batched_over_naive": batched / naive,
                    "batched": {"sustained_per_s": batched, "ratio_to_bound": batched / 50, "half_max_p99_ms": 400},
                    "naive": {"sustained_per_s": naive, "ratio_to_bound": naive / 50, "half_max_p99_ms": 900}},
    }


def test_a_full_run_becomes_one_headline_line_and_the_table_reads_its_medians(tmp_path):
    runs = tmp_path / "runs.jsonl"
    for i, (batched, naive) in enumerate(((40.0, 20.0), (42.0, 21.0), (38.0, 19.0))):
        report.record_run(_result(f"2026-11-30T0{i}:00:00Z", batched, naive), runs)
    lines = runs.read_text().splitlines()
    assert len(lines) == 3 and all('"modes"' not in line and "after_step" not in line for line in lines)
    recorded = report.recorded_runs(runs)
    assert recorded[0]["other_cores_max"] == 0.3 and recorded[0]["broker_quiet_between_steps"] is True
    table = report.runs_markdown(recorded)
    assert "**median of 3**" in table and "**40.0 (0.80)**" in table and "**2.00**" in table


def test_the_committed_runs_are_well_formed():
    for line in report.RUNS.read_text().splitlines():
        run = json.loads(line)
        assert {"date", "code", "bound_items_per_s", "batched", "naive"} <= set(run)


def test_no_generated_benchmark_output_is_tracked():
    tracked = subprocess.run(["git", "ls-files", "ops/bench"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    assert tracked and not [path for path in tracked if path.startswith("ops/bench/results/")]
    assert sum((ROOT / path).stat().st_size for path in tracked) < 300_000
