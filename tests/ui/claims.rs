//! The tutorial-claims window of the real app under `egui_kittest`, on any adapter (nothing here
//! assumes a verdict): the quick set run from the window with every verdict on screen, Stop and
//! Esc ending a full run, and a report saved as JSON (never over a file without consent) and
//! loaded back beside the current one, labelled with its adapter.

use crate::{common, harness};

use crate::harness::{harness, settle};
use egui_kittest::kittest::{NodeT as _, Queryable as _};
use graylab::engine::claims::ClaimsReport;

#[test]
fn quick_claims_show_each_verdict_and_save_and_load_to_compare() {
    let Some(mut h) = harness(None) else { return };
    let gpu = common::gpu().expect("checked by harness");
    settle(&mut h);
    h.get_by_label("Tutorial claims…").click();
    h.run_steps(2);
    assert!(h.query_by_label_contains("No claims tested yet").is_some());
    let before = h.get_by_label_contains("Run (quick) takes about ");
    let before = before.accesskit_node().label().or_else(|| before.value()).unwrap_or_default();
    assert!(
        !before.contains("seen here") && (before.contains("ceilings)") || before.contains("rough guess)")),
        "before a run the estimates come from what the claims run, and say so: {before}"
    );
    h.get_by_label("Run (quick)").click();
    h.run_steps(2);
    assert!(h.state().view().busy, "the claims run on the worker");
    settle(&mut h);
    h.run_steps(2);
    let (report, unfinished) = h.state().view().claims;
    assert_eq!(unfinished, None);
    let report = report.expect("a report").clone();
    assert!(report.quick);
    assert!(report.claims.len() >= 7, "{} claims", report.claims.len());
    // The quick run's own time is the next estimate; the full set's is still a first one.
    let node = h.get_by_label_contains("Run (quick) takes about ");
    let estimate = node.accesskit_node().label().or_else(|| node.value()).unwrap_or_default();
    let (quick, all) = estimate.split_once("; Run all takes about ").expect("both estimates");
    assert!(quick.ends_with("(from runs seen here)") && !all.contains("seen here"), "{estimate}");
    // A stopped run teaches nothing: tested in `stop_and_escape_end_a_full_claims_run`.
    assert_eq!(report.software_adapter, gpu.is_software());
    // The first card's verdict is on screen, in the words of the verdict; every claim's number
    // and quote is in the window.
    let first = &report.claims[0];
    let verdict_text = first.verdict.to_string();
    let verdict = h.get_all_by_label(&verdict_text).next().expect("the verdict is shown").rect();
    assert!(h.ctx.content_rect().contains_rect(verdict), "and visible");
    for c in &report.claims {
        assert!(
            h.query_by_label_contains(&format!("{}. \u{201c}{}", c.id, c.claim)).is_some(),
            "claim {}",
            c.id
        );
    }
    assert_eq!(
        h.query_by_label_contains("the \"GPU\" is this CPU's own cores: its verdicts").is_some(),
        gpu.is_software(),
        "a software adapter is named as the CPU's own cores"
    );

    // Saved atomically, and never over a file without consent.
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("here.claims.json");
    h.state_mut().set_claims_json_path(&json);
    h.run_steps(2);
    h.get_by_label("Save").click();
    h.run_steps(2);
    let saved: ClaimsReport =
        serde_json::from_slice(&std::fs::read(&json).expect("saved")).expect("graylab's claims");
    assert_eq!(saved, report, "the JSON holds the report shown");
    // As the CLI's: what the run was estimated at before it started, and what it took.
    let timed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("saved")).expect("JSON");
    for key in ["estimate_s", "took_s"] {
        assert!(timed[key].as_f64().is_some_and(|s| s > 0.0 && s.is_finite()), "{key}: {}", timed[key]);
    }
    assert_ne!(timed["estimate_basis"], "seen", "the first run here: from what the claims run");
    // Stamped as the CLI stamps its own (issue 45): `graylab compare` names where it ran.
    assert_eq!((timed["schema"].as_u64(), timed["kind"].as_str()), (Some(1), Some("claims")), "{timed}");
    let provenance = &timed["provenance"];
    assert!(provenance["host"]["threads"].as_u64().is_some_and(|t| t >= 1), "{provenance}");
    assert_eq!(provenance["adapter"]["name"].as_str(), Some(report.adapter.as_str()), "{provenance}");
    h.get_by_label("Save").click();
    h.run_steps(2);
    assert!(h.query_by_label_contains("This file exists. Replace it?").is_some(), "asks first");
    h.get_by_label("Keep it").click();
    h.run_steps(2);

    // Loaded back as another machine's: two columns, the loaded one labelled with its adapter.
    let mut other = saved.clone();
    other.adapter = "Another Machine's GPU".into();
    other.software_adapter = false;
    let theirs = dir.path().join("theirs.claims.json");
    std::fs::write(&theirs, serde_json::to_vec(&other).expect("JSON")).expect("write");
    h.state_mut().set_claims_json_path(&theirs);
    h.run_steps(2);
    h.get_by_label("Load to compare").click();
    h.run_steps(3);
    assert_eq!(h.state().view().compared_claims, Some("theirs.claims.json · Another Machine's GPU"));
    // The file, then the machine (its adapter named once).
    assert!(h.query_by_label_contains("Loaded: theirs.claims.json, Another Machine's GPU (").is_some());
    assert!(h.query_by_label_contains(&format!("This machine: {}", report.adapter)).is_some());
    assert_eq!(
        h.get_all_by_label(&verdict_text).count(),
        2 * report.claims.iter().filter(|c| c.verdict == first.verdict).count(),
        "each verdict twice: here and loaded"
    );
    h.get_by_label("Clear comparison").click();
    h.run_steps(2);
    assert_eq!(h.state().view().compared_claims, None);

    // Not graylab's claims: an error, nothing loaded.
    std::fs::write(&theirs, b"{}").expect("write");
    h.get_by_label("Load to compare").click();
    h.run_steps(2);
    assert!(h.state().view().message.is_some_and(|(t, e)| e && t.contains("theirs.claims.json")));
    assert_eq!(h.state().view().compared_claims, None);
}

