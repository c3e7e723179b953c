#!/usr/bin/env bash
# Synthetic work per pixel, Rust vs plain C (benches/work_ref.c), 8K 8-bit gray, interleaved.
#
#   benches/work_compare.sh [RUST_BENCH|-] [K=256] [ROUNDS=3] [THREADS="1 2"]
#   env: RUNS (timed runs per config, default 7), VARIANT (uniform|divergent|both)
#
# RUST_BENCH is the work bench binary (benches/work_kernel.rs: it takes --k --threads --runs
# --variant and prints the same line format); without it (or with -) it is built in release. C is built twice, -mprefer-vector-width=256 and =512. Each round runs every
# build once per thread count; the table shows the median over rounds of each run's median, and
# whether all checksums (FNV-1a of the output at mask 0xFF) agree.
set -euo pipefail

rust=${1:--}
if [ "$rust" = - ]; then
    cd "$(dirname "$0")/.."
    rust=$(cargo bench --bench work_kernel --no-run 2>&1 | grep -o 'target/release/deps/work_kernel-[0-9a-f]*' | head -1)
    [ -x "$rust" ] || { echo "cannot build benches/work_kernel.rs" >&2; exit 1; }
fi
k=${2:-256}
rounds=${3:-3}
threads=${4:-1 2}
runs=${RUNS:-7}
variant=${VARIANT:-uniform}
src=$(dirname "$0")/work_ref.c
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

for w in 256 512; do
    gcc -O3 -march=native -fopenmp -mprefer-vector-width="$w" "$src" -o "$dir/c$w"
done

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
    for t in $threads; do
        for w in 256 512; do
            OMP_NUM_THREADS=$t "$dir/c$w" "$k" "$runs" 0 "$variant" | sed "s/^c /c-$w /"
        done
        OMP_NUM_THREADS=$t "$rust" --k "$k" --threads "$t" --runs "$runs" --variant "$variant"
    done
done | tee "$dir/lines"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      print $1, f["variant"], f["threads"], f["median_ms"], f["checksum"] }' "$dir/lines" |
    sort -k1,1 -k2,2 -k3,3n -k4,4n >"$dir/rows"
printf '%-8s %-10s %7s %10s %11s\n' impl variant threads median_ms Gpx-rnd/s
awk -v k="$k" '
    function flush() { if (n) printf "%-8s %-10s %7s %10.1f %11.2f\n", a, b, c, v[int((n + 1) / 2)],
                                      7680 * 4320 * k / v[int((n + 1) / 2)] / 1e6 }
    $1 " " $2 " " $3 != key { flush(); key = $1 " " $2 " " $3; a = $1; b = $2; c = $3; n = 0 }
    { v[++n] = $4 }
    END { flush() }' "$dir/rows"
awk '{ print $2, $5 }' "$dir/rows" | sort -u |
    awk '{ n[$1]++; s[$1] = $2 } END { for (x in n) print "checksum " x ": " (n[x] == 1 ? s[x] " (all builds equal)" : "DIFFER") }'
