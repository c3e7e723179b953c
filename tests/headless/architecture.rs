//! The tree and the docs agree: every path `ARCHITECTURE.md` names exists and every folder of
//! `src/` has its row there, the dependency rule
//! holds (the engine knows nothing of the UI, the front ends use only the engine), there is no
//! import cycle between the files of `src/` or between the folders of one parent, and no folder
//! or file outgrows its shape. Reads the sources as text; builds nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path, e.g. `["gpu", "plan", "bands"]` (the crate root is empty).
type Module = Vec<String>;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every module of `src/` (the library; `main.rs` is the binary), with its source text.
fn modules() -> BTreeMap<Module, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let src = root().join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut mods = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(&src).expect("under src").with_extension("");
        let mut parts: Module = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        if parts == ["main"] {
            continue;
        }
        if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
            parts.pop();
        }
        mods.insert(parts, std::fs::read_to_string(&file).expect("read"));
    }
    mods
}

/// The code of a file without comments, string contents and inline `mod tests`.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests {").next().unwrap_or(text);
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let line = line.split("//").next().unwrap_or("");
        let mut in_string = false;
        for c in line.chars() {
            if c == '"' {
                in_string = !in_string;
            } else if !in_string {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

/// The paths of every `use` tree in `code`, expanded (`a::{b, c::d}` -> `a::b`, `a::c::d`).
fn use_paths(code: &str) -> Vec<String> {
    fn expand(tree: &str, out: &mut Vec<String>) {
        let tree = tree.trim();
        let Some(open) = tree.find('{') else {
            out.push(tree.split(" as ").next().unwrap_or(tree).trim().to_owned());
            return;
        };
        let prefix = &tree[..open];
        let inner = tree[open + 1..].strip_suffix('}').unwrap_or(&tree[open + 1..]);
        let (mut depth, mut start) = (0, 0);
        let mut items = Vec::new();
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(&inner[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        items.push(&inner[start..]);
        for item in items.into_iter().map(str::trim).filter(|i| !i.is_empty()) {
            let mut sub = Vec::new();
            expand(item, &mut sub);
            out.extend(sub.into_iter().map(|s| format!("{prefix}{s}")));
        }
    }
    let mut out = Vec::new();
    let mut rest = code;
    // The code outside `use` statements, for the paths written in place.
    let mut in_place = String::with_capacity(code.len());
    while let Some(at) = rest.find("use ") {
        let before = rest[..at].chars().last();
        let after = &rest[at + 4..];
        in_place.push_str(&rest[..at + 4]);
        rest = after;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(end) = after.find(';') {
            expand(&after[..end], &mut out);
            rest = &after[end..];
        }
    }
    in_place.push_str(rest);
    // Paths written in place (`crate::gpu::X::new()`, `super::y`).
    for start in ["crate::", "super::"] {
        let mut rest = in_place.as_str();
        while let Some(at) = rest.find(start) {
            let tail = &rest[at..];
            let end =
                tail.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(tail.len());
            out.push(tail[..end].trim_end_matches(':').to_owned());
            rest = &tail[end..];
        }
    }
    out
}

/// The module a path in `module` names: the longest existing module prefix, following the
/// `pub use` re-exports of that module to where an item is defined.
fn resolve(
    mods: &BTreeMap<Module, String>,
    reexports: &BTreeMap<Module, BTreeMap<String, Module>>,
    module: &[String],
    path: &str,
    follow_reexports: bool,
) -> Option<Module> {
    let segs: Vec<&str> = path.split("::").map(str::trim).filter(|s| !s.is_empty()).collect();
    let first = *segs.first()?;
    let (mut full, rest): (Module, &[&str]) = match first {
        "crate" => (Vec::new(), &segs[1..]),
        "super" | "self" => {
            let mut base = module.to_vec();
            let mut i = 0;
            while i < segs.len() && matches!(segs[i], "super" | "self") {
                if segs[i] == "super" {
                    base.pop();
                }
                i += 1;
            }
            (base, &segs[i..])
        }
        child => {
            let mut m = module.to_vec();
            m.push(child.to_owned());
            if !mods.contains_key(&m) {
                return None;
            }
            (module.to_vec(), &segs[..])
        }
    };
    full.extend(rest.iter().map(|s| (*s).to_owned()));
    for n in (0..=full.len()).rev() {
        let prefix = &full[..n];
        if mods.contains_key(prefix) {
            if follow_reexports
                && let Some(item) = full.get(n)
                && let Some(target) = reexports.get(prefix).and_then(|r| r.get(item))
            {
                return Some(target.clone());
            }
            return Some(prefix.to_vec());
        }
    }
    None
}

/// Who uses whom: an edge from each module to every other module its code names (its own
/// ancestors excepted: a parent's items are its public face). With `follow_reexports`, a name
/// re-exported by a module counts as a use of the module that defines it (for cycles); without,
/// as a use of the module the path names (for the layering rule: `engine::Formula` is the
/// engine's, wherever it is defined).
fn graph_of(follow_reexports: bool) -> BTreeMap<Module, BTreeSet<Module>> {
    let mods = modules();
    let mut reexports: BTreeMap<Module, BTreeMap<String, Module>> = BTreeMap::new();
    for _ in 0..3 {
        for (module, text) in &mods {
            let code = code(text);
            for line in code.lines().filter(|l| l.trim_start().starts_with("pub")) {
                if !line.contains(" use ") {
                    continue;
                }
                for path in use_paths(line) {
                    let name = path.rsplit("::").next().unwrap_or("").trim().to_owned();
                    if let Some(target) = resolve(&mods, &reexports, module, &path, true)
                        && &target != module
                        && name != "*"
                    {
                        reexports.entry(module.clone()).or_default().insert(name, target);
                    }
                }
            }
        }
    }
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, text) in &mods {
        if module.last().is_some_and(|m| m == "tests") {
            continue;
        }
        for path in use_paths(&code(text)) {
            if let Some(target) = resolve(&mods, &reexports, module, &path, follow_reexports)
                && &target != module
                && !module.starts_with(&target)
            {
                edges.entry(module.clone()).or_default().insert(target);
            }
        }
    }
    edges
}

/// The graph with re-exports followed to the defining module.
fn graph() -> BTreeMap<Module, BTreeSet<Module>> {
    graph_of(true)
}

/// The strongly connected components with more than one node.
fn cycles<N: Ord + Clone>(edges: &BTreeMap<N, BTreeSet<N>>) -> Vec<Vec<N>> {
    // Two nodes are in one cycle when each reaches the other.
    let reach = |from: &N| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(n) = todo.pop() {
            for m in edges.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    todo.push(m.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<N, BTreeSet<N>> = edges.keys().map(|n| (n.clone(), reach(n))).collect();
    let mut out: Vec<Vec<N>> = Vec::new();
    for (n, r) in &reaches {
        if !r.contains(n) || out.iter().any(|c| c.contains(n)) {
            continue;
        }
        let comp: Vec<N> =
            r.iter().filter(|m| reaches.get(*m).is_some_and(|back| back.contains(n))).cloned().collect();
        out.push(comp);
    }
    out
}

fn name(m: &[String]) -> String {
    if m.is_empty() { "crate".to_owned() } else { m.join("::") }
}

#[test]
fn no_import_cycle_between_files() {
    let found: Vec<String> = cycles(&graph())
        .iter()
        .map(|c| c.iter().map(|m| name(m)).collect::<Vec<_>>().join(" <-> "))
        .collect();
    assert!(found.is_empty(), "import cycles between files: {found:#?}");
}

#[test]
fn no_import_cycle_between_sibling_folders() {
    let edges = graph();
    let parents: BTreeSet<Module> =
        modules().keys().filter(|m| !m.is_empty()).map(|m| m[..m.len() - 1].to_vec()).collect();
    let mut found = Vec::new();
    for parent in parents {
        let child =
            |m: &Module| (m.len() > parent.len() && m.starts_with(&parent)).then(|| m[parent.len()].clone());
        let mut folder_edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, tos) in &edges {
            let Some(a) = child(from) else { continue };
            for b in tos.iter().filter_map(child).filter(|b| *b != a) {
                folder_edges.entry(a.clone()).or_default().insert(b);
            }
        }
        for c in cycles(&folder_edges) {
            found.push(format!("in {}: {}", name(&parent), c.join(" <-> ")));
        }
    }
    assert!(found.is_empty(), "import cycles between the parts of one folder: {found:#?}");
}

/// The layer table as ARCHITECTURE.md states it (the rule is written there once): for each
/// top-level module (`src/X/` or `src/X.rs`), the modules its row's last column names.
fn layer_table() -> Vec<(String, Vec<String>)> {
    let map = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut table = Vec::new();
    for line in map.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let [_, folder, _, uses, _] = cells.as_slice() else { continue };
        let Some(path) = folder.strip_prefix("`src/").and_then(|p| p.strip_suffix('`')) else { continue };
        let module = path.trim_end_matches('/').trim_end_matches(".rs");
        if module.contains('/') || matches!(module, "main" | "lib") {
            continue;
        }
        let may = uses.split('`').skip(1).step_by(2).map(str::to_owned).collect();
        table.push((module.to_owned(), may));
    }
    table
}

#[test]
fn layers_use_only_the_layers_below_them() {
    // What each top-level module may use, besides itself and the leaves `system` and `shaders`.
    let allowed = layer_table();
    assert!(
        allowed.iter().any(|(m, may)| m == "engine" && may.iter().any(|u| u == "gpu")),
        "ARCHITECTURE.md's folder table has no row for src/engine/ naming gpu: {allowed:?}"
    );
    let mut found = Vec::new();
    for (from, tos) in graph_of(false) {
        let Some(top) = from.first() else { continue };
        let Some((_, may)) = allowed.iter().find(|(m, _)| m == top) else {
            found.push(format!("{} has no row in ARCHITECTURE.md's folder table", name(&from)));
            continue;
        };
        for to in tos {
            let Some(target) = to.first() else { continue };
            if target == top || matches!(target.as_str(), "system" | "shaders") || may.contains(target) {
                continue;
            }
            found.push(format!("{} uses {}", name(&from), name(&to)));
        }
    }
    assert!(found.is_empty(), "uses against the dependency rule: {found:#?}");
}

/// Files of a few hundred lines and folders of about a dozen files are the guideline (a warning
/// on stderr); clippy's `too_many_lines` guards functions. Past the hard stop a file or a folder
/// fails the test.
#[test]
fn folders_and_files_stay_small() {
    const GUIDE_FILES_PER_FOLDER: usize = 12;
    const GUIDE_LINES: usize = 380;
    const MAX_FILES_PER_FOLDER: usize = 16;
    const MAX_LINES: usize = 600;
    /// (folder, its source files) and (file, its lines) for every folder and file under `dir`.
    fn walk(dir: &Path, folders: &mut Vec<(String, usize)>, files: &mut Vec<(String, usize)>) {
        let mut count = 0;
        for entry in std::fs::read_dir(dir).expect("read folder") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(&path, folders, files);
            } else if path.extension().is_some_and(|e| e == "rs") {
                count += 1;
                let lines = std::fs::read_to_string(&path).expect("read").lines().count();
                files.push((path.display().to_string(), lines));
            }
        }
        folders.push((dir.display().to_string(), count));
    }
    let (mut folders, mut files) = (Vec::new(), Vec::new());
    walk(&root().join("src"), &mut folders, &mut files);
    for (folder, n) in folders.iter().filter(|(_, n)| *n > GUIDE_FILES_PER_FOLDER) {
        eprintln!("warning: {folder} holds {n} source files (the guideline is {GUIDE_FILES_PER_FOLDER})");
    }
    for (file, n) in files.iter().filter(|(_, n)| *n > GUIDE_LINES) {
        eprintln!("warning: {file} has {n} lines (the guideline is {GUIDE_LINES})");
    }
    let crowded: Vec<_> = folders.iter().filter(|(_, n)| *n > MAX_FILES_PER_FOLDER).collect();
    let long: Vec<_> = files.iter().filter(|(_, n)| *n > MAX_LINES).collect();
    assert!(crowded.is_empty(), "folders with more than {MAX_FILES_PER_FOLDER} source files: {crowded:#?}");
    assert!(long.is_empty(), "files over {MAX_LINES} lines: {long:#?}");
}

#[test]
fn every_path_the_docs_name_exists() {
    const TOP: [&str; 8] =
        ["src/", "shaders/", "tests/", "benches/", "scripts/", "docs/", "assets/", "vendor/"];
    let mut missing = Vec::new();
    for doc in ["ARCHITECTURE.md", "README.md", "docs/guide.md", "src/lib.rs"] {
        let Ok(text) = std::fs::read_to_string(root().join(doc)) else { continue };
        for (i, quoted) in text.split('`').enumerate() {
            // Odd pieces are inside backticks.
            let path = quoted.trim();
            if i % 2 == 0 || !TOP.iter().any(|t| path.starts_with(t)) || path.contains(char::is_whitespace) {
                continue;
            }
            let path = path.split(['#', ':']).next().unwrap_or(path);
            if path.contains('*') || path.contains('<') {
                continue;
            }
            if !root().join(path).exists() {
                missing.push(format!("{doc}: `{path}`"));
            }
        }
    }
    assert!(missing.is_empty(), "paths named in the docs that do not exist: {missing:#?}");
}

/// ARCHITECTURE.md is the map: every folder of `src/` has its row (its path in backticks).
#[test]
fn every_folder_of_src_is_on_the_map() {
    fn folders(dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("read src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                let rel = path.strip_prefix(root()).expect("under the root");
                out.push(format!("`{}/`", rel.to_string_lossy()));
                folders(&path, out);
            }
        }
    }
    let mut all = Vec::new();
    folders(&root().join("src"), &mut all);
    assert!(all.len() > 30, "the walk found the folders: {all:?}");
    let map = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let rows: Vec<&str> = map.lines().filter(|l| l.starts_with("| `src/")).collect();
    let missing: Vec<&String> =
        all.iter().filter(|f| !rows.iter().any(|r| r.starts_with(&format!("| {f} |")))).collect();
    assert!(missing.is_empty(), "folders of src/ without their row in ARCHITECTURE.md: {missing:?}");
}

