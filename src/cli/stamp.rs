//! What every JSON graylab writes says of itself, so that files from two machines or two days
//! can be compared (`graylab compare`): a schema version and the kind of result, then where and
//! how it was made — graylab's version and build, the host (CPU model, threads, memory), the GPU
//! adapter (name, driver, backend, limits) where one was opened, the command line, the time
//! and the load average then. The result's own fields follow, unchanged.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::engine::{AdapterReport, available_threads};
use crate::system::host::Host;

/// The version of the JSON layout: raised when a field changes meaning or goes away (fields
/// only added keep it). `graylab compare` refuses files of a newer schema than its own.
pub const SCHEMA: u32 = 1;

/// Which command wrote a JSON file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// `graylab bench --json`.
    Bench,
    /// `graylab bench --round-trips --json`.
    RoundTrips,
    /// `graylab bench --workgroups --json`.
    Workgroups,
    /// `graylab sweep --json FILE`.
    Sweep,
    /// `graylab claims --json`.
    Claims,
    /// `graylab info --json`.
    Info,
}

/// Where and how a result was made.
#[derive(Debug, serde::Serialize)]
pub struct Provenance {
    /// graylab's version.
    pub graylab: &'static str,
    /// `release` or `debug` (a debug build's timings mean nothing).
    pub build: &'static str,
    /// When the file was written, in seconds since 1970 (UTC).
    pub written_unix_s: u64,
    /// The command line, program name first.
    pub invocation: Vec<String>,
    /// The machine.
    pub host: Host,
    /// The GPU adapter the command opened, if it opened one.
    pub adapter: Option<AdapterReport>,
}

impl Provenance {
    /// This process now, with the adapter it opened (`None` if it opened none).
    #[must_use]
    pub fn now(adapter: Option<AdapterReport>) -> Self {
        Self {
            graylab: env!("CARGO_PKG_VERSION"),
            build: if cfg!(debug_assertions) { "debug" } else { "release" },
            written_unix_s: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            invocation: std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect(),
            host: Host::now(available_threads()),
            adapter,
        }
    }
}

/// A result with its stamp in front: `{"schema": 1, "kind": "bench", "provenance": {…}, …}`.
#[derive(serde::Serialize)]
struct Stamped<'a, T: serde::Serialize> {
    schema: u32,
    kind: Kind,
    provenance: Provenance,
    #[serde(flatten)]
    body: &'a T,
}

/// `body` as pretty JSON with its stamp: the schema, `kind`, and the provenance with `adapter`.
pub fn to_json<T: serde::Serialize>(
    kind: Kind,
    adapter: Option<AdapterReport>,
    body: &T,
) -> serde_json::Result<String> {
    serde_json::to_string_pretty(&Stamped {
        schema: SCHEMA,
        kind,
        provenance: Provenance::now(adapter),
        body,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_stamped_result_says_its_schema_kind_and_machine_before_its_own_fields() {
        let body = serde_json::json!({ "results": [1, 2] });
        let text = super::to_json(super::Kind::Bench, None, &body).expect("json");
        let value: serde_json::Value = serde_json::from_str(&text).expect("parses");
        assert_eq!(value["schema"], super::SCHEMA);
        assert_eq!(value["kind"], "bench");
        assert_eq!(value["results"], serde_json::json!([1, 2]), "the body is unchanged");
        let provenance = &value["provenance"];
        assert!(provenance["host"]["threads"].as_u64().is_some_and(|t| t >= 1), "{provenance}");
        assert!(provenance["invocation"].as_array().is_some_and(|a| !a.is_empty()), "{provenance}");
        assert!(provenance["written_unix_s"].as_u64().is_some_and(|s| s > 1_700_000_000), "{provenance}");
        assert_eq!(provenance["adapter"], serde_json::Value::Null);
        assert!(text.find("\"schema\"") < text.find("\"results\""), "the stamp comes first");
    }
}
