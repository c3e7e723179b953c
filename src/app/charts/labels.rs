//! Where a value's label stands over its bar: on that bar's own top, centred or flush with one
//! of its edges, in the first font that keeps it clear of every taller bar beside it and inside
//! the plot; nowhere (the hover still says it) when none does. Lifting a label over a taller
//! neighbour put it on the wrong bar ("100.5 ms" over a 402 ms bar).

use egui::Align2;

/// A bar on screen: its left and right edges and its top, in points (y grows downwards).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BarPx {
    /// Its left edge.
    pub left: f32,
    /// Its right edge.
    pub right: f32,
    /// Its top.
    pub top: f32,
}

/// Where to draw a label over `own`: the x of its anchor in points, the anchor (its bottom on
/// the bar's top), and which of `widths` (the label's width in each font, preferred first) it
/// takes; `None` when it fits nowhere. It must stay within `frame` (left and right edges) and
/// clear of each of `others` whose top is above the label's bottom plus `gap` (`gap` also
/// keeps it from the plot's edges).
#[must_use]
pub fn place(
    own: BarPx,
    others: &[BarPx],
    frame: (f32, f32),
    widths: &[f32],
    gap: f32,
) -> Option<(f32, Align2, usize)> {
    let centre = f32::midpoint(own.left, own.right);
    for (font, &width) in widths.iter().enumerate() {
        let candidates = [
            (centre, Align2::CENTER_BOTTOM, centre - width / 2.0),
            (own.right, Align2::RIGHT_BOTTOM, own.right - width),
            (own.left, Align2::LEFT_BOTTOM, own.left),
        ];
        for (x, anchor, left) in candidates {
            let right = left + width;
            let inside = left >= frame.0 + gap && right <= frame.1 - gap;
            let clear = others
                .iter()
                .all(|b| b.top > own.top - gap || b.right + gap <= left || b.left - gap >= right);
            if inside && clear {
                return Some((x, anchor, font));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const GAP: f32 = 2.0;

    #[test]
    fn a_label_stands_on_its_own_bar_and_never_over_a_taller_neighbour() {
        // Run 25 (402 ms, tall) then run 26 (100.5 ms, short), 30 points apart, bars 21 wide.
        let tall = BarPx { left: 0.0, right: 21.0, top: 20.0 };
        let own = BarPx { left: 30.0, right: 51.0, top: 300.0 };
        // A 60-point label fits nowhere on the short bar beside the tall one but left-flush,
        // running on to the right where there is room.
        let (x, anchor, font) = place(own, &[tall], (-10.0, 200.0), &[60.0, 45.0], GAP).expect("placed");
        assert_eq!((x, anchor, font), (30.0, Align2::LEFT_BOTTOM, 0));
        // With no room on the right either, the smaller font is tried, then no label at all.
        let after = BarPx { left: 60.0, right: 81.0, top: 150.0 };
        assert_eq!(place(own, &[tall, after], (-10.0, 200.0), &[60.0, 45.0], GAP), None);
        let (_, _, font) = place(own, &[tall, after], (-10.0, 200.0), &[60.0, 25.0], GAP).expect("small");
        assert_eq!(font, 1);
        // A shorter neighbour is no obstacle: centred on its bar.
        let low = BarPx { left: 0.0, right: 21.0, top: 320.0 };
        let (x, anchor, _) = place(own, &[low], (-10.0, 200.0), &[60.0], GAP).expect("placed");
        assert_eq!((x, anchor), (40.5, Align2::CENTER_BOTTOM));
        // Never past the plot's right edge.
        let (x, anchor, _) = place(own, &[low], (-10.0, 56.0), &[40.0], GAP).expect("placed");
        assert_eq!((x, anchor), (51.0, Align2::RIGHT_BOTTOM));
    }
}
