//! Ioctl arguments that point to arrays in the caller's memory, and how they cross to
//! the daemon.
//!
//! The daemon cannot read a client's memory. So for each request the driver supports,
//! [`array_specs`] lists the arrays its argument points to (where the pointer and the
//! count are in the argument, the element size, the limit, and whether the driver reads
//! or writes them). The client ([`IoctlCall::gather`]) reads the argument and the
//! arrays the driver reads from its own memory and sends them; the daemon serves the
//! driver exactly those ranges through [`InlinedMemory`] (anything else is `EFAULT`),
//! collects what the driver writes, and the client copies that back
//! ([`IoctlReply::apply`]).
//!
//! **Invariant:** the daemon recomputes the arrays from the argument it received
//! ([`embedded_arrays`]) and refuses a call that inlines any other range, so a client
//! cannot make the daemon allocate more than the request's own limits allow.
//!
//! Not inlined: the pages of a USERPTR allocation (`ALLOC_MEMORY_OF_GPU` with
//! `USERPTR` probes the first and last byte of the range at `mmap_offset`); in daemon
//! mode those pages must be shared with the daemon, not copied per call.

use std::mem::{offset_of, size_of};
use std::sync::Mutex;

use super::protocol::{InlinedArray, IoctlCall, IoctlReply, ProtocolError, WriteBack, MAX_WRITES};
use crate::backend::{DeviceNode, Errno};
use crate::kfd::abi::{self, drm, nr};
use crate::kfd::user::UserMemory;

/// Whether the driver reads an array, writes it, or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Read by the driver: the client sends its contents.
    In,
    /// Written by the driver: only the length crosses; the bytes come back.
    Out,
    /// Read and written.
    InOut,
}

impl Direction {
    pub(crate) fn to_wire(self) -> u8 {
        match self {
            Direction::In => 0,
            Direction::Out => 1,
            Direction::InOut => 2,
        }
    }

    pub(crate) fn from_wire(v: u8) -> Result<Direction, ProtocolError> {
        match v {
            0 => Ok(Direction::In),
            1 => Ok(Direction::Out),
            2 => Ok(Direction::InOut),
            other => Err(ProtocolError::InvalidValue {
                what: "inlined array direction",
                value: u64::from(other),
            }),
        }
    }
}

/// One array an ioctl argument points to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArraySpec {
    /// The pointer field's name, for messages.
    pub name: &'static str,
    /// Byte offset of the 64-bit pointer field in the argument.
    pub pointer_offset: usize,
    /// Byte offset of the count field in the argument.
    pub count_offset: usize,
    /// Bytes of the count field (4 or 8).
    pub count_bytes: usize,
    /// Units of the count per element (`SET_CU_MASK` counts bits of 32-bit words).
    pub count_unit: u64,
    /// Bytes of one element.
    pub element_bytes: usize,
    /// Most elements: a larger count of an array the driver reads fails in the driver
    /// (`EINVAL`) before it reads, so nothing is inlined; a larger count of an output
    /// array is cut to this (the driver writes no more than it has).
    pub max_elements: usize,
    /// Read, written or both.
    pub direction: Direction,
}

/// Most elements of an array the driver reads (the driver's own limit).
pub const MAX_ARRAY_ELEMENTS: usize = 4096;

/// Most bytes of a DRM version string buffer that cross.
const MAX_DRM_STRING: usize = 4096;

/// Most bytes of an `AMDGPU_INFO` answer that cross.
const MAX_AMDGPU_INFO: usize = 64 * 1024;

const fn spec(
    name: &'static str,
    pointer_offset: usize,
    count_offset: usize,
    count_bytes: usize,
    element_bytes: usize,
    max_elements: usize,
    direction: Direction,
) -> ArraySpec {
    ArraySpec {
        name,
        pointer_offset,
        count_offset,
        count_bytes,
        count_unit: 1,
        element_bytes,
        max_elements,
        direction,
    }
}