#[test]
fn stop_and_escape_end_a_full_claims_run() {
    let Some(mut h) = harness(None) else { return };
    settle(&mut h);
    h.state_mut().open_claims_window();
    h.run_steps(2);
    for how in ["Stop claims", "Esc"] {
        // The run waits at its first step until the test lets it go: Stop or Esc lands inside
        // it however fast this machine is.
        h.state_mut().hold_next_job(graylab::system::progress::HoldAt::Step);
        h.get_by_label("Run all").click();
        harness::until_held(&mut h);
        assert!(h.state().view().job_progress.is_some_and(|p| p.starts_with("Claims")), "{how}: running");
        h.run_steps(2);
        // The window's first estimate, and the status bar's ETA "from the estimate".
        assert!(
            h.query_all_by_label_contains("estimate").next().is_some(),
            "an ETA or a first estimate is shown"
        );
        if how == "Esc" {
            // Esc stops the work first and leaves the claims window open.
            h.key_press(egui::Key::Escape);
            h.run_steps(1);
            assert!(h.query_by_label("Run all").is_some(), "Esc left the claims window open");
        } else {
            h.get_by_label(how).click();
        }
        h.run_steps(1);
        // Said at once, while the held step has not ended yet.
        h.run_steps(1);
        assert!(
            h.query_by_label_contains("Stopping…").is_some(),
            "{how}: the status bar says it is stopping"
        );
        h.state().release_job();
        settle(&mut h);
        assert!(!h.state().view().busy, "{how}: nothing left running");
        let (report, unfinished) = h.state().view().claims;
        // Stopped inside the first claim: the report is kept, every claim marked as not run.
        let report = report.expect("a stopped run keeps its report");
        assert!(report.stopped, "{how}");
        assert_eq!(report.claims.len(), 10, "{how}: every claim listed");
        assert!(
            report.claims.iter().all(|c| c.verdict == graylab::engine::claims::Verdict::NotRun),
            "{how}: {:?}",
            report.claims.iter().map(|c| c.verdict.to_string()).collect::<Vec<_>>()
        );
        let note = unfinished.expect("why the report is partial").to_owned();
        assert!(note.starts_with("Stopped after 0 of 10 claims"), "{how}: {note}");
        h.run_steps(2);
        assert!(h.query_by_label(&note).is_some(), "{how}: the window says it stopped");
        assert!(
            h.query_by_label_contains("Run all took").is_none(),
            "{how}: a stopped run is not taken for the full set's time"
        );
    }
}
