#!/usr/bin/env bash
# Run chapters' full profiles side by side on one GPU machine, each within a wall-time limit, and pack what this
# call made into $OUT so that it fits what a device machine sends back (8 files, 16 MiB each, 64 MiB together):
# results.tgz (its finished runs and bench tables), logs.tgz, and its in-progress checkpoints as ckpt.tar.partNN
# (smallest first, as many as fit; logs/left-behind.txt names the rest). scripts/gpu-unpack.sh puts them in place.
# Resumable: call it again with the unpacked results in place and finished runs are skipped.
#
# usage: [LSCNB_GIT_COMMIT=hash] OUT=dir scripts/gpu-full.sh SECONDS ITEM [ITEM ...]
#   ITEM = CHAPTER[:FIGURE,FIGURE...][@DEVICE][*WORKERS], or one of these GPU steps, each optionally capped at
#   =SECONDS of its own:
#     smoke[:CHAPTER,...]  every figure's full code path shrunk to seconds on the GPU (`python -m lscnb smoke`):
#                          a device bug shows in minutes, before any long run
#     plan                 calibrate the plan on the GPU (`python -m lscnb plan --device cuda --json`): the plan
#                          goes to $OUT/plan-cuda.json, its calibration cache to $OUT/plan-calibration-cuda.json;
#                          on the GPU that timed results/plan-cuda.json it re-reads those timings (--reread) and
#                          times only the shapes they do not price
#     bench[:TABLE,...]    the benchmarks of bench/ (all, or the named tables of run_all.py --tables), run so that
#                          no other GPU work shares the GPU while they time; RESULTS-cuda.md and JSON go in results.tgz
#   The steps run before the GPU items, in the order given.
# SECONDS bounds the whole call: every step gets what is left of it. Items on the CPU (@cpu) start at once, on the
# machine's cores (leave two of them to smoke and bench), while smoke and bench use the GPU; GPU items start after.
#   e.g. meanfield:spectrum,heatmap@cuda*2  lsc@cpu*3  memory:teacher@cuda*batched  memory:theta0@cuda*batched4
# (*batched: one process whose runs that differ only in seed or rate train together, `--executor batched`;
#  *batchedN: N such groups at once, each in a process of its own, `--executor batched --workers N`)
# DEVICE is the torch device the runs compute on and is what their provenance records: name cuda only for
# figures whose run functions put their work on ctx.device. WORKERS processes (default 1) share the item's runs.
# What to run: `python -m lscnb plan --device cuda --budget 9m --items` prints the owed figures that fit the budget,
# cheapest per paper item first, as ITEMs (CHAPTER:FIG,FIG@cuda), so
#   OUT=out scripts/gpu-full.sh 520 smoke $(python -m lscnb plan --device cuda --budget 8m --items)
# or, in a first window, with no calibration yet:  OUT=out scripts/gpu-full.sh 540 smoke=120 plan=240 bench
# (the plan times each owed figure for a few seconds the first time, cached in _build/plan-calibration-cuda.json).
set -u
limit="$1"; shift
: "${OUT:?set OUT to the folder that receives results.tgz and logs.tgz}"
# results record the commit they were made at; a copied tree without .git must be told it
if [ -z "${LSCNB_GIT_COMMIT:-}" ]; then
  LSCNB_GIT_COMMIT=$(git rev-parse HEAD 2>/dev/null) \
    || { echo "no git repository here: set LSCNB_GIT_COMMIT to this tree's commit" >&2; exit 2; }
fi
export LSCNB_GIT_COMMIT
export PYTHONUNBUFFERED=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
export MPLBACKEND=Agg PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export LSCNB_GPU_FULL="$$.$(date +%s%N)"  # marks this call's processes: only they are killed at the end
mkdir -p "$OUT/logs"
# the runs earlier calls on this machine finished: results/ is not git-ignored, so the next call's copy of the tree
# leaves them out, while _build/ (ignored) stays on a warm machine; put them back, their times kept (not this call's)
stash=_build/gpu-stash
[ -d "$stash/results" ] && cp -Rpn "$stash/results/." results/
stamp=$(mktemp)  # what is newer than this, this call made
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; echo "nproc $(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc), cpus $(grep -c ^processor /proc/cpuinfo)"
  grep -m1 "model name" /proc/cpuinfo
  python3 -c "import torch, sys; print(sys.version, torch.__version__, torch.cuda.get_device_name())"; } \
  > "$OUT/logs/machine.txt" 2>&1
