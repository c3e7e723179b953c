//! Helpers shared by the integration tests.
#![allow(dead_code, reason = "each of the three test binaries uses a different subset")]

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, OnceLock};

use graylab::cpu::{Work, convert_reference, par_convert};
use graylab::gpu::{GpuContext, GpuConverter};
use graylab::pixel::{Formula, Kernel};
use image::{DynamicImage, RgbImage};

/// The GPU context for tests, or `None` (test skipped) when there is no adapter.
/// With `GRAYLAB_REQUIRE_GPU=1` (CI) a missing adapter fails the test instead.
pub fn gpu() -> Option<Arc<GpuContext>> {
    static GPU: OnceLock<Result<Arc<GpuContext>, String>> = OnceLock::new();
    let gpu = GPU.get_or_init(|| GpuContext::new().map(Arc::new).map_err(|e| e.to_string()));
    match gpu {
        Ok(g) => Some(Arc::clone(g)),
        Err(e) if std::env::var("GRAYLAB_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
            panic!("GRAYLAB_REQUIRE_GPU=1 but no GPU adapter: {e}")
        }
        Err(e) => {
            // Straight to the terminal: libtest captures `eprintln!`, and a skipped test must not
            // pass for one that ran.
            let test = std::thread::current().name().unwrap_or("a GPU test").to_owned();
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: no GPU adapter ({e}); GRAYLAB_REQUIRE_GPU=1 fails instead"
            );
            None
        }
    }
}

/// A converter of its own on the shared device, that the test may tune (band limit, submission
/// size, timing mode).
pub fn converter() -> Option<GpuConverter> {
    gpu().map(GpuConverter::new)
}

/// A converter on a device of its own, for a test that times steps against each other: on the
/// shared device another test's submissions queue before its own (a 64 KiB download once waited
/// 19–22 ms behind them in every run, against 22 µs).
pub fn converter_alone() -> Option<GpuConverter> {
    // The shared device first: it says whether there is an adapter, as every GPU test does.
    gpu()?;
    match GpuContext::new() {
        Ok(ctx) => Some(GpuConverter::new(Arc::new(ctx))),
        Err(e) => panic!("a second device on the adapter the shared one uses: {e}"),
    }
}

/// Deterministic pseudo-random bytes.
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes()[..(len - out.len()).min(8)]);
    }
    out
}

/// The `graylab` binary, run in `cwd`, with its caches (the GPU's ceilings) kept in `cwd` too,
/// never in the user's cache folder. The machine counts as quiet (`GRAYLAB_BUSY=0`): the tests
/// run beside each other, and a cache measured "busy" would be measured again, not read; the
/// tests of a busy machine set `GRAYLAB_BUSY=1` themselves.
pub fn graylab_cmd(cwd: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_graylab"));
    c.current_dir(cwd).env("XDG_CACHE_HOME", cwd).env("GRAYLAB_BUSY", "0");
    c
}

/// Runs `graylab args` in `cwd` (see [`graylab_cmd`]) and waits for it.
pub fn graylab(args: &[&str], cwd: &Path) -> Output {
    graylab_cmd(cwd).args(args).output().expect("run graylab")
}

/// A process's standard output and error, as text.
pub fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// A `w x h` RGB photo of deterministic noise (seeded by its width).
pub fn photo(w: u32, h: u32) -> DynamicImage {
    DynamicImage::ImageRgb8(
        RgbImage::from_raw(w, h, noise((w * h * 3) as usize, u64::from(w))).expect("size"),
    )
}

/// `src` converted by the CPU kernel on two threads: the reference the GPU must match.
pub fn cpu(kernel: Kernel, formula: Formula, src: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; src.len() / kernel.in_bytes_per_pixel() * kernel.out_bytes_per_pixel()];
    par_convert(kernel, formula, src, &mut out, 2).expect("sizes match");
    out
}

/// `src` converted by the scalar reference, then `work` applied to every gray sample with
/// [`Work::reference_pixel`] (alpha untouched): the oracle of the work-per-pixel tests, written
/// apart from both fast kernels.
pub fn reference_with_work(kernel: Kernel, formula: Formula, src: &[u8], work: Work) -> Vec<u8> {
    let stride = kernel.out_bytes_per_pixel();
    let mut out = vec![0u8; src.len() / kernel.in_bytes_per_pixel() * stride];
    convert_reference(kernel, formula, src, &mut out).expect("sizes match");
    for p in out.chunks_exact_mut(stride) {
        if kernel.is_16bit() {
            let g = work.reference_pixel(u32::from(u16::from_ne_bytes([p[0], p[1]])));
            p[..2].copy_from_slice(&(g as u16).to_ne_bytes());
        } else {
            p[0] = work.reference_pixel(u32::from(p[0])) as u8;
        }
    }
    out
}

/// The mask that makes every output bit of `kernel`'s gray depend on the work: 0xFF or 0xFFFF.
pub fn full_mask(kernel: Kernel) -> u32 {
    if kernel.is_16bit() { 0xFFFF } else { 0xFF }
}

