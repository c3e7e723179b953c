//! What `graylab convert` will do, decided before any work: options that contradict each other
//! refused (a usage error), the files of folder inputs (each folder listed once, by device and
//! inode, FIFOs and devices never opened, a folder that cannot be listed told and left out),
//! each input's output path, graylab's own outputs of other inputs (told by graylab's mark, not
//! by name) left alone, each image of a folder that graylab does not read (a HEIC photo, a camera
//! raw) refused by its format's name, and each input whose output is a folder, an input or
//! another input's output too refused by name.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::bail;

use super::UsageError;
use super::args::{
    ConvertArgs, EntryKey, Holds, OutputFile, check_output_dir, check_output_file, entry_key, file_id,
};
use crate::engine::{Backend, BatchItem, default_output_path};
use crate::io::{ExportFormat, FileKind, IoError, classify_file, is_graylab_output};

/// A file of a folder input that is not converted, and why ("not an image", "a FIFO").
pub(super) struct Skipped {
    /// The file.
    pub path: PathBuf,
    /// Why, in words.
    pub why: String,
}

/// An input refused before any work, or a folder that could not be listed: it fails by name,
/// the rest is converted, and the run exits 1.
pub(super) struct Refused {
    /// The input file or the folder.
    pub path: PathBuf,
    /// The whole message, naming the file last.
    pub why: String,
    /// Whether `path` is a folder that could not be listed (else an input file).
    pub folder: bool,
}

/// The work: files to convert, files of folder inputs that were skipped, and inputs refused.
#[derive(Default)]
pub(super) struct Plan {
    /// Each input with its output.
    pub items: Vec<BatchItem>,
    /// Files of folder inputs left alone.
    pub skipped: Vec<Skipped>,
    /// Inputs and folders that fail before any work.
    pub refused: Vec<Refused>,
    /// Whether any input is a folder.
    pub from_folder: bool,
}

/// An input with its output, before the checks across the batch.
struct Candidate {
    input: PathBuf,
    output: PathBuf,
    /// Found in a folder input, rather than named on the command line.
    listed: bool,
}

/// The output format, after refusing options that contradict each other or do nothing.
fn output_format(args: &ConvertArgs) -> anyhow::Result<ExportFormat> {
    let named = args.output.as_deref().and_then(ExportFormat::from_path);
    if let (Some(asked), Some(named), Some(o)) = (args.format, named, &args.output)
        && asked != named
    {
        bail!(UsageError(format!(
            "--format {} contradicts -o/--output, whose name is a {named} file's: {}",
            asked.name(),
            o.display()
        )));
    }
    let format = args.format.or(named).unwrap_or(ExportFormat::Png);
    if args.quality.is_some() && format != ExportFormat::Jpeg {
        bail!(UsageError(format!(
            "--quality sets JPEG quality, and the output is {format} (drop --quality or choose --format jpeg)"
        )));
    }
    // Black and white only: a lossy coding would turn the dots' edges gray.
    if args.op == crate::pixel::Op::Dither && format == ExportFormat::Jpeg {
        bail!(UsageError(format!(
            "--op dither outputs black and white only, and {format} is lossy: its coding would add grays \
             (choose --format png, tiff or bmp, written as 1 bit, or webp, lossless)"
        )));
    }
    if args.workgroup.is_some() && args.backend == Backend::Cpu {
        bail!(UsageError(super::args::WORKGROUP_ON_CPU.to_owned()));
    }
    if args.threads.is_some() && args.backend == Backend::Gpu {
        bail!(UsageError(super::args::THREADS_ON_GPU.to_owned()));
    }
    args.work.check()?;
    Ok(format)
}

