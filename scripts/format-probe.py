#!/usr/bin/env python3
"""A probe of graylab's readers: many variants of every input format, converted on both backends,
each output held against a reference made by Pillow (and ImageMagick for the variants Pillow
cannot write). It looks for the one outcome that must never happen: exit 0 with a wrong image.

For every variant it prints one line: `ok` (converted and right), `refused` (exit 1 with the
message, which must name the file), or `WRONG` / `BAD OUTPUT` / `CRASH` (a defect). It ends
with a table by format and exits 1 if any defect was found.

The reference gray is OpenCV's `cvtColor(RGB2GRAY)` in integers,
`(R*9798 + G*19235 + B*3735 + 16384) >> 15`, of the image Pillow decodes (straight alpha;
associated alpha un-premultiplied; EXIF orientation applied). Lossy inputs (JPEG, lossy WebP) are
compared within 3 levels, since decoders differ by a level or two; every other format exactly.

Usage: pip install pillow numpy; apt-get install imagemagick
       cargo build --release
       python3 scripts/format-probe.py [--graylab target/release/graylab] [--backends cpu,gpu]
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

import numpy as np
from PIL import Image, ImageOps

# Variants whose report must say something (name -> words that must appear in its output).
SAYS = {}
MAGICK = shutil.which("magick") or ("/usr/bin/convert" if os.path.exists("/usr/bin/convert") else None)


def photo(w=67, h=45, alpha=False):
    """A small image with every channel varying, odd sizes, and (with alpha) every alpha level."""
    y, x = np.mgrid[0:h, 0:w]
    r = (x * 255 // max(w - 1, 1)).astype(np.uint8)
    g = (y * 255 // max(h - 1, 1)).astype(np.uint8)
    b = ((x * 7 + y * 13) % 256).astype(np.uint8)
    chans = [r, g, b]
    if alpha:
        chans.append(((x * 11 + y * 5) % 256).astype(np.uint8))
    return Image.fromarray(np.dstack(chans), "RGBA" if alpha else "RGB")


def reference(img):
    """The expected gray (and alpha, or None) of a decoded Pillow image."""
    img = ImageOps.exif_transpose(img)
    if img.mode in ("I;16", "I"):
        gray = ((np.asarray(img).astype(np.uint64) * 255 + 32767) // 65535).astype(np.uint8)
        return gray, None
    if img.mode in ("L", "LA"):
        a = np.asarray(img.convert("LA"))
        gray = a[..., 0]
        alpha = a[..., 1] if "A" in img.mode else None
        return gray, alpha
    has_alpha = img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info)
    rgba = np.asarray(img.convert("RGBA")).astype(np.uint32)
    gray = ((rgba[..., 0] * 9798 + rgba[..., 1] * 19235 + rgba[..., 2] * 3735 + 16384) >> 15).astype(np.uint8)
    return gray, (rgba[..., 3].astype(np.uint8) if has_alpha else None)


def variants(dir):
    """Yields (name, path, expected gray, expected alpha or None, tolerance)."""
    base, base_a = photo(), photo(alpha=True)

    def pil(name, img, fmt, tol=0, ref=None, **kw):
        path = os.path.join(dir, name)
        img.save(path, fmt, **kw)
        decoded = Image.open(path)
        decoded.load()
        g, a = reference(ref if ref is not None else decoded)
        return name, path, g, a, tol

    # PNG
    yield pil("rgb.png", base, "PNG")
    yield pil("rgba.png", base_a, "PNG")
    yield pil("l.png", base.convert("L"), "PNG")
    yield pil("la.png", base_a.convert("LA"), "PNG")
    yield pil("p.png", base.quantize(64), "PNG")
    yield pil("interlaced.png", base, "PNG")  # Pillow writes no Adam7; kept as a plain case.
    # JPEG
    for sub in (0, 1, 2):
        yield pil(f"q90-sub{sub}.jpg", base, "JPEG", tol=3, quality=90, subsampling=sub)
    yield pil("progressive.jpg", base, "JPEG", tol=3, quality=90, progressive=True)
    yield pil("gray.jpg", base.convert("L"), "JPEG", tol=3, quality=90)
    for o in range(1, 9):
        exif = Image.Exif()
        exif[0x0112] = o
        yield pil(f"orient{o}.jpg", base, "JPEG", tol=3, quality=95, exif=exif)
    # TIFF
    for comp in (None, "tiff_lzw", "tiff_adobe_deflate", "packbits"):
        tag = comp or "raw"
        yield pil(f"rgb-{tag}.tif", base, "TIFF", compression=comp)
        yield pil(f"rgba-{tag}.tif", base_a, "TIFF", compression=comp)
        yield pil(f"l-{tag}.tif", base.convert("L"), "TIFF", compression=comp)
    yield pil("p.tif", base.quantize(64), "TIFF")
    # BMP, GIF, WebP, TGA, PNM, ICO
    yield pil("rgb.bmp", base, "BMP")
    yield pil("p.bmp", base.quantize(64), "BMP")
    yield pil("l.bmp", base.convert("L"), "BMP")
    yield pil("opaque.gif", base.quantize(64), "GIF")
    yield pil("lossless.webp", base, "WEBP", lossless=True)
    yield pil("lossless-a.webp", base_a, "WEBP", lossless=True)
    yield pil("lossy.webp", base, "WEBP", tol=3, quality=90)
    yield pil("rgb.tga", base, "TGA")
    yield pil("rgba.tga", base_a, "TGA")
    yield pil("rle.tga", base, "TGA", compression="tga_rle")
    yield pil("rgb.ppm", base, "PPM")
    yield pil("l.pgm", base.convert("L"), "PPM")
    yield pil("la.tif", base_a.convert("LA"), "TIFF")
    yield pil("cmyk.jpg", base.convert("CMYK"), "JPEG", tol=3, quality=95)
    yield pil("1bit.png", base.convert("1"), "PNG")
    yield pil("16bit.png", base.convert("I;16"), "PNG")
    p_t = base.quantize(64)
    p_t.info["transparency"] = 0
    yield pil("transparent.gif", p_t, "GIF")
    yield pil("p-transparent.png", p_t, "PNG", transparency=0)
    # Several frames or pages: the first is converted, and the report must say so.
    frames = [base, base.rotate(180), base.transpose(Image.Transpose.FLIP_LEFT_RIGHT)]
    for name, fmt, kw in [
        ("anim.gif", "GIF", {}),
        ("anim.png", "PNG", {}),
        ("anim.webp", "WEBP", {"lossless": True}),
        ("pages.tif", "TIFF", {}),
    ]:
        path = os.path.join(dir, name)
        frames[0].save(path, fmt, save_all=True, append_images=frames[1:], **kw)
        first = Image.open(path)
        first.seek(0)
        first.load()
        g, a = reference(first.convert("RGBA") if fmt == "WEBP" else first)
        if fmt in ("GIF", "WEBP"):
            a = None  # opaque frames: no alpha in the output
        SAYS[name] = "1 of 3"
        yield name, path, g, a, 0
    # PNM with an unusual maxval, written by hand: exact scaling v * 255 / maxval, halves up.
    for maxval in (100, 1023):
        g = (np.arange(67 * 45).reshape(45, 67) % (maxval + 1)).astype(np.uint16)
        path = os.path.join(dir, f"maxval{maxval}.pgm")
        with open(path, "wb") as f:
            f.write(f"P5\n67 45\n{maxval}\n".encode())
            f.write(g.astype(">u2" if maxval > 255 else "u1").tobytes())
        if maxval > 255:
            want = ((g.astype(np.uint64) * 65535 * 2 + maxval) // (2 * maxval)).astype(np.uint16)
            want8 = ((want.astype(np.uint32) * 255 + 32767) // 65535).astype(np.uint8)
            yield f"maxval{maxval}.pgm", path, want8, None, 1
        else:
            want = ((g.astype(np.uint32) * 255 * 2 + maxval) // (2 * maxval)).astype(np.uint8)
            yield f"maxval{maxval}.pgm", path, want, None, 0
    if MAGICK:
        src = os.path.join(dir, "src-rgba.png")
        base_a.save(src)
        straight = reference(base_a)
        for name, args in [
            ("assoc-alpha.tif", ["-define", "tiff:alpha=associated"]),
            ("big.tif", []),
            ("rle8.bmp", ["-colors", "200", "-compress", "RLE", "-type", "Palette"]),
        ]:
            path = os.path.join(dir, name)
            out = ("TIFF64:" + path) if name == "big.tif" else ("BMP3:" + path if name.endswith(".bmp") else path)
            use = src if "tif" in name else os.path.join(dir, "src-rgb.png")
            if use.endswith("src-rgb.png"):
                base.save(use)
            if subprocess.run([MAGICK, use, *args, out], capture_output=True).returncode != 0:
                continue
            if name == "big.tif":
                # Pillow does not read BigTIFF: the straight image it was made from is the reference.
                yield name, path, straight[0], straight[1], 0
            else:
                # Pillow un-premultiplies associated alpha as floor(c * 255 / a); within 1 level.
                g, a = reference(Image.open(path))
                yield name, path, g, a, 1 if name == "assoc-alpha.tif" else 0


def check(graylab, name, path, want, want_alpha, tol, backend, out_dir):
    out = os.path.join(out_dir, f"{name}.{backend}.png")
    p = subprocess.run(
        [graylab, "convert", path, "-o", out, "--backend", backend, "--overwrite", "--depth", "8"],
        capture_output=True,
        text=True,
    )
    if p.returncode not in (0, 1, 2):
        return "CRASH", f"exit {p.returncode}: {p.stderr.strip()[-300:]}"
    if p.returncode != 0:
        msg = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "(no message)"
        if os.path.exists(out):
            return "BAD OUTPUT", "an output was left after a failure"
        if name not in msg and os.path.basename(path) not in msg:
            return "UNCLEAR", msg
        return "refused", msg
    says = SAYS.get(name)
    if says and says not in p.stdout + p.stderr:
        return "SILENT", f"the report does not say {says!r}"
    try:
        got = Image.open(out)
        got.load()
    except Exception as e:  # noqa: BLE001 - any reader failure is the finding
        return "BAD OUTPUT", str(e)
    if got.mode not in ("L", "LA", "I;16", "I"):
        return "WRONG", f"output mode {got.mode}"
    a = np.asarray(got.convert("LA"))
    if a.shape[:2] != want.shape:
        return "WRONG", f"size {a.shape[1]}x{a.shape[0]}, want {want.shape[1]}x{want.shape[0]}"
    diff = np.abs(a[..., 0].astype(int) - want.astype(int))
    if diff.max() > tol:
        return "WRONG", f"gray off by up to {diff.max()} levels (mean {diff.mean():.3f})"
    has_alpha = "A" in got.mode
    if (want_alpha is None) != (not has_alpha):
        return "WRONG", f"alpha {'kept' if has_alpha else 'dropped'}, want {'none' if want_alpha is None else 'kept'}"
    if want_alpha is not None and np.abs(a[..., 1].astype(int) - want_alpha.astype(int)).max() > 0:
        return "WRONG", "alpha differs"
    return "ok", f"max diff {diff.max()}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graylab", default="target/release/graylab")
    ap.add_argument("--backends", default="cpu,gpu")
    args = ap.parse_args()
    defects = 0
    table = defaultdict(Counter)
    with tempfile.TemporaryDirectory() as tmp:
        inputs, outputs = os.path.join(tmp, "in"), os.path.join(tmp, "out")
        os.makedirs(inputs)
        os.makedirs(outputs)
        for name, path, want, want_alpha, tol in variants(inputs):
            for backend in args.backends.split(","):
                verdict, detail = check(args.graylab, name, path, want, want_alpha, tol, backend, outputs)
                fmt = name.rsplit(".", 1)[-1]
                table[fmt][verdict] += 1
                if verdict not in ("ok", "refused"):
                    defects += 1
                print(f"{verdict:10} {backend} {name}: {detail}")
    print("\nformat  " + "  ".join(f"{v:>10}" for v in ("ok", "refused", "defects")))
    for fmt, c in sorted(table.items()):
        bad = sum(n for v, n in c.items() if v not in ("ok", "refused"))
        print(f"{fmt:7} " + "  ".join(f"{n:>10}" for n in (c["ok"], c["refused"], bad)))
    print(f"\n{defects} defects")
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main())
