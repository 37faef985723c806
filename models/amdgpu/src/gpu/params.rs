//! Parameter types the GPU's components share: the choices a topology names by word
//! (`policy = "srrip"`, `target = "gfx90a"`, `part = "mi300x"`), each with the type of
//! the layer below it stands for.

use serde::{Deserialize, Serialize};
use simdojo::params::{ParamChoice, ParamKind, ParamRange, ParamType, ParamValue};

use crate::timing::{Part, ReplacementPolicy};

/// A cache level's replacement policy, as a parameter (`policy`, `l1_policy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, simdojo::ParamChoice)]
pub enum Policy {
    /// True least-recently-used.
    Lru,
    /// Static re-reference interval prediction (2-bit RRPV).
    Srrip,
    /// A uniformly random victim from a deterministic generator (seed 0).
    Random,
    /// Every access hits; no tags are kept (an upper bound for studies).
    Ideal,
}

impl Policy {
    /// The tag model's policy.
    pub fn replacement(self) -> ReplacementPolicy {
        match self {
            Policy::Lru => ReplacementPolicy::Lru,
            Policy::Srrip => ReplacementPolicy::Srrip,
            Policy::Random => ReplacementPolicy::Random { seed: 0 },
            Policy::Ideal => ReplacementPolicy::Ideal,
        }
    }
}

/// The instruction set a GPU runs, as a parameter (the SoC's `target`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, simdojo::ParamChoice)]
pub enum IsaTarget {
    /// CDNA 2 (MI210).
    Gfx90a,
    /// CDNA 3 (MI300X).
    Gfx942,
    /// CDNA 4 (MI355X).
    Gfx950,
}

impl IsaTarget {
    /// The ISA crate's target.
    pub fn isa(self) -> amdgpu_isa::Target {
        match self {
            IsaTarget::Gfx90a => amdgpu_isa::Target::Gfx90a,
            IsaTarget::Gfx942 => amdgpu_isa::Target::Gfx942,
            IsaTarget::Gfx950 => amdgpu_isa::Target::Gfx950,
        }
    }

    /// The parameter value of an ISA target.
    pub fn of(target: amdgpu_isa::Target) -> IsaTarget {
        match target {
            amdgpu_isa::Target::Gfx90a => IsaTarget::Gfx90a,
            amdgpu_isa::Target::Gfx942 => IsaTarget::Gfx942,
            amdgpu_isa::Target::Gfx950 => IsaTarget::Gfx950,
        }
    }
}

/// A modelled part (the timing layer's [`Part`]) as a parameter: `mi210`, `mi300x`,
/// `mi355x`. Written by hand rather than derived because the timing layer knows
/// nothing of the engine.
impl ParamChoice for Part {
    const CHOICES: &'static [&'static str] = &["mi210", "mi300x", "mi355x"];
    fn name(&self) -> &'static str {
        match self {
            Part::Mi210 => "mi210",
            Part::Mi300x => "mi300x",
            Part::Mi355x => "mi355x",
        }
    }
    fn from_name(name: &str) -> Option<Part> {
        Part::ALL.into_iter().find(|p| p.name() == name)
    }
}

impl ParamType for Part {
    const KIND: ParamKind = ParamKind::Choice;
    const RANGE: ParamRange = ParamRange::Choices(<Part as ParamChoice>::CHOICES);
    fn from_value(value: &ParamValue) -> Option<Part> {
        match value {
            ParamValue::String(s) => <Part as ParamChoice>::from_name(s),
            _ => None,
        }
    }
    fn to_value(&self) -> ParamValue {
        ParamValue::String(self.name().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_names_agree_with_the_timing_layer() {
        for part in Part::ALL {
            assert_eq!(part.name(), part.to_string());
            assert_eq!(<Part as ParamChoice>::from_name(part.name()), Some(part));
        }
    }

    #[test]
    fn policies_are_the_tag_models() {
        for name in Policy::CHOICES {
            let policy = Policy::from_name(name).unwrap();
            assert_eq!(ReplacementPolicy::from_name(name).unwrap(), policy.replacement());
        }
    }
}
