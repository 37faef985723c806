//! The typed view of a resolved GPU topology: its GPUs, each with its SoC, XCDs
//! (command processor, L2, compute units), memory-side cache slices, HBM and XGMI
//! block, every one as its component type's parameter struct. Code that needs to know
//! the machine (the KFD identity, `dojo bench micro`, node selection) reads this rather
//! than looking parameters up by type and name.
//!
//! A component belongs to the GPU its `gpu` parameter names (the SoC's `name`), and to
//! the XCD whose path its own path starts with (`gpu.xcd[3].cu[7]` is on `gpu.xcd[3]`).

use simdojo::params::{ParamError, ParamSet};
use simdojo::topology::{ComponentDecl, Topology};

use crate::components::cp::CpParams;
use crate::components::cu::CuParams;
use crate::components::hbm::HbmParams;
use crate::components::l2::L2Params;
use crate::components::mall::MallParams;
use crate::components::soc::SocParams;
use crate::components::xgmi::XgmiParams;

/// Why a topology has no typed view.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MachineError {
    /// A component's parameters do not convert to its type's struct.
    #[error("component `{component}`: {source}")]
    Param {
        /// The component's path.
        component: String,
        /// What is wrong.
        source: ParamError,
    },
    /// A component names a GPU no SoC has.
    #[error("component `{component}` names GPU `{gpu}`, which no amdgpu.soc is called")]
    UnknownGpu {
        /// The component's path.
        component: String,
        /// The name it gives.
        gpu: String,
    },
    /// The topology has no GPU.
    #[error("the topology has no GPU (no amdgpu.soc component)")]
    NoGpu,
}

/// One component of the view: its path and typed parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Part<P> {
    /// The component's path.
    pub path: String,
    /// Its index in the topology.
    pub index: usize,
    /// Its parameters.
    pub params: P,
}

/// One XCD: the components whose paths start with its path.
#[derive(Clone, Debug, PartialEq)]
pub struct Xcd {
    /// The XCD's path (`gpu.xcd[0]`).
    pub path: String,
    /// Its command processor.
    pub cp: Option<Part<CpParams>>,
    /// Its L2.
    pub l2: Option<Part<L2Params>>,
    /// Its compute units, in topology order.
    pub cus: Vec<Part<CuParams>>,
}

/// One GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct Gpu {
    /// Its SoC.
    pub soc: Part<SocParams>,
    /// Its XCDs, in the order of their first component.
    pub xcds: Vec<Xcd>,
    /// Its memory-side cache slices.
    pub malls: Vec<Part<MallParams>>,
    /// Its HBM.
    pub hbm: Option<Part<HbmParams>>,
    /// Its XGMI block.
    pub xgmi: Option<Part<XgmiParams>>,
}

impl Gpu {
    /// Every compute unit, XCD by XCD.
    pub fn cus(&self) -> impl Iterator<Item = &Part<CuParams>> {
        self.xcds.iter().flat_map(|x| x.cus.iter())
    }
    /// Every L2, XCD by XCD.
    pub fn l2s(&self) -> impl Iterator<Item = &Part<L2Params>> {
        self.xcds.iter().filter_map(|x| x.l2.as_ref())
    }
}

/// The GPUs of a topology, in the order of their SoCs.
#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    /// The GPUs.
    pub gpus: Vec<Gpu>,
}

fn typed<P: ParamSet>(index: usize, c: &ComponentDecl) -> Result<Part<P>, MachineError> {
    let params = P::from_params(&c.params).map_err(|source| MachineError::Param { component: c.path.clone(), source })?;
    Ok(Part { path: c.path.clone(), index, params })
}

/// The XCD path of a component below one: its path without the last segment.
fn xcd_of(path: &str) -> &str {
    path.rsplit_once('.').map_or(path, |(parent, _)| parent)
}

