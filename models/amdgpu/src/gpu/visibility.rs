//! Deterministic visibility of plain GPU memory accesses under races: visibility
//! windows.
//!
//! Simulated time is cut into windows of length Q aligned to multiples of Q (the GPU's
//! `visibility_window`, by default its shortest compute unit <-> L2 link latency). A
//! plain store made by an *agent* (a compute unit, or a home that performs deferred
//! accesses: an L2 or the SoC) at simulated time t is visible to that agent at once and
//! to every other agent from the next multiple of Q on. Each agent writes its stores
//! into its own [`StoreLog`] (bucketed by address shard) and keeps a shadow of the
//! granules it wrote in the current window, so its own loads see its own stores. At each
//! boundary, before any partition handles an event at or after it, the engine's
//! synchronisation hook ([`GpuSync`]) folds every log into the arena: per shard, the
//! agents' entries in `(time, agent, seq)` order (a deterministic winner for same-byte
//! write-write races); shards are folded in parallel by the workers.
//!
//! So what a load reads depends only on simulated time, never on how far another
//! worker's partition has run: results are equal for any worker count and partitioning,
//! for racy programs too. Release/acquire pairs keep their order: visibility is
//! monotone in time.
//!
//! Fine-grained memory (`MemKind::Fine`, host-coherent) is not windowed: compute units
//! never access it with plain accesses (they defer every access to it to the coherent
//! home, which performs them in simulated-time order), and the home writes it at once,
//! so the host and the home's host services see it as before.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use amdgpu_isa::exec::{AtomicOp, DeviceMemory, MemFault};
use serde::{Deserialize, Serialize};
use simdojo::engine::{SyncHook, SyncPoint, SyncShare};
use simdojo::time::Tick;

use crate::gpu::memory::{GpuMemory, MemView};

/// Bytes of a shadow granule, and the unit by which addresses are sharded.
pub const GRANULE: u64 = 128;

/// Address shards of a log: the fold of one window runs shard by shard, in parallel.
pub const SHARDS: usize = 64;

/// An agent that makes plain stores: its component's index in the topology (so the
/// tie-break of same-time races is the same in every run of one topology).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AgentId(pub u32);

/// One logged store (of one shard's bucket): `len` bytes at `addr` inside one granule,
/// its data at `off` in the bucket's data.
#[derive(Copy, Clone, Debug)]
struct Entry {
    time: u64,
    seq: u64,
    addr: u64,
    off: u32,
    len: u32,
}

/// The entries of one shard, in the agent's order, and their data.
#[derive(Default, Debug)]
struct Bucket {
    entries: Vec<Entry>,
    data: Vec<u8>,
}

impl Bucket {
    /// Moves the entries made before `limit` (with `agent`) and their data to the end of
    /// `entries` and `data`; the others stay, in order.
    fn take_before(&mut self, limit: u64, agent: AgentId, entries: &mut Vec<(u64, AgentId, u64, u64, u32, u32)>, data: &mut Vec<u8>) {
        if self.entries.is_empty() {
            return;
        }
        let base = data.len() as u32;
        if self.entries.iter().all(|e| e.time < limit) {
            entries.extend(self.entries.iter().map(|e| (e.time, agent, e.seq, e.addr, base + e.off, e.len)));
            data.extend_from_slice(&self.data);
            self.entries.clear();
            self.data.clear();
            return;
        }
        let (mut kept, mut kept_data) = (Vec::new(), Vec::new());
        for e in &self.entries {
            let bytes = &self.data[e.off as usize..(e.off + e.len) as usize];
            if e.time < limit {
                entries.push((e.time, agent, e.seq, e.addr, data.len() as u32, e.len));
                data.extend_from_slice(bytes);
            } else {
                kept.push(Entry { off: kept_data.len() as u32, ..*e });
                kept_data.extend_from_slice(bytes);
            }
        }
        self.entries = kept;
        self.data = kept_data;
    }
}

/// The bytes an agent wrote into one granule this window (its own view of them).
#[derive(Clone, Debug)]
struct Shadow {
    mask: u128,
    data: [u8; GRANULE as usize],
}

/// A hasher for granule indices (one multiply; the keys are distinct integers).
#[derive(Default, Clone, Copy)]
struct GranuleHasher(u64);

