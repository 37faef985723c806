//! Choosing the simulation mode of every compute unit of a topology (what `--mode`
//! does in `dojo exec`, `dojo run` and the KFD driver's `DOJO_MODE`).

use simdojo::params::ParamValue;
use simdojo::topology::Topology;

/// The modes of `amdgpu.cu`.
pub const MODES: [&str; 2] = ["functional", "timing"];

/// A mode name that is not one of [`MODES`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}: expected functional or timing")]
pub struct UnknownMode(pub String);

/// Sets `mode` on every compute unit of `t`, and on every SoC (its SDMA engines take
/// simulated time in timing mode).
pub fn set_mode(t: &mut Topology, mode: &str) -> Result<(), UnknownMode> {
    if !MODES.contains(&mode) {
        return Err(UnknownMode(mode.to_string()));
    }
    for c in t.components.iter_mut().filter(|c| c.type_name == "amdgpu.cu" || c.type_name == "amdgpu.soc") {
        c.params.set("mode", ParamValue::String(mode.to_string()));
    }
    Ok(())
}
