# Two commands a new user needs: `make demo` and `make test` (see README.md). Both work in a
# project virtual environment (VENV, default .venv) made with the Python you give as PYTHON
# (default python3), so a distribution's own Python (PEP 668) works as well as your own.
PYTHON ?= python3
VENV ?= .venv
VENV_PYTHON := $(VENV)/bin/python
PIP := $(VENV_PYTHON) -m pip
PYTEST_ARGS ?=

.PHONY: install install-dev system-deps sandbox-deps demo test lint bench clean

$(VENV_PYTHON):
	@$(PYTHON) -c "import venv, ensurepip" 2>/dev/null || { \
	  echo "error: $(PYTHON) has no venv module: install it (Debian/Ubuntu: apt-get install python3-venv)"; \
	  exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

install: $(VENV_PYTHON)
	$(PIP) install -q -e .
	@echo "sabench is installed in $(VENV): run it as $(VENV)/bin/sabench, or after 'source $(VENV)/bin/activate'"

install-dev: $(VENV_PYTHON)
	$(PIP) install -q -e ".[dev]"

# Debian packages the tests drive for real: chromium (HTML report), bubblewrap (local sandbox),
# debootstrap (offline sandbox image). Skipped when already present.
system-deps:
	@command -v chromium >/dev/null && command -v bwrap >/dev/null && command -v debootstrap >/dev/null \
	  || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium bubblewrap debootstrap >/dev/null)

# The scoring demo, then the alignment-first scaffold at work with a scripted model; the agent
# runs its code in a sandbox, so bubblewrap is installed first where it is missing (as root).
demo: install sandbox-deps
	$(VENV)/bin/sabench demo
	@if command -v bwrap >/dev/null; then $(VENV)/bin/sabench demo --agent; else \
	  echo "skipped the agent demo: it runs its code in a sandbox; install bubblewrap (apt-get install bubblewrap) or build the docker image and run 'sabench demo --agent --backend docker'"; fi

sandbox-deps:
	@command -v bwrap >/dev/null || [ "$$(id -u)" != 0 ] \
	  || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null)

# The docker suites need the offline sandbox image: built when missing (reused by its recipe
# hash otherwise); without a Docker engine or root the build is skipped and so are they.
test: install-dev system-deps
	@$(VENV)/bin/sabench sandbox build --offline \
	  || echo "note: no sandbox image (needs Docker and root): the docker tests will be skipped; see 'sabench sandbox build --offline'"
	PATH="$(abspath $(VENV))/bin:$$PATH" $(VENV_PYTHON) -m pytest -n 2 $(PYTEST_ARGS)

lint: install-dev
	$(VENV_PYTHON) -m ruff check .

bench: install-dev
	@for script in tests/perf/bench_*.py; do echo "== $$script"; $(VENV_PYTHON) $$script || exit 1; done

clean:
	rm -rf build dist *.egg-info .pytest_cache .ruff_cache
