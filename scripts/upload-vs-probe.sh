#!/bin/bash
# The upload's host copy against the probe's mapped write on every thread (host -> staging),
# measured side by side: `info --probe` then `bench` at one size, three times, in a fresh cache.
# Usage: scripts/upload-vs-probe.sh [SIZE] (default 8k); GRAYLAB=path/to/graylab (release build).
set -euo pipefail
G=${GRAYLAB:-target/release/graylab}
SIZE=${1:-8k}
export XDG_CACHE_HOME
XDG_CACHE_HOME=$(mktemp -d)
trap 'rm -rf "$XDG_CACHE_HOME"' EXIT
for _ in 1 2 3; do
  "$G" info --probe --json 2>/dev/null > "$XDG_CACHE_HOME/probe.json"
  "$G" bench --synthetic "$SIZE" --backend gpu --runs 10 --json 2>/dev/null > "$XDG_CACHE_HOME/bench.json"
  python3 - "$XDG_CACHE_HOME" <<'PY'
import json, sys
d = sys.argv[1]
p = json.load(open(f"{d}/probe.json"))["ceilings"]["ceilings"]["host_to_staging"]
best, median = p["bytes"] / p["best_ns"], p["bytes"] / p["median_ns"]
rates = json.load(open(f"{d}/bench.json"))["results"][0]["rates"]
up = next(r for r in rates if r["phase"] == "upload" and r["part"] == "host_copy")["gb_per_s"]
print(f"probe's mapped write {best:.2f} GB/s best, {median:.2f} median; upload host copy {up:.2f} GB/s: "
      f"{up / best:.2f}x its best, {up / median:.2f}x its median")
PY
done
