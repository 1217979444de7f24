#!/usr/bin/env bash
# Train many sweep runs at once on one GPU machine within a fixed wall-clock budget, then
# bring back what was shipped and snapshots of what was not (the next session resumes them).
#
#   bash scripts/device_sweep.sh SECONDS 'WAVE' ['WAVE' ...]
#
# Each WAVE is a list of `python -m bparallel sweep` argument strings separated by ';', the
# sweeps of one wave run at once (one process per job, one torch thread each, all on GPU 0);
# wave k+1 starts when wave k's first sweep ends; a sweep written `nice:ARGS` runs at the
# lowest CPU priority (it takes what the others leave of the cores). At SECONDS every sweep
# is stopped (a fresh-data run keeps its last evaluation's checkpoint, a paper run its last
# epoch), each profile's unfinished checkpoints are snapshot into models/<profile>/partial/,
# and the manifests, the new weights and the snapshots are packed, in that order of
# priority, into at most four tar files of 15 MiB under $OUT (the device tool's limits on
# what comes back).
# Unpack them here with `tar -xf PART` in the repository root.
#
# CUDA MPS is started when the machine allows it (many small models share the GPU far
# better through one server than by time slicing) and left out when a test kernel fails.
set -uo pipefail
budget=${1:?seconds}; shift
out=${OUT:-/tmp/device-out}; mkdir -p "$out"
log="$out/sweep.log"
exec > >(tee -a "$log") 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
py=${PYTHON:-python3}
start=$(date +%s)
touch /tmp/device-sweep-start
if [ -d .whl ]; then
  $py -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl \
    && export PYTHONPATH="$PYTHONPATH:/tmp/site"
fi
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
if command -v nvidia-cuda-mps-control >/dev/null; then
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d
  if timeout 90 $py -c "import torch; print('mps check', torch.ones(8, device='cuda').sum().item())"; then
    echo "[device] CUDA MPS on"
  else
    echo quit | nvidia-cuda-mps-control; sleep 2
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    echo "[device] CUDA MPS refused: time slicing"
  fi
fi
$py -c "import torch, bparallel, submitit; print('torch', torch.__version__, torch.cuda.is_available() and torch.cuda.get_device_name(0))" || exit 1

profiles=()
sweep() {  # one sweep in the background; its profile is remembered for the snapshot
  local args="$1" prio=()
  if [ "${args#nice:}" != "$args" ]; then args="${args#nice:}"; prio=(nice -n 19); fi
  profiles+=("$(sed -E 's/.*--profile +([^ ]+).*/\1/' <<<"$args")")
  echo "[device] $(( $(date +%s) - start )) s: sweep $args"
  # shellcheck disable=SC2086
  setsid "${prio[@]}" $py -m bparallel sweep $args --executor local --threads 1 --device "${DEVICE:-cuda}" &
}
for wave in "$@"; do
  pids=()
  IFS=';' read -ra sweeps <<<"$wave"
  for s in "${sweeps[@]}"; do sweep "$s"; pids+=($!); done
  left=$(( budget - ($(date +%s) - start) ))
  [ "$left" -le 0 ] && break
  # the next wave starts when one sweep of this wave ends, or at the deadline
  timeout "$left" bash -c 'while :; do for p in "$@"; do kill -0 "$p" 2>/dev/null || exit 0; done; sleep 5; done' _ "${pids[@]}"
done
left=$(( budget - ($(date +%s) - start) ))
if [ "$left" -gt 0 ]; then
  timeout "$left" bash -c 'while pgrep -f "bparallel sweep" >/dev/null; do sleep 5; done'
fi
echo "[device] $(( $(date +%s) - start )) s: stopping every sweep"
pkill -TERM -f "bparallel sweep"; pkill -TERM -f submitit; sleep 5
pkill -KILL -f "bparallel sweep"; pkill -KILL -f submitit; sleep 1
for p in $(printf '%s\n' "${profiles[@]}" | sort -u); do
  # a fresh-data profile (any but the finite-data ones) snapshots every arm
  case "$p" in paper|quick|tiny|first) arms=() ;; *) arms=(--arms width head16 inner256) ;; esac
  $py -m bparallel sweep --profile "$p" --seeds 42 43 44 45 46 "${arms[@]}" --snapshot
  $py -m bparallel sweep --profile "$p" --seeds 42 43 44 45 46 "${arms[@]}" --status | tail -2
done
nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader || true
$py - "$out" <<'EOF'
# Pack what changed under models/ since the start: manifests, weights, then snapshots.
import os, sys, tarfile
from pathlib import Path
out, since = Path(sys.argv[1]), os.path.getmtime("/tmp/device-sweep-start")
files = [p for p in Path("models").rglob("*") if p.is_file() and p.stat().st_mtime >= since
         and not p.name.endswith(".lock")]
rank = lambda p: (0 if p.name == "manifest.json" else 1 if p.name.endswith(".weights.pt") else 2,
                  str(p))
limit, parts, size, left_out = 15 * 2**20, [[]], 0, []
for p in sorted(files, key=rank):
    n = p.stat().st_size + 1024
    if size + n > limit:
        if len(parts) == 4:
            left_out.append(str(p)); continue
        parts.append([]); size = 0
    parts[-1].append(p); size += n
for i, part in enumerate(parts):
    with tarfile.open(out / f"models-{i}.tar", "w") as tar:
        for p in part:
            tar.add(p)
print(f"[device] packed {sum(map(len, parts))} files into {len(parts)} tar files;"
      f" left out {len(left_out)}: {left_out}")
EOF
echo "[device] done in $(( $(date +%s) - start )) s"
