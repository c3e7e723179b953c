//! Every screen of the app, audited from what it paints (issue 17, item 4): at 1440x900 and at
//! 1024x640, with the bundled photo converted on both backends (so Last run and the adapter panel
//! have their widest rows), the main window and each window it opens on demand draw no text below
//! 10 px and cut no text at the side of its panel or window (the size sweep's Roofline tab too, its
//! window on screen). The audit reads egui's painted shapes
//! (every text shape with its clip rectangle), so a label added anywhere is audited too.

use crate::harness::{harness_sized, settle};
use egui::accesskit::Role;
use egui::epaint::TextShape;
use egui::{Rect, Shape};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT as _, Queryable as _};
use graylab::app::GraylabApp;
use graylab::engine::Backend;

/// Opens one of the app's windows.
type Opener = fn(&mut GraylabApp);

/// The smallest text the issue allows, in pixels.
const MIN_TEXT_PX: f32 = 10.0;

/// Every text shape under `shape`, with the clip rectangle it is drawn in.
fn texts<'a>(shape: &'a Shape, clip: Rect, out: &mut Vec<(&'a TextShape, Rect)>) {
    match shape {
        Shape::Vec(shapes) => shapes.iter().for_each(|s| texts(s, clip, out)),
        Shape::Text(t) => out.push((t, clip)),
        _ => {}
    }
}

/// Saves the last frame as `name.png` in the folder `GRAYLAB_AUDIT_SHOTS` names, if set: the
/// screens the audit reads, to be looked at (`GRAYLAB_AUDIT_SHOTS=/tmp/shots cargo test --release
/// --test ui audit::`).
fn shot<S>(h: &mut Harness<'_, S>, name: &str) {
    let Some(dir) = std::env::var_os("GRAYLAB_AUDIT_SHOTS") else { return };
    let image = h.render().expect("the frame renders");
    image.save(std::path::Path::new(&dir).join(format!("{name}.png"))).expect("the screenshot is written");
}

/// Every text shape the last frame painted, with its clip rectangle.
fn painted<'h, S>(h: &'h Harness<'_, S>) -> Vec<(&'h TextShape, Rect)> {
    let mut all = Vec::new();
    for clipped in &h.output().shapes {
        texts(&clipped.shape, clipped.clip_rect, &mut all);
    }
    all
}

/// What the last frame painted that breaks the rules, one line each, for `screen`.
fn faults<S>(h: &Harness<'_, S>, screen: &str) -> Vec<String> {
    let ppp = h.ctx.pixels_per_point();
    // A text field scrolls its text inside itself: a long path cut at its edge is the field's
    // own clip, not a layout fault (the checkout's path is longer on some machines).
    let fields: Vec<Rect> = h.query_all_by_role(Role::TextInput).map(|n| n.rect().expand(2.0)).collect();
    let all = painted(h);
    let mut faults = Vec::new();
    // Two texts of one panel or window (the same clip rectangle) drawn over each other, row by
    // row (a label that goes on in a wrapped line starts its first row after the one before).
    let rows: Vec<(usize, &str, Rect, Rect)> = all
        .iter()
        .enumerate()
        .filter(|(_, (t, _))| !t.galley.text().trim().is_empty() && t.angle == 0.0)
        .flat_map(|(i, (t, clip))| {
            t.galley.rows.iter().filter(|r| !r.glyphs.is_empty()).map(move |r| {
                (i, t.galley.text(), r.rect_without_leading_space().translate(t.pos.to_vec2()), *clip)
            })
        })
        .collect();
    for (n, (i, a, ra, ca)) in rows.iter().enumerate() {
        for (j, b, rb, cb) in &rows[n + 1..] {
            let both = ra.intersect(*rb).intersect(*ca);
            if i != j && ca == cb && both.width() > 2.0 && both.height() > 2.0 {
                faults.push(format!("{screen}: {a:?} at {ra:?} and {b:?} at {rb:?} overlap"));
            }
        }
    }
    for (t, clip) in all {
        let text = t.galley.text();
        if text.trim().is_empty() {
            continue;
        }
        let rect = t.galley.rect.translate(t.pos.to_vec2());
        let visible = clip.intersects(rect);
        let small = t.galley.job.sections.iter().any(|s| {
            s.format.font_id.size * ppp < MIN_TEXT_PX
                && text
                    .get(s.byte_range.start.0..s.byte_range.end.0)
                    .is_some_and(|part| !part.trim().is_empty())
        });
        if visible && small {
            faults.push(format!("{screen}: {text:?} is smaller than {MIN_TEXT_PX} px"));
        }
        // Cut at the side: partly outside its clip rectangle, left or right (a line cut at the
        // bottom of a scroll area is scrolling, not clipping). Rotated text is the plots' y title.
        let cut = rect.right() > clip.right() + 1.0 || rect.left() < clip.left() - 1.0;
        let cut = cut && !fields.iter().any(|f| f.contains_rect(clip));
        if visible && cut && t.angle == 0.0 {
            faults.push(format!("{screen}: {text:?} at {rect:?} is cut by {clip:?}"));
        }
        // Painted but wholly outside its clip rectangle: egui's labels are not painted where they
        // cannot be seen, so this is text drawn by a painter (a plot's axis) past the window's
        // or panel's edge.
        if !visible {
            faults.push(format!("{screen}: {text:?} at {rect:?} is painted outside {clip:?}"));
        }
    }
    faults
}