const APERTURES_NEW: [ArraySpec; 1] = [spec(
    "kfd_process_device_apertures_ptr",
    offset_of!(abi::ProcessAperturesNew, kfd_process_device_apertures_ptr),
    offset_of!(abi::ProcessAperturesNew, num_of_nodes),
    4,
    size_of::<abi::DeviceApertures>(),
    MAX_ARRAY_ELEMENTS,
    Direction::Out,
)];

const TILE_CONFIG: [ArraySpec; 2] = [
    spec(
        "tile_config_ptr",
        offset_of!(abi::GetTileConfig, tile_config_ptr),
        offset_of!(abi::GetTileConfig, num_tile_configs),
        4,
        4,
        MAX_ARRAY_ELEMENTS,
        Direction::Out,
    ),
    spec(
        "macro_tile_config_ptr",
        offset_of!(abi::GetTileConfig, macro_tile_config_ptr),
        offset_of!(abi::GetTileConfig, num_macro_tile_configs),
        4,
        4,
        MAX_ARRAY_ELEMENTS,
        Direction::Out,
    ),
];

const WAIT_EVENTS: [ArraySpec; 1] = [spec(
    "events_ptr",
    offset_of!(abi::WaitEvents, events_ptr),
    offset_of!(abi::WaitEvents, num_events),
    4,
    size_of::<abi::EventData>(),
    MAX_ARRAY_ELEMENTS,
    Direction::InOut,
)];

const MAP_MEMORY: [ArraySpec; 1] = [spec(
    "device_ids_array_ptr",
    offset_of!(abi::MapMemory, device_ids_array_ptr),
    offset_of!(abi::MapMemory, n_devices),
    4,
    4,
    MAX_ARRAY_ELEMENTS,
    Direction::In,
)];

const CU_MASK: [ArraySpec; 1] = [ArraySpec {
    count_unit: 32,
    ..spec(
        "cu_mask_ptr",
        offset_of!(abi::SetCuMask, cu_mask_ptr),
        offset_of!(abi::SetCuMask, num_cu_mask),
        4,
        4,
        MAX_ARRAY_ELEMENTS,
        Direction::In,
    )
}];

const DRM_VERSION: [ArraySpec; 3] = [
    spec(
        "name",
        offset_of!(drm::Version, name),
        offset_of!(drm::Version, name_len),
        8,
        1,
        MAX_DRM_STRING,
        Direction::Out,
    ),
    spec(
        "date",
        offset_of!(drm::Version, date),
        offset_of!(drm::Version, date_len),
        8,
        1,
        MAX_DRM_STRING,
        Direction::Out,
    ),
    spec(
        "desc",
        offset_of!(drm::Version, desc),
        offset_of!(drm::Version, desc_len),
        8,
        1,
        MAX_DRM_STRING,
        Direction::Out,
    ),
];

const AMDGPU_INFO: [ArraySpec; 1] = [spec(
    "return_pointer",
    offset_of!(drm::AmdgpuInfo, return_pointer),
    offset_of!(drm::AmdgpuInfo, return_size),
    4,
    1,
    MAX_AMDGPU_INFO,
    Direction::Out,
)];

/// The arrays the argument of `request` points to, for every KFD and DRM ioctl the
/// driver supports (empty for the others, whose argument is self-contained).
pub fn array_specs(request: u64) -> &'static [ArraySpec] {
    let r = abi::Request::decode(request);
    match (r.ty, r.nr) {
        (abi::KFD_TYPE, nr::GET_PROCESS_APERTURES_NEW) => &APERTURES_NEW,
        (abi::KFD_TYPE, nr::GET_TILE_CONFIG) => &TILE_CONFIG,
        (abi::KFD_TYPE, nr::WAIT_EVENTS) => &WAIT_EVENTS,
        (abi::KFD_TYPE, nr::MAP_MEMORY_TO_GPU | nr::UNMAP_MEMORY_FROM_GPU) => &MAP_MEMORY,
        (abi::KFD_TYPE, nr::SET_CU_MASK) => &CU_MASK,
        (abi::DRM_TYPE, drm::NR_VERSION) if r.size == size_of::<drm::Version>() => &DRM_VERSION,
        (abi::DRM_TYPE, n) if n == drm::COMMAND_BASE + drm::AMDGPU_INFO => &AMDGPU_INFO,
        _ => &[],
    }
}