/// The work-per-pixel levels the parity tests check: 0, a few powers of 4, and an odd 257.
pub const WORK_ROUNDS: [u32; 6] = [0, 1, 4, 16, 64, 257];

/// Runs `cmd` with its output captured and kills it if it has not ended within `secs`
/// seconds: the test then fails, naming the hang, instead of hanging itself.
pub fn output_within(mut cmd: Command, secs: u64) -> Output {
    use std::io::Read as _;
    use std::process::Stdio;
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn graylab");
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::Builder::new()
            .name("graylab-test-drain".into())
            .spawn(move || {
                let mut bytes = Vec::new();
                if let Some(mut p) = pipe {
                    let _ = p.read_to_end(&mut bytes);
                }
                bytes
            })
            .expect("start a thread")
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("graylab did not end within {secs} s: {cmd:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Output { status, stdout: out.join().expect("stdout"), stderr: err.join().expect("stderr") }
}

/// Makes a FIFO (named pipe) at `path`.
#[cfg(unix)]
pub fn mkfifo(path: &Path) {
    rustix::fs::mkfifoat(rustix::fs::CWD, path, rustix::fs::Mode::from_raw_mode(0o644)).expect("mkfifo");
}

/// A Canon CR2 as its first bytes lay it out: a little-endian TIFF header, "CR" and version 2 at
/// bytes 8 to 10, the raw's directory offset at 12 (0 here: no reader follows it), and a first
/// directory at 16 holding a `width` x `height` RGB preview, a whole JPEG in one strip of
/// old-style JPEG compression (6), as Canon writes it.
pub fn canon_cr2(width: u16, height: u16) -> Vec<u8> {
    let mut jpeg = Vec::new();
    let preview =
        image::RgbImage::from_pixel(u32::from(width), u32::from(height), image::Rgb([90, 120, 150]));
    image::codecs::jpeg::JpegEncoder::new(&mut jpeg).encode_image(&preview).expect("a JPEG preview");
    // Six entries (tag, type, count, value), sorted; `BitsPerSample` (3 SHORTs) after them.
    let entries: u16 = 6;
    let bits_at = 16 + 2 + 12 * u32::from(entries) + 4;
    let strip_at = bits_at + 6;
    let mut cr2 = b"II*\0".to_vec();
    cr2.extend(16u32.to_le_bytes());
    cr2.extend(b"CR\x02\0");
    cr2.extend(0u32.to_le_bytes());
    cr2.extend(entries.to_le_bytes());
    let short = |v: u16| u32::from(v);
    for (tag, kind, count, value) in [
        (256u16, 3u16, 1u32, short(width)),
        (257, 3, 1, short(height)),
        (258, 3, 3, bits_at),
        (259, 3, 1, 6),
        (273, 4, 1, strip_at),
        (279, 4, 1, jpeg.len() as u32),
    ] {
        cr2.extend(tag.to_le_bytes());
        cr2.extend(kind.to_le_bytes());
        cr2.extend(count.to_le_bytes());
        cr2.extend(value.to_le_bytes());
    }
    cr2.extend(0u32.to_le_bytes());
    for _ in 0..3 {
        cr2.extend(8u16.to_le_bytes());
    }
    cr2.extend(jpeg);
    cr2
}

/// A camera's EXIF block, big-endian as Canon writes it: IFD0 with `Make` "Canon", `Model`
/// "EOS R5", `Orientation` 6, `Software` "FW 1.2", `DateTime` and the EXIF and GPS pointers;
/// the EXIF directory with the exposure time 1/250, ISO 400, the capture date and a maker note;
/// a GPS directory with a latitude reference "N". Offsets: IFD0 at 8 (7 entries, to 98), its
/// values to 138, the EXIF directory at 138 (4 entries, to 192), its values to 232, GPS at 232.
pub fn camera_exif() -> Vec<u8> {
    let mut t = b"MM\0*\0\0\0\x08".to_vec();
    let directory = |t: &mut Vec<u8>, entries: &[(u16, u16, u32, u32)]| {
        t.extend((entries.len() as u16).to_be_bytes());
        for &(tag, kind, count, value) in entries {
            t.extend(tag.to_be_bytes());
            t.extend(kind.to_be_bytes());
            t.extend(count.to_be_bytes());
            // A SHORT sits in the first two bytes of the value field.
            t.extend(if kind == 3 { value << 16 } else { value }.to_be_bytes());
        }
        t.extend(0u32.to_be_bytes());
    };
    let ifd0 = [
        (0x010F, 2, 6, 98),
        (0x0110, 2, 7, 104),
        (0x0112, 3, 1, 6),
        (0x0131, 2, 7, 111),
        (0x0132, 2, 20, 118),
        (0x8769, 4, 1, 138),
        (0x8825, 4, 1, 232),
    ];
    directory(&mut t, &ifd0);
    t.extend(b"Canon\0EOS R5\0FW 1.2\x002026:12:01 10:00:00\0");
    assert_eq!(t.len(), 138);
    directory(
        &mut t,
        &[(0x829A, 5, 1, 192), (0x8827, 3, 1, 400), (0x9003, 2, 20, 200), (0x927C, 7, 12, 220)],
    );
    t.extend([0, 0, 0, 1, 0, 0, 0, 250]);
    t.extend(b"2026:12:01 10:00:00\0MAKERNOTE123");
    assert_eq!(t.len(), 232);
    directory(&mut t, &[(0x0001, 2, 2, u32::from_be_bytes(*b"N\0\0\0"))]);
    t
}

/// A `width` x `height` photo as a JPEG (the `image` crate's, its JFIF segment dropped) with
/// [`camera_exif`] in an APP1 segment right after the start of image, as a camera writes it.
pub fn camera_jpeg(width: u32, height: u32) -> Vec<u8> {
    let mut jfif = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jfif, 95)
        .encode_image(&photo(width, height))
        .expect("encode");
    let app0_len = usize::from(u16::from_be_bytes([jfif[4], jfif[5]]));
    let body = [&b"Exif\0\0"[..], &camera_exif()].concat();
    let mut out = vec![0xFF, 0xD8, 0xFF, 0xE1];
    out.extend(((body.len() + 2) as u16).to_be_bytes());
    out.extend(body);
    out.extend(&jfif[4 + app0_len..]);
    out
}

