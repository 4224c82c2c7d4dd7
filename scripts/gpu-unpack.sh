#!/usr/bin/env bash
# Put what scripts/gpu-full.sh sent back from a device machine into this tree: the finished runs and bench tables of
# results.tgz, the checkpoints of ckpt.tar.partNN (so the next call resumes them) and the GPU plan, if it made one.
#
# usage: scripts/gpu-unpack.sh FOLDER   (the folder holding results.tgz: the device tool's files_at)
set -eu
dir="${1:-}"
[ -n "$dir" ] && [ -f "$dir/results.tgz" ] || { echo "usage: scripts/gpu-unpack.sh FOLDER (no results.tgz in '${dir}')" >&2; exit 2; }
tar xzvf "$dir/results.tgz" | sed 's/^/run    /'
if compgen -G "$dir/ckpt.tar.part*" > /dev/null; then
  cat "$dir"/ckpt.tar.part* | tar xvf - | sed 's/^/ckpt   /'
fi
if [ -f "$dir/plan-cuda.json" ]; then cp "$dir/plan-cuda.json" results/plan-cuda.json; echo "plan   results/plan-cuda.json"; fi
if [ -f "$dir/plan-calibration-cuda.json" ]; then mkdir -p _build; cp "$dir/plan-calibration-cuda.json" _build/; fi
if [ -f "$dir/logs.tgz" ] && tar xzOf "$dir/logs.tgz" logs/left-behind.txt > /dev/null 2>&1; then
  echo "left on the machine (did not fit what comes back):"; tar xzOf "$dir/logs.tgz" logs/left-behind.txt
fi
