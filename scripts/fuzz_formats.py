#!/usr/bin/env python3
"""Fuzz graylab's readers of every format but JPEG (scripts/fuzz_jpeg.py has JPEG's).

Seeds are made with ImageMagick from one 97x61 colour image, 8 bits a sample: TIFF (plain, LZW,
tiled Deflate, LZW with a predictor, a palette with PackBits, 4-bit gray with LZW), PNG (plain,
interlaced, palette, with alpha), TIFF and PNG with an XMP packet, BMP (24-bit, palette), WebP (lossy, lossless), GIF and PPM;
and graylab's own TIFF of a camera's JPEG, whose EXIF directory it reads and writes into the
PNG. Each mutant (bytes changed, inserted, deleted, cut short) is converted by graylab to PNG,
on the CPU or the GPU (chosen per mutant), into a file that does not exist yet. Then:

- a failure: an exit other than 0 and 1 (a panic, a signal), "panicked" in what it printed, a
  run over 60 s, an output or a temporary file left after exit 1, anything but the output after
  exit 0;
- a case to look at (kept, listed, not a failure): exit 0 with no warning where ImageMagick
  refuses the mutant or gives other pixels (bt601 of its RGB, more than 1 level apart). Most are
  harmless (metadata damaged after the pixels, a GIF screen larger than its frame); the
  2026-12-07 runs found WebPs with bytes missing inside their bitstream that decoded to a wrong
  image without a word (now refused as truncated), and BMPs with bytes inserted into their rows
  (now converted with a warning: the file is longer than its header says).

Usage: scripts/fuzz_formats.py [--mutants 2000] [--seed 1] [--graylab target/release/graylab]
Prints the counts; exits 1 if any case fails (each failing or listed mutant is kept).
Needs ImageMagick's `convert`; numpy and opencv-python-headless for the comparison.
"""

import argparse
import struct
import concurrent.futures
import os
import random
import shutil
import subprocess
import sys
import tempfile

import cv2
import numpy as np

SEEDS = [
    ("plain.tif", ["-compress", "none"]),
    ("lzw.tif", ["-compress", "lzw"]),
    ("tiled.tif", ["-compress", "zip", "-define", "tiff:tile-geometry=32x32"]),
    ("predictor.tif", ["-compress", "lzw", "-define", "tiff:predictor=2"]),
    ("palette.tif", ["-colors", "16", "-type", "palette", "-compress", "rle"]),
    ("gray4.tif", ["-colorspace", "gray", "-depth", "4", "-compress", "lzw"]),
    ("plain.png", []),
    ("interlaced.png", ["-interlace", "png"]),
    ("palette.png", ["-colors", "16", "-type", "palette"]),
    ("alpha.png", ["-alpha", "set", "-channel", "A", "-evaluate", "set", "50%"]),
    ("rgb.bmp", []),
    ("palette.bmp", ["-colors", "16", "-type", "palette"]),
    ("lossy.webp", ["-quality", "80"]),
    ("lossless.webp", ["-define", "webp:lossless=true"]),
    ("plain.gif", []),
    ("plain.ppm", []),
    # An XMP packet: a TIFF's tag 700 and ImageMagick's "Raw profile type xmp" in a PNG.
    ("xmp.tif", ["-profile", "{xmp}"]),
    ("xmp.png", ["-profile", "{xmp}"]),
]

XMP = (
    '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
    '<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/"'
    ' xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:Rating="3">'
    '<dc:title><rdf:Alt><rdf:li xml:lang="x-default">Seed &amp; title</rdf:li></rdf:Alt></dc:title>'
    "<dc:subject><rdf:Bag><rdf:li>one</rdf:li><rdf:li>two</rdf:li></rdf:Bag></dc:subject>"
    "</rdf:Description></rdf:RDF></x:xmpmeta>"
)


