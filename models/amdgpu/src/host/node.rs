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
}

fn name_of(value: Option<&ParamValue>) -> Option<&str> {
    match value {
        Some(ParamValue::String(s)) => Some(s),
        _ => None,
    }
}

/// Makes GPU `index` of `t` the one named [`GPU`]; returns the name it had.
pub fn select_gpu(t: &mut Topology, index: usize) -> Result<String, SelectError> {
    let socs: Vec<usize> = t.components.iter().enumerate().filter(|(_, c)| c.type_name == "amdgpu.soc").map(|(i, _)| i).collect();
    let Some(&soc) = socs.get(index) else {
        return Err(SelectError::NoSuchGpu { index, count: socs.len() });
    };
    let chosen = name_of(t.components[soc].params.get("name")).unwrap_or(GPU).to_string();
    if chosen == GPU {
        return Ok(chosen);
    }
    for c in &mut t.components {
        let key = if c.type_name == "amdgpu.soc" { "name" } else { "gpu" };
        let swapped = match name_of(c.params.get(key)) {
            Some(n) if n == chosen => GPU.to_string(),
            Some(n) if n == GPU => chosen.clone(),
            _ => continue,
        };
        c.params.set(key, ParamValue::String(swapped));
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

    fn names(t: &Topology, key: &str, ty: &str) -> Vec<String> {
        t.components.iter().filter(|c| c.type_name == ty).filter_map(|c| name_of(c.params.get(key)).map(str::to_string)).collect()
    }

    #[test]
    fn the_chosen_gpu_takes_the_standard_name_everywhere() {
        let mut t = node();
        assert_eq!(select_gpu(&mut t, 2).unwrap(), "gpu2");
        assert_eq!(names(&t, "name", "amdgpu.soc"), ["gpu0", "gpu1", "gpu", "gpu3"]);
        assert_eq!(names(&t, "gpu", "amdgpu.xgmi"), ["gpu0", "gpu1", "gpu", "gpu3"]);
        let cus: Vec<_> = t.components.iter().filter(|c| c.path.starts_with("gpu[2].") && c.type_name == "amdgpu.cu").collect();
        assert_eq!(cus.len(), 104);
        assert!(cus.iter().all(|c| name_of(c.params.get("gpu")) == Some(GPU)));
    }

    #[test]
    fn an_index_past_the_last_gpu_is_an_error_naming_the_count() {
        let mut t = node();
        let e = select_gpu(&mut t, 4).unwrap_err();
        assert_eq!(e, SelectError::NoSuchGpu { index: 4, count: 4 });
        assert!(e.to_string().contains("4 GPU(s)"), "{e}");
    }
}
