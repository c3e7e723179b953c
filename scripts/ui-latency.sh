#!/usr/bin/env bash
# UI latency benchmark (not a test), measured from outside the app the way a user sees it, by
# polling the X11 screen with scripts/x11-probe.c under Xvfb (1440x900):
#   - launch to photo: from starting graylab on an 8K JPEG until the input pane shows a colour
#     photo, LAUNCHES times (default 5);
#   - input to screen: the app in A/B flip mode, the key B pressed PRESSES times (default 12),
#     the time until the viewer changes;
#   - the probe's own overhead: the same key probe against its trivial responder window.
#
#   scripts/ui-latency.sh [GRAYLAB_BINARY] [PHOTO]
#
# Needs Xvfb, xdotool (to pick A/B flip), a C compiler with the libX11 headers and libXtst.so.6
# (the probe is built here), and ImageMagick's `convert` unless PHOTO is given (it makes the noisy
# 8K JPEG that scripts/frame-timing.sh uses). Settings start fresh (a temporary HOME). Other work
# on the machine skews the figures: the load average is printed with them.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${1:-target/release/graylab}
photo=${2:-}
launches=${LAUNCHES:-5}
presses=${PRESSES:-12}
work=$(mktemp -d)
trap 'pkill -P $$ 2>/dev/null || true; kill "${xvfb_pid:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT

cc -O2 -o "$work/x11-probe" scripts/x11-probe.c -lX11 -l:libXtst.so.6
probe=$work/x11-probe

# A display of our own: the regions below are for a 1440x900 screen.
own_display=1
# shellcheck source=scripts/ui-bench-env.sh
. scripts/ui-bench-env.sh 80

# The left (input) pane of side by side, and the middle of the viewer in flip mode.
pane="420 220 200 150"
middle="760 220 200 150"

echo "machine: $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
times=()
for _ in $(seq "$launches"); do
  fresh
  # shellcheck disable=SC2086
  "$probe" photo $pane 10000 >"$work/launch" &
  probe_pid=$!
  "$bin" "$photo" --quit-after 8 >/dev/null 2>&1 &
  app_pid=$!
  wait "$probe_pid" || true
  times+=("$(cat "$work/launch")")
  kill "$app_pid" 2>/dev/null || true
  wait "$app_pid" 2>/dev/null || true
done
echo "launch to photo (ms): ${times[*]}  (load $(cut -d' ' -f1-3 /proc/loadavg))"

fresh
"$bin" "$photo" --quit-after 120 >/dev/null 2>&1 &
app_pid=$!
sleep 6
# A/B flip sits right of the view-mode buttons above the viewer. Without a window manager the
# window must be given the keyboard focus; its title ends in "graylab" (it starts with the file).
xdotool mousemove 500 43 click 1
xdotool mousemove 1400 880
xdotool windowfocus "$(xdotool search --name 'graylab$' | head -1)"
sleep 1
keys=()
for _ in $(seq "$presses"); do
  # shellcheck disable=SC2086
  keys+=("$("$probe" key b $middle 3000 || true)")
  sleep 0.3
done
echo "key B to screen (ms): ${keys[*]}  (load $(cut -d' ' -f1-3 /proc/loadavg))"
kill "$app_pid" 2>/dev/null || true
wait "$app_pid" 2>/dev/null || true

"$probe" responder &
responder_pid=$!
sleep 1
own=()
for _ in 1 2 3 4 5; do
  # shellcheck disable=SC2086
  own+=("$("$probe" key b 0 0 100 100 3000 || true)")
  sleep 0.2
done
kill "$responder_pid" 2>/dev/null || true
echo "the probe's own overhead (ms): ${own[*]}"
