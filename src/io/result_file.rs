//! graylab's one result file: what `graylab bench | sweep | claims | info --json` print and the
//! app's Save writes, stamped the same way — a schema version, the kind of result, where and how
//! it was made (graylab's version and build, the host, the GPU adapter, the command line, the
//! time and the load) — then the result's own fields, unchanged. One function reads every such
//! file back (`compare`, the app's Load, a saved bench), checking its kind and schema and
//! naming the file in every error.

use std::path::Path;

use serde::Deserialize as _;

use crate::io::{IoError, write_json};
use crate::system::host::Host;

/// The version of the JSON layout: raised when a field changes meaning or goes away (fields
/// only added keep it). A file of a newer schema is refused by this graylab.
pub const SCHEMA: u32 = 1;

/// The largest result file read back: a sweep over a work grid with every figure, or a bench
/// of every workgroup size, is well under a MiB; a file this large is something else.
pub const MAX_RESULT_BYTES: u64 = 16 << 20;

/// Which kind of result a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultKind {
    /// `graylab bench --json`.
    Bench,
    /// `graylab bench --round-trips --json`.
    RoundTrips,
    /// `graylab bench --workgroups --json`.
    Workgroups,
    /// `graylab sweep --json FILE`, or the app's sweep window's Save.
    Sweep,
    /// `graylab claims --json`, or the app's claims window's Save.
    Claims,
    /// `graylab info --json`.
    Info,
}

impl ResultKind {
    /// The kind a file's stamp names (`"round_trips"`), if graylab knows it.
    #[must_use]
    pub fn from_stamp(stamp: &str) -> Option<Self> {
        Some(match stamp {
            "bench" => Self::Bench,
            "round_trips" => Self::RoundTrips,
            "workgroups" => Self::Workgroups,
            "sweep" => Self::Sweep,
            "claims" => Self::Claims,
            "info" => Self::Info,
            _ => return None,
        })
    }

    /// The name a message gives it ("bench", "round trips").
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Bench => "bench",
            Self::RoundTrips => "round trips",
            Self::Workgroups => "workgroup race",
            Self::Sweep => "sweep",
            Self::Claims => "claims",
            Self::Info => "info",
        }
    }
}

/// Where and how a result was made.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Provenance {
    /// graylab's version.
    pub graylab: String,
    /// `release` or `debug` (a debug build's timings mean nothing).
    pub build: String,
    /// When the file was written, in seconds since 1970 (UTC).
    pub written_unix_s: u64,
    /// The command line, program name first.
    pub invocation: Vec<String>,
    /// The machine.
    pub host: Host,
    /// The GPU adapter the front end opened, if it opened one, as it reports it.
    pub adapter: Option<serde_json::Value>,
}

impl Provenance {
    /// This process now, with `threads` CPU threads and the adapter it opened (`None` if none).
    #[must_use]
    pub fn now(adapter: Option<&impl serde::Serialize>, threads: usize) -> Self {
        Self {
            graylab: crate::system::host::VERSION.to_owned(),
            build: crate::system::host::BUILD.to_owned(),
            written_unix_s: crate::system::clock::unix_now_s(),
            invocation: std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect(),
            host: Host::now(threads),
            adapter: adapter.and_then(|a| serde_json::to_value(a).ok()),
        }
    }
}

/// A result with its stamp in front: `{"schema": 1, "kind": "bench", "provenance": {…}, …}`.
#[derive(serde::Serialize)]
struct Stamped<'a, T: serde::Serialize> {
    schema: u32,
    kind: ResultKind,
    provenance: &'a Provenance,
    #[serde(flatten)]
    body: &'a T,
}

/// `body` as pretty JSON with its stamp (what the CLI prints).
pub fn stamped_json<T: serde::Serialize>(
    kind: ResultKind,
    provenance: &Provenance,
    body: &T,
) -> serde_json::Result<String> {
    serde_json::to_string_pretty(&Stamped { schema: SCHEMA, kind, provenance, body })
}

