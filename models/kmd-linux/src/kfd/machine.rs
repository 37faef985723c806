//! The simulated machine a driver serves: the topology built as one simdojo
//! simulation, running on its own thread and sleeping while nothing happens, and each
//! GPU's shared state (memory, queues) with the doorbell sender that wakes its SoC.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use amdgpu::gpu::ids::QueueId;
use amdgpu::gpu::memory::GpuMemory;
use amdgpu::gpu::shared::{GpuShared, HostHooks};
use amdgpu::components::soc::SocInput;
use simdojo::engine::{ExitStatus, ExternalSender, SimConfig, Simulation, StopHandle};
use simdojo::ids::ComponentId;
use simdojo::resources::Resources;

use crate::config::DriverConfig;
use crate::identity::GpuIdentity;

/// Why the simulation could not start.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    /// The topology does not build.
    #[error("building the simulation: {0}")]
    Build(String),
    /// A SoC has no memory after the build.
    #[error("the GPU `{0}` has no memory after the build")]
    NoMemory(String),
    /// The simulation thread could not start.
    #[error("starting the simulation thread: {0}")]
    Thread(std::io::Error),
}

/// One simulated GPU as the driver sees it.
pub struct Gpu {
    /// Its KFD identity (gpu_id, node properties).
    pub identity: GpuIdentity,
    /// Its SoC's `name` (what its components' `gpu` parameters and its peers' XGMI
    /// blocks call it).
    pub name: String,
    /// Its shared state.
    pub shared: Arc<GpuShared>,
    /// Its memory.
    pub memory: Arc<GpuMemory>,
    /// `None` once the machine stopped.
    doorbell: Mutex<Option<ExternalSender>>,
}

impl Gpu {
    /// Tells the GPU's packet processor that queue `q` has new packets.
    pub fn ring(&self, q: QueueId) {
        if let Some(sender) = self.doorbell.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            sender.send(SocInput::Doorbell(q));
        }
    }
}

/// See the [module docs](self).
pub struct Machine {
    /// The GPUs, in KFD node order (node 1 is `gpus[0]`).
    pub gpus: Vec<Gpu>,
    stop: StopHandle,
    thread: Mutex<Option<JoinHandle<Option<ExitStatus>>>>,
    /// Every component's statistics, once the simulation ended.
    final_stats: Arc<Mutex<Option<simdojo::stats::StatsReport>>>,
}

impl Machine {
    /// Builds the machine of `config` and starts it; `hooks(i)` are the host callbacks
    /// of GPU `i` (signal interrupts, faults, completions).
    pub fn start(
        config: &DriverConfig,
        identities: &[GpuIdentity],
        hooks: impl Fn(usize) -> Arc<dyn HostHooks>,
    ) -> Result<Machine, MachineError> {
        let topology = config.topology.clone();
        let assignment = config.assignment.clone();
        // SoCs in component order: the same order as the identities.
        let socs: Vec<(usize, String)> = topology
            .components
            .iter()
            .enumerate()
            .filter(|(_, c)| c.type_name == "amdgpu.soc")
            .map(|(i, c)| {
                let name = match c.params.get("name") {
                    Some(simdojo::params::ParamValue::String(s)) => s.clone(),
                    _ => "gpu".to_string(),
                };
                (i, name)
            })
            .collect();
        let names: Vec<String> = socs.iter().map(|(_, n)| n.clone()).collect();
        let trace = config.trace.clone();
        type Started = Result<(Vec<(Arc<GpuShared>, ExternalSender)>, StopHandle), MachineError>;
        let (tx, rx) = mpsc::channel::<Started>();
        let final_stats = Arc::new(Mutex::new(None));
        let stats_slot = final_stats.clone();
        let thread = std::thread::Builder::new()
            .name("dojo-sim".into())
            .spawn(move || {
                let resources = Resources::new();
                let shareds: Vec<Arc<GpuShared>> = socs
                    .iter()
                    .map(|(_, name)| resources.get_or_insert_with(name, GpuShared::default))
                    .collect();
                let sim_config = SimConfig {
                    assignment: Some(assignment),
                    resources,
                    observe: trace.is_some(),
                    ..SimConfig::default()
                };
                let mut sim = match Simulation::build(&topology, &sim_config) {
                    Ok(s) => s,
                    Err(e) => {
                        let _ = tx.send(Err(MachineError::Build(e.to_string())));
                        return None;
                    }
                };
                let senders = socs
                    .iter()
                    .map(|(i, _)| sim.external_sender(ComponentId::from_index(*i)))
                    .collect::<Vec<_>>();
                let _ = tx.send(Ok((
                    shareds.into_iter().zip(senders).collect(),
                    sim.stop_handle(),
                )));
                let status = sim.run();
                *stats_slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(sim.stats());
                if let (Some(path), Some(obs)) = (&trace, sim.observation()) {
                    let paths: Vec<String> = topology.components.iter().map(|c| c.path.clone()).collect();
                    if let Err(e) = simdojo::chrome_trace::write(path, &obs, &paths) {
                        eprintln!("dojo: writing the trace to {}: {e}", path.display());
                    }
                }
                // Only a stop request, or the last doorbell sender going away (the
                // driver shutting down: quiescent, no input can come), should end a
                // machine; anything else (an error, an exit request) is news.
                if !matches!(status.reason, simdojo::engine::ExitReason::Interrupted | simdojo::engine::ExitReason::Quiescent) {
                    eprintln!("dojo: the simulation ended: {status}");
                }
                Some(status)
            })
            .map_err(MachineError::Thread)?;
        let (parts, stop) = match rx.recv() {
            Ok(r) => r?,
            Err(_) => {
                return Err(MachineError::Build(
                    "the simulation thread ended during the build".into(),
                ))
            }
        };
        let mut gpus = Vec::new();
        for (i, (((shared, sender), identity), name)) in parts
            .into_iter()
            .zip(identities.iter().cloned())
            .zip(names)
            .enumerate()
        {
            let memory = shared
                .memory()
                .cloned()
                .ok_or_else(|| MachineError::NoMemory(identity.kfd_name.clone()))?;
            shared.set_hooks(hooks(i));
            gpus.push(Gpu {
                identity,
                name,
                shared,
                memory,
                doorbell: Mutex::new(Some(sender)),
            });
        }
        Ok(Machine {
            gpus,
            stop,
            thread: Mutex::new(Some(thread)),
            final_stats,
        })
    }

    /// The GPU with KFD `gpu_id`, and its index.
    pub fn gpu_by_id(&self, gpu_id: u32) -> Option<(usize, &Gpu)> {
        self.gpus
            .iter()
            .enumerate()
            .find(|(_, g)| g.identity.gpu_id == gpu_id)
    }

    /// Every component's statistics (the XGMI links' among them), once the simulation
    /// ended ([`Machine::stop`]).
    pub fn component_stats(&self) -> Option<simdojo::stats::StatsReport> {
        self.final_stats.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Stops the simulation and waits for its thread.
    pub fn stop(&self) -> Option<ExitStatus> {
        // Without senders an idle simulation ends by itself: this also covers a stop
        // requested before the thread entered `run` (which clears earlier requests).
        for g in &self.gpus {
            g.doorbell.lock().unwrap_or_else(|e| e.into_inner()).take();
        }
        self.stop.stop();
        let handle = self
            .thread
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()?;
        handle.join().ok().flatten()
    }
}
