#!/usr/bin/env python3
"""graylab file to file beside OpenCV, in the same time window, on a generated 8K photo.

1. Makes an 8K (7680x4320) photo-like JPEG (quality 90): the bundled dandelion photo scaled up
   with bicubic interpolation plus a little grain, so it compresses like a real photo.
2. Interleaves, round by round:
   - OpenCV in-process (no interpreter start counted): imread + cvtColor(BGR2GRAY) + imwrite,
     to PNG and to JPEG quality 90, and imwrite alone for each format;
   - graylab as a whole process (`graylab convert IN -o OUT --overwrite --json`, start-up
     included), with its own decode/kernel/encode phases from the JSON; the encode phase from a
     PNG of the same photo (a JPEG streams: its encode overlaps the decode).
3. Prints medians, file sizes and the ratios graylab / OpenCV.
4. With --batch: 16 photos (6000x4000) converted one process per file, one after another,
   versus one `graylab convert DIR --out-dir OUT`; throughput ratio and peak memory of each.

5. With --anchors instead: every tool as a whole process, interleaved (graylab bt601 and
   stored-luma, OpenCV colour + cvtColor and IMREAD_GRAYSCALE, vips colourspace b-w), on an 8K
   photo to PNG and JPEG q90 and a 96 MP one to PNG: wall, ratio to the fastest anchor, output
   bytes and peak memory, as Markdown tables.

Usage: pip install opencv-python-headless numpy; apt-get install libvips-tools
       cargo build --release
       python3 scripts/file_to_file.py [--graylab ./target/release/graylab] [--rounds 7] [--batch]
       python3 scripts/file_to_file.py --anchors [--rounds 5]
       cargo bench --bench jpeg_decoders -- $(python3 scripts/file_to_file.py --corpus /tmp/corpus)
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import tempfile
import time

import cv2
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(ROOT, "assets", "dandelions-5312x2988.jpg")


def make_photo(path: str, size: tuple[int, int], seed: int) -> None:
    src = cv2.imread(SAMPLE, cv2.IMREAD_COLOR)
    big = cv2.resize(src, size, interpolation=cv2.INTER_CUBIC)
    if seed % 2:
        big = cv2.flip(big, 1)
    grain = np.random.default_rng(seed).normal(0, 3.0, big.shape)
    big = np.clip(big.astype(np.float32) + grain, 0, 255).astype(np.uint8)
    cv2.imwrite(path, big, [cv2.IMWRITE_JPEG_QUALITY, 90])


def ms(seconds: float) -> float:
    return seconds * 1e3


def opencv_round(src: str, out_png: str, out_jpg: str) -> dict[str, float]:
    t0 = time.perf_counter()
    gray = cv2.cvtColor(cv2.imread(src, cv2.IMREAD_COLOR), cv2.COLOR_BGR2GRAY)
    t1 = time.perf_counter()
    cv2.imwrite(out_png, gray)
    t2 = time.perf_counter()
    gray = cv2.cvtColor(cv2.imread(src, cv2.IMREAD_COLOR), cv2.COLOR_BGR2GRAY)
    t3 = time.perf_counter()
    cv2.imwrite(out_jpg, gray, [cv2.IMWRITE_JPEG_QUALITY, 90])
    t4 = time.perf_counter()
    return {"png_total": ms(t2 - t0), "png_encode": ms(t2 - t1),
            "jpg_total": ms(t4 - t2), "jpg_encode": ms(t4 - t3)}


def graylab_run(exe: str, src: str, out: str) -> tuple[float, dict[str, float]]:
    t = time.perf_counter()
    res = subprocess.run([exe, "convert", src, "-o", out, "--overwrite", "--json"],
                         check=True, capture_output=True, text=True)
    wall = ms(time.perf_counter() - t)
    report = json.loads(res.stdout)[0]
    phases = {p["phase"]: p["ns"] / 1e6 for p in report["run"]["phases"]}
    return wall, phases


def file_to_file(exe: str, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "photo8k.jpg")
        make_photo(src, (7680, 4320), 8)
        print(f"input: {src} 7680x4320, {os.path.getsize(src)} bytes; OpenCV {cv2.__version__}, "
              f"cv2 threads {cv2.getNumThreads()}, load {os.getloadavg()[0]:.2f}")
        # A JPEG streams (decode, kernel and encode overlap), so its encode phase holds waits for
        # rows: the encode alone is timed from a PNG of the same photo, decoded whole first.
        whole = os.path.join(d, "photo8k.png")
        cv2.imwrite(whole, cv2.imread(src, cv2.IMREAD_COLOR), [cv2.IMWRITE_PNG_COMPRESSION, 1])
        cv_png, cv_jpg = os.path.join(d, "cv.png"), os.path.join(d, "cv.jpg")
        gl_png, gl_jpg = os.path.join(d, "gl.png"), os.path.join(d, "gl.jpg")
        cv, gl = [], []
        for _ in range(rounds):
            cv.append(opencv_round(src, cv_png, cv_jpg))
            wall_png, phases_png = graylab_run(exe, src, gl_png)
            wall_jpg, phases_jpg = graylab_run(exe, src, gl_jpg)
            row = {"png_total": wall_png, "png_decode": phases_png["decode"], "jpg_total": wall_jpg}
            for fmt in ("png", "jpg"):
                row[f"{fmt}_encode"] = graylab_run(exe, whole, os.path.join(d, f"w.{fmt}"))[1]["encode"]
            gl.append(row)
        med = lambda rows, key: statistics.median(r[key] for r in rows)
        print(f"load after: {os.getloadavg()[0]:.2f}; medians of {rounds} interleaved rounds")
        for fmt, cv_out, gl_out in (("png", cv_png, gl_png), ("jpg", cv_jpg, gl_jpg)):
            ct, gt = med(cv, f"{fmt}_total"), med(gl, f"{fmt}_total")
            ce, ge = med(cv, f"{fmt}_encode"), med(gl, f"{fmt}_encode")
            print(f"JPEG -> {fmt.upper()}: OpenCV {ct:.0f} ms (imwrite {ce:.0f} ms, "
                  f"{os.path.getsize(cv_out)} bytes) | graylab whole process {gt:.0f} ms "
                  f"({os.path.getsize(gl_out)} bytes) | ratio {gt / ct:.2f}x total | encode phase "
                  f"from the PNG (kernel + coding + write + fsync) {ge:.0f} ms, {ge / ce:.2f}x imwrite")
        print(f"graylab decode median {med(gl, 'png_decode'):.0f} ms")
        # Both PNGs are lossless: bt601 of libjpeg's RGB is OpenCV's cvtColor(imread(...)).
        ours, theirs = cv2.imread(gl_png, cv2.IMREAD_UNCHANGED), cv2.imread(cv_png, cv2.IMREAD_UNCHANGED)
        apart = cv2.absdiff(ours, theirs)
        print(f"pixels against OpenCV's: {cv2.countNonZero(apart)} of {apart.size} differ, "
              f"by at most {int(apart.max())}")


def peak_rss_mb(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall ms and peak RSS (MB) of one command, measured in a fresh child. The page cache is
    written back first (not timed): on ext4 an fsync waits for every file's dirty pages, so a
    tool that syncs its output (graylab does) would otherwise pay for the writes the tools
    before it left unsynced (96 MP -> PNG: 3.2 s after 200 MB of dirty pages, 1.2 s after a
    sync)."""
    os.sync()
    probe = ("import resource,subprocess,sys,time;t=time.perf_counter();"
             "subprocess.run(sys.argv[1:],check=True,capture_output=True);"
             "w=time.perf_counter()-t;"
             "print(w*1e3, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024)")
    out = subprocess.run(["python3", "-c", probe, *cmd], check=True, capture_output=True, text=True,
                         env={**os.environ, **(env or {})})
    wall, rss = out.stdout.split()
    return float(wall), float(rss)