impl Hasher for GranuleHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, v: u64) {
        let h = (self.0 ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = h ^ (h >> 29);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// What one agent logged in the current window.
#[derive(Debug)]
struct LogState {
    seq: u64,
    shards: Vec<Bucket>,
    /// Granule index -> position in `shadows`.
    index: HashMap<u64, u32, BuildHasherDefault<GranuleHasher>>,
    shadows: Vec<Shadow>,
    /// The address range the shadows cover (`lo >= hi`: none).
    lo: u64,
    hi: u64,
}

impl LogState {
    fn new() -> LogState {
        LogState {
            seq: 0,
            shards: (0..SHARDS).map(|_| Bucket::default()).collect(),
            index: HashMap::default(),
            shadows: Vec::new(),
            lo: u64::MAX,
            hi: 0,
        }
    }

    /// Logs `data` at `addr` made at `time`: split at granule boundaries, each piece into
    /// its shard's bucket (extending the bucket's last entry when it continues it at the
    /// same time) and into the agent's shadow.
    fn store(&mut self, time: u64, addr: u64, data: &[u8]) {
        let mut at = addr;
        let mut rest = data;
        while !rest.is_empty() {
            let granule = at / GRANULE;
            let offset = (at % GRANULE) as usize;
            let n = rest.len().min(GRANULE as usize - offset);
            let (piece, tail) = rest.split_at(n);
            let bucket = &mut self.shards[(granule % SHARDS as u64) as usize];
            match bucket.entries.last_mut() {
                Some(e) if e.time == time && e.addr + u64::from(e.len) == at && e.addr / GRANULE == granule => {
                    e.len += n as u32;
                }
                _ => {
                    bucket.entries.push(Entry { time, seq: self.seq, addr: at, off: bucket.data.len() as u32, len: n as u32 });
                    self.seq += 1;
                }
            }
            bucket.data.extend_from_slice(piece);
            self.shadow(at, piece);
            at += n as u64;
            rest = tail;
        }
    }

    /// Whether `[addr, addr + len)` may hold bytes this agent stored in this window.
    #[inline]
    fn may_hold(&self, addr: u64, len: u64) -> bool {
        self.lo < self.hi && addr < self.hi && addr.saturating_add(len) > self.lo
    }

    /// Puts this agent's own pending bytes of `[addr, addr + buf.len())` into `buf`.
    fn overlay(&self, addr: u64, buf: &mut [u8]) {
        if !self.may_hold(addr, buf.len() as u64) {
            return;
        }
        let mut at = addr;
        let mut done = 0;
        while done < buf.len() {
            let granule = at / GRANULE;
            let offset = (at % GRANULE) as usize;
            let n = (buf.len() - done).min(GRANULE as usize - offset);
            if let Some(&i) = self.index.get(&granule) {
                let shadow = &self.shadows[i as usize];
                let want = span_mask(offset, n);
                if shadow.mask & want == want {
                    buf[done..done + n].copy_from_slice(&shadow.data[offset..offset + n]);
                } else if shadow.mask & want != 0 {
                    for k in 0..n {
                        if shadow.mask >> (offset + k) & 1 != 0 {
                            buf[done + k] = shadow.data[offset + k];
                        }
                    }
                }
            }
            at += n as u64;
            done += n;
        }
    }

    fn is_empty(&self) -> bool {
        self.shadows.is_empty()
    }

    /// Rebuilds the shadows from the entries made at or after `limit` (the others were
    /// folded, or are being folded by another share); returns whether any is left.
    fn reshadow(&mut self, limit: u64) -> bool {
        self.clear_shadows_only();
        let mut left: Vec<(u64, usize, usize)> = Vec::new();
        for (b, bucket) in self.shards.iter().enumerate() {
            for (k, e) in bucket.entries.iter().enumerate() {
                if e.time >= limit {
                    left.push((e.seq, b, k));
                }
            }
        }
        if left.is_empty() {
            self.seq = 0;
            return false;
        }
        left.sort_unstable();
        for (_, b, k) in left {
            let e = self.shards[b].entries[k];
            let bytes = self.shards[b].data[e.off as usize..(e.off + e.len) as usize].to_vec();
            self.shadow(e.addr, &bytes);
        }
        true
    }

    /// Forgets the shadows (their bytes were folded into the arena).
    fn clear_shadows(&mut self) {
        self.clear_shadows_only();
        self.seq = 0;
    }

    fn clear_shadows_only(&mut self) {
        self.index.clear();
        self.shadows.clear();
        self.lo = u64::MAX;
        self.hi = 0;
    }

    /// Puts `data` (inside one granule) into the agent's shadow.
    fn shadow(&mut self, addr: u64, data: &[u8]) {
        let granule = addr / GRANULE;
        let offset = (addr % GRANULE) as usize;
        let i = match self.index.get(&granule) {
            Some(&i) => i as usize,
            None => {
                self.index.insert(granule, self.shadows.len() as u32);
                self.shadows.push(Shadow { mask: 0, data: [0; GRANULE as usize] });
                self.lo = self.lo.min(granule * GRANULE);
                self.hi = self.hi.max((granule + 1) * GRANULE);
                self.shadows.len() - 1
            }
        };
        let shadow = &mut self.shadows[i];
        shadow.data[offset..offset + data.len()].copy_from_slice(data);
        shadow.mask |= span_mask(offset, data.len());
    }
}

/// The bits `offset..offset + n` of a granule's byte mask.
#[inline]
fn span_mask(offset: usize, n: usize) -> u128 {
    let ones = if n >= 128 { u128::MAX } else { (1u128 << n) - 1 };
    ones << offset
}

/// One agent's store log (see the [module docs](self)). The agent writes it while it
/// handles its events; the fold empties it at a boundary, when no event runs.
#[derive(Debug)]
pub struct StoreLog {
    agent: AgentId,
    state: Mutex<LogState>,
    /// Set when the log holds entries (so a fold with nothing to do is one check).
    pending: Arc<AtomicBool>,
}

impl StoreLog {
    fn lock(&self) -> MutexGuard<'_, LogState> {
        // A panic while holding the lock leaves a consistent log (every method updates
        // whole entries): keep using it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The agent whose log this is.
    pub fn agent(&self) -> AgentId {
        self.agent
    }

    /// Logs a store of `data` at `addr` made at `time`.
    pub fn store(&self, time: Tick, addr: u64, data: &[u8]) {
        self.lock().store(time.0, addr, data);
        self.mark_pending();
    }

    fn mark_pending(&self) {
        if !self.pending.load(Ordering::Relaxed) {
            self.pending.store(true, Ordering::Relaxed);
        }
    }

    /// Puts the agent's own pending stores of `[addr, addr + buf.len())` into `buf`.
    pub fn overlay(&self, addr: u64, buf: &mut [u8]) {
        self.lock().overlay(addr, buf);
    }
}

/// The store logs of one GPU's agents and the window length (a shared resource named
/// `"{gpu} visibility"`, see [`Visibility::resource_name`]).
#[derive(Debug)]
pub struct Visibility {
    agents: Mutex<Vec<Arc<StoreLog>>>,
    /// Whether the engine folds the logs (a window was set): without it, every access
    /// is immediate.
    enabled: AtomicBool,
    pending: Arc<AtomicBool>,
    /// The SoC's `visibility_window` in ticks (0: the shortest compute unit <-> L2
    /// link).
    configured: AtomicU64,
    /// The shortest link from a compute unit to its L2 (`u64::MAX`: none seen).
    agent_link: AtomicU64,
    /// The shortest link between the SoC and a command processor (part of every
    /// dispatch's completion path).
    completion_link: AtomicU64,
    /// Per shard, the fold's merge buffers (kept to avoid allocating every window).
    scratch: Vec<Mutex<FoldScratch>>,
}

impl Default for Visibility {
    fn default() -> Visibility {
        Visibility {
            agents: Mutex::new(Vec::new()),
            enabled: AtomicBool::new(false),
            configured: AtomicU64::new(0),
            pending: Arc::new(AtomicBool::new(false)),
            agent_link: AtomicU64::new(u64::MAX),
            completion_link: AtomicU64::new(u64::MAX),
            scratch: (0..SHARDS).map(|_| Mutex::new(FoldScratch::default())).collect(),
        }
    }
}

/// One shard's merge buffers.
#[derive(Default, Debug)]
struct FoldScratch {
    entries: Vec<(u64, AgentId, u64, u64, u32, u32)>,
    data: Vec<u8>,
}

/// One logged store, as a checkpoint keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoggedStore {
    /// The agent that made it.
    pub agent: AgentId,
    /// When (ticks).
    pub time: u64,
    /// Its place in the agent's order among stores of the same time.
    pub seq: u64,
    /// Where.
    pub addr: u64,
    /// What.
    pub data: Vec<u8>,
}

impl Visibility {
    /// The name of GPU `gpu`'s visibility resource.
    pub fn resource_name(gpu: &str) -> String {
        format!("{gpu} visibility")
    }

