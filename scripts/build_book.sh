#!/usr/bin/env bash
# Build the Jupyter Book into _build/html. Every warning and every failing cell fails the build.
# The vendored JavaScript (book/_vendor/, see scripts/vendor_js.sh) must exist first: the
# offline pages load MathJax, require.js and the widget manager from it, and without it Sphinx
# would warn (and so fail) about the missing html_static_path entry.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/vendor_js.sh
.venv/bin/jupyter-book build . --all -W -n --keep-going
