# The two commands a newcomer needs: `make serve` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUNTIME_STAMP := $(VENV)/.installed-runtime

.PHONY: install serve check test test-fast test-as-user test-image wheels dist screenshots bench clean

# Test workers: one per core (pytest-xdist); WORKERS=1 runs the suite in one process. Each
# module stays on one worker: browser modules share a signed-in page across their tests, in order.
# Modules go out in the order tests/conftest.py gives them (heaviest first): xdist would hand out
# the modules with the most tests first, which left the longest ones, with few tests, for last.
WORKERS ?= auto
DISTRIBUTE := -n $(WORKERS) --dist loadfile --no-loadscope-reorder

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
	$(BIN)/ruff format --check shortlink tests bench throwaway
	$(BIN)/ruff check shortlink tests bench throwaway
	$(BIN)/mypy

# The tests' files on a RAM disk when the machine has one with room (4 GiB free; a run writes
# about half a gigabyte): the suite writes thousands of SQLite and PostgreSQL files, and waiting
# for their writes to reach a disk is time no test needs. A container's 64 MiB /dev/shm is passed by.
TEST_TMPDIR ?= $(shell free=$$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 {print $$4}'); \
	if [ -w /dev/shm ] && [ "$${free:-0}" -ge 4194304 ]; then echo /dev/shm; else echo $${TMPDIR:-/tmp}; fi)

# The suite starts some hundreds of Python processes (servers, CLI commands): each reads the
# bytecode Python keeps in __pycache__ rather than compiling our modules again, also where the
# environment sets PYTHONDONTWRITEBYTECODE (an empty value turns it off).
PYTEST := TMPDIR=$(TEST_TMPDIR) PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q $(DISTRIBUTE)

test: check
	$(PYTEST)

# The inner loop: everything but the tests that drive Chromium, start servers from Debian's
# packages, or take several seconds each.
test-fast: $(STAMP)
	$(PYTEST) -m "not browser and not system and not slow"

# The Containerfile and compose.yaml built and run with Debian's podman, and `make dist`'s pyz run
# where nothing else is installed (tests/image/, minutes): the base image is made with mmdebstrap
# and cached under $XDG_CACHE_HOME (or ~/.cache).
test-image: $(STAMP)
	TMPDIR=$(TEST_TMPDIR) $(BIN)/python -m pytest -q -s tests/image

# Wheels for an image build without the package index (the Containerfile uses dist/wheels/ when
# present): made with Debian's python3, the image's Python 3.11, so that markers match.
wheels:
	/usr/bin/python3 -m venv build/wheel-venv
	build/wheel-venv/bin/pip wheel --quiet . -w dist/wheels

# One file to copy (docs/deployment.md): the wheel, and dist/shortlink.pyz, a zipapp shiv makes
# from dist/wheels/ with every dependency inside. Its first run unpacks them to ~/.shiv (SHIV_ROOT);
# --extend-pythonpath lets the processes `serve` starts import them too. The compiled ones tie it
# to the OS, architecture and Python minor of Debian's python3 that built it: the preamble, run
# once unpacked, says so in one line on any other (their modules' suffix differs) rather than
# leaving an ImportError's traceback.
PYZ_PYTHON := build/wheel-venv/bin/python
PYZ_BUILT = $(PYZ_PYTHON) -c "import sys, sysconfig; print(sysconfig.get_platform(), 'with Python %d.%d' % sys.version_info[:2])"

dist: wheels
	build/wheel-venv/bin/pip install --quiet 'shiv>=1.0.8'
	rm -f dist/shortlink-*.whl dist/shortlink.pyz
	cp dist/wheels/shortlink-*.whl dist/
	built="$$($(PYZ_BUILT))"; suffix="$$($(PYZ_PYTHON) -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")"; \
	printf '%s\n' 'import sys, sysconfig' \
		"if sysconfig.get_config_var('EXT_SUFFIX') != '$$suffix':" \
		"    here = f'{sysconfig.get_platform()} with Python {sys.version_info[0]}.{sys.version_info[1]}'" \
		"    sys.exit(f'shortlink.pyz runs only on $$built, as it was built, not on {here}: build it with make dist on a machine like this one')" \
		> build/pyz-preamble.py
	build/wheel-venv/bin/shiv --console-script shortlink --extend-pythonpath --preamble build/pyz-preamble.py \
		--output-file dist/shortlink.pyz --quiet --no-index --find-links dist/wheels shortlink
	@echo "dist/shortlink.pyz runs only on $$($(PYZ_BUILT)), as it was built: build it again for another."

# The whole suite again as an unprivileged user from a private (0700) clone (run as root).
test-as-user:
	.ci/as-user

# The browser tests, keeping a screenshot of every page they look at in test-artifacts/.
screenshots: $(STAMP)
	KEEP_SCREENSHOTS=1 $(PYTEST) -m browser

# Every benchmark (docs/benchmarks.md); the redirect ones need wrk (apt-get install wrk).
BENCHMARKS := redirects catalogue contention bio links classify dashboard analytics link_rules applinks webhooks imports

bench: $(STAMP)
	for name in $(BENCHMARKS); do $(BIN)/python -m bench.$$name || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
