//! Multi-GPU nodes: choosing one GPU of a node topology for a host that drives a single
//! GPU by the standard name (`dojo exec --gpu N`, whose loader uses
//! [`crate::host::loader::GPU`]).
//!
//! GPU `N` is the `N`-th `amdgpu.soc` in component order (the order the KFD emulation
//! numbers its nodes in). Selecting it swaps its name with [`crate::host::loader::GPU`]
//! everywhere a component names a GPU (the SoC's `name`, the others' `gpu`), so the
//! node stays consistent: its XGMI blocks still know each other by their names.

use simdojo::params::ParamValue;
use simdojo::topology::Topology;

use crate::host::loader::GPU;
use crate::host::machine::{Gpu, Machine, MachineError};

/// Why a GPU could not be selected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    /// No SoC with that index.
    #[error("GPU {index}: the topology has {count} GPU(s) (amdgpu.soc components), numbered from 0")]
    NoSuchGpu {
        /// The index asked for.
        index: usize,
        /// SoCs in the topology.
        count: usize,
    },
    /// The topology's GPUs cannot be told apart (see [`Machine::of`]).
    #[error(transparent)]
    Machine(#[from] MachineError),
}

/// The components of `gpu` that name it, each with the parameter that does (`name` on
/// the SoC, `gpu` on the others).
fn naming(gpu: &Gpu) -> Vec<(usize, &'static str)> {
    let mut out = vec![(gpu.soc.index, "name")];
    for x in &gpu.xcds {
        out.extend(x.cp.iter().map(|p| (p.index, "gpu")));
        out.extend(x.l2.iter().map(|p| (p.index, "gpu")));
        out.extend(x.cus.iter().map(|p| (p.index, "gpu")));
    }
    out.extend(gpu.hbm.iter().map(|p| (p.index, "gpu")));
    out.extend(gpu.xgmi.iter().map(|p| (p.index, "gpu")));
    out
}

/// Makes GPU `index` of `t` the one named [`GPU`]; returns the name it had.
pub fn select_gpu(t: &mut Topology, index: usize) -> Result<String, SelectError> {
    let machine = Machine::of(t)?;
    let Some(gpu) = machine.gpus.get(index) else {
        return Err(SelectError::NoSuchGpu { index, count: machine.gpus.len() });
    };
    let chosen = gpu.soc.params.name.clone();
    if chosen == GPU {
        return Ok(chosen);
    }
    for g in &machine.gpus {
        let swapped = match g.soc.params.name.as_str() {
            n if n == chosen => GPU.to_string(),
            GPU => chosen.clone(),
            _ => continue,
        };
        for (i, key) in naming(g) {
            t.components[i].params.set(key, ParamValue::String(swapped.clone()));
        }
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node() -> Topology {
        crate::link_components();
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies/mi210x4.toml");
        simdojo::topology::load(&path).unwrap()
    }

    #[test]
    fn the_chosen_gpu_takes_the_standard_name_everywhere() {
        let mut t = node();
        assert_eq!(select_gpu(&mut t, 2).unwrap(), "gpu2");
        let m = Machine::of(&t).unwrap();
        let names: Vec<&str> = m.gpus.iter().map(|g| g.soc.params.name.as_str()).collect();
        assert_eq!(names, ["gpu0", "gpu1", "gpu", "gpu3"]);
        let xgmi: Vec<&str> = m.gpus.iter().map(|g| g.xgmi.as_ref().unwrap().params.gpu.as_str()).collect();
        assert_eq!(xgmi, ["gpu0", "gpu1", "gpu", "gpu3"]);
        let third = &m.gpus[2];
        assert_eq!(third.cus().count(), 104);
        assert!(third.cus().all(|c| c.path.starts_with("gpu[2].") && c.params.gpu == GPU));
    }

    #[test]
    fn an_index_past_the_last_gpu_is_an_error_naming_the_count() {
        let mut t = node();
        let e = select_gpu(&mut t, 4).unwrap_err();
        assert_eq!(e, SelectError::NoSuchGpu { index: 4, count: 4 });
        assert!(e.to_string().contains("4 GPU(s)"), "{e}");
    }
}
