# The two commands a newcomer needs: `make serve` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUNTIME_STAMP := $(VENV)/.installed-runtime

.PHONY: install serve check test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# `make serve` needs only what runs; the test extras come with `make install` / `make test`.
$(RUNTIME_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	touch $(RUNTIME_STAMP)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP) $(RUNTIME_STAMP)

install: $(STAMP)

serve: $(RUNTIME_STAMP)
	$(BIN)/shortlink serve

check: $(STAMP)
	$(BIN)/ruff format --check shortlink tests bench
	$(BIN)/ruff check shortlink tests bench
	$(BIN)/mypy

test: check
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python -m bench.redirects
	$(BIN)/python -m bench.links
	$(BIN)/python -m bench.analytics

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
