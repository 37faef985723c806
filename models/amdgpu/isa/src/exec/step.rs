//! Stepping one wave for an external scheduler (a timed GPU model): run up to a budget of
//! instructions and report why the wave stopped.
//!
//! The scheduler owns the waves, the LDS of their work-group and the clocks; the executor
//! only changes architectural state. Stops are values ([`StepStop`]); the wave's
//! [`WaveStatus`] says what it waits for:
//!
//! | stop                   | status after             | the scheduler then                       |
//! |------------------------|--------------------------|------------------------------------------|
//! | `Budget`               | `Running`                | steps it again                           |
//! | `Barrier`              | `Barrier`                | sets `Running` when the group arrived    |
//! | `Ended`                | `Ended`                  | retires it                               |
//! | `Sleep { cycles }`     | `Running`                | steps it again `cycles` later            |
//! | `WaitMemory`           | `WaitMemory`             | ships `take_request`, later `complete`   |
//!
//! A fault leaves the wave in [`WaveStatus::Faulted`] and returns the [`ExecFault`].

use super::device::DeviceMemory;
use super::interp::{run_wave, Stop};
use super::operands::Ctx;
use super::program::Program;
use super::wave::{Wave, WaveStatus};
use super::ExecFault;

/// What [`step`] gives the wave besides itself.
#[derive(Debug)]
pub struct StepEnv<'a, M> {
    /// Device memory.
    pub mem: &'a mut M,
    /// The work-group's LDS.
    pub lds: &'a mut [u8],
    /// What `s_memtime` returns (the shader clock).
    pub clock: u64,
    /// What `s_memrealtime` returns (the constant-rate real-time clock).
    pub realtime: u64,
    /// Per-opcode tallies of executed instructions, indexed by `Opcode as usize` (a slice
    /// shorter than an index drops that opcode's count).
    pub counts: Option<&'a mut [u64]>,
}

/// How a [`step`] call ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StepOutcome {
    /// Wave-instructions executed by this call (a deferring memory instruction counts).
    pub executed: u64,
    /// Why the wave stopped.
    pub stop: StepStop,
}

/// Why [`step`] returned (see the [module docs](self) for what the scheduler does next).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum StepStop {
    /// The budget ran out; the wave is still `Running`.
    Budget,
    /// The wave waits at `s_barrier` (status `Barrier`).
    Barrier,
    /// The wave executed `s_endpgm`.
    Ended,
    /// The wave executed `s_sleep`; it continues with the next instruction after `cycles`.
    Sleep {
        /// 64 clock cycles per unit of the immediate.
        cycles: u64,
    },
    /// The wave deferred a vector memory access (status `WaitMemory`).
    WaitMemory,
}

/// Runs `wave` for at most `budget` instructions. A wave that is not `Running` executes
/// nothing and reports its status (a `Faulted` wave: [`ExecFault::WaveFaulted`]).
pub fn step<M: DeviceMemory>(wave: &mut Wave, program: &Program, env: &mut StepEnv<'_, M>, budget: u64) -> Result<StepOutcome, ExecFault> {
    if let Some(stop) = stop_of(wave)? {
        return Ok(StepOutcome { executed: 0, stop });
    }
    let counts: &mut [u64] = match env.counts.as_deref_mut() {
        Some(c) => c,
        None => &mut [],
    };
    let mut ctx = Ctx { mem: &mut *env.mem, lds: &mut *env.lds, target: program.target(), counts, clock: env.clock, realtime: env.realtime };
    let mut left = budget;
    let result = run_wave(wave, program, &mut ctx, &mut left);
    let executed = budget - left;
    match result {
        Err(fault) => {
            wave.status = WaveStatus::Faulted;
            Err(fault)
        }
        Ok(Stop::Budget) => Ok(StepOutcome { executed, stop: StepStop::Budget }),
        Ok(Stop::Yield) => {
            let stop = stop_of(wave)?.unwrap_or(StepStop::Budget);
            if let StepStop::Sleep { .. } = stop {
                wave.status = WaveStatus::Running;
            }
            Ok(StepOutcome { executed, stop })
        }
    }
}

/// The stop a wave's status reports; `None` while it can run.
fn stop_of(wave: &Wave) -> Result<Option<StepStop>, ExecFault> {
    Ok(Some(match wave.status {
        WaveStatus::Running => return Ok(None),
        WaveStatus::Barrier => StepStop::Barrier,
        WaveStatus::Ended => StepStop::Ended,
        WaveStatus::WaitMemory => StepStop::WaitMemory,
        WaveStatus::Sleep { cycles } => StepStop::Sleep { cycles },
        WaveStatus::Faulted => return Err(ExecFault::WaveFaulted { pc: wave.pc }),
    }))
}
