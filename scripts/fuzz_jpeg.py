#!/usr/bin/env python3
"""Fuzz graylab's JPEG paths against libjpeg's own decode (issue 42's acceptance run).

Seeds are made with cjpeg (baseline 4:2:0 and 4:4:4, progressive, restart intervals, odd
samplings, gray; arithmetic-coded, sequential, progressive and with restart intervals; one with
an XMP packet, whose damage graylab's XMP reader must survive). Each mutant (bytes flipped, inserted, deleted, cut short, cut short with an
end-of-image marker, a segment length changed) is converted by graylab to PNG on the CPU (the
streamed path) with `bt601` and with `stored-luma`, into a file that does not exist yet. Then:

- after a non-zero exit no output and no temporary file may be left;
- after exit 0 the output must equal bt601 of `djpeg -ppm` (or `djpeg -grayscale`) exactly,
  unless graylab printed a warning: a silent exit 0 far from libjpeg's decode is a failure.

With --allow-truncated graylab keeps what a truncated or damaged file holds, as asked: every
exit 0 then warns, and the counts say how many of those equal libjpeg's decode all the same.

Usage: scripts/fuzz_jpeg.py [--mutants 3000] [--seed 1] [--graylab target/release/graylab] [--allow-truncated]
Prints the counts; exits 1 if any case fails (each failing mutant is kept in the work folder).
Needs cjpeg and djpeg (Debian: libjpeg-turbo-progs); no Python package beyond the standard library.
"""

import argparse
import concurrent.futures
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib


def ppm(width, height, seed):
    """A smooth colour pattern with some noise, as a binary PPM."""
    rng = random.Random(seed)
    rows = bytearray()
    for y in range(height):
        for x in range(width):
            rows += bytes(((x * 7 + rng.randrange(9)) & 255, (y * 5 + x) & 255, ((x ^ y) * 3) & 255))
    return b"P6 %d %d 255\n" % (width, height) + bytes(rows)


SEEDS = [
    ("420", []),
    ("444", ["-sample", "1x1"]),
    ("progressive", ["-progressive"]),
    ("restart", ["-restart", "1"]),
    ("finer-chroma", ["-sample", "1x1,2x2,2x2"]),
    ("odd", ["-sample", "2x1,1x2,1x1"]),
    ("gray", ["-grayscale"]),
    ("arithmetic", ["-arithmetic"]),
    ("arithmetic-progressive", ["-arithmetic", "-progressive"]),
    ("arithmetic-restart", ["-arithmetic", "-restart", "1"]),
]


XMP = (
    '<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">'
    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about=""'
    ' xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:Rating="3">'
    '<dc:title><rdf:Alt><rdf:li xml:lang="x-default">Seed &amp; title</rdf:li></rdf:Alt></dc:title>'
    "<dc:subject><rdf:Bag><rdf:li>one</rdf:li><rdf:li><![CDATA[t<w>o]]></rdf:li></rdf:Bag></dc:subject>"
    '</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>'
).encode()


def with_xmp(jpeg):
    """`jpeg` with an APP1 segment holding an XMP packet after its start marker."""
    body = b"http://ns.adobe.com/xap/1.0/\0" + XMP
    return jpeg[:2] + b"\xff\xe1" + (len(body) + 2).to_bytes(2, "big") + body + jpeg[2:]


def make_seeds(work):
    source = os.path.join(work, "seed.ppm")
    with open(source, "wb") as f:
        f.write(ppm(96, 72, 7))
    seeds = []
    for name, flags in SEEDS:
        out = subprocess.run(["cjpeg", "-quality", "85", *flags, source], capture_output=True, check=True)
        seeds.append((name, out.stdout))
    seeds.append(("xmp", with_xmp(seeds[0][1])))
    return seeds


def mutate(data, rng):
    """One random damage of `data`."""
    data = bytearray(data)
    kind = rng.randrange(6)
    if kind == 0:  # flip 1-4 bytes anywhere after SOI
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(2, len(data))] = rng.randrange(256)
        return "flip", bytes(data)
    if kind == 1:  # cut short
        return "cut", bytes(data[: rng.randrange(4, len(data))])
    if kind == 2:  # cut short, then an end-of-image marker
        return "cut+eoi", bytes(data[: rng.randrange(4, len(data) - 2)]) + b"\xff\xd9"
    if kind == 3:  # insert bytes
        at = rng.randrange(2, len(data))
        return "insert", bytes(data[:at]) + bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))) + bytes(data[at:])
    if kind == 4:  # delete bytes
        at = rng.randrange(2, len(data) - 1)
        return "delete", bytes(data[:at]) + bytes(data[at + rng.randint(1, 8):])
    # A segment's length changed.
    at = 2
    segments = []
    while at + 4 <= len(data) and data[at] == 0xFF and data[at + 1] != 0xDA:
        segments.append(at)
        at += 2 + struct.unpack(">H", data[at + 2:at + 4])[0]
    if segments:
        at = rng.choice(segments)
        length = struct.unpack(">H", data[at + 2:at + 4])[0]
        data[at + 2:at + 4] = struct.pack(">H", max(0, min(65535, length + rng.randint(-6, 6))))
    return "length", bytes(data)


