//! Doorbell pages: every write the application makes to a GPU's doorbell page rings
//! that GPU's queues (through [`crate::doorbell_trap`], without polling).

use crate::backend::Errno;
use crate::kfd::{lock, Kfd};

impl Kfd {
    /// Starts watching the doorbell page of GPU `gpu` the application mapped at `addr`.
    pub(crate) fn watch_doorbells(&self, gpu: usize, addr: usize, len: usize) -> Result<(), Errno> {
        lock(&self.doorbells).insert(gpu, (addr, len));
        Ok(())
    }

    /// Stops watching the page at `addr`.
    pub(crate) fn unwatch_doorbells(&self, _addr: usize, _len: usize) {}
}