    /// The log of `agent`, created on first use.
    pub fn agent(&self, agent: AgentId) -> Arc<StoreLog> {
        let mut agents = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(log) = agents.iter().find(|l| l.agent == agent) {
            return log.clone();
        }
        let log = Arc::new(StoreLog { agent, state: Mutex::new(LogState::new()), pending: self.pending.clone() });
        agents.push(log.clone());
        log
    }

    /// Sets the window length the SoC was given (`Tick::ZERO`: the shortest compute
    /// unit <-> L2 link).
    pub fn configure(&self, window: Tick) {
        self.configured.store(window.0, Ordering::Relaxed);
    }

    /// Notes a SoC <-> command processor link of `latency` (every store of a finished
    /// dispatch must be folded before the SoC completes its signal). The SoC is built
    /// before the compute units that check against it.
    pub fn note_completion_link(&self, latency: Tick) {
        self.completion_link.fetch_min(latency.0, Ordering::Relaxed);
    }

    /// Notes a compute unit <-> L2 link of `latency` and turns windows on. The window
    /// may be no longer than it (a compute unit's store must be folded before its own
    /// atomic reaches the home, and a home's write before its answer reaches the
    /// compute unit) nor than the SoC <-> command processor links; the error says which
    /// it outlasts.
    pub fn note_agent_link(&self, latency: Tick) -> Result<(), String> {
        self.agent_link.fetch_min(latency.0, Ordering::Relaxed);
        self.enabled.store(true, Ordering::Relaxed);
        let configured = self.configured.load(Ordering::Relaxed);
        let completion = self.completion_link.load(Ordering::Relaxed);
        if configured > latency.0 {
            return Err(format!(
                "the GPU's visibility_window = {} is longer than this compute unit's link to its L2 ({latency}): its \
                 store could miss its own later atomic",
                Tick(configured)
            ));
        }
        let q = if configured > 0 { configured } else { latency.0 };
        if q > completion {
            return Err(format!(
                "the GPU's visibility window ({}) is longer than its shortest SoC <-> command processor link ({}): a \
                 dispatch could complete before its last stores are visible",
                Tick(q),
                Tick(completion)
            ));
        }
        Ok(())
    }

