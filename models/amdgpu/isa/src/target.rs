//! The GPU targets this crate decodes: CDNA2 (gfx90a), CDNA3 (gfx942), CDNA4 (gfx950).

use std::fmt;
use std::str::FromStr;

/// A GPU instruction-set target.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    /// CDNA2: MI210, MI250.
    Gfx90a,
    /// CDNA3: MI300X.
    Gfx942,
    /// CDNA4: MI355X.
    Gfx950,
}

impl Target {
    /// All supported targets.
    pub const ALL: [Target; 3] = [Target::Gfx90a, Target::Gfx942, Target::Gfx950];

    /// The LLVM processor name (`gfx90a`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Target::Gfx90a => "gfx90a",
            Target::Gfx942 => "gfx942",
            Target::Gfx950 => "gfx950",
        }
    }

    /// True for the gfx940 family (gfx942, gfx950), whose cache-policy bits print as
    /// `sc0 sc1 nt` instead of `glc slc scc`.
    pub const fn is_gfx940_family(self) -> bool {
        !matches!(self, Target::Gfx90a)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Error for an unknown target name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown AMDGPU target `{0}` (expected gfx90a, gfx942 or gfx950)")]
pub struct UnknownTarget(pub String);

impl FromStr for Target {
    type Err = UnknownTarget;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "gfx90a" => Ok(Target::Gfx90a),
            "gfx942" => Ok(Target::Gfx942),
            "gfx950" => Ok(Target::Gfx950),
            _ => Err(UnknownTarget(s.to_string())),
        }
    }
}