/// Output paths for every input, checked up front: an input whose output is a folder, an input
/// of the batch or another input's output too is refused by name, and the rest is converted.
pub(super) fn plan_outputs(args: &ConvertArgs) -> anyhow::Result<Plan> {
    let format = output_format(args)?;
    // Output paths are checked before anything is decoded.
    if let Some(o) = &args.output {
        if o.is_dir() {
            bail!(UsageError(format!(
                "-o/--output names a folder: {} (use --out-dir for a folder)",
                o.display()
            )));
        }
        let output = OutputFile { flag: "-o/--output", path: o, holds: Holds::Image };
        if args.format.is_none() && ExportFormat::from_path(o).is_none() && o.as_os_str() != "-" {
            bail!(UsageError(format!(
                "-o/--output: unknown format in {} (use .png, .jpg, .tif, .bmp or .webp, or --format)",
                o.display()
            )));
        }
        // One of the inputs is refused by name below, whatever --overwrite says.
        if !args.inputs.iter().any(|input| super::args::same_file(input, o)) {
            check_output_file(&output, args.overwrite)?;
        }
    }
    if let Some(dir) = &args.out_dir {
        check_output_dir(dir, "--out-dir")?;
    }
    let mut plan = Plan::default();
    let mut candidates = Vec::new();
    for input in &args.inputs {
        if input.is_dir() {
            let Some(out_dir) = args.out_dir.as_deref() else {
                bail!(UsageError(format!("a folder input needs --out-dir: {}", input.display())));
            };
            plan.from_folder = true;
            let listing = list_folder(input, args.recursive, out_dir);
            plan.refused.extend(listing.unlisted);
            // Said, not silent: the files already in the output folder are not converted again.
            if let Some(dir) = listing.out_dir_met {
                plan.skipped
                    .push(Skipped { path: dir, why: "the output folder, with the files in it".to_owned() });
            }
            for file in listing.files {
                match listed_as(classify_file(&file)) {
                    Listed::Skipped(why) => {
                        plan.skipped.push(Skipped { path: file, why: why.to_owned() });
                        continue;
                    }
                    Listed::Refused(why) => {
                        plan.refused.push(Refused { path: file, why, folder: false });
                        continue;
                    }
                    Listed::Input => {}
                }
                let sub = file.parent().and_then(|p| p.strip_prefix(input).ok()).unwrap_or(Path::new(""));
                let output = default_output_path(&file, Some(&out_dir.join(sub)), format);
                candidates.push(Candidate { input: file, output, listed: true });
            }
        } else {
            let output = match &args.output {
                Some(o) => o.clone(),
                None => default_output_path(input, args.out_dir.as_deref(), format),
            };
            candidates.push(Candidate { input: input.clone(), output, listed: false });
        }
    }
    if args.output.is_some() && candidates.len() > 1 {
        bail!(UsageError(format!(
            "-o/--output takes one input; use --out-dir for {} inputs",
            candidates.len()
        )));
    }
    let candidates = skip_own_outputs(candidates, &mut plan.skipped);
    refuse_conflicts(candidates, &mut plan);
    Ok(plan)
}

/// What becomes of a file of an input folder.
#[derive(Debug, PartialEq, Eq)]
enum Listed {
    /// Converted: an image, and a file that cannot be read (no permission, a path too long), so
    /// that it fails naming the file and its cause (the run then exits 1), never "skipped (not
    /// an image)".
    Input,
    /// Skipped, and why: no image (text, a sidecar), or no regular file.
    Skipped(&'static str),
    /// An image graylab does not read (a HEIC photo, a camera raw): it fails before any work,
    /// with this message naming its format and the file (the run then exits 1), and takes no
    /// output name from another input (`IMG_1.dng` beside `IMG_1.jpg`).
    Refused(String),
}

/// What becomes of a file of an input folder that `classify_file` found to be `kind`.
fn listed_as(kind: Result<FileKind, IoError>) -> Listed {
    match kind {
        Ok(FileKind::Other) => Listed::Skipped("not an image"),
        Ok(FileKind::Special(kind)) => Listed::Skipped(kind),
        Err(e @ (IoError::UnsupportedFormat { .. } | IoError::Unsupported { .. })) => {
            Listed::Refused(e.to_string())
        }
        Ok(FileKind::Image(_)) | Err(_) => Listed::Input,
    }
}

/// Leaves out each file of a folder input that is graylab's output of another input of the
/// batch: `a.gray.png` beside `a.jpg` (written there by an earlier batch into the input folder,
/// in any format, or to be written there by this one) when the file carries graylab's mark
/// ([`is_graylab_output`]). Converting it again would write `a.gray.gray.png` on every run, and
/// `a.jpg` could not be converted where its output would replace an input. A file of that name
/// without the mark is a user's (or a BMP, which cannot carry it): it stays an input, converted,
/// and `a.jpg` is refused rather than replace it. A file named on the command line is never left
/// out.
fn skip_own_outputs(candidates: Vec<Candidate>, skipped: &mut Vec<Skipped>) -> Vec<Candidate> {
    // This batch's outputs, and the names an earlier batch gave each input's output beside it.
    let beside = |c: &Candidate| ExportFormat::ALL.map(|f| default_output_path(&c.input, None, f));
    let outputs: HashMap<EntryKey, usize> = candidates
        .iter()
        .enumerate()
        .flat_map(|(i, c)| beside(c).into_iter().chain([c.output.clone()]).map(move |o| (entry_key(&o), i)))
        .collect();
    let owners: Vec<Option<PathBuf>> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let owner = outputs.get(&entry_key(&c.input)).filter(|&&j| c.listed && j != i)?;
            if !is_graylab_output(&c.input) {
                log::info!("not graylab's (no mark), so an input: {}", c.input.display());
                return None;
            }
            candidates.get(*owner).map(|o| o.input.clone())
        })
        .collect();
    let mut kept = Vec::with_capacity(candidates.len());
    for (c, owner) in candidates.into_iter().zip(owners) {
        match owner {
            Some(owner) => {
                skipped
                    .push(Skipped { path: c.input, why: format!("graylab's output of {}", owner.display()) });
            }
            None => kept.push(c),
        }
    }
    kept
}

/// Refuses, by name, each input whose output is a folder, is an input of the batch (its own or
/// another: the same file by device and inode, however it is spelt) or is the output of another
/// input too; the others become the batch's items.
fn refuse_conflicts(candidates: Vec<Candidate>, plan: &mut Plan) {
    let mut inputs: HashMap<(u64, u64), usize> = HashMap::new();
    let mut input_paths: HashMap<&Path, usize> = HashMap::new();
    let mut by_output: HashMap<EntryKey, Vec<usize>> = HashMap::new();
    // Outputs are told apart by the file written, through links (two links to one file are one).
    let keys: Vec<EntryKey> = candidates
        .iter()
        .map(|c| entry_key(&crate::io::written_through(&c.output).unwrap_or_else(|_| c.output.clone())))
        .collect();
    for (i, (c, key)) in candidates.iter().zip(&keys).enumerate() {
        if let Some(id) = file_id(&c.input) {
            inputs.entry(id).or_insert(i);
        }
        input_paths.entry(&c.input).or_insert(i);
        by_output.entry(key.clone()).or_default().push(i);
    }
    // The folders the outputs go in, made before the batch runs: no output may be one of them.
    let folders: HashSet<&Path> =
        candidates.iter().filter_map(|c| c.output.parent()).flat_map(Path::ancestors).collect();
    let mut whys = Vec::with_capacity(candidates.len());
    for (i, c) in candidates.iter().enumerate() {
        let out = c.output.display();
        let replaced =
            file_id(&c.output).and_then(|id| inputs.get(&id)).or_else(|| input_paths.get(c.output.as_path()));
        let sharing = keys.get(i).and_then(|key| by_output.get(key)).filter(|g| g.len() > 1);
        whys.push(if c.output.is_dir() || folders.contains(c.output.as_path()) {
            Some(format!("the output of {} is a folder, not a file: {out}", c.input.display()))
        } else if let Some(&j) = replaced {
            Some(if j == i {
                format!("the output would replace its own input: {out}")
            } else {
                format!(
                    "the output of {} would replace another input of this batch: {out}",
                    c.input.display()
                )
            })
        } else {
            sharing.map(|group| {
                let names: Vec<String> = group
                    .iter()
                    .filter_map(|&k| candidates.get(k))
                    .map(|g| g.input.display().to_string())
                    .collect();
                let count = if names.len() == 2 { "two".to_owned() } else { names.len().to_string() };
                format!(
                    "{count} inputs would write the same output ({}): {out} (convert one of them in \
                     another run, with another --format or another --out-dir)",
                    and_list(&names)
                )
            })
        });
    }
    for (c, why) in candidates.into_iter().zip(whys) {
        match why {
            Some(why) => plan.refused.push(Refused { path: c.input, why, folder: false }),
            None => plan.items.push(BatchItem { input: c.input, output: c.output }),
        }
    }
}