    /// The window length: the configured one, or the shortest compute unit <-> L2 link;
    /// `None` when nothing makes plain stores (no compute unit).
    pub fn window(&self) -> Option<Tick> {
        let agent = self.agent_link.load(Ordering::Relaxed);
        let configured = self.configured.load(Ordering::Relaxed);
        match (configured, agent) {
            (_, u64::MAX) => None,
            (0, q) | (q, _) => Some(Tick(q)),
        }
    }

    /// The log `agent` writes its plain stores into, when windows are on (a compute unit
    /// noted its link at build: ask from `init` on); `None`: its accesses are immediate.
    pub fn active_log(&self, agent: AgentId) -> Option<Arc<StoreLog>> {
        self.enabled.load(Ordering::Relaxed).then(|| self.agent(agent))
    }

    /// Whether any log holds stores.
    pub fn pending(&self) -> bool {
        self.pending.load(Ordering::Relaxed)
    }

    fn logs(&self) -> Vec<Arc<StoreLog>> {
        self.agents.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Folds the stores made before `limit` in the shards `share, share + shares, ...`
    /// of every log into `memory`, each shard in `(time, agent, seq)` order; stores to
    /// memory no longer mapped are dropped, later ones stay. Share 0 also rebuilds the
    /// agents' shadows from the stores that stay (usually none), so it may run at the
    /// same time as the other shares of one fold, or before or after them.
    pub fn fold(&self, memory: &Arc<GpuMemory>, share: usize, shares: usize, limit: Tick) {
        let logs = self.logs();
        let mut view = memory.view();
        let mut shard = share;
        while shard < SHARDS {
            let mut scratch = self.scratch[shard].lock().unwrap_or_else(|e| e.into_inner());
            let FoldScratch { entries, data } = &mut *scratch;
            entries.clear();
            data.clear();
            for log in &logs {
                let mut state = log.lock();
                state.shards[shard].take_before(limit.0, log.agent, entries, data);
            }
            entries.sort_unstable_by_key(|&(time, agent, seq, ..)| (time, agent, seq));
            for &(_, _, _, addr, off, len) in entries.iter() {
                view.write_mapped(addr, &data[off as usize..(off + len) as usize]);
            }
            shard += shares.max(1);
        }
        if share == 0 {
            let mut left = false;
            for log in &logs {
                left |= log.lock().reshadow(limit.0);
            }
            self.pending.store(left, Ordering::Relaxed);
        }
    }

    /// Every logged store, for a checkpoint (in `(time, agent, seq)` order).
    pub fn save(&self) -> Vec<LoggedStore> {
        let mut out = Vec::new();
        for log in self.logs() {
            let state = log.lock();
            for bucket in &state.shards {
                for e in &bucket.entries {
                    let data = bucket.data[e.off as usize..(e.off + e.len) as usize].to_vec();
                    out.push(LoggedStore { agent: log.agent, time: e.time, seq: e.seq, addr: e.addr, data });
                }
            }
        }
        out.sort_by_key(|s| (s.time, s.agent, s.seq));
        out
    }

    /// Replaces every log's contents with `stores` (from [`Visibility::save`]); the
    /// agents' shadows are rebuilt from them.
    pub fn restore(&self, stores: &[LoggedStore]) {
        let logs = self.logs();
        for log in &logs {
            let mut state = log.lock();
            state.clear_shadows();
            for b in &mut state.shards {
                b.entries.clear();
                b.data.clear();
            }
        }
        self.pending.store(false, Ordering::Relaxed);
        for s in stores {
            let log = self.agent(s.agent);
            let mut state = log.lock();
            // Replayed in the agent's order with their own numbers, the entries come
            // back as they were, and the counter resumes past them.
            state.seq = s.seq;
            state.store(s.time, s.addr, &s.data);
            drop(state);
            log.mark_pending();
        }
    }
}

/// The GPU's synchronisation hook: folds the window's logs at each boundary.
pub struct GpuSync {
    visibility: Arc<Visibility>,
    memory: Arc<GpuMemory>,
}

impl GpuSync {
    /// The hook of `visibility` over `memory`.
    pub fn new(visibility: Arc<Visibility>, memory: Arc<GpuMemory>) -> GpuSync {
        GpuSync { visibility, memory }
    }
}

impl SyncHook for GpuSync {
    /// The window; without compute units (nothing makes plain stores) a period no run
    /// reaches.
    fn period(&self) -> Tick {
        self.visibility.window().unwrap_or(Tick::MAX)
    }