impl Machine {
    /// The view of `t` (a resolved topology: every parameter has its value).
    pub fn of(t: &Topology) -> Result<Machine, MachineError> {
        let mut gpus = Vec::new();
        for (i, c) in t.components.iter().enumerate().filter(|(_, c)| c.type_name == "amdgpu.soc") {
            gpus.push(Gpu { soc: typed(i, c)?, xcds: Vec::new(), malls: Vec::new(), hbm: None, xgmi: None });
        }
        if gpus.is_empty() {
            return Err(MachineError::NoGpu);
        }
        let gpu_of = |gpus: &[Gpu], c: &ComponentDecl, name: &str| {
            gpus.iter().position(|g| g.soc.params.name == name).ok_or_else(|| MachineError::UnknownGpu {
                component: c.path.clone(),
                gpu: name.to_string(),
            })
        };
        let xcd = |gpu: &mut Gpu, path: &str| -> usize {
            let at = xcd_of(path);
            match gpu.xcds.iter().position(|x| x.path == at) {
                Some(x) => x,
                None => {
                    gpu.xcds.push(Xcd { path: at.to_string(), cp: None, l2: None, cus: Vec::new() });
                    gpu.xcds.len() - 1
                }
            }
        };
        for (i, c) in t.components.iter().enumerate() {
            match c.type_name.as_str() {
                "amdgpu.cp" => {
                    let p: Part<CpParams> = typed(i, c)?;
                    let g = gpu_of(&gpus, c, &p.params.gpu)?;
                    let x = xcd(&mut gpus[g], &c.path);
                    gpus[g].xcds[x].cp = Some(p);
                }
                "amdgpu.l2" => {
                    let p: Part<L2Params> = typed(i, c)?;
                    let g = gpu_of(&gpus, c, &p.params.gpu)?;
                    let x = xcd(&mut gpus[g], &c.path);
                    gpus[g].xcds[x].l2 = Some(p);
                }
                "amdgpu.cu" => {
                    let p: Part<CuParams> = typed(i, c)?;
                    let g = gpu_of(&gpus, c, &p.params.gpu)?;
                    let x = xcd(&mut gpus[g], &c.path);
                    gpus[g].xcds[x].cus.push(p);
                }
                "amdgpu.hbm" => {
                    let p: Part<HbmParams> = typed(i, c)?;
                    let g = gpu_of(&gpus, c, &p.params.gpu)?;
                    gpus[g].hbm = Some(p);
                }
                "amdgpu.xgmi" => {
                    let p: Part<XgmiParams> = typed(i, c)?;
                    let g = gpu_of(&gpus, c, &p.params.gpu)?;
                    gpus[g].xgmi = Some(p);
                }
                "amdgpu.mall" => {
                    // A slice names no GPU: it is the one whose SoC path its path starts with.
                    let p: Part<MallParams> = typed(i, c)?;
                    let g = gpus
                        .iter()
                        .position(|g| c.path.starts_with(&format!("{}.", g.soc.path)))
                        .unwrap_or(0);
                    gpus[g].malls.push(p);
                }
                _ => {}
            }
        }
        Ok(Machine { gpus })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::params::IsaTarget;

    fn load(name: &str) -> Topology {
        crate::link_components();
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies").join(name);
        simdojo::topology::load(&path).unwrap()
    }

    #[test]
    fn the_shipped_parts_have_their_structure() {
        let m = Machine::of(&load("mi300x.toml")).unwrap();
        assert_eq!(m.gpus.len(), 1);
        let g = &m.gpus[0];
        assert_eq!(g.soc.params.target, IsaTarget::Gfx942);
        assert_eq!(g.xcds.len(), 8);
        assert!(g.xcds.iter().all(|x| x.cus.len() == 38 && x.cp.is_some() && x.l2.is_some()));
        assert_eq!(g.cus().count(), 304);
        assert_eq!(g.malls.len(), 8);
        assert_eq!(g.l2s().next().unwrap().params.size.get(), 4 << 20);
        let m = Machine::of(&load("mi210.toml")).unwrap();
        assert_eq!(m.gpus[0].soc.params.target, IsaTarget::Gfx90a);
        assert_eq!(m.gpus[0].cus().count(), 104);
        assert!(m.gpus[0].malls.is_empty());
    }

    #[test]
    fn a_node_has_each_gpu_with_its_own_blocks() {
        let m = Machine::of(&load("mi210x4.toml")).unwrap();
        assert_eq!(m.gpus.len(), 4);
        for (i, g) in m.gpus.iter().enumerate() {
            assert_eq!(g.soc.params.name, format!("gpu{i}"));
            assert_eq!(g.cus().count(), 104);
            assert!(g.cus().all(|c| c.path.starts_with(&format!("{}.", g.soc.path))));
            assert!(g.xgmi.is_some() && g.hbm.is_some());
        }
    }
}