/// One array of a particular call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmbeddedArray {
    /// What it is.
    pub spec: &'static ArraySpec,
    /// Its address in the caller.
    pub addr: u64,
    /// Its bytes (not zero; `addr + len` does not wrap).
    pub len: usize,
}

/// Reads a little-endian field of the argument, zero-extended past its end (as the
/// driver zero-extends a short argument).
fn field(arg: &[u8], offset: usize, bytes: usize) -> u64 {
    let mut out = [0u8; 8];
    for (i, b) in out.iter_mut().enumerate().take(bytes.min(8)) {
        *b = arg.get(offset + i).copied().unwrap_or(0);
    }
    u64::from_le_bytes(out)
}

/// The arrays `arg` (the argument of `request`) points to that must cross: empty ones,
/// ones that wrap around the address space, and over-long ones the driver reads are
/// left out (the driver fails those calls itself); over-long output arrays are cut to
/// their limit.
pub fn embedded_arrays(request: u64, arg: &[u8]) -> Vec<EmbeddedArray> {
    let mut out = Vec::new();
    for spec in array_specs(request) {
        let addr = field(arg, spec.pointer_offset, 8);
        let mut elements = field(arg, spec.count_offset, spec.count_bytes) / spec.count_unit;
        if elements > spec.max_elements as u64 {
            if spec.direction != Direction::Out {
                continue;
            }
            elements = spec.max_elements as u64;
        }
        // At most max_elements * element_bytes: small.
        let len = elements as usize * spec.element_bytes;
        if len == 0 || addr.checked_add(len as u64).is_none() {
            continue;
        }
        out.push(EmbeddedArray { spec, addr, len });
    }
    out
}

impl IoctlCall {
    /// Builds the call for an ioctl of this process: the argument (`EFAULT` if it cannot
    /// be read) and the arrays it points to, read through `user` (an array that cannot
    /// be read is left out, so the driver's access to it fails as in the kernel).
    pub fn gather(
        node: DeviceNode,
        request: u64,
        arg_addr: u64,
        user: &impl UserMemory,
    ) -> Result<IoctlCall, Errno> {
        let size = abi::Request::decode(request).size;
        let mut arg = vec![0u8; size];
        user.read(arg_addr, &mut arg)?;
        let mut arrays = Vec::new();
        for e in embedded_arrays(request, &arg) {
            let mut data = vec![0u8; e.len];
            if e.spec.direction != Direction::Out && user.read(e.addr, &mut data).is_err() {
                continue;
            }
            arrays.push(InlinedArray {
                addr: e.addr,
                direction: e.spec.direction,
                data,
            });
        }
        Ok(IoctlCall {
            node,
            request,
            arg_addr,
            arg,
            arrays,
        })
    }

    /// Whether `[addr, addr + len)` lies inside the argument or one inlined array.
    fn covers(&self, addr: u64, len: usize) -> bool {
        let inside = |start: u64, size: usize| {
            addr >= start
                && (addr - start)
                    .checked_add(len as u64)
                    .is_some_and(|end| end <= size as u64)
        };
        inside(self.arg_addr, self.arg.len())
            || self.arrays.iter().any(|a| inside(a.addr, a.data.len()))
    }
}

impl IoctlReply {
    /// Copies what the driver wrote back to this process's memory. A write outside
    /// the call's argument and arrays (a daemon bug) is refused with `EIO` before
    /// anything is written; a copy that fails is `EFAULT`.
    pub fn apply(&self, call: &IoctlCall, user: &impl UserMemory) -> Result<(), Errno> {
        if !self
            .writes
            .iter()
            .all(|w| call.covers(w.addr, w.data.len()))
        {
            return Err(Errno::IO);
        }
        for w in &self.writes {
            user.write(w.addr, &w.data)?;
        }
        Ok(())
    }
}

/// One range served to the driver.
#[derive(Debug)]
struct Range {
    addr: u64,
    data: Vec<u8>,
    /// Written byte intervals `[start, end)` of `data`, sorted, disjoint, not adjacent.
    written: Vec<(usize, usize)>,
}