    fn pending(&self) -> bool {
        self.visibility.pending()
    }

    /// At a boundary every share folds its shards (everything logged is older). At a
    /// pause or a checkpoint only what the windows ended before `at` made visible is
    /// folded (the rest stays in the logs, which a checkpoint saves), so pausing changes
    /// no result; at the end of a run everything is.
    fn sync(&self, at: Tick, point: SyncPoint, share: SyncShare) {
        match point {
            SyncPoint::Boundary => self.visibility.fold(&self.memory, share.index, share.count, at),
            SyncPoint::Pause | SyncPoint::Checkpoint if share.index == 0 => {
                let q = self.period().0.max(1);
                self.visibility.fold(&self.memory, 0, 1, Tick(at.0 / q * q));
            }
            SyncPoint::End if share.index == 0 => self.visibility.fold(&self.memory, 0, 1, Tick::MAX),
            _ => {}
        }
    }
}

/// A component's access to GPU memory with windowed visibility: loads read the arena
/// and then the agent's own pending stores, stores go to the agent's log (after the
/// same checks, so a bad store faults at once). Without a log (no window configured)
/// it is the plain [`MemView`].
pub struct WindowedMemory {
    view: MemView,
    log: Option<Arc<StoreLog>>,
    now: Tick,
    /// A home writes fine-grained memory at once (see the module docs).
    home: bool,
}

impl std::fmt::Debug for WindowedMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WindowedMemory").field("agent", &self.log.as_ref().map(|l| l.agent)).field("now", &self.now).finish()
    }
}

impl WindowedMemory {
    /// `view` with `log` (`None`: every access at once). A `home` writes fine-grained
    /// memory at once.
    pub fn new(view: MemView, log: Option<Arc<StoreLog>>, home: bool) -> WindowedMemory {
        WindowedMemory { view, log, now: Tick::ZERO, home }
    }

    /// Sets the simulated time of the accesses that follow.
    #[inline]
    pub fn set_now(&mut self, now: Tick) {
        self.now = now;
    }

    /// The plain view (region checks, fine-grained tests).
    #[inline]
    pub fn view(&mut self) -> &mut MemView {
        &mut self.view
    }

    /// Whether a store to `addr` bypasses the log.
    #[inline]
    fn immediate(&mut self, addr: u64) -> bool {
        self.log.is_none() || (self.home && self.view.is_fine(addr))
    }

