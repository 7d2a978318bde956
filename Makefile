# The README's two commands are `make quickstart` and `make test`.
# Each creates .venv on a fresh machine, installs posttrain and its system packages, and runs.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: quickstart test test-slow setup system-deps bench clean

quickstart: $(STAMP)
	$(BIN)/posttrain quickstart --out runs/quickstart

# Every registered domain's conformance and exploit probes (native and adapters), in parallel,
# then the test suite (which re-checks domains only in its slow tier).
test: $(STAMP)
	$(BIN)/posttrain domains check --all --workers 2
	$(BIN)/python -m pytest -n 2 -q tests

test-slow: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q -m slow tests

setup: $(STAMP)

system-deps:
	bash scripts/system-deps.sh

$(STAMP): pyproject.toml scripts/system-deps.sh
	bash scripts/system-deps.sh
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,ray,reasoning_gym,humaneval]'
	touch $(STAMP)

clean:
	rm -rf $(VENV) runs
