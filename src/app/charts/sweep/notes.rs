//! The notes under the size-sweep chart: what the crossover lines mean, where the data-resident
//! series lies above the end-to-end one, and the model's crossovers in a sentence that reads well
//! whichever exist.

use crate::engine::sweep::{Series, SweepPoint, SweepResult};

/// What the crossover lines mean (in the colours of the theme shown, `dark_mode`), and the
/// model's crossovers, one note each.
pub(super) fn notes(result: &SweepResult, dark_mode: bool) -> Vec<String> {
    let mut notes = Vec::new();
    if result.crossover_mp.is_some() || result.resident_crossover_mp.is_some() {
        notes.push(crossover_note(dark_mode));
    }
    notes.extend(resident_note(result));
    if let Some(m) = &result.model {
        let measured_mp = result.points.iter().map(|p| p.megapixels).fold(0.0, f64::max);
        notes.push(model_note(
            (m.crossover_mp, m.overlapped_crossover_mp, m.resident_crossover_mp),
            measured_mp,
        ));
    }
    notes
}

/// What the crossover lines mean, each named by its colour on the theme shown
/// (`look::crossover`: yellow on the dark theme, a dark yellow on the light one).
fn crossover_note(dark_mode: bool) -> String {
    let yellow = if dark_mode { "Yellow" } else { "Dark yellow" };
    format!(
        "{yellow} line: GPU end to end beats the CPU from here; dotted blue: with the data already on \
         the GPU."
    )
}

/// Where the data-resident series lies above the end-to-end one (it does strictly less work):
/// at how many sizes, and whether that is within the spread of their runs.
fn resident_note(result: &SweepResult) -> Option<String> {
    let stats = |p: &SweepPoint, s: Series| p.series.iter().find(|(x, _)| *x == s).map(|(_, st)| *st);
    let above: Vec<bool> = result
        .points
        .iter()
        .filter_map(|p| {
            let (resident, total) = (stats(p, Series::GpuResident)?, stats(p, Series::GpuTotal)?);
            (resident.median_ns > total.median_ns).then_some(resident.min_ns <= total.max_ns)
        })
        .collect();
    if above.is_empty() {
        return None;
    }
    let beyond = above.iter().filter(|within| !**within).count();
    let spread = if beyond == 0 {
        "within the spread of their runs (their fastest and slowest overlap)".to_owned()
    } else {
        format!("beyond the spread of their runs at {beyond} of them")
    };
    let why = if result.software_adapter {
        "on a software adapter both are the CPU's cores, shared with whatever else this machine runs \
         while the two are timed one after the other, so a busy machine can swap them"
    } else {
        "the resident passes are timed on the CPU clock, submit to finish, with each dispatch's fixed cost"
    };
    // Not the series' own labels: the legend is where they are named (and looked up).
    Some(format!(
        "The blue line (data resident) lies above the solid orange one (GPU total, end to end) at {} of {} \
         sizes, {spread}: {why}.",
        above.len(),
        result.points.len()
    ))
}

/// The model's three crossovers in one sentence that reads well whichever of them exist: the
/// cases where the GPU would win, with their sizes, then the cases where it never would. A size
/// past the largest the sweep measured (`measured_mp`) is said to be extrapolated.
fn model_note(
    (end_to_end, overlapped, resident): (Option<f64>, Option<f64>, Option<f64>),
    measured_mp: f64,
) -> String {
    let cases = [
        ("end to end", end_to_end),
        ("with host copies fully overlapped", overlapped),
        ("with the data already on the GPU", resident),
    ];
    let at = |mp: f64| {
        if mp <= 0.0 {
            "at any size".to_owned()
        } else if mp > measured_mp {
            format!("from {mp:.2} MP (extrapolated: the sweep went up to {measured_mp:.2} MP)")
        } else {
            format!("from {mp:.2} MP")
        }
    };
    let wins: Vec<String> =
        cases.iter().filter_map(|(how, mp)| mp.map(|mp| format!("{how} {}", at(mp)))).collect();
    let nevers: Vec<String> =
        cases.iter().filter(|(_, mp)| mp.is_none()).map(|(how, _)| (*how).to_owned()).collect();
    let lead = "Model from this machine's ceilings (dotted), every step at its ceiling:";
    match (wins.is_empty(), nevers.is_empty()) {
        (true, _) => format!(
            "{lead} the GPU would never beat the CPU, not end to end, not with host copies fully \
             overlapped, not even with the data already on the GPU."
        ),
        (false, true) => format!("{lead} the GPU would beat the CPU {}.", join(&wins, "and")),
        (false, false) => format!(
            "{lead} the GPU would beat the CPU {}, but never {}.",
            join(&wins, "and"),
            join(&nevers, "or")
        ),
    }
}

/// `a`, `a and b`, `a, b and c`.
fn join(items: &[String], and: &str) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} {and} {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::model_note;

    #[test]
    fn the_crossover_note_names_the_colours_shown() {
        assert!(super::crossover_note(true).starts_with("Yellow line: GPU end to end beats the CPU"));
        assert!(super::crossover_note(false).starts_with("Dark yellow line: GPU end to end beats the CPU"));
    }

    #[test]
    fn the_model_note_reads_well_in_every_case() {
        let lead = "Model from this machine's ceilings (dotted), every step at its ceiling: ";
        let all = model_note((Some(2.0), Some(1.0), Some(0.0)), 33.0);
        assert_eq!(
            all,
            format!(
                "{lead}the GPU would beat the CPU end to end from 2.00 MP, with host copies fully overlapped \
                 from 1.00 MP and with the data already on the GPU at any size."
            )
        );
        let some = model_note((None, None, Some(123.59)), 200.0);
        assert_eq!(
            some,
            format!(
                "{lead}the GPU would beat the CPU with the data already on the GPU from 123.59 MP, but never \
                 end to end or with host copies fully overlapped."
            )
        );
        let beyond = model_note((Some(94.59), None, None), 33.18);
        assert!(
            beyond.contains("from 94.59 MP (extrapolated: the sweep went up to 33.18 MP)"),
            "a size past the sweep is said to be extrapolated: {beyond}"
        );
        let none = model_note((None, None, None), 33.0);
        assert!(none.contains("would never beat the CPU, not end to end"), "{none}");
        for note in [all, some, none, model_note((None, Some(4.0), Some(1.0)), 33.0)] {
            assert!(!note.contains("from never") && !note.contains("  "), "{note}");
        }
    }
}
