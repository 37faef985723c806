//! The runner's side of the one build path (`amdgpu::host::spec`): a command's machine
//! flags (`--topology`, its default, `--gpu`, `--mode`, `--set`) become a
//! [`MachineSpec`], and a refusal names the flag that caused it.

use std::path::Path;

use amdgpu::host::spec::{MachineSpec, SpecError, TopologySource};
use simdojo::topology::Topology;

use crate::set_args::SetArgs;

/// The spec of `--topology FILE` (or the embedded `default`), `--mode` and `--set`.
pub fn spec(topology: Option<&Path>, default: (&str, &str), mode: Option<&str>, set: &SetArgs) -> MachineSpec {
    let source = match topology {
        Some(path) => TopologySource::File(path.to_path_buf()),
        None => TopologySource::embedded(default),
    };
    MachineSpec { mode: mode.map(str::to_string), overrides: set.set.clone(), ..MachineSpec::new(source) }
}

/// Resolves `spec`; a refusal names the flag (`--gpu`, `--mode`, `--set`) or, for the
/// topology, its file, line and column.
pub fn resolve(spec: &MachineSpec) -> anyhow::Result<Topology> {
    spec.resolve().map_err(flag_error)
}

/// [`resolve`] for the commands whose malformed topology file is reported as the
/// loader says it (file:line:col, no prefix) with exit status 2: `Ok(Err(message))`.
pub fn resolve_file(spec: &MachineSpec) -> anyhow::Result<Result<Topology, String>> {
    match spec.resolve() {
        Ok(t) => Ok(Ok(t)),
        Err(SpecError::Topology(m)) => Ok(Err(m)),
        Err(e) => Err(flag_error(e)),
    }
}

fn flag_error(e: SpecError) -> anyhow::Error {
    match e {
        SpecError::Topology(m) => anyhow::anyhow!(m),
        SpecError::Gpu { index, message } => anyhow::anyhow!("--gpu {index}: {message}"),
        SpecError::Mode { mode, message } => anyhow::anyhow!("--mode {mode}: {message}"),
        SpecError::Override(m) => anyhow::anyhow!("--set {m}"),
    }
}