/// Whether the last frame shows `text` whole (a chart's axis title, say), inside its clip.
fn shown_whole<S>(h: &Harness<'_, S>, text: &str) -> bool {
    painted(h).iter().any(|(t, clip)| {
        t.galley.text().contains(text)
            && clip.expand(1.0).contains_rect(t.galley.rect.translate(t.pos.to_vec2()))
    })
}

/// Widgets of the open windows that reach past their window's edge, where the window cuts them
/// off (a plot's axis below the window's bottom, say).
fn outside_windows(h: &Harness<'_, GraylabApp>, screen: &str) -> Vec<String> {
    let mut faults = Vec::new();
    for window in h.query_all_by_role(Role::Window) {
        let edge = window.rect().expand(1.0);
        let ppp = h.ctx.pixels_per_point();
        for widget in window.children_recursive() {
            // The resize handles straddle the edge on purpose.
            if widget.accesskit_node().role() == Role::Splitter {
                continue;
            }
            let Some(b) = widget.accesskit_node().bounding_box() else { continue };
            let r = Rect::from_min_max(
                egui::pos2(b.x0 as f32 / ppp, b.y0 as f32 / ppp),
                egui::pos2(b.x1 as f32 / ppp, b.y1 as f32 / ppp),
            );
            if !edge.contains_rect(r) {
                let name = widget.accesskit_node().label().unwrap_or_default();
                faults.push(format!(
                    "{screen}: {:?} {name:?} at {r:?} reaches past its window {edge:?}",
                    widget.accesskit_node().role()
                ));
            }
        }
    }
    faults
}

/// The bundled photo at `size`, converted on the CPU and then the GPU (the ceilings measured by
/// the first GPU run), so that every panel shows its widest rows, and the runs each window
/// makes finished (a small sweep, round trips, the parity check) and an export, so that each
/// shows a result.
fn converted_app(size: [f32; 2]) -> Option<Harness<'static, GraylabApp>> {
    let photo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/dandelions-5312x2988.jpg");
    let mut h = harness_sized(Some(photo), size)?;
    settle(&mut h);
    h.state_mut().settings_mut().convert.backend = Backend::Gpu;
    h.state_mut().run_conversion(1);
    settle(&mut h);
    for (button, open) in [
        ("Run sweep", (|app| app.set_sweep_sizes("0.01, 0.05", 2)) as Opener),
        ("Run round trips", |app| app.set_round_trips("1, 2", 1)),
        ("Check the open image", GraylabApp::open_parity_window),
        ("Measure transfer paths", |app| app.open_transfer_paths(4)),
    ] {
        open(h.state_mut());
        h.run_steps(2);
        h.get_by_label(button).click();
        settle(&mut h);
        h.key_press(egui::Key::Escape);
        h.run_steps(2);
    }
    // An export, so that the dock's header names it beside the decode.
    let dir = tempfile::tempdir().expect("temp dir");
    h.state_mut().export_to(dir.path().join("audit.gray.png"), false);
    settle(&mut h);
    assert_eq!(h.state().view().exports.len(), 1, "the export finished");
    assert!(h.state().view().sweep.is_some(), "the sweep finished");
    assert!(h.state().view().round_trips.0.is_some(), "the round trips finished");
    assert!(h.state().view().parity.is_some(), "the parity check finished");
    assert!(h.state().view().transfer_paths.is_some(), "the transfer paths were measured");
    Some(h)
}

