//! `graylab sweep`'s text on the real binary: the first grid's estimate says the figure and the
//! basis its JSON keeps.

use crate::common::{graylab, text};

#[test]
fn the_first_grids_estimate_says_the_figure_and_the_basis_its_json_keeps() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A fresh cache folder: no grid seen here yet, so the estimate is the calibration's plan.
    let args =
        ["sweep", "--sizes", "0.02", "--work", "0,16", "--runs", "1", "--cpu-only", "--json", "s.json"];
    let o = graylab(&args, dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("s.json")).expect("json written"))
            .expect("valid JSON");
    assert_eq!(json["estimate_basis"], "seen", "{json}");
    let estimate_s = json["estimate_s"].as_f64().expect("estimate_s");
    // The whole job as its user waits for it, the calibration included: the same figure, the
    // same basis, in the text.
    let stderr = String::from_utf8_lossy(&o.stderr);
    let said = format!("estimated at about {estimate_s:.1} s in all, from runs seen on this machine");
    assert!(stderr.contains(&said), "{said:?} is not in: {stderr}");
    assert!(stderr.contains("spent calibrating just now"), "{stderr}");
}
