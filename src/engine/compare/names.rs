//! What a figure is named by besides its path: every setting that changes what was measured.
//! A bench run is named by its settings, its image's size and whether its input was kept on the
//! GPU; a whole file of one setup (round trips, a sweep, a workgroup race) by what its top level
//! states (image size, formula, workgroup, work); an array element by what tells it apart from
//! its neighbours (a sweep's point by its `WxH`, a transfer path by its name, a probed size by its
//! bytes). A figure of another setting is another figure: it is in one result only, never set
//! against this one.
//!
//! Two settings are named by what they mean rather than as written: a CPU run on every core the
//! machine has (the default) is `all cores`, so two machines of other core counts compare their
//! CPUs as an engineer asks ("which is faster with all its cores"), while a count asked with
//! `--threads N` stays `N threads`; and divergent work, whose cost depends on the pixels, names
//! the image it ran on. A GPU figure is never named by the CPU's threads.

use serde_json::Value;

/// The kinds whose top level states the setup every figure in the file was measured with (a
/// bench's runs each carry their own `settings`).
const SET_AT_THE_TOP: [&str; 3] = ["round_trips", "sweep", "workgroups"];

/// The top-level keys that name such a file's setup. A sweep's points name their own work and
/// op; its CPU series say their threads (`cpu1`, `cpu_all`), a round trip's CPU figures theirs
/// ([`CPU_KEYS`]).
const SETUP_KEYS: [&str; 5] = ["formula", "workgroup", "work_rounds", "divergent", "work"];

/// A round trip's figures that depend on its CPU thread count (its CPU rounds, and the GPU's
/// speed-up over them): named with it.
const CPU_KEYS: [&str; 2] = ["cpu_total_ns", "speed_up"];

/// What a whole result says that names its figures: the image its runs ran on, the cores of the
/// machine, whether its command asked for its thread counts, and the CPU threads of a file of
/// one setup (round trips).
#[derive(Debug, Default)]
pub(super) struct Facts {
    /// The image, as its figures name it: a file's name (no folder) or `synthetic`.
    image: Option<String>,
    /// The machine's CPU threads (all its cores), where the file says.
    machine_threads: Option<u64>,
    /// Whether the command line asked for a thread count (`--threads N`; `--threads all` asks
    /// for every count, the last of them all cores).
    threads_asked: bool,
    /// A round trip's CPU threads, as named.
    file_threads: Option<String>,
}

