# Two commands do everything: `make run` and `make test`. Both install what is missing.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.bench-installed

.PHONY: run test install clean-data demo bench bench-burst pii-eval dedup-eval openapi

$(STAMP): pyproject.toml client/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first and pinned exactly: 2.13.0 is a CPU build already on disk here.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev,embedded,flower]'
	# The producers' client (client/, imported as ibex_client): the tests drive the API with it.
	$(PY) -m pip install --quiet -e ./client
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/ibex up

test: $(STAMP)
	$(PY) -m pytest

clean-data:
	rm -rf .ibex

# PII redaction quality on the labelled corpus (tests/data/pii), both splits; the tables go to
# docs/pii-quality.md. About a minute on 2 cores.
pii-eval: $(STAMP)
	$(PY) -m ops.pii_eval.evaluate --write

# Near-duplicate quality (embedding, lexical, combined) on the labelled pairs: docs/dedup-quality.md.
dedup-eval: $(STAMP)
	$(PY) -m ops.dedup_eval.evaluate --write

# The committed OpenAPI document (api/openapi.json), after a change to the HTTP API.
openapi: $(STAMP)
	$(PY) -m ops.export_openapi

# Against a running `make run` stack, in a second shell.
demo: $(STAMP)
	$(PY) -m ops.demo

# Benchmarks (bounded in time, ~25 min on 2 cores; raw results in ops/bench/results/, not in
# git; one headline line per full run appended to ops/bench/runs.jsonl; summary in
# ops/bench/RESULTS.md): write-path throughput (bound, batched, naive), then near-dup search
# scale, then the chart and RESULTS.md tables. Bursts and the mem0 peer: `make bench-burst`
# (~8 min, installs mem0 into .venv-mem0).
$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(PY) -m ops.bench.service_bench --no-report
	$(PY) -m ops.bench.search_scale --sizes 10000,100000,1000000 --hnsw-build-budget 600
	$(PY) -m ops.bench.report

bench-burst: $(BENCH_STAMP)
	$(PY) -m ops.bench.burst
