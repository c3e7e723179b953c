#!/usr/bin/env python3
"""graylab's decode beside OpenCV's `imread`, and its peak memory, for the files whose decode has
paths of its own: TIFF (plain, LZW with and without the horizontal predictor, Deflate with it),
a lossy WebP (libwebp), and a JPEG whose EXIF orientation turns it (6, as a portrait phone photo
stores it) beside the same JPEG upright.

Makes an 8K photo-like image (as file_to_file.py does) in each form, then for each file, in
rounds: `graylab convert FILE -o OUT.png --json` (its decode phase; peak RSS of the process) and
`cv2.imread(FILE)` in-process. Prints medians, their ratio and graylab's peak.

Usage: pip install opencv-python-headless numpy; apt-get install time; cargo build --release
       python3 scripts/decode_vs_opencv.py [--graylab ./target/release/graylab] [--rounds 7]
"""
import argparse
import json
import os
import statistics
import struct
import subprocess
import tempfile
import time

import cv2

from file_to_file import ROOT, make_photo


def exif_orientation(jpeg: bytes, orientation: int) -> bytes:
    """The JPEG with an APP1 EXIF segment holding only `orientation`, after its SOI."""
    tiff = b"MM\0*" + struct.pack(">I", 8) + struct.pack(">H", 1)
    tiff += struct.pack(">HHIHH", 0x0112, 3, 1, orientation, 0) + struct.pack(">I", 0)
    body = b"Exif\0\0" + tiff
    return jpeg[:2] + b"\xff\xe1" + struct.pack(">H", len(body) + 2) + body + jpeg[2:]


def graylab_decode(exe: str, path: str, out: str) -> tuple[float, int]:
    """The decode phase (ms) and the process's peak RSS (KiB, GNU time's %M)."""
    res = subprocess.run(["/usr/bin/time", "-f", "%M", exe, "convert", path, "-o", out, "--overwrite",
                          "--json"], capture_output=True, text=True, check=True)
    phases = json.loads(res.stdout)[0]["run"]["phases"]
    peak = int(res.stderr.strip().splitlines()[-1])
    return next(p["ns"] for p in phases if p["phase"] == "decode") / 1e6, peak


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--graylab", default=os.path.join(ROOT, "target", "release", "graylab"))
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        upright = os.path.join(d, "upright.jpg")
        make_photo(upright, (7680, 4320), 8)
        image = cv2.imread(upright, cv2.IMREAD_COLOR)
        turned = os.path.join(d, "turned6.jpg")
        with open(upright, "rb") as f, open(turned, "wb") as g:
            g.write(exif_orientation(f.read(), 6))
        lzw = cv2.IMWRITE_TIFF_COMPRESSION_LZW
        files = {"plain.tif": [cv2.IMWRITE_TIFF_COMPRESSION, cv2.IMWRITE_TIFF_COMPRESSION_NONE],
                 "lzw.tif": [cv2.IMWRITE_TIFF_COMPRESSION, lzw],
                 "lzw_predictor.tif": [cv2.IMWRITE_TIFF_COMPRESSION, lzw,
                                       cv2.IMWRITE_TIFF_PREDICTOR, cv2.IMWRITE_TIFF_PREDICTOR_HORIZONTAL],
                 # Adobe Deflate (8), as Photoshop, Lightroom and ImageMagick's `-compress zip` write it.
                 "deflate_predictor.tif": [cv2.IMWRITE_TIFF_COMPRESSION, 8,
                                           cv2.IMWRITE_TIFF_PREDICTOR, cv2.IMWRITE_TIFF_PREDICTOR_HORIZONTAL]}
        paths = []
        for name, params in files.items():
            paths.append(os.path.join(d, name))
            cv2.imwrite(paths[-1], image, params)
        paths.append(os.path.join(d, "lossy.webp"))
        cv2.imwrite(paths[-1], image, [cv2.IMWRITE_WEBP_QUALITY, 90])
        paths += [upright, turned]
        print(f"8K (7680x4320), OpenCV {cv2.__version__}, cv2 threads {cv2.getNumThreads()}, "
              f"load {os.getloadavg()[0]:.2f}; medians of {args.rounds} interleaved rounds")
        for path in paths:
            ours, theirs, peaks = [], [], []
            for _ in range(args.rounds):
                ms, peak = graylab_decode(args.graylab, path, os.path.join(d, "out.png"))
                ours.append(ms)
                peaks.append(peak)
                t = time.perf_counter()
                cv2.imread(path, cv2.IMREAD_COLOR)
                theirs.append((time.perf_counter() - t) * 1e3)
            g, c = statistics.median(ours), statistics.median(theirs)
            print(f"{os.path.basename(path)} ({os.path.getsize(path) / 1e6:.1f} MB): graylab decode "
                  f"{g:.0f} ms, cv2.imread {c:.0f} ms, {g / c:.2f}x; graylab -> PNG peak "
                  f"{max(peaks) / 1024:.0f} MiB")
        print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