    /// Overlays the agent's own stores on the lanes of a gather just read.
    fn overlay_lanes(&self, log: &StoreLog, addrs: &[u64; 64], mask: u64, out: &mut [[u32; 64]]) {
        let dwords = out.len().min(4);
        let state = log.lock();
        if state.is_empty() {
            return;
        }
        let mut m = mask;
        while m != 0 {
            let lane = m.trailing_zeros() as usize;
            m &= m - 1;
            let bytes = 4 * dwords as u64;
            if !state.may_hold(addrs[lane], bytes) {
                continue;
            }
            let mut buf = [0u8; 16];
            for (k, reg) in out.iter().take(dwords).enumerate() {
                buf[4 * k..4 * k + 4].copy_from_slice(&reg[lane].to_le_bytes());
            }
            state.overlay(addrs[lane], &mut buf[..4 * dwords]);
            for (k, reg) in out.iter_mut().take(dwords).enumerate() {
                reg[lane] = u32::from_le_bytes([buf[4 * k], buf[4 * k + 1], buf[4 * k + 2], buf[4 * k + 3]]);
            }
        }
    }
}

impl DeviceMemory for WindowedMemory {
    #[inline]
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> Result<(), MemFault> {
        self.view.read(addr, buf)?;
        if let Some(log) = &self.log {
            log.overlay(addr, buf);
        }
        Ok(())
    }