def batch(exe: str, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "in")
        os.mkdir(src)
        for i in range(16):
            make_photo(os.path.join(src, f"p{i:02}.jpg"), (6000, 4000), i)
        print(f"batch: 16 photos 6000x4000 (24 MP), load {os.getloadavg()[0]:.2f}")
        files = sorted(os.listdir(src))
        single, single1, whole, single_rss, whole_rss = [], [], [], [], []
        for r in range(rounds):
            for env, times in ((None, single), ({"RAYON_NUM_THREADS": "1"}, single1)):
                out = os.path.join(d, f"one{r}{len(times)}{env is None}")
                os.mkdir(out)
                t = time.perf_counter()
                for f in files:
                    _, rss = peak_rss_mb([exe, "convert", os.path.join(src, f), "--out-dir", out], env)
                    single_rss.append(rss)
                times.append(ms(time.perf_counter() - t))
            out = os.path.join(d, f"all{r}")
            os.mkdir(out)
            wall, rss = peak_rss_mb([exe, "convert", src, "--out-dir", out])
            whole.append(wall)
            whole_rss.append(rss)
        s, s1, w = statistics.median(single), statistics.median(single1), statistics.median(whole)
        print(f"one process per file: {s:.0f} ms ({16e3 / s:.2f} images/s), peak {max(single_rss):.0f} MB")
        print(f"  same, encoders on 1 thread (RAYON_NUM_THREADS=1): {s1:.0f} ms ({16e3 / s1:.2f} images/s)")
        print(f"one batch process:    {w:.0f} ms ({16e3 / w:.2f} images/s), peak {max(whole_rss):.0f} MB")
        print(f"throughput ratio: {s / w:.2f}x (vs 1-thread encoders {s1 / w:.2f}x); "
              f"load after {os.getloadavg()[0]:.2f}")


# OpenCV as a whole process: a JPEG read in colour and converted, or read as its luma alone.
CV_COLOUR = ("import cv2,sys;g=cv2.cvtColor(cv2.imread(sys.argv[1],cv2.IMREAD_COLOR),cv2.COLOR_BGR2GRAY);"
             "cv2.imwrite(sys.argv[2],g,[cv2.IMWRITE_JPEG_QUALITY,90])")
