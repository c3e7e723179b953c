//! A photo's pixel density, which sets its print size (300 pixels per inch: a 3000-pixel side
//! prints 10 inches): read from a TIFF's `XResolution`, `YResolution` and `ResolutionUnit`, a
//! PNG's `pHYs` chunk, a BMP's pixels per metre, a JPEG's JFIF segment or EXIF block, and written
//! back in each format's own fields, exactly where the format stores the input's unit and the
//! nearest value it holds where it does not. Depends on nothing.

use image::metadata::Orientation;

/// Metres in an inch.
const METRES_PER_INCH: f64 = 0.0254;

/// The length a [`Density`] counts pixels in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DensityUnit {
    /// Pixels per inch (dpi): TIFF `ResolutionUnit` 2, JFIF units 1.
    Inch,
    /// Pixels per centimetre: TIFF `ResolutionUnit` 3, JFIF units 2.
    Centimetre,
    /// Pixels per metre: a PNG's `pHYs` unit 1, a BMP's.
    Metre,
}

/// Pixels per unit of length across (`x_per_unit`) and down (`y_per_unit`), each a fraction
/// (numerator, denominator: a TIFF's RATIONAL; JFIF, PNG and BMP store whole numbers), in the
/// unit the file gave. A file that gives only an aspect ratio (no unit) has none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Density {
    /// Pixels per unit across, as numerator and denominator (neither 0).
    pub x_per_unit: (u32, u32),
    /// Pixels per unit down, as numerator and denominator (neither 0).
    pub y_per_unit: (u32, u32),
    /// The unit of length.
    pub unit: DensityUnit,
}

impl Density {
    /// The density of `x_per_unit` and `y_per_unit` pixels per `unit`; `None` where a value is
    /// 0 or has a denominator of 0.
    #[must_use]
    pub fn new(x_per_unit: (u32, u32), y_per_unit: (u32, u32), unit: DensityUnit) -> Option<Self> {
        let valid = |(n, d): (u32, u32)| n > 0 && d > 0;
        (valid(x_per_unit) && valid(y_per_unit)).then_some(Self { x_per_unit, y_per_unit, unit })
    }

    /// The density of a TIFF directory (a TIFF file's, or an EXIF block's): its `XResolution`,
    /// its `YResolution` (`XResolution` where absent) and its `ResolutionUnit` (2, inch, where
    /// absent, as TIFF 6.0 says); `None` for unit 1 (an aspect ratio only) or an unknown one.
    pub(in crate::io) fn from_tiff(
        x_per_unit: (u32, u32),
        y_per_unit: Option<(u32, u32)>,
        unit: Option<u64>,
    ) -> Option<Self> {
        let unit = match unit.unwrap_or(2) {
            2 => DensityUnit::Inch,
            3 => DensityUnit::Centimetre,
            _ => return None,
        };
        Self::new(x_per_unit, y_per_unit.unwrap_or(x_per_unit), unit)
    }

    /// The density of a JFIF segment: `units` 1 (inch) or 2 (centimetre); `None` for 0 (an
    /// aspect ratio only, libjpeg's value where there is no JFIF segment) or a density of 0.
    pub(in crate::io) fn from_jfif(units: u8, x_density: u16, y_density: u16) -> Option<Self> {
        let unit = match units {
            1 => DensityUnit::Inch,
            2 => DensityUnit::Centimetre,
            _ => return None,
        };
        Self::new((u32::from(x_density), 1), (u32::from(y_density), 1), unit)
    }

    /// The density of a PNG's `pHYs` chunk: `unit` 1 (metre); `None` for 0 (an aspect ratio
    /// only).
    pub(in crate::io) fn from_png(x_per_metre: u32, y_per_metre: u32, unit: u8) -> Option<Self> {
        if unit != 1 {
            return None;
        }
        Self::new((x_per_metre, 1), (y_per_metre, 1), DensityUnit::Metre)
    }