def make_seeds(work):
    source = os.path.join(work, "source.ppm")
    subprocess.run(["convert", "-size", "97x61", "-seed", "3", "plasma:fractal", "-depth", "8", source], check=True)
    xmp = os.path.join(work, "seed.xmp")
    with open(xmp, "w") as f:
        f.write(XMP)
    seeds = []
    for name, flags in SEEDS:
        flags = [flag.format(xmp=xmp) for flag in flags]
        path = os.path.join(work, name)
        done = subprocess.run(["convert", source, "-depth", "8", *flags, path], capture_output=True)
        if done.returncode == 0:
            with open(path, "rb") as f:
                seeds.append((name, f.read()))
        else:
            print("no seed %s: %s" % (name, done.stderr.decode(errors="replace").strip()))
    return seeds


def camera_exif():
    """A little-endian EXIF block: make, model, date, the EXIF directory (exposure 1/250 s, ISO
    400, capture date, lens) and a GPS directory."""
    date = b"2026:12:01 10:00:00\0"
    ifd0 = [(0x010F, 2, b"Canon\0"), (0x0110, 2, b"EOS R5\0"), (0x0132, 2, date), (0x8769, 4, None), (0x8825, 4, None)]
    shot = [(0x829A, 5, struct.pack("<II", 1, 250)), (0x8827, 3, struct.pack("<H", 400)), (0x9003, 2, date),
            (0xA434, 2, b"RF 50mm F1.8\0")]
    gps = [(0x0002, 5, struct.pack("<6I", 52, 1, 31, 1, 0, 1))]
    size = {2: 1, 3: 2, 4: 4, 5: 8}
    out = bytearray(b"II*\0" + struct.pack("<I", 8))
    places = {}

    def directory(entries):
        at = len(out)
        values_at = at + 2 + 12 * len(entries) + 4
        values = bytearray()
        body = bytearray(struct.pack("<H", len(entries)))
        for tag, kind, value in entries:
            if value is None:
                places[tag] = at + 2 + 12 * entries.index((tag, kind, value)) + 8
                value = b"\0\0\0\0"
            count = len(value) // size[kind]
            if len(value) <= 4:
                body += struct.pack("<HHI", tag, kind, count) + value.ljust(4, b"\0")
            else:
                body += struct.pack("<HHII", tag, kind, count, values_at + len(values))
                values += value + b"\0" * (len(value) % 2)
        out.extend(body + struct.pack("<I", 0) + values)
        return at

    directory(ifd0)
    for tag, entries in [(0x8769, shot), (0x8825, gps)]:
        out[places[tag]:places[tag] + 4] = struct.pack("<I", directory(entries))
    return bytes(out)


def exif_tiff_seed(graylab, work):
    """graylab's TIFF of a camera's JPEG (the seed image with `camera_exif` in an APP1 segment)."""
    jpeg, tiff = os.path.join(work, "camera.jpg"), os.path.join(work, "exif.tif")
    subprocess.run(["convert", os.path.join(work, "source.ppm"), jpeg], check=True)
    with open(jpeg, "rb") as f:
        data = f.read()
    body = b"Exif\0\0" + camera_exif()
    with open(jpeg, "wb") as f:
        f.write(data[:2] + b"\xff\xe1" + struct.pack(">H", len(body) + 2) + body + data[2:])
    subprocess.run([graylab, "convert", jpeg, "-o", tiff], check=True, capture_output=True)
    with open(tiff, "rb") as f:
        return ("exif.tif", f.read())


def mutate(data, rng):
    """One random damage of `data`."""
    data = bytearray(data)
    kind = rng.randrange(5)
    if kind == 0:  # change 1-8 bytes anywhere
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif kind == 1:  # change a byte of the headers
        data[rng.randrange(min(len(data), 256))] ^= 1 << rng.randrange(8)
    elif kind == 2:  # cut short
        data = data[: rng.randrange(1, len(data))]
    elif kind == 3:  # insert bytes
        at = rng.randrange(len(data))
        data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    else:  # delete bytes
        at = rng.randrange(len(data))
        del data[at:at + rng.randint(1, 32)]
    return bytes(data)


