#!/usr/bin/env bash
# Build the Jupyter Book into _build/html. Every warning and every failing cell fails the build.
# The vendored JavaScript (book/_vendor/, see scripts/vendor_js.sh) must exist first: the
# offline pages load MathJax, require.js and the widget manager from it, and without it Sphinx
# would warn (and so fail) about the missing html_static_path entry.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/vendor_js.sh
# The Section 4 chapters read models/paper/ (shipped weights, manifest, partial snapshots),
# which the execution cache cannot see: its key is the notebook text. When those files
# change, drop the cache so that the pages show the models now in the repository.
mkdir -p _build
stamp=_build/.paper_models.sha256
now=$( (find models/paper -type f -print0 2>/dev/null || true) | sort -z | xargs -0 -r sha256sum | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" != "$now" ] && [ -d _build/.jupyter_cache ]; then
    echo "[build_book] models/paper/ changed since the last build: clearing the execution cache"
    rm -rf _build/.jupyter_cache
fi
.venv/bin/jupyter-book build . --all -W -n --keep-going
echo "$now" > "$stamp"
