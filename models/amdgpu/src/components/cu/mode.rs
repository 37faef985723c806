//! The simulation mode of a compute unit (its `mode` parameter; `--mode M` on the
//! commands is `--set cu.mode=M`).

use serde::{Deserialize, Serialize};

/// How a compute unit runs its waves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, simdojo::ParamChoice)]
pub enum Mode {
    /// Quanta of `quantum` wave-instructions per wave, no timing model.
    #[default]
    Functional,
    /// One instruction per SIMD per cycle with the issue and memory timing models.
    Timing,
}

/// `--mode M`: the override it stands for, `--set amdgpu.cu.mode=M` (checked like any
/// override: an unknown mode names the choices).
pub fn mode_override(mode: &str) -> simdojo::topology::overrides::Override {
    simdojo::topology::overrides::Override { selector: "amdgpu.cu".into(), param: "mode".into(), value: mode.into() }
}