def read_png_gray(path):
    """The samples of an 8-bit gray, non-interlaced PNG (what graylab writes)."""
    with open(path, "rb") as f:
        data = f.read()
    at, idat, width, height = 8, b"", 0, 0
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour != 0:
                return None
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    raw = zlib.decompress(idat)
    out, prev = bytearray(), bytearray(width)
    for y in range(height):
        line = raw[y * (width + 1):(y + 1) * (width + 1)]
        kind, row = line[0], bytearray(line[1:])
        for x in range(width):
            a = row[x - 1] if x else 0
            b, c = prev[x], (prev[x - 1] if x else 0)
            if kind == 1:
                row[x] = (row[x] + a) & 255
            elif kind == 2:
                row[x] = (row[x] + b) & 255
            elif kind == 3:
                row[x] = (row[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[x] = (row[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out += row
        prev = row
    return width, height, bytes(out)


def libjpeg_gray(path, stored_luma):
    """libjpeg's decode (djpeg) as graylab's formula gives it, its exit code (2: it warned)."""
    args = ["djpeg", "-grayscale", "-pnm", path] if stored_luma else ["djpeg", "-pnm", path]
    done = subprocess.run(args, capture_output=True)
    if done.returncode == 1 or not done.stdout.startswith((b"P5", b"P6")):
        return None, done.returncode
    # Four tokens, then exactly one whitespace byte: the pixels may begin with bytes that
    # `split` would take for more whitespace (a form feed, a tab).
    tokens, at, data = [], 0, done.stdout
    while len(tokens) < 4:
        while data[at:at + 1].isspace():
            at += 1
        end = at
        while end < len(data) and not data[end:end + 1].isspace():
            end += 1
        tokens.append(data[at:end])
        at = end
    kind, width, height, pixels = tokens[0], int(tokens[1]), int(tokens[2]), data[at + 1:]
    if kind == b"P5":
        return (width, height, pixels), done.returncode
    gray = bytes((r * 9798 + g * 19235 + b * 3735 + 16384) >> 15 for r, g, b in zip(pixels[0::3], pixels[1::3], pixels[2::3]))
    return (width, height, gray), done.returncode


def run_one(graylab, work, index, name, data, formula, extra):
    """One mutant through one formula: the case's outcome, a word."""
    folder = os.path.join(work, "case-%d-%s" % (index, formula))
    os.makedirs(folder)
    src = os.path.join(folder, "in.jpg")
    with open(src, "wb") as f:
        f.write(data)
    out = os.path.join(folder, "out.png")
    done = subprocess.run([graylab, "convert", src, "-o", out, "--formula", formula, "--backend", "cpu"] + extra,
                          capture_output=True, timeout=60, env=dict(os.environ, XDG_CACHE_HOME=folder))
    said = (done.stdout + done.stderr).decode("utf-8", "replace")
    left = [n for n in os.listdir(folder) if n not in ("in.jpg", "out.png")]
    if done.returncode != 0:
        if os.path.exists(out) or left:
            return "FAIL: exit %d left %s" % (done.returncode, ["out.png"] * os.path.exists(out) + left), folder
        shutil.rmtree(folder)
        return "refused", None
    if left:
        return "FAIL: exit 0 left %s" % left, folder
    warned = "warning" in said
    reference, djpeg_exit = libjpeg_gray(src, formula == "stored-luma")
    written = read_png_gray(out)
    if reference is None or written is None:
        # djpeg refused what graylab converted: fine only with a warning.
        outcome = "converted, warned" if warned else ("FAIL: djpeg refused, graylab silent" if djpeg_exit == 1 else "converted (not comparable)")
    else:
        same_size = reference[:2] == written[:2]
        worst = max((abs(a - b) for a, b in zip(reference[2], written[2])), default=0) if same_size else 255
        if worst == 0:
            outcome = "converted, equal to libjpeg" + (", warned" if warned else "")
        elif warned:
            outcome = "converted, warned (differs from libjpeg by up to %d)" % worst
        else:
            outcome = "FAIL: silent exit 0, %d levels from libjpeg (djpeg exit %d)" % (worst, djpeg_exit)
    if outcome.startswith("FAIL"):
        return outcome, folder
    shutil.rmtree(folder)
    return outcome, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--graylab", default="target/release/graylab")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--allow-truncated", action="store_true", help="keep what damaged files hold")
    args = parser.parse_args()
    graylab = os.path.abspath(args.graylab)
    work = tempfile.mkdtemp(prefix="graylab-fuzz-")
    seeds = make_seeds(work)
    rng = random.Random(args.seed)
    cases = []
    for index in range(args.mutants):
        name, data = seeds[index % len(seeds)]
        how, mutant = mutate(data, rng)
        for formula in ("bt601", "stored-luma"):
            cases.append((index, "%s/%s" % (name, how), mutant, formula))
    counts, failures = {}, []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        extra = ["--allow-truncated"] if args.allow_truncated else []
        futures = {pool.submit(run_one, graylab, work, i, n, d, f, extra): (i, n, f) for i, n, d, f in cases}
        for future in concurrent.futures.as_completed(futures):
            index, name, formula = futures[future]
            outcome, kept = future.result()
            key = outcome.split(" (")[0] if not outcome.startswith("FAIL") else "FAIL"
            counts[key] = counts.get(key, 0) + 1
            if kept:
                failures.append("%s %s %s: %s (kept in %s)" % (index, name, formula, outcome, kept))
    print("%d mutants x 2 formulas = %d runs (seed %d)" % (args.mutants, len(cases), args.seed))
    for key in sorted(counts):
        print("  %6d  %s" % (counts[key], key))
    for line in sorted(failures)[:40]:
        print("  " + line)
    if not failures:
        shutil.rmtree(work)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
