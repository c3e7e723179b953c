# Sourced by scripts/frame-timing.sh and scripts/ui-latency.sh (from the repository root, with
# $work a temporary folder and $photo the photo named on the command line, if any): makes the
# noisy 8K JPEG when no photo is given, starts a 1440x900 Xvfb on the first free display from $1
# (its pid in $xvfb_pid, for the caller's trap) unless $DISPLAY is set and $own_display is not 1,
# and gives the app a fresh HOME (`fresh` clears its settings again).
first_display=$1

if [ -z "$photo" ]; then
  photo=$work/photo-8k.jpg
  convert assets/dandelions-5312x2988.jpg -resize '7680x4320!' -attenuate 0.4 +noise Gaussian -quality 90 "$photo"
fi

if [ -z "${DISPLAY:-}" ] || [ "${own_display:-0}" = 1 ]; then
  for n in $(seq "$first_display" $((first_display + 9))); do
    if [ ! -e "/tmp/.X11-unix/X$n" ]; then
      Xvfb ":$n" -screen 0 1440x900x24 >/dev/null 2>&1 &
      xvfb_pid=$!
      export DISPLAY=":$n"
      sleep 1
      break
    fi
  done
fi

export HOME=$work/home XDG_RUNTIME_DIR=$work/run
mkdir -p "$HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
fresh() { rm -rf "${HOME:?}"/.local "${HOME:?}"/.config; }
