#!/usr/bin/env bash
# Build the Jupyter Book into _build/html. Every warning and every failing cell fails the build.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/jupyter-book build . --all -W -n --keep-going
