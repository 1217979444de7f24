#!/usr/bin/env bash
# Train the 8 paper-profile models (heads 1/4/8/16 x copy/cycle, seed 42), cheapest first,
# and ship each one as soon as it finishes (weights + manifest in models/paper/).
#
# Resumable across interruptions and sessions:
#   - every epoch is checkpointed atomically under runs/paper/ (git-ignored);
#   - `bash scripts/train_paper.sh snapshot` copies unfinished checkpoints to
#     models/paper/partial/ (committed), and a later run restores them from there;
#   - models already listed in models/paper/manifest.json are skipped.
# A resumed run ends with bitwise the same weights as an uninterrupted one.
# Hours of CPU time: never started by CI or a book build. Usage:
#   THREADS=1 setsid nohup bash scripts/train_paper.sh > runs/train_paper.log 2>&1 &
#   bash scripts/train_paper.sh snapshot      # before a session ends; then commit
# Two workers (one per core) split the set with MODELS, a space-separated list in training order:
#   MODELS="copy-h08 cycle-h08" THREADS=1 setsid nohup bash scripts/train_paper.sh > runs/a.log 2>&1 &
#   MODELS="cycle-h16 copy-h16" THREADS=1 setsid nohup bash scripts/train_paper.sh > runs/b.log 2>&1 &
# Each model is trained under an exclusive lock, so a model is never trained by two workers, and
# shipping (which rewrites the manifest) is serialised too.
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${THREADS:-1}
PY=.venv/bin/python
mkdir -p runs/paper models/paper/partial

if [ "${1:-}" = "snapshot" ]; then
    for f in runs/paper/*.ckpt.pt; do
        [ -e "$f" ] || continue
        name=$(basename "$f" .ckpt.pt)
        if ! $PY -c "import sys; from bparallel.book.shipped import is_shipped; sys.exit(0 if is_shipped('$name') else 1)"; then
            cp "$f" "models/paper/partial/$name.ckpt.pt.tmp" && mv "models/paper/partial/$name.ckpt.pt.tmp" "models/paper/partial/$name.ckpt.pt"
            echo "[snapshot] $name"
        fi
    done
    exit 0
fi

ALL="copy-h01 cycle-h01 copy-h04 cycle-h04 copy-h08 cycle-h08 copy-h16 cycle-h16"
MODELS=${MODELS:-$ALL}
for name in $MODELS; do
    case " $ALL " in *" $name "*) ;; *) echo "[train_paper] unknown model '$name' (expected one of: $ALL)" >&2; exit 2;; esac
done

for name in $MODELS; do
    task=${name%-h*}; heads=$((10#${name#*-h}))
    exec 9> "runs/paper/.$name.lock"
    if ! flock -n 9; then
        echo "[train_paper] $name: another worker is training it; skipping"; exec 9>&-; continue
    fi
    if $PY -c "import sys; from bparallel.book.shipped import is_shipped; sys.exit(0 if is_shipped('$name') else 1)"; then
        echo "[train_paper] $name already shipped"; continue
    fi
    part="models/paper/partial/$name.ckpt.pt"
    if [ -f "$part" ] && [ ! -f "runs/paper/$name.ckpt.pt" ]; then
        echo "[train_paper] restoring $part"; cp "$part" "runs/paper/$name.ckpt.pt"
    fi
    echo "[train_paper] $name: training (resumes from its checkpoint) at $(date -u +%FT%TZ)"
    $PY -m bparallel train --profile paper --heads "$heads" --tasks "$task" \
        --out-dir runs/paper --threads "$THREADS" --no-progress
    flock runs/paper/.ship.lock $PY -c "from bparallel.book.shipped import ship_run; ship_run('runs/paper')"
    rm -f "$part"
    echo "[train_paper] $name: shipped at $(date -u +%FT%TZ)"
    exec 9>&-
done
