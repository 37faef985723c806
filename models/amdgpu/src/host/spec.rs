//! One build path for a simulated machine: a [`MachineSpec`] says where the topology
//! comes from and what changes in it (which GPU of a node is the standard `gpu`, the
//! simulation mode, `--set` overrides), and [`MachineSpec::resolve`] applies them in one
//! order, the same for every front end: load, GPU selection, mode, overrides (the most
//! specific setting wins). The runner's commands, `dojo run`'s driver configuration and
//! the embedding API resolve through it; a test (`runner/tests/tidy.rs`) keeps topology
//! loading and override application out of every other module.

use std::path::{Path, PathBuf};

use simdojo::topology::overrides::{self, Override};
use simdojo::topology::{self, Format, Topology};

use crate::components::cu::mode::mode_overrides;
use crate::host::node::select_gpu;

/// Where a machine's topology comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TopologySource {
    /// A topology file (TOML or JSON by its extension).
    File(PathBuf),
    /// Topology text with a name for its messages (an embedded default topology, or
    /// text an embedder passed): `format` says how to read it.
    Text {
        /// The name messages give it (a file name or `<string>`).
        name: String,
        /// The text.
        text: String,
        /// TOML or JSON.
        format: Format,
    },
}

impl TopologySource {
    /// An embedded topology: `(name, TOML text)` as the crates embed them.
    pub fn embedded((name, text): (&str, &str)) -> TopologySource {
        TopologySource::Text { name: name.to_string(), text: text.to_string(), format: Format::Toml }
    }

    /// The file, if the topology is one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            TopologySource::File(p) => Some(p),
            TopologySource::Text { .. } => None,
        }
    }

    /// The name messages use for it: the file's path or the text's name.
    pub fn display_name(&self) -> String {
        match self {
            TopologySource::File(p) => p.display().to_string(),
            TopologySource::Text { name, .. } => name.clone(),
        }
    }

    fn load(&self) -> Result<Topology, SpecError> {
        match self {
            TopologySource::File(p) => topology::load(p),
            TopologySource::Text { name, text, format } => topology::load_str(text, Path::new(name), *format),
        }
        .map_err(|e| SpecError::Topology(e.to_string()))
    }
}

/// What a machine is made of, before it is resolved (see the [module docs](self)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineSpec {
    /// The topology.
    pub source: TopologySource,
    /// The GPU of a node that becomes the standard `gpu` (`dojo exec --gpu N`).
    pub gpu: Option<usize>,
    /// The compute units' (and SoCs') simulation mode, `functional` or `timing`: sugar
    /// for the overrides `amdgpu.cu.mode=M` and `amdgpu.soc.mode=M`.
    pub mode: Option<String>,
    /// `--set` overrides, applied last, in order.
    pub overrides: Vec<Override>,
}

/// Why a spec could not be resolved: which of its parts, and the reason. Front ends
/// name the part by their own flag or variable (`--mode`, `DOJO_MODE`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// The topology could not be read (the message names file, line and column).
    #[error("{0}")]
    Topology(String),
    /// The GPU selection names no GPU of the topology.
    #[error("GPU {index}: {message}")]
    Gpu {
        /// The index asked for.
        index: usize,
        /// Why it was refused.
        message: String,
    },
    /// The mode is not one the compute units offer.
    #[error("mode {mode}: {message}")]
    Mode {
        /// The mode asked for.
        mode: String,
        /// Why it was refused (the choices).
        message: String,
    },
    /// An override names no parameter or has a bad value.
    #[error("{0}")]
    Override(String),
}

impl MachineSpec {
    /// The topology from `source` as it is.
    pub fn new(source: TopologySource) -> MachineSpec {
        MachineSpec { source, gpu: None, mode: None, overrides: Vec::new() }
    }

    /// The resolved topology: loaded, its GPU selected, the mode and the overrides
    /// applied, in that order (each checked like any parameter value).
    pub fn resolve(&self) -> Result<Topology, SpecError> {
        let mut t = self.source.load()?;
        if let Some(index) = self.gpu {
            select_gpu(&mut t, index).map_err(|e| SpecError::Gpu { index, message: e.to_string() })?;
        }
        if let Some(mode) = &self.mode {
            apply_mode(&mut t, mode)?;
        }
        apply_overrides(&mut t, &self.overrides)?;
        Ok(t)
    }
}

/// Sets the simulation mode of an already resolved topology's compute units and SoCs
/// (`functional` or `timing`; nothing changes on an error), as [`MachineSpec::mode`]
/// does: for an embedder that changes a machine step by step.
pub fn apply_mode(t: &mut Topology, mode: &str) -> Result<(), SpecError> {
    let sugar = mode_overrides(t, mode);
    overrides::apply(t, &sugar).map_err(|e| SpecError::Mode { mode: mode.to_string(), message: e.to_string() })
}

/// Applies `overrides` to an already resolved topology, in order (nothing changes on an
/// error): for an embedder that changes a machine step by step before building it (the
/// VM of the C API and Python).
pub fn apply_overrides(t: &mut Topology, set: &[Override]) -> Result<(), SpecError> {
    overrides::apply(t, set).map_err(|e| SpecError::Override(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::cu::mode::Mode;

    fn mi210() -> TopologySource {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies/mi210.toml");
        TopologySource::File(path)
    }

    #[test]
    fn resolve_applies_mode_then_overrides_so_the_most_specific_wins() {
        crate::link_components();
        let spec = MachineSpec {
            mode: Some("timing".into()),
            overrides: vec!["gpu.xcd[0].cu[3].mode=functional".parse().unwrap()],
            ..MachineSpec::new(mi210())
        };
        let t = spec.resolve().unwrap();
        let machine = crate::host::machine::Machine::of(&t).unwrap();
        let cus = &machine.gpus[0].xcds[0].cus;
        assert_eq!(cus[0].params.mode, Mode::Timing);
        assert_eq!(cus[3].params.mode, Mode::Functional);
        assert_eq!(machine.gpus[0].soc.params.mode, Mode::Timing, "the mode reaches the SoC too");
    }

    #[test]
    fn each_part_of_a_bad_spec_is_named() {
        crate::link_components();
        let bad_mode = MachineSpec { mode: Some("fast".into()), ..MachineSpec::new(mi210()) };
        assert!(matches!(bad_mode.resolve(), Err(SpecError::Mode { ref mode, .. }) if mode == "fast"));
        let bad_gpu = MachineSpec { gpu: Some(7), ..MachineSpec::new(mi210()) };
        assert!(matches!(bad_gpu.resolve(), Err(SpecError::Gpu { index: 7, .. })));
        let bad_set = MachineSpec { overrides: vec!["l2.bogus=1".parse().unwrap()], ..MachineSpec::new(mi210()) };
        assert!(matches!(bad_set.resolve(), Err(SpecError::Override(ref m)) if m.contains("bogus")));
        let missing = MachineSpec::new(TopologySource::File("/nonexistent/x.toml".into()));
        assert!(matches!(missing.resolve(), Err(SpecError::Topology(ref m)) if m.contains("/nonexistent/x.toml")));
        let text = TopologySource::Text { name: "inline.toml".into(), text: "[components\n".into(), format: Format::Toml };
        assert!(matches!(MachineSpec::new(text).resolve(), Err(SpecError::Topology(ref m)) if m.contains("inline.toml")));
    }
}
