# Two commands do everything on a fresh clone (python3 3.11+ and make are all it needs):
#   make report   set up .venv, then run the main job (sweep + reports into reports/)
#   make test     set up .venv, then run the test suite
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed

.PHONY: report sweep test setup clean benchmark strip check

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[all]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

# The main job: the sweep over data/ into reports/sweep/, then every notebook executed with
# papermill into reports/ (executed notebook, HTML without code, figures, CSVs) and
# reports/README.md. Timing benchmarks stay outside it (`make benchmark`).
report: sweep
	$(BIN)/toolsel report --notebooks notebooks --out reports

sweep: $(STAMP)
	$(BIN)/toolsel validate --registry data/registry.json --queries data/queries.jsonl \
		--queries data/requests.jsonl --conversations data/conversations.jsonl
	$(BIN)/toolsel sweep --registry data/registry.json --queries data/queries.jsonl \
		--out reports/sweep --no-progress

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile

# The CI gate: fails (exit 1) when a change to the bundled registry, queries or scorers makes a
# labeled request lose a required tool against data/check_baseline.json. After a reviewed
# change: `make check CHECK_ARGS=--update-baseline` and commit the baseline's diff.
check: $(STAMP)
	$(BIN)/toolsel check --registry data/registry.json --queries data/queries.jsonl \
		--queries data/requests.jsonl --baseline data/check_baseline.json $(CHECK_ARGS)

# Speed and memory at 61/1k/4k/10k tools, sweep timings, and sweep peak memory with long texts
# into reports/benchmarks/ (about 15 minutes; not part of `make report`: timings are not byte-stable).
benchmark: $(STAMP)
	$(BIN)/python benchmarks/bench_scale.py --out reports/benchmarks
	$(BIN)/python benchmarks/bench_sweep.py --out reports/benchmarks
	$(BIN)/python benchmarks/bench_default.py --tools 4000 --out reports/benchmarks/default_latency.csv
	$(BIN)/python benchmarks/bench_default.py --tools 4000 --styles marketplace --min-sentences 3 \
		--scorers embedding,default --out reports/benchmarks/default_latency_long.csv
	$(BIN)/python benchmarks/bench_memory.py --tools 4000 --queries 1400 --out reports/benchmarks/memory.csv
	$(BIN)/python benchmarks/bench_check.py --out reports/benchmarks
	$(BIN)/python benchmarks/bench_explorer.py --tools 4000 --queries 2000 --depths 20,30 --out reports/benchmarks

# After editing a notebook in JupyterLab: strip outputs and execution counts from the source
# notebooks (cell ids kept) and bring each py:percent pair in step; `make test` checks both.
strip: $(STAMP)
	$(BIN)/nbstripout --keep-id notebooks/[0-9][0-9]_*.ipynb
	$(BIN)/jupytext --sync notebooks/[0-9][0-9]_*.ipynb

clean:
	rm -rf $(VENV) .pytest_cache
