#!/usr/bin/env bash
# The GPU check: graylab's probe, benchmark, size sweep and GPU tests on a machine with a real
# GPU, in under 2 minutes, from release binaries built elsewhere.
#
# Here (where the code builds):
#   scripts/gpu-check.sh --prepare
#     builds the release binary and the test binaries (`cargo test --release --no-run`), strips
#     the three (gpu, headless with the cli tests, ui) and packs them into .gpucheck/bin.tar.gz
#     with a manifest; fetches the Vulkan loader packages into .gl/ when apt-get can; both folders
#     are ignored through .git/info/exclude.
# There (the GPU machine, in a copy of this repository with .gpucheck/ and .gl/ beside it):
#   scripts/gpu-check.sh [--sizes 0.25,1,...] [--bench-size 8k] [--runs N] [--tests "a b"]
#     brings the Vulkan loader if it is missing (.gl/*.deb unpacked with dpkg -x, ldconfig; the
#     NVIDIA ICD named through VK_DRIVER_FILES when the loader cannot find it), then runs
#     `graylab info --probe`, `bench --json`, `sweep --json` up to 320 MP, `bench --work 0|64|1024`,
#     `bench --op blur:8|dither` (the wavefront picked, logged; blur:8 again with the gray plane
#     through the host, GRAYLAB_OP_PLANE=host; the dither by each wavefront), `sweep --radii 1,8,32`,
#     `claims --json` and the test binaries, writing everything under $OUT (else .gpucheck/out):
#     info.txt, info.json, bench.txt, bench.json, sweep.txt, sweep.json, work.txt, ops.txt,
#     radii.txt, radii.json, claims.json, claims.txt, tests.log, summary.txt.
#
# With the device tool: run(command="bash scripts/gpu-check.sh", carry=[".gpucheck", ".gl"],
# timeout_s=300). The tool sends the checkout its session was started in: prepare there (or copy
# .gpucheck/ and .gl/ into it). .gpucheck/ is about 30 MB, within the 64 MiB a call carries.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DIR=.gpucheck
GPU_TESTS="gpu headless ui"

exclude() {
  local file
  file="$(git rev-parse --git-common-dir 2>/dev/null)/info/exclude" || return 0
  mkdir -p "$(dirname "$file")"
  grep -qxF "$1" "$file" 2>/dev/null || echo "$1" >>"$file"
}

