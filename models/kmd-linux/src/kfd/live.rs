//! The live device files ([`crate::amdgpu_sysfs::LiveValues`]): rewritten in the fake
//! root as the simulation runs, so a monitor started by the program (rocm-smi through
//! `system()`) or beside it (daemon mode) reads current values.
//!
//! Memory use is rewritten synchronously after every allocation and free, so a program
//! that allocated and then runs a monitor sees its allocation. The busy figures and the
//! `gpu_metrics` table (activity, timestamps) change with simulated activity and are
//! rewritten by the `dojo-sysfs` thread every [`REFRESH`] of wall time. Files are replaced atomically and only when a value
//! changed. In local mode each process that opens the device keeps the files of its
//! own simulated GPU (processes sharing one fake root overwrite each other's figures);
//! a daemon keeps the files of the GPU all its clients share.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::amdgpu_sysfs::{device_dir, live_files, replace_file, LiveValues};
use crate::kfd::{lock, Device};

/// How often the busy figure is refreshed (wall time).
pub const REFRESH: Duration = Duration::from_millis(100);

/// Where the live files are and what they hold.
#[derive(Debug)]
pub(crate) struct LiveSysfs {
    root: PathBuf,
    written: Mutex<Vec<Option<LiveValues>>>,
    stopped: AtomicBool,
}

impl LiveSysfs {
    /// Stops the rewriting: once this returns no file is written any more (a rewrite
    /// under way holds `written`, and a rewrite checks `stopped` under it), so the owner
    /// can remove the tree.
    pub(crate) fn stop(&self) {
        let _no_rewrite_under_way = lock(&self.written);
        self.stopped.store(true, Ordering::SeqCst);
    }
}

impl Device {
    /// Keeps the live device files under `root` (a tree `sysfs::write_tree` wrote for
    /// this machine) current from now on. A second call does nothing.
    pub fn publish_sysfs(self: &Arc<Self>, root: &Path) {
        let live = LiveSysfs {
            root: root.to_path_buf(),
            written: Mutex::new(vec![None; self.machine.gpus.len()]),
            stopped: AtomicBool::new(false),
        };
        if self.live.set(live).is_err() {
            return;
        }
        self.refresh_sysfs();
        let weak = Arc::downgrade(self);
        let spawned = std::thread::Builder::new().name("dojo-sysfs".into()).spawn(move || loop {
            std::thread::sleep(REFRESH);
            let Some(device) = weak.upgrade() else { return };
            match device.live.get() {
                Some(l) if !l.stopped.load(Ordering::SeqCst) => device.refresh_sysfs(),
                _ => return,
            }
        });
        if let Err(e) = spawned {
            self.warn_device(format!("the busy figure in sysfs will not be refreshed: {e}"));
        }
    }

    fn warn_device(&self, what: String) {
        if lock(&self.warned).insert(what.clone()) {
            eprintln!("dojo: {what}");
        }
    }

    /// The live values of GPU `g` now.
    pub fn live_values(&self, g: usize) -> LiveValues {
        let vram_used = lock(&self.vram_used).get(g).copied().unwrap_or(0);
        let Some(gpu) = self.machine.gpus.get(g) else {
            return LiveValues { vram_used, ..LiveValues::default() };
        };
        let clock = gpu.shared.clock();
        LiveValues {
            vram_used,
            busy_percent: clock.busy_percent(),
            busy_ps: clock.busy_time().0,
            memory_percent: clock.memory_percent(),
            memory_busy_ps: clock.memory_busy_time().0,
            now_ps: clock.now().0,
        }
    }

    /// Rewrites the live files whose values changed (nothing before
    /// [`Device::publish_sysfs`]).
    pub(crate) fn refresh_sysfs(&self) {
        let Some(live) = self.live.get() else { return };
        let mut written = lock(&live.written);
        if live.stopped.load(Ordering::SeqCst) {
            return;
        }
        for (g, gpu) in self.machine.gpus.iter().enumerate() {
            let now = self.live_values(g);
            if written[g] == Some(now) {
                continue;
            }
            let dir = live.root.join(device_dir(&gpu.identity));
            let result = live_files(&gpu.identity, &now)
                .iter()
                .try_for_each(|(name, text)| replace_file(&dir.join(name), text));
            match result {
                Ok(()) => written[g] = Some(now),
                Err(e) => self.warn_device(format!("updating the device files in {}: {e}", dir.display())),
            }
        }
    }
}