CV_GRAY = ("import cv2,sys;g=cv2.imread(sys.argv[1],cv2.IMREAD_GRAYSCALE);"
           "cv2.imwrite(sys.argv[2],g,[cv2.IMWRITE_JPEG_QUALITY,90])")
CV_START = "import cv2,sys"


def anchors(exe: str, rounds: int) -> None:
    """Every tool as a whole process, interleaved round by round: wall (OpenCV less Python's and
    cv2's start-up, measured in the same rounds), output bytes and peak memory."""
    with tempfile.TemporaryDirectory() as d:
        cases = []
        for name, size, formats in (("8K", (7680, 4320), ("png", "jpg")), ("96 MP", (12000, 8000), ("png",))):
            src = os.path.join(d, f"{name.replace(' ', '')}.jpg")
            make_photo(src, size, 8)
            cases += [(name, src, fmt) for fmt in formats]
        vips = subprocess.run(["vips", "--version"], capture_output=True, text=True).stdout.strip()
        print(f"OpenCV {cv2.__version__}, {vips}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, "
              f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; medians of {rounds} interleaved rounds")
        for name, src, fmt in cases:
            out = lambda tool: os.path.join(d, f"{tool}.{fmt}")
            vips_out = out("vips") + ("[compression=1]" if fmt == "png" else "[Q=90]")
            tools = {
                "graylab bt601": [exe, "convert", src, "-o", out("gl"), "--overwrite"],
                "graylab stored-luma": [exe, "convert", src, "-o", out("gls"), "--overwrite",
                                        "--formula", "stored-luma"],
                "OpenCV colour + cvtColor": ["python3", "-c", CV_COLOUR, src, out("cvc")],
                "OpenCV IMREAD_GRAYSCALE": ["python3", "-c", CV_GRAY, src, out("cvg")],
                "vips colourspace b-w": ["vips", "colourspace", src, vips_out, "b-w"],
                "start": ["python3", "-c", CV_START],
            }
            runs = {tool: [] for tool in tools}
            for _ in range(rounds):
                for tool, cmd in tools.items():
                    runs[tool].append(peak_rss_mb(cmd))
            start = statistics.median(w for w, _ in runs.pop("start"))
            files = {"graylab bt601": "gl", "graylab stored-luma": "gls", "OpenCV colour + cvtColor": "cvc",
                     "OpenCV IMREAD_GRAYSCALE": "cvg", "vips colourspace b-w": "vips"}
            walls = {t: statistics.median(w for w, _ in r) - (start if t.startswith("OpenCV") else 0.0)
                     for t, r in runs.items()}
            best = min(w for t, w in walls.items() if not t.startswith("graylab"))
            print(f"\n{name} JPEG ({os.path.getsize(src)} bytes) -> {fmt.upper()} "
                  f"(Python + cv2 start-up {start:.0f} ms, subtracted)")
            print("| tool | wall ms | / fastest anchor | output bytes | peak MB |")
            print("|---|---|---|---|---|")
            for tool, r in runs.items():
                peak = max(m for _, m in r)
                size = os.path.getsize(out(files[tool]))
                print(f"| {tool} | {walls[tool]:.0f} | {walls[tool] / best:.2f}x | {size} | {peak:.0f} |")
        print(f"\nload after: {os.getloadavg()[0]:.2f}")


def corpus(folder: str) -> None:
    """8K photos in each JPEG layout, for `cargo bench --bench jpeg_decoders -- FILES`."""
    os.makedirs(folder, exist_ok=True)
    base = os.path.join(folder, "8k-420.jpg")
    make_photo(base, (7680, 4320), 1)
    img = cv2.imread(base, cv2.IMREAD_COLOR)
    q = [cv2.IMWRITE_JPEG_QUALITY, 90]
    layouts = {
        # A restart marker every MCU row (480 MCUs of 16x16 pixels), as many cameras write.
        "8k-420-restart.jpg": [cv2.IMWRITE_JPEG_RST_INTERVAL, 480],
        "8k-progressive.jpg": [cv2.IMWRITE_JPEG_PROGRESSIVE, 1],
        "8k-444.jpg": [cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444],
        "8k-422.jpg": [cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_422],
    }
    for name, extra in layouts.items():
        cv2.imwrite(os.path.join(folder, name), img, q + extra)
    print(" ".join(sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.startswith("8k-"))))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--graylab", default=os.path.join(ROOT, "target", "release", "graylab"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--batch", action="store_true")
    ap.add_argument("--anchors", action="store_true",
                    help="graylab in both formulas against OpenCV both ways and vips, whole processes")
    ap.add_argument("--corpus", metavar="DIR",
                    help="only write 8K JPEGs in each layout into DIR (for benches/jpeg_decoders.rs)")
    args = ap.parse_args()
    if args.corpus:
        corpus(args.corpus)
        return
    if args.anchors:
        anchors(args.graylab, args.rounds)
        return
    file_to_file(args.graylab, args.rounds)
    if args.batch:
        batch(args.graylab, max(1, args.rounds // 3))


if __name__ == "__main__":
    main()