/// Writes `body` with its stamp to `path`, atomically, never replacing a file unless
/// `overwrite` (what the app's Save writes); the bytes written.
pub fn write_result<T: serde::Serialize>(
    path: &Path,
    overwrite: bool,
    kind: ResultKind,
    provenance: &Provenance,
    body: &T,
) -> Result<u64, IoError> {
    write_json(path, overwrite, &Stamped { schema: SCHEMA, kind, provenance, body })
}

/// A result file read back.
#[derive(Clone, Debug)]
pub struct ResultFile<T> {
    /// Its schema (`None`: written before schema 1).
    pub schema: Option<u32>,
    /// Its kind (`None`: written before schema 1).
    pub kind: Option<ResultKind>,
    /// Where and how it was made (`None`: written before schema 1).
    pub provenance: Option<Provenance>,
    /// The result's own fields.
    pub body: T,
}

/// The stamp's fields, read apart from the body.
#[derive(serde::Deserialize)]
struct Stamp {
    schema: Option<u32>,
    kind: Option<String>,
    provenance: Option<serde_json::Value>,
}

/// Reads the result file at `path` through the one bounded JSON reader ([`crate::io::read_json`]:
/// a regular file of at most [`MAX_RESULT_BYTES`]) as a `T`. With `want`, a file of another kind
/// is refused, saying what it is; a file of a newer schema is always refused. Every error names
/// the file and the kind wanted.
pub fn read_result<T: serde::de::DeserializeOwned>(
    path: &Path,
    want: Option<ResultKind>,
) -> Result<ResultFile<T>, IoError> {
    let expected = want.map_or("graylab result", ResultKind::name);
    let refuse = |reason: String| IoError::NotAResult { path: path.into(), expected, reason };
    let value = crate::io::read_json::<serde_json::Value>(path, MAX_RESULT_BYTES)?
        .ok_or_else(|| refuse("there is no such file".to_owned()))?;
    if !value.is_object() {
        return Err(refuse(not_an_object(&value)));
    }
    let stamp = Stamp::deserialize(&value).map_err(|e| refuse(format!("its stamp: {e}")))?;
    if let Some(schema) = stamp.schema.filter(|&s| s > SCHEMA) {
        return Err(refuse(format!(
            "schema {schema}, newer than this graylab's {SCHEMA}: read it with a newer graylab"
        )));
    }
    let kind = (stamp.kind.as_deref())
        .map(|text| {
            serde_json::from_value::<ResultKind>(text.into())
                .map_err(|_| refuse(format!("it is a result of kind \"{text}\"")))
        })
        .transpose()?;
    if let (Some(want), Some(kind)) = (want, kind)
        && want != kind
    {
        return Err(refuse(format!("it is a saved {}", kind.name())));
    }
    let body = serde_json::from_value(value).map_err(|e| refuse(e.to_string()))?;
    // A provenance this graylab cannot read whole (an older layout) is left out, not an error.
    let provenance = stamp.provenance.and_then(|p| serde_json::from_value(p).ok());
    Ok(ResultFile { schema: stamp.schema, kind, provenance, body })
}

