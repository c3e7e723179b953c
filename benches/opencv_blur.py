#!/usr/bin/env python3
"""graylab's CPU blur beside OpenCV's GaussianBlur, R = 8 (ksize 17) on an 8K gray plane.

graylab's `bench --op blur:8` (the op's passes alone, median of 7 warm runs) and
cv2.GaussianBlur (median of 9) are interleaved at 1 and 2 threads, so machine drift hits both
alike. Both are integer fixed-point separable Gaussians with OpenCV's sigma for the size; their
bytes differ (graylab's weights have 12 bits, OpenCV's 8; graylab clamps to the edge, OpenCV
reflects), their cost does not depend on the pixels.

Usage: pip install opencv-python-headless numpy
       cargo build --release
       python3 benches/opencv_blur.py [./target/release/graylab] [rounds]
"""
import statistics
import subprocess
import sys
import time

import cv2
import numpy as np

GRAYLAB = sys.argv[1] if len(sys.argv) > 1 else "./target/release/graylab"
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3


def graylab_ms(threads: int) -> float:
    out = subprocess.run(
        [GRAYLAB, "bench", "--synthetic", "8k", "--op", "blur:8", "--backend", "cpu",
         "--threads", str(threads), "--runs", "7"],
        check=True, capture_output=True, text=True).stdout
    # The op row: "cpu  1 thr  op  min median max cold clock".
    row = next(line for line in out.splitlines() if line.split()[3:4] == ["op"])
    return float(row.split()[5])


def opencv_ms(plane: np.ndarray, threads: int) -> float:
    cv2.setNumThreads(threads)
    times = []
    for _ in range(9):
        start = time.perf_counter()
        cv2.GaussianBlur(plane, (17, 17), 0)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main() -> None:
    plane = np.random.default_rng(8).integers(0, 256, size=(4320, 7680), dtype=np.uint8)
    for threads in (1, 2):
        ours, theirs = [], []
        for _ in range(ROUNDS):
            ours.append(graylab_ms(threads))
            theirs.append(opencv_ms(plane, threads))
        g, o = statistics.median(ours), statistics.median(theirs)
        print(f"{threads} thread(s): graylab {g:.1f} ms, OpenCV {cv2.__version__} {o:.1f} ms: "
              f"graylab takes {g / o:.2f}x OpenCV's time (rounds: {ours} / {[round(t, 1) for t in theirs]})")


if __name__ == "__main__":
    main()