impl Range {
    fn mark(&mut self, start: usize, end: usize) {
        let (mut start, mut end) = (start, end);
        let mut kept = Vec::with_capacity(self.written.len() + 1);
        for &(s, e) in &self.written {
            if e < start || s > end {
                kept.push((s, e));
            } else {
                start = start.min(s);
                end = end.max(e);
            }
        }
        kept.push((start, end));
        kept.sort_unstable();
        self.written = kept;
    }
}

/// The client memory a daemon-side driver call may touch: the ioctl's argument at its
/// client address and the inlined arrays. Reads and writes must fall inside one range
/// (anything else is `EFAULT`); writes are recorded and returned to the client
/// ([`InlinedMemory::into_reply`]). Overlapping ranges are served by the first that
/// holds the whole access.
#[derive(Debug)]
pub struct InlinedMemory {
    ranges: Mutex<Vec<Range>>,
}

impl InlinedMemory {
    /// Memory of `(address, contents)` ranges.
    pub fn new(ranges: impl IntoIterator<Item = (u64, Vec<u8>)>) -> InlinedMemory {
        InlinedMemory {
            ranges: Mutex::new(
                ranges
                    .into_iter()
                    .map(|(addr, data)| Range {
                        addr,
                        data,
                        written: Vec::new(),
                    })
                    .collect(),
            ),
        }
    }

    /// The memory of a call: its argument, then its arrays.
    pub fn from_call(call: IoctlCall) -> InlinedMemory {
        InlinedMemory::new(
            std::iter::once((call.arg_addr, call.arg))
                .chain(call.arrays.into_iter().map(|a| (a.addr, a.data))),
        )
    }

    /// Runs `f` on the range holding `[addr, addr + len)` and the offset in it.
    fn with_range<T>(
        &self,
        addr: u64,
        len: usize,
        f: impl FnOnce(&mut Range, usize) -> T,
    ) -> Result<T, Errno> {
        let mut ranges = crate::kfd::lock(&self.ranges);
        let found = ranges.iter_mut().find(|r| {
            addr >= r.addr
                && (addr - r.addr)
                    .checked_add(len as u64)
                    .is_some_and(|end| end <= r.data.len() as u64)
        });
        match found {
            Some(r) => {
                // Inside `data` (checked just above), so it fits in usize.
                let offset = (addr - r.addr) as usize;
                Ok(f(r, offset))
            }
            None => Err(Errno::FAULT),
        }
    }

    /// What the driver wrote so far, one entry per written interval (or per range when
    /// there would be more than [`MAX_WRITES`] intervals).
    pub fn write_backs(&self) -> Vec<WriteBack> {
        let ranges = crate::kfd::lock(&self.ranges);
        let intervals: usize = ranges.iter().map(|r| r.written.len()).sum();
        let mut out = Vec::new();
        for r in ranges.iter() {
            let spans: Vec<(usize, usize)> = if intervals > MAX_WRITES {
                match (r.written.first(), r.written.last()) {
                    (Some(&(s, _)), Some(&(_, e))) => vec![(s, e)],
                    _ => Vec::new(),
                }
            } else {
                r.written.clone()
            };
            for (s, e) in spans {
                out.push(WriteBack {
                    addr: r.addr + s as u64,
                    data: r.data[s..e].to_vec(),
                });
            }
        }
        out
    }

    /// The reply body for the client: what the driver wrote (no shared mappings).
    pub fn into_reply(self) -> IoctlReply {
        IoctlReply {
            writes: self.write_backs(),
            shares: Vec::new(),
        }
    }
}

impl UserMemory for InlinedMemory {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), Errno> {
        if buf.is_empty() {
            return Ok(());
        }
        self.with_range(addr, buf.len(), |r, off| {
            buf.copy_from_slice(&r.data[off..off + buf.len()]);
        })
    }

    fn write(&self, addr: u64, data: &[u8]) -> Result<(), Errno> {
        if data.is_empty() {
            return Ok(());
        }
        self.with_range(addr, data.len(), |r, off| {
            r.data[off..off + data.len()].copy_from_slice(data);
            r.mark(off, off + data.len());
        })
    }
}
