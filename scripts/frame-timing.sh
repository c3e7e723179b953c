#!/usr/bin/env bash
# UI responsiveness benchmark (not a test): runs the desktop app under Xvfb on an 8K photo with
# Continuous on, 20 s on the GPU backend, then 20 s on the CPU backend at all threads, and reports
# the p95 and max interval between frames after the first 2 s (goal: p95 <= 33 ms, max <= 100 ms).
#
#   scripts/frame-timing.sh [GRAYLAB_BINARY] [PHOTO]
#
# Needs Xvfb, and ImageMagick's `convert` unless PHOTO is given (it makes a noisy 8K JPEG from the
# bundled sample). Settings start fresh (a temporary HOME). Other work on the machine skews the
# figures: the load average is printed with them.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${1:-target/release/graylab}
photo=${2:-}
seconds=${SECONDS_PER_BACKEND:-20}
work=$(mktemp -d)
trap 'kill "${xvfb_pid:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT

# A display of our own unless one is given; the photo and a fresh HOME.
# shellcheck source=scripts/ui-bench-env.sh
. scripts/ui-bench-env.sh 90

# p95 and max of the intervals logged after the first 2000 ms.
summary() {
  awk '{ t += $1; if (t > 2000) print $1 }' "$1" | sort -n |
    awk '{ v[NR] = $1 } END {
      if (NR == 0) { print "no frames"; exit }
      i = int(0.95 * (NR - 1) + 0.5) + 1
      printf "%d frames, p95 %.1f ms, max %.1f ms, median %.1f ms\n", NR, v[i], v[NR], v[int((NR + 1) / 2)]
    }'
}

echo "machine: $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for backend in gpu cpu; do
  fresh
  "$bin" "$photo" --backend "$backend" --continuous --frame-log "$work/$backend.log" \
    --quit-after $((seconds + 2)) >"$work/$backend.out" 2>&1 || true
  echo "$backend: $(summary "$work/$backend.log")  (load $(cut -d' ' -f1-3 /proc/loadavg))"
done
