//! What an estimate says: its seconds, what they rest on ([`Basis`]), its words in a line or a
//! sentence (a job that stops once decided with its bound), and a job's JSON with its estimate
//! beside what it took ([`Timed`]).

/// What an estimate rests on, from the best to the worst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum Basis {
    /// Runs seen on this machine.
    Seen,
    /// This machine's ceilings (bytes over bandwidth, operations over the compute ceiling).
    Ceilings,
    /// A stated rough guess.
    Guess,
}

impl Basis {
    /// Its name in JSON: "seen", "ceilings", "guess".
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Seen => "seen",
            Self::Ceilings => "ceilings",
            Self::Guess => "guess",
        }
    }
}

/// A job's JSON report with what the job was estimated to take before it started, and what it
/// took: the shape of every long job's JSON, the CLI's and the app's.
#[derive(serde::Serialize)]
pub struct Timed<'a, T: serde::Serialize> {
    /// The report itself, its fields at the top level.
    #[serde(flatten)]
    pub report: &'a T,
    /// Seconds the job was estimated to take, before it started.
    pub estimate_s: f64,
    /// What the estimate rested on ("seen", "ceilings", "guess").
    pub estimate_basis: &'static str,
    /// Seconds it took (`None` where the report holds its own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub took_s: Option<f64>,
}

impl<'a, T: serde::Serialize> Timed<'a, T> {
    /// `report`, estimated at `estimate` and taking `took_s`.
    pub fn new(report: &'a T, estimate: Estimate, took_s: Option<f64>) -> Self {
        Self { report, estimate_s: estimate.seconds, estimate_basis: estimate.basis.name(), took_s }
    }
}

/// How long something will take and what that rests on.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Estimate {
    /// Seconds.
    pub seconds: f64,
    /// What it rests on.
    pub basis: Basis,
}

impl Estimate {
    /// Whether nothing of this kind was seen here yet.
    #[must_use]
    pub fn is_guess(&self) -> bool {
        self.basis != Basis::Seen
    }

    /// "about 12 s (from runs seen here)", or "under a second (…)": [`Self::sentence`] short
    /// enough for a line beside a button.
    #[must_use]
    pub fn brief(&self) -> String {
        self.brief_within(None)
    }

    /// [`Self::brief`] of a job that stops once decided, with its bound: "about 4 s (a rough
    /// guess), at most 8 s until decided", or said once where the guess is the bound: "at most
    /// 8 s (a rough guess), less once decided".
    #[must_use]
    pub fn brief_within(&self, at_most_s: Option<f64>) -> String {
        let (amount, bound) = self.amount_within(at_most_s);
        format!("{amount} ({}){bound}", self.why().1)
    }

    /// What it rests on, in a sentence's words: "from runs seen on this machine", "a rough guess
    /// until a run is seen here", … (as `estimate_basis` names it in JSON).
    #[must_use]
    pub fn basis_text(&self) -> &'static str {
        self.why().0
    }

    /// "about 12 s, from runs seen on this machine", or "under a second, …" (never "about 0 s").
    #[must_use]
    pub fn sentence(&self) -> String {
        format!("{}, {}", self.amount(), self.why().0)
    }

    /// The amount, and what follows its basis: the bound `at_most_s` of a job that stops once
    /// decided (an amount that is the bound becomes "at most …").
    fn amount_within(&self, at_most_s: Option<f64>) -> (String, String) {
        let amount = self.amount();
        match at_most_s.map(crate::system::units::duration_text) {
            Some(bound) if amount == format!("about {bound}") => {
                (format!("at most {bound}"), ", less once decided".to_owned())
            }
            Some(bound) => (amount, format!(", at most {bound} until decided")),
            None => (amount, String::new()),
        }
    }

    /// "about 12 s", or "under a second" (or, for a figure no job takes, "over 1000 h" or "an
    /// unknown time", never "about inf h").
    fn amount(&self) -> String {
        use crate::system::units::{LONGEST_WRITTEN_S, duration_text};
        if self.seconds < 0.5 {
            "under a second".to_owned()
        } else if self.seconds < LONGEST_WRITTEN_S {
            format!("about {}", duration_text(self.seconds.max(1.0)))
        } else {
            duration_text(self.seconds)
        }
    }

    /// What it rests on, in a sentence's words and in a few.
    fn why(&self) -> (&'static str, &'static str) {
        match self.basis {
            Basis::Seen => ("from runs seen on this machine", "from runs seen here"),
            Basis::Ceilings => {
                ("a guess from this machine's ceilings until a run is seen", "from this machine's ceilings")
            }
            Basis::Guess => ("a rough guess until a run is seen here", "a rough guess"),
        }
    }
}