impl Facts {
    /// The facts of `json`, a result of `kind`.
    pub(super) fn of(json: &Value, kind: Option<&str>) -> Self {
        let invocation: Vec<&str> = json
            .pointer("/provenance/invocation")
            .and_then(Value::as_array)
            .map(|args| args.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let asked = |value: Option<&&str>| value.is_some_and(|v| *v != "all");
        let threads_asked = invocation.iter().enumerate().any(|(i, arg)| {
            (*arg == "--threads" && asked(invocation.get(i + 1)))
                || arg.strip_prefix("--threads=").is_some_and(|v| asked(Some(&v)))
        });
        // A bench states the machine's threads at its top; elsewhere `cpu_threads` is the count
        // the file ran with, and only the provenance says the machine's.
        let machine_threads = json
            .pointer("/provenance/host/threads")
            .and_then(Value::as_u64)
            .or_else(|| json.get("cpu_threads").and_then(Value::as_u64).filter(|_| kind == Some("bench")));
        let mut facts = Self { image: image_name(json), machine_threads, threads_asked, file_threads: None };
        if kind == Some("round_trips") {
            facts.file_threads =
                json.get("cpu_threads").and_then(Value::as_u64).map(|t| facts.threads_name(t));
        }
        facts
    }

    /// `threads` as a run's name says them: `all cores` where the run used every core by default.
    fn threads_name(&self, threads: u64) -> String {
        if !self.threads_asked && self.machine_threads == Some(threads) {
            "all cores".to_owned()
        } else {
            format!("{threads} threads")
        }
    }

    /// An object key as a figure's name says it: a round trip's CPU figure with its threads.
    pub(super) fn key_name(&self, key: &str) -> String {
        match &self.file_threads {
            Some(threads) if CPU_KEYS.contains(&key) => format!("{key} ({threads})"),
            _ => key.to_owned(),
        }
    }
}

/// The image a result ran on, as the header says it (`even1024.png (1024x1024 Rgb8)`,
/// `synthetic 1024x1024 Rgb8`): a bench's `image`, a sweep's `source`.
#[must_use]
pub fn image_of(json: &Value) -> Option<&str> {
    json.get("image").or_else(|| json.get("source")).and_then(Value::as_str)
}

/// The image as a figure's name says it: `synthetic`, or the file's name without its folder
/// and its size (two machines keep their photos in other folders).
fn image_name(json: &Value) -> Option<String> {
    let image = image_of(json)?;
    if image.starts_with("synthetic") {
        return Some("synthetic".to_owned());
    }
    let file = image.rsplit_once(" (").map_or(image, |(file, _)| file);
    Some(file.rsplit(['/', '\\']).next().unwrap_or(file).to_owned())
}

/// The name of a whole file's figures, `wg 256 bt601 k=64 512x384`, where `kind` states its
/// setup at the top; `None` where it states none.
pub(super) fn root_label(json: &Value, kind: Option<&str>, facts: &Facts) -> Option<String> {
    if !kind.is_some_and(|k| SET_AT_THE_TOP.contains(&k)) {
        return None;
    }
    let setup: serde_json::Map<String, Value> =
        SETUP_KEYS.iter().filter_map(|&key| json.get(key).map(|v| (key.to_owned(), v.clone()))).collect();
    let setup = Value::Object(setup);
    let parts =
        [settings_label(&setup, facts), size_of(json).unwrap_or_default(), image_label(&setup, facts)];
    let label = parts.into_iter().filter(|p| !p.is_empty()).collect::<Vec<_>>().join(" ");
    (!label.is_empty()).then_some(label)
}

/// An object's image size, `WxH`, where it says it.
fn size_of(item: &Value) -> Option<String> {
    let side = |key| item.get(key).and_then(Value::as_u64);
    Some(format!("{}x{}", side("width")?, side("height")?))
}

/// `of even1024.png` where `settings` run divergent work (its cost depends on the pixels, so
/// another image is other work); empty otherwise.
fn image_label(settings: &Value, facts: &Facts) -> String {
    match &facts.image {
        Some(image) if divergent(settings) => format!("of {image}"),
        _ => String::new(),
    }
}

/// Whether `settings` (a run's, or a file's setup) ask for divergent work.
fn divergent(s: &Value) -> bool {
    s.get("work").unwrap_or(s).get("divergent").and_then(Value::as_bool) == Some(true)
}

/// What tells an array element apart from its neighbours (a run's settings and image, a
/// sweep's size, work and op, a pass count, a workgroup shape, a phase and its clock, a
/// transfer path, a probed size).
pub(super) fn label_of(item: &Value, facts: &Facts) -> Option<String> {
    let text = |key| item.get(key).and_then(Value::as_str).map(str::to_owned);
    if let Some(settings) = item.get("settings") {
        let parts = [
            settings_label(settings, facts),
            size_of(item).unwrap_or_default(),
            image_label(settings, facts),
        ];
        let mut label = parts.into_iter().filter(|p| !p.is_empty()).collect::<Vec<_>>().join(" ");
        if item.get("input_kept_on_gpu").and_then(Value::as_bool) == Some(true) {
            label.push_str(" input kept on GPU");
        }
        return Some(label);
    }
    if let Some(id) = item.get("id").and_then(Value::as_u64) {
        return Some(format!("claim {id}"));
    }
    if let Some(mp) = item.get("megapixels").and_then(Value::as_f64) {
        // Its size as a bench names one: 0.001 and 0.004 MP are both "0.00 MP".
        let size = size_of(item).unwrap_or_else(|| format!("{mp} MP"));
        let rounds = item.get("work_rounds").and_then(Value::as_u64).unwrap_or(0);
        let work = if rounds > 0 { format!(" k={rounds}") } else { String::new() };
        let op = item.get("op").and_then(Value::as_str).filter(|op| *op != "none");
        return Some(format!("{size}{work}{}", op.map_or_else(String::new, |op| format!(" then {op}"))));
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
    if let Some(path) = item.get("path") {
        // A transfer path, as `info --probe` prints it.
        let kind = serde_json::from_value::<crate::gpu::PathKind>(path.clone()).ok();
        return kind.map(|k| k.label().to_owned()).or_else(|| text("path"));
    }
    let named = text("phase").or_else(|| text("statistic")).or_else(|| text("name")).or_else(|| text("pass"));
    // A probed size of a transfer path.
    named.or_else(|| item.get("bytes").and_then(Value::as_u64).map(crate::system::units::human_bytes))
}

/// Settings as a name: `gpu wg 16x16 bt601`, `cpu all cores linear k=64`, `cpu 2 threads bt601
/// then blur:8`; without a backend (a file that ran both) its workgroup, `wg 256 bt601 k=64
/// divergent`. What the settings do not say is left out.
fn settings_label(s: &Value, facts: &Facts) -> String {
    let text = |key| s.get(key).and_then(Value::as_str);
    let num = |group: Option<&Value>, key| group.and_then(|g| g.get(key)).and_then(Value::as_u64);
    let backend = text("backend");
    let mut parts: Vec<String> = backend.map(str::to_owned).into_iter().collect();
    if backend != Some("cpu") {
        parts.extend(workgroup_name(s.get("workgroup")).map(|wg| format!("wg {wg}")));
    }
    // Only a CPU run is named by its threads: a GPU run's `threads` are the CPU's, unused.
    if backend == Some("cpu") {
        parts.extend(num(Some(s), "threads").map(|t| facts.threads_name(t)));
    }
    parts.extend(text("formula").map(str::to_owned));
    let work = s.get("work");
    let rounds = num(work, "rounds").or_else(|| num(Some(s), "work_rounds")).unwrap_or(0);
    if rounds > 0 {
        parts.push(format!("k={rounds}"));
    }
    if divergent(s) {
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
