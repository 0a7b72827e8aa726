# Two commands a new user needs: `make demo` and `make test` (see README.md).
PYTHON ?= python3
PIP ?= $(PYTHON) -m pip
PYTEST_ARGS ?=

.PHONY: install install-dev system-deps demo test lint bench clean

install:
	$(PIP) install -q -e .

install-dev:
	$(PIP) install -q -e ".[dev]"

# Debian packages the tests drive for real: chromium (HTML report), bubblewrap (local sandbox),
# debootstrap (offline sandbox image). Skipped when already present.
system-deps:
	@command -v chromium >/dev/null && command -v bwrap >/dev/null && command -v debootstrap >/dev/null \
	  || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium bubblewrap debootstrap >/dev/null)

demo: install
	sabench demo

test: install-dev system-deps
	$(PYTHON) -m pytest -n 2 $(PYTEST_ARGS)

lint: install-dev
	ruff check .

bench: install-dev
	@for script in tests/perf/bench_*.py; do echo "== $$script"; $(PYTHON) $$script || exit 1; done

clean:
	rm -rf build dist *.egg-info .pytest_cache .ruff_cache
