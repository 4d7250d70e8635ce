# Every target creates .venv and installs what it needs; a fresh clone needs nothing else.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: demo test bench soak lint clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

demo: $(STAMP)
	$(PY) examples/demo.py

# Two workers (this machine has two cores); a test file stays on one worker, so its
# module fixtures (a populated memory, the 5,000-chunk size sweep) are built once.
test: $(STAMP)
	$(PY) -m pytest -n 2 --dist loadfile

bench: $(STAMP)
	$(PY) benchmarks/run.py
	$(PY) -m benchmarks.devsuite  # real projects' docs and code; see benchmarks/devsuite/README.md

# Long reliability runs: 100 kill -9 rounds, 8 processes x 1,000 writes, and the
# fuzz tests with many more examples per search entry point.
FUZZ_EXAMPLES ?= 100000
soak: $(STAMP)
	$(PY) -m pytest -m slow tests/reliability
	REMEMBRANCES_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest --timeout=0 tests/reliability/test_fuzz.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info