#[test]
fn the_rule_checker_sees_a_cycle() {
    // The checker itself: a made-up cycle a -> b -> c -> a and a leaf d.
    let m = |s: &str| s.to_owned();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges.insert(m("a"), [m("b")].into());
    edges.insert(m("b"), [m("c"), m("d")].into());
    edges.insert(m("c"), [m("a")].into());
    edges.insert(m("d"), BTreeSet::new());
    assert_eq!(cycles(&edges), vec![vec![m("a"), m("b"), m("c")]]);
    let paths =
        use_paths("use crate::gpu::{plan::bands::BandPlan, GpuError as E};\nlet x = super::wait::nanos();");
    assert_eq!(paths, ["crate::gpu::plan::bands::BandPlan", "crate::gpu::GpuError", "super::wait::nanos"]);
}

/// The engine's door stays narrow: at most 60 names re-exported at `engine::` (the experiments
/// have their own modules, and files are read through `io` directly).
#[test]
fn the_engine_re_exports_at_most_60_names() {
    let source = std::fs::read_to_string(root().join("src/engine/mod.rs")).expect("engine/mod.rs");
    let mut names = Vec::new();
    for statement in source.split("pub use ").skip(1) {
        let path = statement.split(';').next().unwrap_or_default();
        let list = path.rsplit_once("::{").map_or(path.rsplit("::").next().unwrap_or_default(), |(_, l)| l);
        names.extend(
            list.trim_end_matches('}').split(',').map(str::trim).filter(|n| !n.is_empty()).map(str::to_owned),
        );
    }
    assert!(names.len() > 20, "the count missed the re-exports: {names:?}");
    assert!(names.len() <= 60, "engine/mod.rs re-exports {} names (at most 60): {names:?}", names.len());
}
