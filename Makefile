# One entry point.  `make demo` installs jp into .venv and runs the main job on
# the offline model; `make test` installs the dev tools and runs every check.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
# The suite runs in parallel: its e2e tests mostly wait on jp processes, so twice
# as many workers as cores keeps both cores busy.  `make unit JOBS=1` runs serially.
JOBS ?= 4
# The slowest tests are listed at the end of every run, so that a slow one shows up
# the day it lands (no test asserts a time; docs/architecture.md, Tests).
DURATIONS ?= 15

.PHONY: install dev demo test lint unit servers bench bench-scale bench-scale-sync clean

$(BIN)/jp: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(BIN)/jp

install dev: $(BIN)/jp

demo: $(BIN)/jp
	PATH="$(CURDIR)/$(BIN):$$PATH" bash fixtures/demo.sh

lint: $(BIN)/jp
	$(BIN)/ruff check gitstore porcelain tests bench fixtures
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

unit: $(BIN)/jp
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -n $(JOBS) --dist loadscope --durations=$(DURATIONS)

# the real git servers the sync tests use (openssh-server, nginx, fcgiwrap): installed
# with apt-get when missing and we are root; otherwise one line says how, and those
# tests skip
servers:
	@sh tests/support/servers/install.sh

test: servers lint unit

bench: $(BIN)/jp
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/run.py

# slow rows: memory of a session import against its total size (250 MiB and 1 GiB of
# synthetic Claude Code sessions under /tmp) and search and listing at 100,000
# conversations; tens of minutes on a small machine
bench-scale: $(BIN)/jp
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m bench.session_scale --sizes 250,1000
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/run.py --only search-scale
	$(MAKE) --no-print-directory bench-scale-sync

# the sync rows alone at 100,000 conversations (first push and pull, no-op pull, push
# and pull of 10 changed, each beside plain git, with CPU and peak RSS): about half
# an hour on two busy cores
bench-scale-sync: $(BIN)/jp
	PATH="$(CURDIR)/$(BIN):$$PATH" nice $(BIN)/python bench/sync_bench.py --sizes 100000 --runs 1

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache
