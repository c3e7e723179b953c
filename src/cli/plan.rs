//! What `graylab convert` will do, decided before any work: contradicting options refused, the
//! files of folder inputs (each folder listed once, by device and inode, FIFOs and devices never
//! opened), each input's output path, and no output that is an input, a folder or a repeat.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

use super::args::{check_not_input, check_output_dir, check_output_file};
use super::convert_args::ConvertArgs;
use crate::engine::{
    Backend, BatchItem, ExportFormat, FileKind, IoError, classify_file, default_output_path,
};

/// A file of a folder input that is not converted, and why ("not an image", "a FIFO").
pub(super) struct Skipped {
    /// The file.
    pub path: PathBuf,
    /// Why, in words.
    pub why: &'static str,
}

/// The work: files to convert, and files of folder inputs that were skipped.
pub(super) struct Plan {
    /// Each input with its output.
    pub items: Vec<BatchItem>,
    /// Files of folder inputs left alone.
    pub skipped: Vec<Skipped>,
    /// Whether any input is a folder.
    pub from_folder: bool,
}

/// The output format, after refusing options that contradict each other or do nothing.
fn output_format(args: &ConvertArgs) -> anyhow::Result<ExportFormat> {
    let named = args.output.as_deref().and_then(ExportFormat::from_path);
    if let (Some(asked), Some(named), Some(o)) = (args.format, named, &args.output)
        && asked != named
    {
        bail!(
            "--format {} contradicts -o/--output, whose name is a {named} file's: {}",
            asked.name(),
            o.display()
        );
    }
    let format = args.format.or(named).unwrap_or(ExportFormat::Png);
    if args.quality.is_some() && format != ExportFormat::Jpeg {
        bail!(
            "--quality sets JPEG quality, and the output is {format} (drop --quality or choose --format jpeg)"
        );
    }
    if args.workgroup.is_some() && args.backend == Backend::Cpu {
        bail!("--workgroup sets the GPU's workgroup size and does nothing with --backend cpu");
    }
    Ok(format)
}

/// Output paths for every input, checked up front: no output may be an input or repeat.
pub(super) fn plan_outputs(args: &ConvertArgs) -> anyhow::Result<Plan> {
    let format = output_format(args)?;
    // Output paths are checked before anything is decoded.
    if let Some(o) = &args.output {
        if o.is_dir() {
            bail!("-o/--output names a folder: {} (use --out-dir for a folder)", o.display());
        }
        if args.format.is_none() && ExportFormat::from_path(o).is_none() {
            bail!(
                "-o/--output: unknown format in {} (use .png, .jpg, .tif, .bmp or .webp, or --format)",
                o.display()
            );
        }
        check_output_file(o, args.overwrite, "-o/--output")?;
    }
    if let Some(dir) = &args.out_dir {
        check_output_dir(dir, "--out-dir")?;
    }
    let mut plan = Plan { items: Vec::new(), skipped: Vec::new(), from_folder: false };
    let mut seen = HashMap::new();
    for input in &args.inputs {
        if input.is_dir() {
            let Some(out_dir) = args.out_dir.as_deref() else {
                bail!("a folder input needs --out-dir: {}", input.display());
            };
            plan.from_folder = true;
            for file in list_folder(input, args.recursive, out_dir)? {
                if let Some(why) = skip_reason(&classify_file(&file)) {
                    plan.skipped.push(Skipped { path: file, why });
                    continue;
                }
                let sub = file.parent().and_then(|p| p.strip_prefix(input).ok()).unwrap_or(Path::new(""));
                let output = default_output_path(&file, Some(&out_dir.join(sub)), format);
                push_item(&mut plan, &mut seen, file, output)?;
            }
        } else {
            let output = match &args.output {
                Some(o) => o.clone(),
                None => default_output_path(input, args.out_dir.as_deref(), format),
            };
            push_item(&mut plan, &mut seen, input.clone(), output)?;
        }
    }
    if args.output.is_some() && plan.items.len() > 1 {
        bail!("-o/--output takes one input; use --out-dir for {} inputs", plan.items.len());
    }
    Ok(plan)
}

/// Why a file of an input folder is skipped, or `None` when it is converted: an image, and a file
/// that cannot be read (no permission, a path too long), so that it fails naming the file and its
/// cause (the run then exits 1), never "skipped (not an image)".
fn skip_reason(kind: &Result<FileKind, IoError>) -> Option<&'static str> {
    match kind {
        Ok(FileKind::Other) => Some("not an image"),
        Ok(FileKind::Special(kind)) => Some(kind),
        Ok(FileKind::Image(_)) | Err(_) => None,
    }
}

fn push_item(
    plan: &mut Plan,
    seen: &mut HashMap<PathBuf, PathBuf>,
    input: PathBuf,
    output: PathBuf,
) -> anyhow::Result<()> {
    check_not_input(&input, &output, "the output")?;
    if output.is_dir() {
        bail!("the output of {} is a folder, not a file: {}", input.display(), output.display());
    }
    if let Some(first) = seen.get(&output) {
        bail!(
            "two inputs would write the same output ({} and {}): {}",
            first.display(),
            input.display(),
            output.display()
        );
    }
    seen.insert(output.clone(), input.clone());
    plan.items.push(BatchItem { input, output });
    Ok(())
}

/// A folder's identity: device and inode (its path where those are not known).
fn folder_id(dir: &Path) -> Option<(u64, u64)> {
    let meta = std::fs::metadata(dir).ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        let mut h = std::hash::DefaultHasher::new();
        std::hash::Hash::hash(&dir.canonicalize().ok()?, &mut h);
        Some((0, std::hash::Hasher::finish(&h)))
    }
}

/// The files of a folder (and its subfolders when `recursive`), sorted, leaving out the output
/// folder so a second run does not convert its own results. Each folder is listed once, so a
/// symlink to a parent folder does not loop.
fn list_folder(dir: &Path, recursive: bool, out_dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let skip = folder_id(out_dir);
    let mut visited: HashSet<(u64, u64)> = folder_id(dir).into_iter().collect();
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let entries =
            std::fs::read_dir(&folder).with_context(|| format!("cannot list {}", folder.display()))?;
        for entry in entries {
            let path = entry.with_context(|| format!("cannot list {}", folder.display()))?.path();
            if path.is_dir() {
                let id = folder_id(&path);
                if !recursive || id == skip {
                    continue;
                }
                match id {
                    Some(id) if !visited.insert(id) => log::info!("listed already: {}", path.display()),
                    _ => pending.push(path),
                }
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
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
            assert_eq!(skip_reason(&Err(err)), None, "{kind:?} is not skipped");
            assert!(
                message.starts_with("cannot read the file (") && message.ends_with(": photos/locked.jpg")
            );
        }
        let denied = IoError::Open { path, cause: std::io::Error::from_raw_os_error(13) };
        assert!(denied.to_string().contains("Permission denied"), "{denied}");
        assert_eq!(skip_reason(&Ok(FileKind::Other)), Some("not an image"));
        assert_eq!(skip_reason(&Ok(FileKind::Special("a FIFO"))), Some("a FIFO"));
    }
}