/// `a and b`, `a, b and c`.
fn and_list(names: &[String]) -> String {
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

/// The files found in a folder input, and the folders that could not be listed.
struct Listing {
    files: Vec<PathBuf>,
    unlisted: Vec<Refused>,
    /// The output folder, where a recursive listing met it inside the input and left it out.
    out_dir_met: Option<PathBuf>,
}

/// The files of a folder (and its subfolders when `recursive`), sorted, leaving out the output
/// folder so a second run does not convert its own results. Each folder is listed once, so a
/// symlink to a parent folder does not loop. A folder that cannot be listed (no permission, a
/// path too long) is told by name, and the others are still listed.
fn list_folder(dir: &Path, recursive: bool, out_dir: &Path) -> Listing {
    let skip = file_id(out_dir);
    let mut visited: HashSet<(u64, u64)> = file_id(dir).into_iter().collect();
    let mut listing = Listing { files: Vec::new(), unlisted: Vec::new(), out_dir_met: None };
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let unlisted = |cause: std::io::Error| Refused {
            why: format!(
                "cannot list the folder ({cause}), so its files are not converted: {}",
                folder.display()
            ),
            path: folder.clone(),
            folder: true,
        };
        let entries = match std::fs::read_dir(&folder) {
            Ok(entries) => entries,
            Err(cause) => {
                listing.unlisted.push(unlisted(cause));
                continue;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(cause) => {
                    listing.unlisted.push(unlisted(cause));
                    break;
                }
            };
            let path = entry.path();
            // The entry's own type, so that a folder whose path is too long to look up is still
            // a folder (and fails to list by name) rather than a file.
            let is_folder = match entry.file_type() {
                Ok(t) if !t.is_symlink() => t.is_dir(),
                _ => path.is_dir(),
            };
            if is_folder {
                let id = file_id(&path);
                if recursive && id.is_some() && id == skip {
                    listing.out_dir_met = Some(path);
                    continue;
                }
                if !recursive {
                    continue;
                }
                match id {
                    Some(id) if !visited.insert(id) => log::info!("listed already: {}", path.display()),
                    _ => pending.push(path),
                }
            } else {
                listing.files.push(path);
            }
        }
    }
    listing.files.sort();
    listing.unlisted.sort_by(|a, b| a.path.cmp(&b.path));
    listing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreadable_file_is_converted_to_fail_by_name_never_skipped() {
        let path = PathBuf::from("photos/locked.jpg");
        for kind in [std::io::ErrorKind::PermissionDenied, std::io::ErrorKind::InvalidFilename] {
            let err = IoError::Open { path: path.clone(), cause: std::io::Error::from(kind) };
            let message = err.to_string();
            assert_eq!(listed_as(Err(err)), Listed::Input, "{kind:?} is not skipped");
            assert!(
                message.starts_with("cannot read the file (") && message.ends_with(": photos/locked.jpg")
            );
        }
        let denied = IoError::Open { path, cause: std::io::Error::from_raw_os_error(13) };
        assert!(denied.to_string().contains("Permission denied"), "{denied}");
        assert_eq!(listed_as(Ok(FileKind::Other)), Listed::Skipped("not an image"));
        assert_eq!(listed_as(Ok(FileKind::Special("a FIFO"))), Listed::Skipped("a FIFO"));
        let heic =
            IoError::UnsupportedFormat { path: "photos/IMG_1.HEIC".into(), format: "HEIF/HEIC".into() };
        let Listed::Refused(why) = listed_as(Err(heic)) else { panic!("a HEIC is refused, not skipped") };
        assert!(
            why.starts_with("HEIF/HEIC images are not supported (") && why.ends_with("): photos/IMG_1.HEIC")
        );
    }
}
