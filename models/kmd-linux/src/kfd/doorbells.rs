//! Doorbell pages: every write the application makes to a GPU's doorbell page rings
//! that GPU's queues (through [`crate::doorbell_trap`], without polling): the packet
//! processor then re-reads each queue's write index.

use std::sync::Arc;

use crate::backend::Errno;
use crate::kfd::{lock, ring_queues, Kfd};

impl Kfd {
    /// Starts watching the doorbell page of GPU `gpu` the application mapped at `addr`.
    pub(crate) fn watch_doorbells(&self, gpu: usize, addr: usize, len: usize) -> Result<(), Errno> {
        let machine = self.device().machine.clone();
        let queues = self.queues.clone();
        let svm = self.svm.clone();
        let on_write = Arc::new(move || {
            // The GPU must not find memory the C library gave back behind our back.
            svm.revalidate();
            ring_queues(&machine, &queues, gpu)
        });
        // SAFETY: the range is the page the caller just mapped read-write.
        let watch = unsafe { crate::doorbell_trap::watch(addr..addr + len, on_write) }.map_err(|e| {
            self.warn_once(format!("cannot watch the doorbell page: {e}"));
            Errno::NOMEM
        })?;
        if let Some((_, _, old)) = lock(&self.doorbells).insert(gpu, (addr, len, watch)) {
            crate::doorbell_trap::unwatch(old);
        }
        Ok(())
    }

    /// Stops watching a doorbell page.
    pub(crate) fn unwatch_doorbells(&self, watch: crate::doorbell_trap::WatchId) {
        crate::doorbell_trap::unwatch(watch);
    }
}
