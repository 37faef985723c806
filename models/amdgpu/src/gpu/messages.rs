//! Messages between the GPU's components. A paired link carries one message type in
//! both directions, so each link kind has one enum with the variants of both ways.

use amdgpu_isa::exec::{GroupPlace, MemFault, VmemRequest};
use serde::{Deserialize, Serialize};

use crate::gpu::aql::KernelDispatch;
use crate::gpu::ids::{DispatchSeq, GpuAddr};
use crate::gpu::shared::GpuFault;
use crate::gpu::stats::{CacheCounts, DispatchCounters};

/// A dispatch as the SoC's packet processor hands it to each XCD's command processor.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DispatchOrder {
    /// Dispatch number.
    pub seq: DispatchSeq,
    /// Kernel name (or descriptor address), for faults.
    pub kernel: String,
    /// The packet.
    pub packet: KernelDispatch,
    /// Address of the packet in its ring (the kernel's dispatch pointer).
    pub packet_addr: GpuAddr,
    /// The queue object (the kernel's queue pointer).
    pub queue_ptr: GpuAddr,
    /// The 64 descriptor bytes read at `packet.kernel_object`.
    pub descriptor: Vec<u8>,
    /// This XCD's index and the number of XCDs sharing the grid.
    pub xcd: u32,
    /// XCDs sharing the grid (work-group `g` runs on XCD `g % xcds`).
    pub xcds: u32,
    /// Scratch for the whole dispatch; wave slot `k` of the GPU owns
    /// `scratch_base + k * 64 * lane_scratch`.
    pub scratch_base: GpuAddr,
    /// Scratch bytes per work-item.
    pub lane_scratch: u32,
    /// Global number of this XCD's first wave slot.
    pub first_slot: u64,
    /// The GPU queue the packet came from (HW_ID's pipe and queue ids derive from it).
    #[serde(default)]
    pub queue: u32,
}

/// SoC <-> command processor.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum XcdMsg {
    /// CP -> SoC at startup: the XCD's capacity.
    Hello {
        /// Compute units.
        cus: u32,
        /// Wave slots per compute unit.
        slots_per_cu: u32,
        /// Each compute unit's capacity (the SoC computes from them how many work-groups
        /// of a cooperative dispatch can be resident at once).
        caps: Vec<CuCapacity>,
    },
    /// SoC -> CP: run your share of a dispatch.
    Dispatch(Box<DispatchOrder>),
    /// CP -> SoC: your share finished.
    Done {
        /// The dispatch.
        seq: DispatchSeq,
        /// Counters of the XCD's compute units.
        counters: Box<DispatchCounters>,
    },
    /// CP -> SoC: the dispatch faulted on this XCD (its other work-groups were dropped).
    Fault {
        /// The dispatch.
        seq: DispatchSeq,
        /// What happened.
        fault: Box<GpuFault>,
    },
}

/// One work-group, as the command processor places it on a compute unit.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GroupLaunch {
    /// Dispatch number.
    pub seq: DispatchSeq,
    /// Kernel name, for faults.
    pub kernel: String,
    /// Work-group id.
    pub group: [u32; 3],
    /// The dispatch packet.
    pub packet: KernelDispatch,
    /// Dispatch pointer.
    pub packet_addr: GpuAddr,
    /// Queue pointer.
    pub queue_ptr: GpuAddr,
    /// Descriptor bytes.
    pub descriptor: Vec<u8>,
    /// First wave slot; the group's waves take slots `first_slot..first_slot + waves`.
    pub first_slot: u32,
    /// Waves in this group.
    pub waves: u32,
    /// LDS bytes of the group.
    pub lds_bytes: u32,
    /// Scratch base of wave slot 0 of this compute unit for this dispatch.
    pub scratch_base: GpuAddr,
    /// Scratch bytes per work-item.
    pub lane_scratch: u32,
    /// Where the group runs as far as the command processor knows it (XCC, shader engine,
    /// compute unit, queue); the compute unit adds its own part (slot, work-group slot,
    /// register and LDS bases).
    pub place: GroupPlace,
}