    /// Pixels per inch across and down.
    #[must_use]
    pub fn per_inch(self) -> (f64, f64) {
        let inches = match self.unit {
            DensityUnit::Inch => 1.0,
            DensityUnit::Centimetre => 2.54,
            DensityUnit::Metre => METRES_PER_INCH,
        };
        let value = |(n, d): (u32, u32)| f64::from(n) / f64::from(d) * inches;
        (value(self.x_per_unit), value(self.y_per_unit))
    }

    /// The density of the image as shown once `orientation` is applied: a quarter turn swaps
    /// across and down.
    #[must_use]
    pub fn oriented(self, orientation: Orientation) -> Self {
        match orientation {
            Orientation::Rotate90
            | Orientation::Rotate270
            | Orientation::Rotate90FlipH
            | Orientation::Rotate270FlipH => {
                Self { x_per_unit: self.y_per_unit, y_per_unit: self.x_per_unit, unit: self.unit }
            }
            _ => self,
        }
    }

    /// A TIFF's `XResolution`, `YResolution` and `ResolutionUnit`: inches and centimetres as
    /// given, metres (a PNG's) as pixels per inch (see `tiff_per_inch`).
    pub(in crate::io) fn tiff_fields(self) -> ((u32, u32), (u32, u32), u16) {
        match self.unit {
            DensityUnit::Inch => (self.x_per_unit, self.y_per_unit, 2),
            DensityUnit::Centimetre => (self.x_per_unit, self.y_per_unit, 3),
            DensityUnit::Metre => {
                let (x, y) = self.per_inch();
                (tiff_per_inch(x, self.x_per_unit), tiff_per_inch(y, self.y_per_unit), 2)
            }
        }
    }

    /// A PNG's `pHYs` (or a BMP's) pixels per metre across and down, rounded; `None` where one
    /// rounds to 0 or passes `i32::MAX` (BMP's limit).
    pub(in crate::io) fn per_metre(self) -> Option<(u32, u32)> {
        let (x, y) = self.per_inch();
        let per_metre = |inch: f64, exact: (u32, u32)| match self.unit {
            DensityUnit::Metre => whole(f64::from(exact.0) / f64::from(exact.1), i32::MAX as u32),
            _ => whole(inch / METRES_PER_INCH, i32::MAX as u32),
        };
        Some((per_metre(x, self.x_per_unit)?, per_metre(y, self.y_per_unit)?))
    }

    /// A JFIF segment's units and densities: inches and centimetres rounded to whole numbers,
    /// metres as whole pixels per inch; `None` where one rounds to 0 or passes 65535.
    pub(in crate::io) fn jfif(self) -> Option<(u8, u16, u16)> {
        let max = u32::from(u16::MAX);
        let (units, x, y) = match self.unit {
            DensityUnit::Inch => (1, self.x_per_unit, self.y_per_unit),
            DensityUnit::Centimetre => (2, self.x_per_unit, self.y_per_unit),
            DensityUnit::Metre => {
                let (x, y) = self.per_inch();
                return Some((1, u16::try_from(whole(x, max)?).ok()?, u16::try_from(whole(y, max)?).ok()?));
            }
        };
        let value = |(n, d): (u32, u32)| u16::try_from(whole(f64::from(n) / f64::from(d), max)?).ok();
        Some((units, value(x)?, value(y)?))
    }
}

/// `value` rounded to a whole number in 1..=`max`, or `None`.
fn whole(value: f64, max: u32) -> Option<u32> {
    let rounded = value.round();
    #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "checked in 1..=max first")]
    (rounded >= 1.0 && rounded <= f64::from(max)).then_some(rounded as u32)
}

