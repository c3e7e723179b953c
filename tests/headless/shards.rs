//! A photo library split across machines with a scheduler people already use: GNU parallel runs
//! one `graylab convert --json` per shard of files (here on this host; `--sshlogin` sends the
//! same command to others), and the shards' reports merge into one. The guide's recipe
//! ("A library on more than one machine"), run as written.

use std::io::Write as _;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::photo;

/// Whether GNU parallel runs here; a line says so when it does not, and with `CI` set its
/// absence fails the test instead, so the check never passes unseen.
fn parallel_installed() -> bool {
    match Command::new("parallel").arg("--version").output() {
        Ok(o) if String::from_utf8_lossy(&o.stdout).starts_with("GNU parallel") => true,
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set but GNU parallel is missing: install parallel"
            );
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED shards: no GNU parallel (install parallel); CI=1 fails instead"
            );
            false
        }
    }
}

#[test]
fn gnu_parallel_converts_a_library_in_shards_whose_reports_merge() {
    if !parallel_installed() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::create_dir_all(d.join("photos")).expect("mkdir");
    std::fs::create_dir_all(d.join("gray")).expect("mkdir");
    std::fs::create_dir_all(d.join("reports")).expect("mkdir");
    let names: Vec<String> = (0..7).map(|i| format!("p{i}.png")).collect();
    for (i, name) in names.iter().enumerate() {
        photo(24 + i as u32, 16).save(d.join("photos").join(name)).expect("save");
    }
    // The guide's command: shards of 3 files, 2 shards at a time, one report per shard.
    let bin = Path::new(env!("CARGO_BIN_EXE_graylab")).parent().expect("the binary's folder");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let script = "find photos -name '*.png' | sort | \
                  parallel -N 3 --jobs 2 'graylab convert {} --out-dir gray --json > reports/shard-{#}.json'";
    let o = Command::new("sh")
        .args(["-c", script])
        .current_dir(d)
        .env("PATH", path)
        .env("XDG_CACHE_HOME", d)
        .env("HOME", d)
        .output()
        .expect("run sh");
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    // Three shards (3 + 3 + 1 files), merged as `jq -s add reports/*.json` would.
    let mut shards: Vec<_> =
        std::fs::read_dir(d.join("reports")).expect("reports").flatten().map(|e| e.path()).collect();
    shards.sort();
    assert_eq!(shards.len(), 3, "{shards:?}");
    let merged: Vec<Value> = shards
        .iter()
        .flat_map(|p| {
            let shard: Value =
                serde_json::from_slice(&std::fs::read(p).expect("read")).expect("a JSON report");
            shard.as_array().cloned().unwrap_or_default()
        })
        .collect();
    let mut inputs: Vec<&str> = merged.iter().filter_map(|r| r["input"].as_str()).collect();
    inputs.sort_unstable();
    let expected: Vec<String> = names.iter().map(|n| format!("photos/{n}")).collect();
    assert_eq!(inputs, expected, "every file once, in one report or another");
    assert!(
        merged.iter().all(|r| r.get("error").is_none() && r["run"]["total_ns"].as_u64() > Some(0)),
        "{merged:?}"
    );
    for (i, name) in names.iter().enumerate() {
        let stem = name.trim_end_matches(".png");
        let gray = image::open(d.join("gray").join(format!("{stem}.gray.png"))).expect("each output");
        assert_eq!((gray.color(), gray.width()), (image::ColorType::L8, 24 + i as u32), "{name}");
    }
}
