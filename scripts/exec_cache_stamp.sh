#!/usr/bin/env bash
# Print one SHA-256 over everything the executed chapters read besides their own text: the
# package (bparallel/: Python, JavaScript, CSS) and the shipped models (models/: the paper
# profile and the graph tasks, partial snapshots included).
# The book's execution cache is keyed on notebook text only, so scripts/build_book.sh drops
# it when this stamp changes. Run from the repository root (or pass it as $1).
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
{ find bparallel -type f -not -path '*/__pycache__/*' -print0 2>/dev/null
  find models -type f -print0 2>/dev/null || true; } \
    | sort -z | xargs -0 -r sha256sum | sha256sum | cut -d' ' -f1