/// What a compute unit can hold; the command processor places work-groups by it.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct CuCapacity {
    /// SIMDs; wave slot `k` runs on SIMD `k % simds`.
    pub simds: u32,
    /// Wave slots (at most 64).
    pub slots: u32,
    /// VGPRs per SIMD lane (architected and accumulation, unified).
    pub vgprs_per_simd: u32,
    /// SGPRs per SIMD.
    pub sgprs_per_simd: u32,
    /// LDS bytes.
    pub lds_bytes: u32,
}

/// Command processor <-> compute unit.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum CuMsg {
    /// CU -> CP at startup: the compute unit's capacity.
    Hello(CuCapacity),
    /// CP -> CU: start a work-group.
    Launch(Box<GroupLaunch>),
    /// CP -> CU: report and forget the counters of a dispatch.
    Flush {
        /// The dispatch.
        seq: DispatchSeq,
    },
    /// CU -> CP: a work-group ended; its slots are free.
    GroupDone {
        /// The dispatch.
        seq: DispatchSeq,
        /// First slot it held.
        first_slot: u32,
    },
    /// CU -> CP: the counters of a dispatch (answer to `Flush`).
    Counters {
        /// The dispatch.
        seq: DispatchSeq,
        /// Counters.
        counters: Box<DispatchCounters>,
    },
    /// CU -> CP: a wave faulted; the group was dropped.
    Fault {
        /// The dispatch.
        seq: DispatchSeq,
        /// First slot the group held.
        first_slot: u32,
        /// What happened.
        fault: Box<GpuFault>,
    },
}

/// A cache-line access summary, for the functional cache models.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct LineAccess {
    /// Line-aligned address.
    pub line: u64,
    /// A write (store, or the write half of an atomic).
    pub write: bool,
}

/// Compute unit <-> L2, and L2 <-> the coherent home (the SoC).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum MemMsg {
    /// A deferred vector memory instruction to perform in order at the receiver (or to
    /// forward towards its home).
    Request {
        /// Sender's tag, echoed in the response.
        tag: u64,
        /// Dispatch it belongs to (for statistics).
        seq: DispatchSeq,
        /// The instruction.
        req: Box<VmemRequest>,
        /// Whether it must go to the system-coherent home rather than the L2.
        system: bool,
    },
    /// The result of a `Request`: the request's own box with the answer in it
    /// ([`VmemRequest::answer`]), so a deferred access allocates nothing on its way.
    Response {
        /// The request's tag.
        tag: u64,
        /// The performed request, or the fault.
        result: Result<Box<VmemRequest>, MemFault>,
    },
    /// Lines that missed a compute unit's L1 during a quantum (functional mode).
    Lines {
        /// Dispatch they belong to.
        seq: DispatchSeq,
        /// The lines.
        lines: Vec<LineAccess>,
    },
    /// Timing mode: one memory instruction's lines (compute unit -> L2), or one level's
    /// misses and write-backs (L2 -> memory-side cache -> HBM). The receiver answers with
    /// [`MemMsg::Done`] when every line is served, if `reply` is set.
    Access {
        /// Sender's tag, echoed in `Done`.
        tag: u64,
        /// Dispatch it belongs to (for statistics).
        seq: DispatchSeq,
        /// The lines, each a read or a write.
        lines: Vec<LineAccess>,
        /// Whether the sender waits for an answer (write-backs do not).
        reply: bool,
    },
    /// Timing mode: every line of the `Access` with this tag is served.
    Done {
        /// The access's tag.
        tag: u64,
    },
    /// SoC -> L2: report and forget the counters of a dispatch.
    Flush {
        /// The dispatch.
        seq: DispatchSeq,
    },
    /// L2 -> SoC: the counters of a dispatch.
    Counters {
        /// The dispatch.
        seq: DispatchSeq,
        /// L2 accesses.
        l2: CacheCounts,
        /// Bytes the L2 read from memory.
        read_bytes: u64,
        /// Bytes the L2 wrote to memory.
        write_bytes: u64,
    },
}
