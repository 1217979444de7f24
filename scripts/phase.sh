#!/usr/bin/env bash
# Run one phase of `make test` (or CI) and print how long it took, also when it fails:
#   bash scripts/phase.sh NAME command [args...]
set -uo pipefail
name=$1; shift
start=$(date +%s)
"$@"
status=$?
echo "[phase] ${name}: $(( $(date +%s) - start )) s ($([ $status -eq 0 ] && echo ok || echo "failed, exit $status"))"
exit $status