def magick_gray(path):
    """bt601 (OpenCV's) of ImageMagick's RGB decode of the first frame, or None if it refuses."""
    done = subprocess.run(["convert", path + "[0]", "-depth", "8", "ppm:-"], capture_output=True, timeout=60)
    if done.returncode != 0 or not done.stdout.startswith(b"P6"):
        return None
    _, width, height, _, pixels = done.stdout.split(maxsplit=4)
    rgb = np.frombuffer(pixels[: int(width) * int(height) * 3], np.uint8).astype(np.int64)
    rgb = rgb.reshape(int(height), int(width), 3)
    return ((rgb[..., 0] * 4899 + rgb[..., 1] * 9617 + rgb[..., 2] * 1868 + 8192) >> 14).astype(np.uint8)


def run_one(graylab, work, index, name, data, backend):
    """One mutant: its outcome, a word, and the folder kept (None when removed)."""
    folder = os.path.join(work, "case-%d" % index)
    os.makedirs(folder)
    src = os.path.join(folder, "in" + os.path.splitext(name)[1])
    with open(src, "wb") as f:
        f.write(data)
    out = os.path.join(folder, "out.png")
    try:
        done = subprocess.run([graylab, "convert", src, "-o", out, "--backend", backend, "--drop-alpha"],
                              capture_output=True, timeout=60, env=dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "cache")))
    except subprocess.TimeoutExpired:
        return "FAIL: over 60 s", folder
    said = (done.stdout + done.stderr).decode("utf-8", "replace")
    left = sorted(n for n in os.listdir(folder) if n != os.path.basename(src))
    if done.returncode not in (0, 1) or "panicked" in said:
        return "FAIL: exit %d: %s" % (done.returncode, said.strip()[-200:]), folder
    if done.returncode == 1:
        if left:
            return "FAIL: exit 1 left %s" % left, folder
        shutil.rmtree(folder)
        return "refused", None
    if left != ["out.png"]:
        return "FAIL: exit 0 left %s" % left, folder
    if "warning" in said:
        shutil.rmtree(folder)
        return "converted, warned", None
    reference, written = magick_gray(src), cv2.imread(out, cv2.IMREAD_UNCHANGED)
    if reference is None:
        return "look: ImageMagick refuses it, graylab silent", folder
    if written is None or written.shape != reference.shape or written.dtype != np.uint8:
        shape = None if written is None else (written.shape, str(written.dtype))
        return "look: graylab %s against ImageMagick %s" % (shape, reference.shape), folder
    worst = int(np.abs(written.astype(np.int64) - reference).max())
    if worst > 1:
        return "look: %d levels from ImageMagick" % worst, folder
    shutil.rmtree(folder)
    return "converted, as ImageMagick", None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--graylab", default="target/release/graylab")
    args = parser.parse_args()
    graylab = os.path.abspath(args.graylab)
    work = tempfile.mkdtemp(prefix="graylab-fuzz-formats-")
    seeds = make_seeds(work) + [exif_tiff_seed(graylab, work)]
    rng = random.Random(args.seed)
    cases = []
    for index in range(args.mutants):
        name, data = rng.choice(seeds)
        cases.append((index, name, mutate(data, rng), rng.choice(["cpu", "gpu"])))
    counts, kept = {}, []
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        runs = [pool.submit(run_one, graylab, work, i, name, data, backend) for i, name, data, backend in cases]
        for (index, name, _, backend), run in zip(cases, runs):
            outcome, folder = run.result()
            label = outcome.split(":")[0] if folder else outcome
            counts[(name, label)] = counts.get((name, label), 0) + 1
            if folder:
                kept.append("%s (%s, %s): %s" % (folder, name, backend, outcome))
    for (name, outcome), n in sorted(counts.items()):
        print("%5d  %-14s %s" % (n, name, outcome))
    for line in kept:
        print(line)
    failed = sum(n for (_, outcome), n in counts.items() if outcome.startswith("FAIL"))
    print("%d mutants, %d failed, %d to look at; work folder %s" % (args.mutants, failed, len(kept) - failed, work))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
