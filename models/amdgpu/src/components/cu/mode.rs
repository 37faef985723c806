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

/// `--mode M`: the overrides it stands for, `--set amdgpu.cu.mode=M` and, when the
/// topology has SoCs, `--set amdgpu.soc.mode=M` (their SDMA engines take simulated time
/// in timing mode); checked like any override: an unknown mode names the choices.
pub fn mode_overrides(t: &simdojo::topology::Topology, mode: &str) -> Vec<simdojo::topology::overrides::Override> {
    let of = |selector: &str| simdojo::topology::overrides::Override { selector: selector.into(), param: "mode".into(), value: mode.into() };
    let mut out = vec![of("amdgpu.cu")];
    if t.components.iter().any(|c| c.type_name == "amdgpu.soc") {
        out.push(of("amdgpu.soc"));
    }
    out
}