/// The audit itself finds a label cut at its panel's side and text below 10 px.
#[test]
fn the_audit_finds_cut_and_tiny_text() {
    let mut h = Harness::builder().with_size([300.0, 100.0]).build_ui(|ui| {
        egui::Panel::left("narrow").exact_size(80.0).show(ui, |ui| {
            ui.add(
                egui::Label::new("a label far wider than its panel").wrap_mode(egui::TextWrapMode::Extend),
            );
        });
        ui.label(egui::RichText::new("tiny").size(8.0));
        ui.label("plain");
        ui.put(
            Rect::from_min_size(egui::pos2(100.0, 60.0), egui::vec2(80.0, 16.0)),
            egui::Label::new("under"),
        );
        ui.put(
            Rect::from_min_size(egui::pos2(110.0, 62.0), egui::vec2(80.0, 16.0)),
            egui::Label::new("over"),
        );
    });
    h.run();
    let found = faults(&h, "test");
    assert!(found.iter().any(|f| f.contains("far wider") && f.contains("is cut by")), "{found:?}");
    assert!(found.iter().any(|f| f.contains("\"tiny\" is smaller than 10 px")), "{found:?}");
    assert!(
        found.iter().any(|f| f.contains("\"under\"") && f.contains("\"over\"") && f.ends_with("overlap"))
    );
    assert!(!found.iter().any(|f| f.contains("plain")), "{found:?}");
}

#[test]
fn no_screen_draws_tiny_or_cut_text() {
    let mut faults_found = Vec::new();
    for size in [[1440.0, 900.0], [1024.0, 640.0]] {
        let Some(mut h) = converted_app(size) else { return };
        h.run_steps(3);
        let at = format!("{}x{}", size[0], size[1]);
        faults_found.extend(faults(&h, &format!("main window {at}")));
        faults_found.extend(outside_windows(&h, &format!("main window {at}")));
        // At 1024x640 the dock shows one chart at a time, the runs chart first.
        let titles: &[&str] = if size[0] > 1100.0 {
            &["run number (as in Last run)", "ms since the run started"]
        } else {
            &["run number (as in Last run)"]
        };
        for title in titles {
            assert!(shown_whole(&h, title), "main window {at}: the axis title {title:?} is on screen");
        }
        shot(&mut h, &format!("main-{at}"));
        // Each window, and the axis titles of the chart it shows.
        let windows: [(&str, Opener, &[&str]); 6] = [
            ("export", GraylabApp::open_export_window, &[]),
            ("size sweep", GraylabApp::open_sweep_window, &["image size, megapixels (log)"]),
            (
                "round trips",
                |app| app.set_round_trips("1, 2", 1),
                &["operations per round trip, n (log scale)"],
            ),
            ("parity", GraylabApp::open_parity_window, &[]),
            ("claims", GraylabApp::open_claims_window, &[]),
            ("transfer paths", |app| app.open_transfer_paths(4), &["bytes per transfer (log scale)"]),
        ];
        for (name, open, titles) in windows {
            open(h.state_mut());
            h.run_steps(4);
            faults_found.extend(faults(&h, &format!("{name} window {at}")));
            faults_found.extend(outside_windows(&h, &format!("{name} window {at}")));
            shot(&mut h, &format!("{}-{at}", name.replace(' ', "-")));
            for title in titles {
                assert!(shown_whole(&h, title), "{name} window {at}: the axis title {title:?} is on screen");
            }
            h.key_press(egui::Key::Escape);
            h.run_steps(3);
        }
        // The sweep window's Roofline tab: its notes fit in the window, the window on screen.
        h.state_mut().open_sweep_window();
        h.run_steps(2);
        h.get_by_label("Roofline").click();
        h.run_steps(6);
        faults_found.extend(faults(&h, &format!("roofline tab {at}")));
        faults_found.extend(outside_windows(&h, &format!("roofline tab {at}")));
        shot(&mut h, &format!("roofline-{at}"));
        let window = h.get_by_role_and_label(Role::Window, "Size sweep: when is the GPU worth it?").rect();
        let screen = Rect::from_min_size(egui::Pos2::ZERO, size.into());
        assert!(screen.contains_rect(window), "roofline tab {at}: the window {window:?} is on screen");
        assert!(shown_whole(&h, "integer operations per byte moved (log)"), "roofline tab {at}: its x axis");
        h.get_by_label("Sizes").click();
        h.key_press(egui::Key::Escape);
        h.run_steps(3);
        assert!(h.query_by_label("Run").is_some(), "{at}: the main window is still there");
    }
    assert!(faults_found.is_empty(), "{} faults:\n{}", faults_found.len(), faults_found.join("\n"));
}