/// An XMP packet as Lightroom writes it: the catalogue and the credits, with a location, a
/// crop to develop again and an orientation that no output keeps.
pub const LIGHTROOM_XMP: &str = r#"<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
 <rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/"
   xmlns:exif="http://ns.adobe.com/exif/1.0/" xmlns:crs="http://ns.adobe.com/camera-raw-settings/1.0/"
   xmlns:tiff="http://ns.adobe.com/tiff/1.0/"
   xmp:Rating="4" xmp:Label="Red" exif:GPSLatitude="48,51.5N" crs:HasCrop="True" crs:CropTop="0.25" tiff:Orientation="6">
  <dc:title><rdf:Alt><rdf:li xml:lang="x-default">Dandelions &amp; light</rdf:li></rdf:Alt></dc:title>
  <dc:creator><rdf:Seq><rdf:li>Ada Lovelace</rdf:li></rdf:Seq></dc:creator>
  <dc:rights><rdf:Alt><rdf:li xml:lang="x-default">© 2026 Ada Lovelace</rdf:li></rdf:Alt></dc:rights>
  <dc:subject><rdf:Bag><rdf:li>dandelion</rdf:li><rdf:li>meadow</rdf:li></rdf:Bag></dc:subject>
 </rdf:Description>
</rdf:RDF></x:xmpmeta>
<?xpacket end="w"?>"#;

/// `jpeg` with an `APP1` segment holding `packet` after its start marker.
pub fn with_xmp(jpeg: &[u8], packet: &str) -> Vec<u8> {
    let body = [&b"http://ns.adobe.com/xap/1.0/\0"[..], packet.as_bytes()].concat();
    let len = u16::try_from(body.len() + 2).expect("fits a segment").to_be_bytes();
    [&jpeg[..2], &[0xFF, 0xE1], &len, &body, &jpeg[2..]].concat()
}

/// A `width` x `height` image of `bits`-bit levels (`level(x, y)`), its rows packed high bits
/// first, each to a whole byte, as TIFF and PNG store them.
pub fn packed_levels((width, height): (u32, u32), bits: u32, level: impl Fn(u32, u32) -> u32) -> Vec<u8> {
    let mut data = Vec::new();
    for y in 0..height {
        let mut row = vec![0u8; (width * bits).div_ceil(8) as usize];
        for x in 0..width {
            let bit = x * bits;
            row[(bit / 8) as usize] |= (level(x, y) << (8 - bits - bit % 8)) as u8;
        }
        data.extend(row);
    }
    data
}

/// Every tag of an EXIF block's IFD0 and of the directories it points to (EXIF 0x8769, GPS
/// 0x8825), as (directory, tag, the value's bytes); read without graylab's code.
pub fn exif_tags(block: &[u8]) -> Vec<(u16, u16, Vec<u8>)> {
    let block = block.strip_prefix(b"Exif\0\0").unwrap_or(block);
    let little = block.starts_with(b"II");
    let n = |at: usize, len: usize| -> usize {
        let b = &block[at..at + len];
        let fold = |v: usize, x: &u8| (v << 8) | usize::from(*x);
        if little { b.iter().rev().fold(0, fold) } else { b.iter().fold(0, fold) }
    };
    let mut out = Vec::new();
    let mut directories = vec![(0u16, n(4, 4))];
    while let Some((which, at)) = directories.pop() {
        for e in (0..n(at, 2)).map(|k| at + 2 + 12 * k) {
            let (tag, kind, count) = (n(e, 2) as u16, n(e + 2, 2), n(e + 4, 4));
            let size = count * [0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8][kind.min(12)];
            let from = if size <= 4 { e + 8 } else { n(e + 8, 4) };
            if matches!(tag, 0x8769 | 0x8825) && which == 0 {
                directories.push((tag, n(e + 8, 4)));
            }
            out.push((which, tag, block[from..from + size].to_vec()));
        }
    }
    out
}
