//! What a figure is named by besides its path: every setting that changes what was measured.
//! A bench run is named by its settings, its image's size and whether its input was kept on the
//! GPU; a whole file of one setup (round trips, a sweep, a workgroup race) by what its top level
//! states (image size, formula, workgroup, threads, work); an array element by what tells it
//! apart from its neighbours. A figure of another setting is another figure: it is in one result
//! only, never set against this one.

use serde_json::Value;

/// The kinds whose top level states the setup every figure in the file was measured with (a
/// bench's runs each carry their own `settings`).
const SET_AT_THE_TOP: [&str; 3] = ["round_trips", "sweep", "workgroups"];

/// The top-level keys that name such a file's setup. A sweep's points name their own work and op.
const SETUP_KEYS: [&str; 6] = ["formula", "workgroup", "cpu_threads", "work_rounds", "divergent", "work"];

/// The name of a whole file's figures, `wg 256 2 threads bt601 k=64 512x384`, where `kind` states
/// its setup at the top; `None` where it states none.
pub(super) fn root_label(json: &Value, kind: Option<&str>) -> Option<String> {
    if !kind.is_some_and(|k| SET_AT_THE_TOP.contains(&k)) {
        return None;
    }
    let setup: serde_json::Map<String, Value> =
        SETUP_KEYS.iter().filter_map(|&key| json.get(key).map(|v| (key.to_owned(), v.clone()))).collect();
    let parts = [settings_label(&Value::Object(setup)), size_of(json).unwrap_or_default()];
    let label = parts.into_iter().filter(|p| !p.is_empty()).collect::<Vec<_>>().join(" ");
    (!label.is_empty()).then_some(label)
}

/// An object's image size, `WxH`, where it says it.
fn size_of(item: &Value) -> Option<String> {
    let side = |key| item.get(key).and_then(Value::as_u64);
    Some(format!("{}x{}", side("width")?, side("height")?))
}

/// What tells an array element apart from its neighbours (a run's settings and image, a
/// sweep's size, work and op, a pass count, a workgroup shape, a phase and its clock).
pub(super) fn label_of(item: &Value) -> Option<String> {
    let text = |key| item.get(key).and_then(Value::as_str).map(str::to_owned);
    if let Some(settings) = item.get("settings") {
        let mut label = settings_label(settings);
        if let Some(size) = size_of(item) {
            label = format!("{label} {size}");
        }
        if item.get("input_kept_on_gpu").and_then(Value::as_bool) == Some(true) {
            label.push_str(" input kept on GPU");
        }
        return Some(label);
    }
    if let Some(id) = item.get("id").and_then(Value::as_u64) {
        return Some(format!("claim {id}"));
    }
    if let Some(mp) = item.get("megapixels").and_then(Value::as_f64) {
        let rounds = item.get("work_rounds").and_then(Value::as_u64).unwrap_or(0);
        let work = if rounds > 0 { format!(" k={rounds}") } else { String::new() };
        let op = item.get("op").and_then(Value::as_str).filter(|op| *op != "none");
        return Some(format!("{mp:.2} MP{work}{}", op.map_or_else(String::new, |op| format!(" then {op}"))));
    }
    if let Some(passes) = item.get("passes").and_then(Value::as_u64) {
        return Some(format!("{passes} passes"));
    }
    if let Some(shape) = text("workgroup") {
        // A race's shape: its kernel times are on its clock.
        return Some(
            text("clock").map_or_else(|| format!("wg {shape}"), |clock| format!("wg {shape} [{clock}]")),
        );
    }
    if let (Some(phase), Some(clock)) = (text("phase"), text("source")) {
        return Some(format!("{phase} [{clock}]"));
    }
    text("phase").or_else(|| text("statistic")).or_else(|| text("name")).or_else(|| text("pass"))
}

/// Settings as a name: `gpu wg 16x16 bt601`, `cpu 2 threads linear k=64`, `cpu 2 threads bt601
/// then blur:8`; without a backend (a file that ran both) its workgroup and its threads, `wg 256
/// 2 threads bt601 k=64 divergent`. What the settings do not say is left out.
fn settings_label(s: &Value) -> String {
    let text = |key| s.get(key).and_then(Value::as_str);
    let num = |group: Option<&Value>, key| group.and_then(|g| g.get(key)).and_then(Value::as_u64);
    let backend = text("backend");
    let mut parts: Vec<String> = backend.map(str::to_owned).into_iter().collect();
    if backend != Some("cpu") {
        parts.extend(workgroup_name(s.get("workgroup")).map(|wg| format!("wg {wg}")));
    }
    if backend != Some("gpu") {
        let threads = num(Some(s), "threads").or_else(|| num(Some(s), "cpu_threads"));
        parts.extend(threads.map(|t| format!("{t} threads")));
    }
    parts.extend(text("formula").map(str::to_owned));
    let work = s.get("work");
    let rounds = num(work, "rounds").or_else(|| num(Some(s), "work_rounds")).unwrap_or(0);
    if rounds > 0 {
        parts.push(format!("k={rounds}"));
    }
    let divergent = work.unwrap_or(s).get("divergent").and_then(Value::as_bool) == Some(true);
    if divergent {
        parts.push("divergent".to_owned());
    }
    parts.extend(text("op").filter(|op| *op != "none").map(|op| format!("then {op}")));
    parts.join(" ")
}

/// A workgroup shape as its name, `256` or `16x16`, from `{ "x": 16, "y": 16 }` or the name.
fn workgroup_name(shape: Option<&Value>) -> Option<String> {
    let shape = shape?;
    if let Some(name) = shape.as_str() {
        return Some(name.to_owned());
    }
    let x = shape.get("x").and_then(Value::as_u64)?;
    Some(match shape.get("y").and_then(Value::as_u64).unwrap_or(1) {
        y if y > 1 => format!("{x}x{y}"),
        _ => format!("{x}"),
    })
}
