#!/usr/bin/env bash
# UI responsiveness benchmark (not a test): runs the desktop app under Xvfb on an 8K photo with
# Continuous on, 20 s on the GPU backend, then 20 s on the CPU backend at all threads, with the
# pointer moving over the image all the while (xdotool, as a user reading pixel values), and
# reports the p95 and max interval between frames after the first 2 s (goal: p95 <= 33 ms, max
# <= 100 ms). Without input the window redraws only once a second on a software adapter (4 times
# elsewhere) while work runs, and at once for each result, so the frames measured are the ones
# the pointer asks for.
#
#   scripts/frame-timing.sh [GRAYLAB_BINARY] [PHOTO]
#
# Needs Xvfb, xdotool, and ImageMagick's `convert` unless PHOTO is given (it makes a noisy 8K JPEG from the
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

# How many runs the app logged (RUST_LOG=graylab=debug: "run N: Gpu 812.3 ms"), and their median.
runs() {
  sed -n 's/.*run [0-9]*: [A-Za-z]* \([0-9.]*\) ms$/\1/p' "$1" | sort -n |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "no runs logged"; else printf "%d runs, median %.1f ms\n", NR, v[int((NR + 1) / 2)] }'
}

echo "machine: $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
# The pointer goes back and forth over the viewer, a step every ~10 ms, until killed.
wiggle() {
  while :; do
    for x in 500 700 900 1100 900 700; do xdotool mousemove "$x" 300 2>/dev/null; sleep 0.01; done
  done
}

for backend in gpu cpu; do
  fresh
  wiggle &
  wiggle_pid=$!
  RUST_LOG=graylab=debug "$bin" "$photo" --backend "$backend" --continuous \
    --frame-log "$work/$backend.log" --quit-after $((seconds + 2)) >"$work/$backend.out" 2>&1 || true
  kill "$wiggle_pid" 2>/dev/null || true
  wait "$wiggle_pid" 2>/dev/null || true
  echo "$backend: $(summary "$work/$backend.log"); $(runs "$work/$backend.out")  (load $(cut -d' ' -f1-3 /proc/loadavg))"
done