prepare() {
  set -e
  exclude "/$DIR/"
  exclude "/.gl/"
  local target=${CARGO_TARGET_DIR:-$ROOT/target}
  # What a trial run here left (its binaries, cache and outputs) is not carried: the device tool
  # carries 64 MiB at most, and an unpacked run/ alone is over 70 MB.
  rm -rf "$DIR/bin" "$DIR/bin.tar.gz" "$DIR/run" "$DIR/cache" "$DIR/out"
  mkdir -p "$DIR/bin"
  echo "== building the release binary and the test binaries"
  cargo build --release --bin graylab
  cargo test --release --no-run --message-format=json 2>/dev/null >"$DIR/artifacts.json"
  strip -o "$DIR/bin/graylab" "$target/release/graylab"
  {
    echo "built_from $(git describe --always --dirty 2>/dev/null || echo unknown)"
    echo "built_at $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    # Paths compiled into the test binaries: cli tests run the binary at CARGO_BIN_EXE_graylab.
    echo "bin_exe $target/release/graylab"
  } >"$DIR/manifest"
  for name in $GPU_TESTS; do
    local exe
    exe=$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"] \
            and m["target"]["name"] == sys.argv[2] and "test" in m["target"]["kind"]:
        print(m["executable"])
' "$DIR/artifacts.json" "$name")
    [ -n "$exe" ] || { echo "no test binary named $name" >&2; exit 1; }
    strip -o "$DIR/bin/$name" "$exe"
    echo "test $name" >>"$DIR/manifest"
  done
  rm -f "$DIR/artifacts.json"
  tar -czf "$DIR/bin.tar.gz" -C "$DIR/bin" .
  rm -rf "$DIR/bin"
  if ! ls .gl/*.deb >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    echo "== fetching the Vulkan loader packages into .gl/ (for a machine without them)"
    local o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
    mkdir -p .gl /tmp/amd64/partial
    # shellcheck disable=SC2086
    { apt-get $o update -qq && (cd .gl && apt-get $o download -qq libvulkan1); } ||
      echo "note: could not fetch libvulkan1; the check then needs a Vulkan loader on the GPU machine"
  fi
  du -sh "$DIR" .gl 2>/dev/null
  local mib
  mib=$(du -smc "$DIR" .gl 2>/dev/null | awk 'END { print $1 }')
  if [ "${mib:-0}" -gt 60 ]; then
    echo "$DIR and .gl hold ${mib} MiB: over what one device call carries (64 MiB)" >&2
    exit 1
  fi
  echo "ready: carry $DIR (and .gl) to the GPU machine and run scripts/gpu-check.sh there"
}

if [ "${1:-}" = "--prepare" ]; then
  prepare
  exit $?
fi

SIZES=0.25,1,4,16,33,64,128,160,192,256,320
BENCH_SIZE=8k
RUNS=10
TESTS=""
LIMIT_S=115
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) SIZES=$2; shift 2 ;;
    --bench-size) BENCH_SIZE=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --tests) TESTS=$2; shift 2 ;;
    --limit) LIMIT_S=$2; shift 2 ;;
    *) echo "unknown argument: $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done

OUT=${OUT:-$ROOT/$DIR/out}
mkdir -p "$OUT"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
START=$(date +%s)
say() { echo "$*" | tee -a "$SUMMARY"; }
left() { echo $((LIMIT_S - ($(date +%s) - START))); }

[ -f "$DIR/bin.tar.gz" ] || { say "no $DIR/bin.tar.gz: run scripts/gpu-check.sh --prepare where the code builds"; exit 1; }
say "graylab GPU check: $(grep built_from "$DIR/manifest" 2>/dev/null), $(nproc) cores, $(uname -m)"

# The Vulkan loader, brought from .gl/ when the machine has none.
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; then
  if ls .gl/*.deb >/dev/null 2>&1; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
    say "Vulkan loader unpacked from .gl/"
  else
    say "warning: no Vulkan loader (libvulkan.so.1) and no .gl/*.deb to bring one"
  fi
fi
# NVIDIA's ICD where the loader does not look by itself.
NV=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$NV" ] &&
  ! ls /usr/share/vulkan/icd.d/nvidia* /etc/vulkan/icd.d/nvidia* >/dev/null 2>&1; then
  export VK_DRIVER_FILES=$NV
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  say "VK_DRIVER_FILES=$NV"
fi

BIN=$ROOT/$DIR/run
rm -rf "$BIN"
mkdir -p "$BIN"
tar -xzf "$DIR/bin.tar.gz" -C "$BIN"
# The cli tests run the binary at the path compiled into them.
EXE=$(awk '$1 == "bin_exe" { print $2 }' "$DIR/manifest")
if [ -n "$EXE" ] && [ ! -x "$EXE" ]; then
  { mkdir -p "$(dirname "$EXE")" && cp "$BIN/graylab" "$EXE"; } 2>/dev/null || say "note: cannot place $EXE (cli tests will fail)"
fi
export XDG_CACHE_HOME=$ROOT/$DIR/cache
export GRAYLAB_REQUIRE_GPU=1
# Mesa's device-selection layer (a software adapter's machine) prints noise without a desktop session.
export NODEVICE_SELECT=${NODEVICE_SELECT:-1}
G=$BIN/graylab

# step NAME SECONDS COMMAND...: runs with what is left of the time limit at most.
step() {
  local name=$1 budget=$2
  shift 2
  local t0 remaining rc
  remaining=$(left)
  [ "$remaining" -lt "$budget" ] && budget=$remaining
  if [ "$budget" -le 5 ]; then
    say "$(printf '%-28s skipped (time limit)' "$name")"
    return
  fi
  t0=$(date +%s)
  timeout "$budget" "$@"
  rc=$?
  say "$(printf '%-28s rc %-3s %4s s' "$name" "$rc" "$(($(date +%s) - t0))")"
}

step "info --probe" 20 sh -c "'$G' info --probe >'$OUT/info.txt' 2>&1"
step "info --json" 10 sh -c "'$G' info --json >'$OUT/info.json' 2>>'$OUT/info.txt'"
step "bench --json (workgroups)" 30 sh -c "'$G' bench --synthetic $BENCH_SIZE --backend all \
  --workgroup 64,256,1024,8x8,16x16,32x32 --runs $RUNS --json >'$OUT/bench.json' 2>'$OUT/bench.txt'"
step "bench (text, kept input)" 20 sh -c "{ '$G' bench --synthetic $BENCH_SIZE --backend all --runs $RUNS &&
  '$G' bench --synthetic $BENCH_SIZE --backend gpu --keep-input-on-gpu --runs $RUNS; } >>'$OUT/bench.txt' 2>&1"
step "sweep --json ($SIZES)" 45 sh -c "'$G' sweep --sizes $SIZES --runs 5 --json '$OUT/sweep.json' --overwrite \
  >'$OUT/sweep.txt' 2>&1"
step "bench --work 0,64,1024" 40 sh -c "for k in 0 64 1024; do '$G' bench --synthetic $BENCH_SIZE --backend all \
  --work \$k --runs $RUNS || exit 1; done >'$OUT/work.txt' 2>&1"
step "bench --op blur:8,dither" 30 sh -c "{ for op in blur:8 dither; do RUST_LOG=graylab=info '$G' bench \
  --synthetic $BENCH_SIZE --backend all --op \$op --runs $RUNS || exit 1; done &&
  GRAYLAB_OP_PLANE=host '$G' bench --synthetic $BENCH_SIZE --backend gpu --op blur:8 --runs $RUNS &&
  for w in steps persistent; do GRAYLAB_DITHER_WAVEFRONT=\$w '$G' bench --synthetic $BENCH_SIZE --backend gpu \
  --op dither --runs 3 || exit 1; done; } >'$OUT/ops.txt' 2>&1"
step "sweep --radii 1,8,32" 30 sh -c "'$G' sweep --sizes 1,16 --radii 1,8,32 --runs 3 --json '$OUT/radii.json' \
  --overwrite >'$OUT/radii.txt' 2>&1"
step "claims --json" 60 sh -c "'$G' claims --json >'$OUT/claims.json' 2>'$OUT/claims.txt'"
: >"$OUT/tests.log"
for name in ${TESTS:-$(awk '$1 == "test" { print $2 }' "$DIR/manifest")}; do
  # The ui tests one at a time: each opens a renderer's device and an app whose CPU work uses
  # every core, and on 16 cores side by side they did not finish in 40 s (one at a time: 29 s).
  threads="" seconds=40
  [ "$name" = ui ] && threads="--test-threads=1" seconds=60
  step "test $name" "$seconds" sh -c "echo '== $name' >>'$OUT/tests.log'; '$BIN/$name' $threads >>'$OUT/tests.log' 2>&1"
done
grep -E '^test result|^test .*FAILED|panicked' "$OUT/tests.log" | head -20 >>"$SUMMARY"
grep -m1 'ceilings of' "$OUT/info.txt" >>"$SUMMARY" 2>/dev/null
grep -A1 '^crossover' "$OUT/sweep.txt" >>"$SUMMARY" 2>/dev/null
grep -o '"verdict": "[^"]*"' "$OUT/claims.json" >>"$SUMMARY" 2>/dev/null
say "done in $(($(date +%s) - START)) s; files in $OUT"
