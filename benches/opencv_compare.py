#!/usr/bin/env python3
"""graylab's CPU kernel beside OpenCV's cvtColor(RGB2GRAY), in the same time window.

1. Exactness: a random 8-bit RGB image converted by `graylab convert` must equal OpenCV's
   cvtColor(COLOR_RGB2GRAY) byte for byte.
2. Speed: 8K (7680x4320) RGB -> gray at 1 and 2 threads, OpenCV and `graylab bench` interleaved
   (best and median of N runs each), so machine drift hits both alike.

Usage: pip install opencv-python-headless numpy
       cargo build --release
       python3 benches/opencv_compare.py [./target/release/graylab] [rounds]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import cv2
import numpy as np

GRAYLAB = sys.argv[1] if len(sys.argv) > 1 else "./target/release/graylab"
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
RUNS = 30


def exactness() -> None:
    rng = np.random.default_rng(601)
    rgb = rng.integers(0, 256, size=(1031, 1543, 3), dtype=np.uint8)
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "in.png"), os.path.join(d, "out.png")
        cv2.imwrite(src, cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))  # imwrite takes BGR
        subprocess.run([GRAYLAB, "convert", src, "-o", out], check=True, capture_output=True)
        ours = cv2.imread(out, cv2.IMREAD_UNCHANGED)
    theirs = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    differing = int(np.count_nonzero(ours != theirs))
    print(f"exactness vs OpenCV {cv2.__version__}: {differing} of {theirs.size} pixels differ")
    assert differing == 0


def opencv_ms(rgb: np.ndarray, dst: np.ndarray, threads: int) -> list[float]:
    cv2.setNumThreads(threads)
    cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY, dst=dst)  # warm-up
    times = []
    for _ in range(RUNS):
        t = time.perf_counter()
        cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY, dst=dst)
        times.append((time.perf_counter() - t) * 1e3)
    return times


def graylab_ms(threads: int) -> list[float]:
    out = subprocess.run(
        [GRAYLAB, "bench", "--synthetic", "8k", "--backend", "cpu", "--threads", str(threads),
         "--runs", str(RUNS), "--json"],
        check=True, capture_output=True, text=True).stdout
    run = json.loads(out)["results"][0]
    return [p["ns"] / 1e6 for r in run["warm"] for p in r["phases"] if p["phase"] == "kernel"]


def main() -> None:
    exactness()
    rng = np.random.default_rng(8)
    rgb = rng.integers(0, 256, size=(4320, 7680, 3), dtype=np.uint8)
    dst = np.empty((4320, 7680), dtype=np.uint8)
    for r in range(ROUNDS):
        for threads in (1, 2):
            cv = opencv_ms(rgb, dst, threads)
            gl = graylab_ms(threads)
            print(f"round {r + 1}, {threads} thread(s): "
                  f"OpenCV {cv2.__version__} best {min(cv):.2f} median {statistics.median(cv):.2f} ms | "
                  f"graylab best {min(gl):.2f} median {statistics.median(gl):.2f} ms")


if __name__ == "__main__":
    main()
