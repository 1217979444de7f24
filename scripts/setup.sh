#!/usr/bin/env bash
# Set up everything bparallel needs on a fresh machine; idempotent and quick when already done.
#   - Debian packages: chromium + chromium-driver (browser tests), installed only if missing
#   - .venv with the pinned requirements (torch==2.13.0 resolves to the local CPU wheel)
#   - the package itself, editable
#   - vendored JavaScript for the offline book (MathJax 3, require.js, widget manager,
#     TensorFlow.js for the training page)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
    echo "[setup] installing chromium and chromium-driver (Debian)"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
    echo "[setup] creating .venv"
    python3 -m venv .venv
fi
stamp=.venv/.requirements.sha
want=$(cat requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "[setup] installing pinned Python requirements"
    .venv/bin/pip install -q --upgrade pip
    .venv/bin/pip install -q --no-compile -r requirements.txt
    .venv/bin/pip install -q --no-deps -e .
    .venv/bin/python -m ipykernel install --sys-prefix --name python3 >/dev/null
    echo "$want" > "$stamp"
fi

if [ -x scripts/vendor_js.sh ]; then
    scripts/vendor_js.sh
fi
echo "[setup] ready"