# the real data sets this call can read (only what it carried in data/): a plan or run without them says less
python3 -c "from lscnb.data import at_hand; print('real data at hand:', at_hand())" > "$OUT/logs/data.log" 2>&1
deadline=$(( $(date +%s) + limit ))
left() { echo $(( deadline - $(date +%s) )); }
run_item() {  # ITEM: one chapter's full runs, within what is left of the limit
  local item="$1" spec="$1" workers=1 device="" chapter figures=() names f log start
  case "$spec" in *"*"*) workers="${spec##*\*}"; spec="${spec%\**}";; esac
  case "$spec" in *@*) device="${spec##*@}"; spec="${spec%@*}";; esac
  chapter="${spec%%:*}"
  if [ "$chapter" != "$spec" ]; then
    IFS=, read -ra names <<< "${spec#*:}"
    for f in "${names[@]}"; do figures+=(--figure "$f"); done
  fi
  log="$OUT/logs/$(echo "$item" | tr -c 'A-Za-z0-9_.\n-' '_').log"
  start=$(date +%s)
  local executor=(--executor processes --workers "$workers")
  case "$workers" in
    batched) executor=(--executor batched) ;;
    batched*) executor=(--executor batched --workers "${workers#batched}") ;;
  esac
  timeout --signal=INT --kill-after=20 "$(left)" python3 -m lscnb reproduce "$chapter" --profile full \
    --no-notebook "${figures[@]}" ${device:+--device "$device"} "${executor[@]}" > "$log" 2>&1
  echo "exit $? after $(( $(date +%s) - start )) s" >> "$log"
}
step() {  # STEP[:ARGS][=SECONDS]: one GPU step, within its cap and what is left of the limit
  local spec="${1%%=*}" cap args name t rc
  cap=$(left); [ "$spec" != "$1" ] && [ "${1##*=}" -lt "$cap" ] && cap="${1##*=}"
  name="${spec%%:*}"; args=""; [ "$name" != "$spec" ] && args="${spec#*:}"
  t=(timeout --signal=INT --kill-after=20 "$cap")
  case "$name" in
    smoke) "${t[@]}" python3 -m lscnb smoke --device cuda ${args//,/ } > "$OUT/logs/smoke.log" 2>&1; rc=$? ;;
    plan) t=("${t[@]}" python3 -m lscnb plan --device cuda --json --cache _build/plan-calibration-cuda.json)
          rc=2  # re-read the committed plan's timings if this GPU made them (a shape they do not price is timed)
          [ -f results/plan-cuda.json ] && { "${t[@]}" --reread results/plan-cuda.json > "$OUT/plan-cuda.json" \
            2> "$OUT/logs/plan.log"; rc=$?; }
          [ "$rc" = 2 ] && { "${t[@]}" > "$OUT/plan-cuda.json" 2>> "$OUT/logs/plan.log"; rc=$?; }  # another GPU's
          cp _build/plan-calibration-cuda.json "$OUT/" 2>/dev/null ;;
    bench) "${t[@]}" python3 bench/run_all.py --device cuda ${args:+--tables "$args"} > "$OUT/logs/bench.log" 2>&1
           rc=$? ;;
  esac
  echo "exit $rc" >> "$OUT/logs/$name.log"
}
gpu_items=()
for item in "$@"; do
  case "$item" in
    smoke|smoke[:=]*|plan|plan=*|bench|bench[:=]*) ;;
    *@cpu|*@cpu\**) run_item "$item" & ;;
    *) gpu_items+=("$item") ;;
  esac
done
for item in "$@"; do
  [ "$(left)" -gt 5 ] || break
  case "$item" in smoke|smoke[:=]*|plan|plan=*|bench|bench[:=]*) step "$item" ;; esac
done
for item in "${gpu_items[@]}"; do
  [ "$(left)" -gt 5 ] && run_item "$item" &
done
wait
for pid in $(pgrep -f multiprocessing); do  # a worker left over by a killed run (not another job's processes)
  tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qx "LSCNB_GPU_FULL=$LSCNB_GPU_FULL" && kill -9 "$pid"
done; sleep 1
# what comes back: this call's finished runs and bench tables, its logs, then its checkpoints in 15 MiB parts while
# they fit in the files and MiB left (8 files, 64 MiB, less 1 MiB for logs.tgz)
find results bench/RESULTS-cuda.md bench/results -newer "$stamp" -type f ! -name '*.ckpt' ! -name '*.ckpt.tmp' \
  -print0 2>/dev/null | tar czf "$OUT/results.tgz" --null -T -
mkdir -p "$stash" && tar xzf "$OUT/results.tgz" -C "$stash"
mib=1048576; part=$(( 15 * mib ))
used=$(( $(cat "$OUT"/*.tgz "$OUT"/*.json 2>/dev/null | wc -c) + mib ))
files=$(( $(find "$OUT" -maxdepth 1 -type f | wc -l) + 1 ))
room=$(( 64 * mib - used )); [ $(( (8 - files) * part )) -lt "$room" ] && room=$(( (8 - files) * part ))
packed=(); size=0
while read -r bytes f; do
  if [ $(( size + bytes + 10240 )) -le "$room" ]; then packed+=("$f"); size=$(( size + bytes + 10240 ))
  else echo "$f ($bytes bytes)" >> "$OUT/logs/left-behind.txt"; fi
done < <(find results -newer "$stamp" -type f -name '*.ckpt' -printf '%s %p\n' | sort -n)
[ ${#packed[@]} -gt 0 ] && tar cf - "${packed[@]}" | split -b "$part" -d -a 2 - "$OUT/ckpt.tar.part"
rm -f "$stamp"
tar czf "$OUT/logs.tgz" -C "$OUT" logs
for f in "$OUT"/logs/*.log; do echo "== $(basename "$f")"; grep -v "^\s*$" "$f" | tail -4; done
rm -rf "$OUT/logs"