    #[inline]
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        if self.immediate(addr) {
            return self.view.write(addr, data);
        }
        self.view.check_range(addr, data.len() as u64, true)?;
        if let Some(log) = &self.log {
            log.store(self.now, addr, data);
        }
        Ok(())
    }

    fn gather_dwords(&mut self, addrs: &[u64; 64], mask: u64, out: &mut [[u32; 64]]) -> Result<(), MemFault> {
        self.view.gather_dwords(addrs, mask, out)?;
        if let Some(log) = &self.log {
            self.overlay_lanes(log, addrs, mask, out);
        }
        Ok(())
    }

    fn scatter_dwords(&mut self, addrs: &[u64; 64], mask: u64, data: &[[u32; 64]]) -> Result<(), MemFault> {
        let Some(log) = self.log.clone() else {
            return self.view.scatter_dwords(addrs, mask, data);
        };
        if self.home {
            // A home's lanes may reach fine-grained memory: one write per lane decides.
            return amdgpu_isa::exec::device::scatter_dwords_by_lane(self, addrs, mask, data);
        }
        let dwords = data.len().min(4);
        let bytes = 4 * dwords as u64;
        self.view.check_lanes(addrs, mask, bytes, true)?;
        // Lanes whose elements continue each other are logged as one run.
        let mut state = log.lock();
        let mut run = [0u8; 64 * 16];
        let (mut start, mut len) = (0u64, 0usize);
        let mut m = mask;
        while m != 0 {
            let lane = m.trailing_zeros() as usize;
            m &= m - 1;
            let addr = addrs[lane];
            if len > 0 && addr != start + len as u64 {
                state.store(self.now.0, start, &run[..len]);
                len = 0;
            }
            if len == 0 {
                start = addr;
            }
            for reg in data.iter().take(dwords) {
                run[len..len + 4].copy_from_slice(&reg[lane].to_le_bytes());
                len += 4;
            }
        }
        if len > 0 {
            state.store(self.now.0, start, &run[..len]);
            drop(state);
            log.mark_pending();
        }
        Ok(())
    }

    fn gather_u32(&mut self, addrs: &[u64; 64], mask: u64, out: &mut [u32; 64]) -> Result<(), MemFault> {
        self.gather_dwords(addrs, mask, std::slice::from_mut(out))
    }

    fn scatter_u32(&mut self, addrs: &[u64; 64], mask: u64, vals: &[u32; 64]) -> Result<(), MemFault> {
        self.scatter_dwords(addrs, mask, std::slice::from_ref(vals))
    }

    fn atomic_u32(&mut self, addr: u64, op: AtomicOp, src: u32, cmp: u32) -> Result<u32, MemFault> {
        if self.immediate(addr) {
            return self.view.atomic_u32(addr, op, src, cmp);
        }
        // Performed by one agent in its event: read (with its own stores), log the result.
        let old = self.read_u32(addr)?;
        self.write_u32(addr, op.apply_u32(old, src, cmp))?;
        Ok(old)
    }

    fn atomic_u64(&mut self, addr: u64, op: AtomicOp, src: u64, cmp: u64) -> Result<u64, MemFault> {
        if self.immediate(addr) {
            return self.view.atomic_u64(addr, op, src, cmp);
        }
        let old = self.read_u64(addr)?;
        self.write_u64(addr, op.apply_u64(old, src, cmp))?;
        Ok(old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::memory::MemKind;

    fn memory() -> Arc<GpuMemory> {
        Arc::new(GpuMemory::new(1 << 20).unwrap())
    }

    fn read(mem: &Arc<GpuMemory>, addr: u64, n: usize) -> Vec<u8> {
        let mut buf = vec![0u8; n];
        mem.read(crate::gpu::ids::GpuAddr(addr), &mut buf).unwrap();
        buf
    }

    #[test]
    fn own_stores_are_visible_at_once_and_others_only_after_the_fold() {
        let mem = memory();
        let vis = Visibility::default();
        let a = mem.alloc(4096, 256).unwrap().0;
        let mut first = WindowedMemory::new(mem.view(), Some(vis.agent(AgentId(1))), false);
        let mut second = WindowedMemory::new(mem.view(), Some(vis.agent(AgentId(2))), false);
        first.set_now(Tick(10));
        first.write_u32(a + 4, 0xdead_beef).unwrap();
        assert_eq!(first.read_u32(a + 4).unwrap(), 0xdead_beef, "an agent sees its own store");
        assert_eq!(second.read_u32(a + 4).unwrap(), 0, "another agent does not, before the boundary");
        assert_eq!(read(&mem, a + 4, 4), [0; 4], "the arena is unchanged");
        assert!(vis.pending());
        vis.fold(&mem, 0, 1, Tick::MAX);
        assert!(!vis.pending());
        assert_eq!(second.read_u32(a + 4).unwrap(), 0xdead_beef, "visible to all after the fold");
        assert_eq!(first.read_u32(a + 4).unwrap(), 0xdead_beef);
    }

    #[test]
    fn the_fold_orders_same_byte_races_by_time_then_agent_then_sequence() {
        let mem = memory();
        let vis = Visibility::default();
        let a = mem.alloc(4096, 256).unwrap().0;
        let mut low = WindowedMemory::new(mem.view(), Some(vis.agent(AgentId(3))), false);
        let mut high = WindowedMemory::new(mem.view(), Some(vis.agent(AgentId(7))), false);
        // Same time: the higher agent wins. Later time: the later store wins, whatever
        // the agent. One agent twice at one time: its later store wins.
        high.set_now(Tick(5));
        high.write_u32(a, 1).unwrap();
        low.set_now(Tick(5));
        low.write_u32(a, 2).unwrap();
        low.set_now(Tick(9));
        low.write_u32(a + 8, 3).unwrap();
        high.set_now(Tick(6));
        high.write_u32(a + 8, 4).unwrap();
        low.write_u32(a + 16, 5).unwrap();
        low.write_u32(a + 16, 6).unwrap();
        // Partial overlap: bytes keep their own winners.
        high.set_now(Tick(8));
        high.write_u32(a + 32, 0x1111_1111).unwrap();
        low.set_now(Tick(7));
        low.write_u64(a + 30, 0x2222_2222_2222_2222).unwrap();
        // Restoring the logs from a checkpoint gives the same fold.
        let saved = vis.save();
        let copy = Visibility::default();
        copy.restore(&saved);
        assert_eq!(copy.save(), saved);
        for v in [&vis, &copy] {
            mem.write(crate::gpu::ids::GpuAddr(a), &[0; 64]).unwrap();
            v.fold(&mem, 0, 1, Tick::MAX);
            let m = &mem;
            let word = |o: u64| u32::from_le_bytes(read(m, a + o, 4).try_into().unwrap());
            assert_eq!(word(0), 1);
            assert_eq!(word(8), 3);
            assert_eq!(word(16), 6);
            assert_eq!(read(m, a + 30, 8), [0x22, 0x22, 0x11, 0x11, 0x11, 0x11, 0x22, 0x22]);
        }
    }

    #[test]
    fn folding_by_shares_equals_one_fold_and_drops_stores_to_freed_memory() {
        let mem = memory();
        let a = mem.alloc(8192, 256).unwrap().0;
        let stores = |vis: &Visibility| {
            let b = mem.alloc(4096, 256).unwrap();
            for i in 0..4u32 {
                let mut w = WindowedMemory::new(mem.view(), Some(vis.agent(AgentId(i))), false);
                for k in 0..200u64 {
                    w.set_now(Tick(k % 7));
                    let addrs: [u64; 64] = std::array::from_fn(|l| a + ((l as u64 * 4 + k * 36 + u64::from(i) * 8) % 8000));
                    let vals: [u32; 64] = std::array::from_fn(|l| (l as u32) ^ (k as u32) << 8 ^ i << 24);
                    w.scatter_u32(&addrs, u64::MAX, &vals).unwrap();
                }
                w.write_u32(b.0, i).unwrap();
            }
            mem.free(b).unwrap();
        };
        let whole = Visibility::default();
        stores(&whole);
        whole.fold(&mem, 0, 1, Tick::MAX);
        let one = read(&mem, a, 8192);
        assert!(one.iter().any(|&x| x != 0));
        mem.write(crate::gpu::ids::GpuAddr(a), &[0; 8192]).unwrap();
        let shared = Visibility::default();
        stores(&shared);
        for share in (0..3).rev() {
            shared.fold(&mem, share, 3, Tick::MAX);
        }
        assert_eq!(read(&mem, a, 8192), one, "three shares fold as one");
    }

    #[test]
    fn a_home_writes_fine_grained_memory_at_once_and_logs_the_rest() {
        let mem = memory();
        let vis = Visibility::default();
        let fine = mem.alloc_kind(4096, 256, MemKind::Fine).unwrap().0;
        let coarse = mem.alloc(4096, 256).unwrap().0;
        let mut home = WindowedMemory::new(mem.view(), Some(vis.agent(AgentId(0))), true);
        home.set_now(Tick(3));
        assert_eq!(home.atomic_u32(fine, AtomicOp::Add, 5, 0).unwrap(), 0);
        assert_eq!(home.atomic_u32(coarse, AtomicOp::Add, 5, 0).unwrap(), 0);
        assert_eq!(home.atomic_u32(coarse, AtomicOp::Add, 5, 0).unwrap(), 5, "the home sees its own result");
        assert_eq!(read(&mem, fine, 4), 5u32.to_le_bytes());
        assert_eq!(read(&mem, coarse, 4), [0; 4]);
        vis.fold(&mem, 0, 1, Tick::MAX);
        assert_eq!(read(&mem, coarse, 4), 10u32.to_le_bytes());
    }

    #[test]
    fn a_store_that_would_fault_faults_at_once_and_logs_nothing() {
        let mem = memory();
        let vis = Visibility::default();
        let mut w = WindowedMemory::new(mem.view(), Some(vis.agent(AgentId(0))), false);
        assert!(w.write_u32(0x10, 1).is_err());
        let addrs = [0x10u64; 64];
        assert!(w.scatter_u32(&addrs, 1, &[0; 64]).is_err());
        assert!(!vis.pending());
    }

    #[test]
    fn the_window_is_the_shortest_agent_link_and_may_not_outlast_the_links_that_cover_it() {
        let vis = Visibility::default();
        assert_eq!(vis.window(), None);
        assert!(vis.active_log(AgentId(0)).is_none(), "no compute unit: accesses are immediate");
        vis.note_completion_link(Tick(100));
        vis.note_agent_link(Tick(40)).unwrap();
        vis.note_agent_link(Tick(30)).unwrap();
        assert_eq!(vis.window(), Some(Tick(30)));
        assert!(vis.active_log(AgentId(0)).is_some());
        vis.configure(Tick(20));
        assert_eq!(vis.window(), Some(Tick(20)));
        vis.configure(Tick(31));
        assert!(vis.note_agent_link(Tick(30)).unwrap_err().contains("link to its L2"));
        let short = Visibility::default();
        short.note_completion_link(Tick(25));
        assert!(short.note_agent_link(Tick(30)).unwrap_err().contains("SoC <-> command processor"));
    }

    #[test]
    fn a_fold_up_to_a_time_keeps_later_stores_and_their_owners_view_of_them() {
        let mem = memory();
        let vis = Visibility::default();
        let a = mem.alloc(4096, 256).unwrap().0;
        let mut w = WindowedMemory::new(mem.view(), Some(vis.agent(AgentId(1))), false);
        w.set_now(Tick(5));
        w.write_u32(a, 1).unwrap();
        w.set_now(Tick(15));
        w.write_u32(a + 4, 2).unwrap();
        let other = WindowedMemory::new(mem.view(), Some(vis.agent(AgentId(2))), false);
        drop(other);
        vis.fold(&mem, 0, 1, Tick(10));
        assert_eq!(read(&mem, a, 8), [1, 0, 0, 0, 0, 0, 0, 0], "only the store before 10 is folded");
        assert!(vis.pending());
        assert_eq!(w.read_u64(a).unwrap(), 1 | 2 << 32, "the agent still sees its later store");
        vis.fold(&mem, 0, 1, Tick(20));
        assert_eq!(read(&mem, a, 8), [1, 0, 0, 0, 2, 0, 0, 0]);
        assert!(!vis.pending());
    }
}