/// What a JSON file that is not an object holds, in words: `convert --json`'s report (a list of
/// the files converted) is told by name.
fn not_an_object(value: &serde_json::Value) -> String {
    use serde_json::Value;
    let what = match value {
        Value::Array(items) if !items.is_empty() && items.iter().all(|i| i.get("input").is_some()) => {
            "a list of files converted, as `graylab convert --json` prints; results are what bench, \
             sweep, claims and info write"
        }
        Value::Array(_) => "a list, where a result is an object",
        Value::Null => "null, where a result is an object",
        Value::Bool(_) => "a boolean, where a result is an object",
        Value::Number(_) => "a number, where a result is an object",
        Value::String(_) => "a string, where a result is an object",
        Value::Object(_) => "an object",
    };
    format!("it holds {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamped_result_says_its_schema_kind_and_machine_before_its_own_fields() {
        let body = serde_json::json!({ "results": [1, 2] });
        let provenance = Provenance::now(None::<&()>, 3);
        let text = stamped_json(ResultKind::Bench, &provenance, &body).expect("json");
        let value: serde_json::Value = serde_json::from_str(&text).expect("parses");
        assert_eq!(value["schema"], SCHEMA);
        assert_eq!(value["kind"], "bench");
        assert_eq!(value["results"], serde_json::json!([1, 2]), "the body is unchanged");
        let provenance = &value["provenance"];
        assert_eq!(provenance["host"]["threads"].as_u64(), Some(3), "{provenance}");
        assert!(provenance["invocation"].as_array().is_some_and(|a| !a.is_empty()), "{provenance}");
        assert!(provenance["written_unix_s"].as_u64().is_some_and(|s| s > 1_700_000_000), "{provenance}");
        assert_eq!(provenance["adapter"], serde_json::Value::Null);
        assert!(text.find("\"schema\"") < text.find("\"results\""), "the stamp comes first");
    }

    #[test]
    fn one_reader_checks_the_kind_and_schema_and_names_the_file() {
        #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        struct Body {
            points: Vec<u32>,
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("sweep.json");
        let provenance = Provenance::now(Some(&serde_json::json!({ "name": "llvmpipe" })), 2);
        let body = Body { points: vec![4, 5] };
        write_result(&path, false, ResultKind::Sweep, &provenance, &body).expect("written");
        assert!(matches!(
            write_result(&path, false, ResultKind::Sweep, &provenance, &body),
            Err(IoError::Exists { .. })
        ));

        let read = read_result::<Body>(&path, Some(ResultKind::Sweep)).expect("read back");
        assert_eq!((read.schema, read.kind, read.body), (Some(SCHEMA), Some(ResultKind::Sweep), body));
        let adapter = read.provenance.and_then(|p| p.adapter).expect("adapter kept");
        assert_eq!(adapter["name"], "llvmpipe");

        let err = read_result::<Body>(&path, Some(ResultKind::Claims))
            .expect_err("a sweep is no claims")
            .to_string();
        assert_eq!(err, format!("not a saved claims (it is a saved sweep): {}", path.display()));
        // Any kind when none is asked; a file from before the stamp reads as its body alone.
        std::fs::write(&path, r#"{"points": [7]}"#).expect("write");
        let old = read_result::<Body>(&path, None).expect("unstamped");
        assert_eq!((old.schema, old.kind, old.body.points), (None, None, vec![7]));
        std::fs::write(&path, r#"{"schema": 9, "kind": "sweep", "points": []}"#).expect("write");
        let err = read_result::<Body>(&path, None).expect_err("newer").to_string();
        assert!(err.contains("schema 9, newer than this graylab's 1"), "{err}");
        std::fs::write(&path, r#"{"kind": "recipe", "points": []}"#).expect("write");
        let err = read_result::<Body>(&path, Some(ResultKind::Sweep)).expect_err("unknown kind").to_string();
        assert!(err.starts_with("not a saved sweep (it is a result of kind \"recipe\")"), "{err}");
        // JSON that is no object is told in words, not serde's (a convert report by name).
        for (text, says) in [
            (
                r#"[{"input": "a.png", "run": {}}]"#,
                "a list of files converted, as `graylab convert --json` prints",
            ),
            ("[1, 2]", "a list, where a result is an object"),
            ("7", "a number, where a result is an object"),
        ] {
            std::fs::write(&path, text).expect("write");
            let err = read_result::<Body>(&path, None).expect_err(text).to_string();
            assert!(err.starts_with(&format!("not a saved graylab result (it holds {says}")), "{err}");
        }
        std::fs::write(&path, "{ damaged").expect("write");
        let err = read_result::<Body>(&path, Some(ResultKind::Sweep)).expect_err("damaged").to_string();
        assert!(err.starts_with("not a graylab JSON file (") && err.contains("sweep.json"), "{err}");
        let missing = dir.path().join("none.json");
        let err = read_result::<Body>(&missing, None).expect_err("missing").to_string();
        assert_eq!(err, format!("not a saved graylab result (there is no such file): {}", missing.display()));
    }
}
