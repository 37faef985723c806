//! `dojo topology FILE`: validate and summarize a topology file, print the partition
//! plan, or export Graphviz.

use std::path::Path;
use std::process::ExitCode;

use simdojo::partition;
use simdojo::topology;
use amdgpu::host::spec::{MachineSpec, TopologySource};

use crate::machine_spec;
use crate::output::{out, outln};

/// Runs the command; a malformed file is reported with its location and exit status 2.
pub fn run(file: &Path, workers: Option<u32>, partitioner: Option<&str>, dot: bool) -> anyhow::Result<ExitCode> {
    let spec = MachineSpec::new(TopologySource::File(file.to_path_buf()));
    let t = match machine_spec::resolve_file(&spec)? {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            return Ok(ExitCode::from(2));
        }
    };
    if dot {
        out!("{}", topology::to_dot(&t))?;
        return Ok(ExitCode::SUCCESS);
    }
    outln!("{}", topology::summarize(&t))?;
    let plan = crate::plan::choose(&t, workers, partitioner)?;
    out!("{}", partition::report(&t, &plan))?;
    Ok(ExitCode::SUCCESS)
}
