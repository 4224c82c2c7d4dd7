#!/usr/bin/env bash
# Run several chapters' full profiles at once on one GPU machine, each within a wall-time limit, and pack
# what finished into $OUT (results.tgz with every stored run and in-progress checkpoint, logs.tgz).
# Resumable: call it again with the unpacked results in place and finished runs are skipped.
# usage: OUT=dir scripts/gpu-full.sh SECONDS CHAPTER [CHAPTER ...]
set -u
limit="$1"; shift
: "${OUT:?set OUT to the folder that receives results.tgz and logs.tgz}"
export PYTHONUNBUFFERED=1 OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-2}" LSCNB_THREADS="${LSCNB_THREADS:-2}"
export MPLBACKEND=Agg PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$OUT/logs"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/logs/gpu.txt" 2>&1
python3 -c "import torch, sys; print(sys.version, torch.__version__, torch.cuda.get_device_name())" >> "$OUT/logs/gpu.txt" 2>&1
for ch in "$@"; do
  (
    start=$(date +%s)
    timeout --signal=INT --kill-after=30 "$limit" python3 -m lscnb reproduce "$ch" --profile full --no-notebook \
      --device cuda > "$OUT/logs/$ch.log" 2>&1
    echo "exit $? after $(( $(date +%s) - start )) s" >> "$OUT/logs/$ch.log"
  ) &
done
wait
tar czf "$OUT/results.tgz" results
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
ls -la "$OUT"
for ch in "$@"; do echo "== $ch"; done
