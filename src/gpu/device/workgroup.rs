//! Workgroup shapes: the ones graylab offers, parsing (`256`, `16x16`) and the check against a
//! device's limits (wgpu 30 does not validate override-set workgroup sizes itself,
//! gfx-rs/wgpu#8946, so an oversized shape must never reach pipeline creation).

use std::fmt;
use std::str::FromStr;

/// A compute workgroup shape: `x` invocations wide and `y` high (`y = 1` for 1-D sizes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct WorkgroupSize {
    /// Invocations along x.
    pub x: u32,
    /// Invocations along y (1 for a 1-D size).
    pub y: u32,
}

impl WorkgroupSize {
    /// The default: 256 invocations in a row, a good size on every GPU we know of.
    pub const DEFAULT: Self = Self { x: 256, y: 1 };

    /// Every shape graylab offers, 1-D first; [`Self::fits`] filters them per device.
    pub const CANDIDATES: [Self; 12] = [
        Self { x: 32, y: 1 },
        Self { x: 64, y: 1 },
        Self { x: 128, y: 1 },
        Self { x: 256, y: 1 },
        Self { x: 512, y: 1 },
        Self { x: 1024, y: 1 },
        Self { x: 8, y: 8 },
        Self { x: 16, y: 8 },
        Self { x: 16, y: 16 },
        Self { x: 32, y: 8 },
        Self { x: 32, y: 16 },
        Self { x: 32, y: 32 },
    ];

    /// Invocations per workgroup (`x * y`).
    #[must_use]
    pub fn invocations(self) -> u32 {
        self.x.saturating_mul(self.y)
    }

    /// Whether a device with these limits can run this shape.
    #[must_use]
    pub fn fits(self, limits: &wgpu::Limits) -> bool {
        self.x >= 1
            && self.y >= 1
            && self.x <= limits.max_compute_workgroup_size_x
            && self.y <= limits.max_compute_workgroup_size_y
            && self.invocations() <= limits.max_compute_invocations_per_workgroup
    }

    /// The candidates that fit these limits, in menu order.
    #[must_use]
    pub fn valid_for(limits: &wgpu::Limits) -> Vec<Self> {
        Self::CANDIDATES.into_iter().filter(|w| w.fits(limits)).collect()
    }
}

impl Default for WorkgroupSize {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl fmt::Display for WorkgroupSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.y == 1 { write!(f, "{}", self.x) } else { write!(f, "{}x{}", self.x, self.y) }
    }
}

/// The error for a workgroup size that is not `N` or `NxM` with positive whole numbers.
#[derive(Debug, thiserror::Error)]
#[error("invalid workgroup size {0:?} (expected e.g. 256 or 16x16)")]
pub struct ParseWorkgroupError(String);

impl FromStr for WorkgroupSize {
    type Err = ParseWorkgroupError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || ParseWorkgroupError(s.to_owned());
        let num = |t: &str| t.trim().parse::<u32>().ok().filter(|v| *v > 0).ok_or_else(bad);
        match s.split_once(['x', 'X']) {
            Some((x, y)) => Ok(Self { x: num(x)?, y: num(y)? }),
            None => Ok(Self { x: num(s)?, y: 1 }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        assert_eq!("256".parse::<WorkgroupSize>().ok(), Some(WorkgroupSize { x: 256, y: 1 }));
        assert_eq!("16x16".parse::<WorkgroupSize>().ok(), Some(WorkgroupSize { x: 16, y: 16 }));
        assert_eq!(WorkgroupSize { x: 32, y: 8 }.to_string(), "32x8");
        assert_eq!(WorkgroupSize::DEFAULT.to_string(), "256");
        for bad in ["", "0", "16x", "x16", "-4", "abc", "8x0"] {
            assert!(bad.parse::<WorkgroupSize>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn filters_by_limits() {
        let small = wgpu::Limits::downlevel_defaults(); // 256 invocations, 256 x 256 x 64
        let valid = WorkgroupSize::valid_for(&small);
        assert!(valid.contains(&WorkgroupSize { x: 256, y: 1 }));
        assert!(valid.contains(&WorkgroupSize { x: 16, y: 16 }));
        assert!(!valid.contains(&WorkgroupSize { x: 512, y: 1 }));
        assert!(!valid.contains(&WorkgroupSize { x: 32, y: 16 }));
        let big = wgpu::Limits {
            max_compute_invocations_per_workgroup: 1024,
            max_compute_workgroup_size_x: 1024,
            max_compute_workgroup_size_y: 1024,
            ..wgpu::Limits::default()
        };
        assert_eq!(WorkgroupSize::valid_for(&big).len(), WorkgroupSize::CANDIDATES.len());
    }
}