/// Pixels per inch `inch` (from `per_metre` pixels per metre) as a TIFF RATIONAL: the whole
/// number a writer of whole dpi meant where `per_metre` is what it rounds to (a PNG holds 300 dpi
/// as 11811 pixels per metre, 299.9994 dpi), else to a hundredth.
fn tiff_per_inch(inch: f64, per_metre: (u32, u32)) -> (u32, u32) {
    let exact_per_metre = f64::from(per_metre.0) / f64::from(per_metre.1);
    let meant = inch.round();
    if meant >= 1.0 && (meant / METRES_PER_INCH - exact_per_metre).abs() <= 0.5 {
        return (whole(meant, u32::MAX).unwrap_or(1), 1);
    }
    (whole(inch * 100.0, u32::MAX).unwrap_or(1), 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inch(x: u32, y: u32) -> Density {
        Density::new((x, 1), (y, 1), DensityUnit::Inch).expect("a density")
    }

    #[test]
    fn each_format_reads_its_own_units_and_no_aspect_ratio() {
        assert_eq!(Density::from_tiff((300, 1), None, None), Some(inch(300, 300)), "inch by default");
        let halves = Density::from_tiff((600, 2), Some((150, 1)), Some(2));
        assert_eq!(halves.map(Density::per_inch), Some((300.0, 150.0)));
        assert_eq!(Density::from_tiff((300, 1), None, Some(1)), None, "an aspect ratio only");
        assert_eq!(Density::from_tiff((300, 0), None, Some(2)), None);
        assert_eq!(Density::from_jfif(2, 118, 118).map(|d| d.unit), Some(DensityUnit::Centimetre));
        assert_eq!(Density::from_jfif(0, 1, 1), None, "libjpeg's default");
        assert_eq!(Density::from_jfif(1, 0, 0), None);
        assert_eq!(Density::from_png(11811, 5906, 1).map(|d| d.per_inch().0.round()), Some(300.0));
        assert_eq!(Density::from_png(2, 1, 0), None);
    }

    #[test]
    fn each_format_writes_its_units_exactly_or_the_nearest_value() {
        // 300 by 150 dpi: PNG's pixels per metre as GIMP and libpng's users write them.
        let d = inch(300, 150);
        assert_eq!(d.tiff_fields(), ((300, 1), (150, 1), 2));
        assert_eq!(d.per_metre(), Some((11811, 5906)));
        assert_eq!(d.jfif(), Some((1, 300, 150)));
        // A PNG's 300 dpi comes back as 300, not 299.9994; an odd density to a hundredth.
        let png = Density::from_png(11811, 5906, 1).expect("pHYs");
        assert_eq!(png.tiff_fields(), ((300, 1), (150, 1), 2));
        assert_eq!(png.jfif(), Some((1, 300, 150)));
        assert_eq!(png.per_metre(), Some((11811, 5906)), "PNG to PNG: exact");
        let odd = Density::from_png(10001, 10000, 1).expect("pHYs");
        assert_eq!(odd.tiff_fields().0, (25403, 100), "254.0254 dpi");
        assert_eq!(odd.tiff_fields().1, (254, 1), "10000 pixels per metre is 254 dpi");
        // Centimetres stay centimetres where the format has them.
        let cm = Density::from_tiff((1181, 10), None, Some(3)).expect("cm");
        assert_eq!(cm.tiff_fields(), ((1181, 10), (1181, 10), 3));
        assert_eq!(cm.jfif(), Some((2, 118, 118)));
        assert_eq!(cm.per_metre(), Some((11810, 11810)));
        // What a field cannot hold is not written.
        assert_eq!(inch(70_000, 70_000).jfif(), None);
        assert_eq!(Density::from_tiff((1, 1000), None, None).and_then(Density::jfif), None);
    }

    #[test]
    fn a_quarter_turn_swaps_across_and_down() {
        assert_eq!(inch(300, 150).oriented(Orientation::Rotate90), inch(150, 300));
        assert_eq!(inch(300, 150).oriented(Orientation::Rotate270FlipH), inch(150, 300));
        assert_eq!(inch(300, 150).oriented(Orientation::Rotate180), inch(300, 150));
        assert_eq!(inch(300, 150).oriented(Orientation::FlipHorizontal), inch(300, 150));
    }
}
