#!/usr/bin/env bash
# Build the Jupyter Book into _build/html. Every warning and every failing cell fails the build.
# The vendored JavaScript (book/_vendor/, see scripts/vendor_js.sh) must exist first: the
# offline pages load MathJax, require.js and the widget manager from it, and without it Sphinx
# would warn (and so fail) about the missing html_static_path entry.
set -euo pipefail
cd "$(dirname "$0")/.."
# A chapter run from here on ran "in this build" (the execution-status table of
# book/execution.md; the results its chapters write: bparallel.book.tools.from_build).
export BPARALLEL_BUILD_START="${BPARALLEL_BUILD_START:-$(date +%s)}"
mkdir -p _build && echo "$BPARALLEL_BUILD_START" > _build/build-start
bash scripts/vendor_js.sh
# The chapters read the package (bparallel/) and the Section 4 ones the shipped models
# (models/), which the execution cache cannot see: its key is the notebook text. When
# those files change, drop the cache so that the pages show what the repository now computes.
mkdir -p _build
stamp=_build/.exec_inputs.sha256
now=$(bash scripts/exec_cache_stamp.sh)
# A cache without a stamp (an older build) is of unknown provenance: dropped too.
if [ -d _build/.jupyter_cache ] && { [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$now" ]; }; then
    echo "[build_book] bparallel/ or models/ changed since the last build: clearing the execution cache"
    rm -rf _build/.jupyter_cache
fi
# The output is rebuilt in full (--all) from the cache, so nothing of an earlier build may
# linger: a renamed or split chapter would leave its old page and executed notebook behind.
rm -rf _build/html _build/jupyter_execute
# The model explorer's data (chapter 14): the shipped weights as JavaScript files, written
# here rather than committed twice, and served from _static/explorer-data/.
.venv/bin/python -m bparallel.book.section4.explorer book/_explorer/explorer-data
.venv/bin/jupyter-book build . --all -W -n --keep-going
echo "$now" > "$stamp"
# What the chapters wrote in this build, sealed: the regression reads it instead of running
# them again (bparallel.book.tools.from_build).
.venv/bin/python -m bparallel.book.tools.from_build --seal
# Each chapter as an executed notebook next to its page (no execution: myst-nb's own output).
.venv/bin/python -m bparallel.book.tools.downloads _build
