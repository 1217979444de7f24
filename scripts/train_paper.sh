#!/usr/bin/env bash
# Train the 8 paper-profile models (heads 1/4/8/16 x copy/cycle, seed 42), cheapest first.
# Resumable: every epoch is checkpointed atomically under runs/paper/, and a rerun continues
# where the last one stopped, ending with the same weights as an uninterrupted run.
# Hours of CPU time: never started by CI or a book build. Usage:
#   THREADS=1 bash scripts/train_paper.sh      # e.g. in the background with nohup/setsid
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${THREADS:-1}
for heads in 1 4 8 16; do
    for task in copy cycle; do
        .venv/bin/python -m bparallel train --profile paper --heads "$heads" --tasks "$task" \
            --out-dir runs/paper --threads "$THREADS" --no-progress
    done
done
