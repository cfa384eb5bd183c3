# Crisp online. Two commands: `make run` and `make test` (README.md).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# pytest-xdist workers for `make test` (README.md, "Tests"); TEST_WORKERS=0 runs serially.
TEST_WORKERS ?= 2

.PHONY: run test lint bench bench-scale clean

run: $(VENV)/.runtime
	$(PY) -m crisp_site.run

test: $(VENV)/.dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup --durations=25 $(PYTEST_ARGS)

lint: $(VENV)/.dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

bench: $(VENV)/.dev
	$(PY) bench/engine.py
	$(PY) bench/live.py

# Issue 13's curve against the bare Channels stack (bench/scale.py; PostgreSQL on 127.0.0.1).
# About 75 minutes on a quiet 2-core machine; BENCH_SCALE_ARGS to choose, e.g. --tables 10,100.
bench-scale: $(VENV)/.dev
	$(PY) bench/scale.py $(BENCH_SCALE_ARGS)

$(VENV)/.python-ok:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed (set PYTHON=...)")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@touch $@

$(VENV)/.runtime: requirements.txt $(VENV)/.python-ok
	$(PY) -m pip install --quiet -r requirements.txt
	@touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt $(VENV)/.runtime
	$(PY) -m pip install --quiet -r requirements-dev.txt
	@touch $@

clean:
	rm -rf $(VENV) var staticfiles .pytest_cache .ruff_cache .hypothesis
