//! The HSA Architected Queuing Language as the packet processor reads it from GPU memory:
//! packet headers, kernel-dispatch and barrier packets, and AMD's signal layout.
//!
//! Layouts follow the HSA runtime specification (`hsa_kernel_dispatch_packet_t`,
//! `hsa_barrier_and_packet_t`) and ROCR's `amd_signal_t`. Parsing never panics: a packet
//! of an unknown type is a [`PacketError`] naming the queue slot.

use serde::{Deserialize, Serialize};

use crate::gpu::ids::GpuAddr;

/// Bytes of one AQL packet.
pub const PACKET_BYTES: u64 = 64;

/// `hsa_packet_type_t`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PacketType {
    /// Vendor-specific (0).
    Vendor,
    /// Invalid: the slot is empty or not yet published (1).
    Invalid,
    /// Kernel dispatch (2).
    KernelDispatch,
    /// Barrier-AND (3).
    BarrierAnd,
    /// Agent dispatch (4).
    AgentDispatch,
    /// Barrier-OR (5).
    BarrierOr,
}

impl PacketType {
    /// The type in the low 8 bits of a header.
    pub fn of(header: u16) -> Option<PacketType> {
        Some(match header & 0xff {
            0 => PacketType::Vendor,
            1 => PacketType::Invalid,
            2 => PacketType::KernelDispatch,
            3 => PacketType::BarrierAnd,
            4 => PacketType::AgentDispatch,
            5 => PacketType::BarrierOr,
            _ => return None,
        })
    }
}

/// The raw `Invalid` header value a consumed slot is reset to.
pub const INVALID_HEADER: u16 = 1;

/// `hsa_fence_scope_t` of a packet's acquire or release fence.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FenceScope {
    /// No fence.
    None,
    /// Agent scope.
    Agent,
    /// System scope.
    System,
}

impl FenceScope {
    fn of(bits: u16) -> FenceScope {
        match bits & 3 {
            0 => FenceScope::None,
            1 => FenceScope::Agent,
            _ => FenceScope::System,
        }
    }
}

/// The decoded 16-bit packet header.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Packet type.
    pub kind: PacketType,
    /// The barrier bit: wait for every earlier packet to complete first.
    pub barrier: bool,
    /// Acquire fence scope.
    pub acquire: FenceScope,
    /// Release fence scope.
    pub release: FenceScope,
}

/// A packet slot holds something the packet processor cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum PacketError {
    /// The header's type field is not an HSA packet type.
    #[error("queue slot {slot}: packet type {raw} is not an HSA packet type")]
    BadType {
        /// Ring slot.
        slot: u64,
        /// The raw type byte.
        raw: u16,
    },
    /// A type the packet processor does not run (vendor or agent dispatch).
    #[error("queue slot {slot}: {kind:?} packets are not supported")]
    Unsupported {
        /// Ring slot.
        slot: u64,
        /// The type.
        kind: PacketType,
    },
    /// A vendor-specific packet the packet processor does not run.
    #[error("queue slot {slot}: {reason}")]
    BadVendor {
        /// Ring slot.
        slot: u64,
        /// What is wrong.
        reason: String,
    },
    /// A dispatch with a zero or oversized shape.
    #[error("queue slot {slot}: bad dispatch shape: {reason}")]
    BadShape {
        /// Ring slot.
        slot: u64,
        /// What is wrong.
        reason: String,
    },
}

impl Header {
    /// Decodes a header; `None` when the type is not an HSA packet type.
    pub fn decode(raw: u16) -> Option<Header> {
        Some(Header {
            kind: PacketType::of(raw)?,
            barrier: raw & (1 << 8) != 0,
            acquire: FenceScope::of(raw >> 9),
            release: FenceScope::of(raw >> 11),
        })
    }
}

fn u16_at(p: &[u8; 64], at: usize) -> u16 {
    u16::from_le_bytes([p[at], p[at + 1]])
}

fn u32_at(p: &[u8; 64], at: usize) -> u32 {
    u32::from_le_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]])
}

fn u64_at(p: &[u8; 64], at: usize) -> u64 {
    u64::from_le_bytes([p[at], p[at + 1], p[at + 2], p[at + 3], p[at + 4], p[at + 5], p[at + 6], p[at + 7]])
}

/// `hsa_kernel_dispatch_packet_t`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelDispatch {
    /// Header.
    pub header: Header,
    /// Grid dimensions (1-3).
    pub dimensions: u8,
    /// Work-group size per dimension.
    pub block: [u32; 3],
    /// Grid size in work-items per dimension.
    pub grid: [u32; 3],
    /// Bytes of private memory per work-item requested at dispatch.
    pub private_segment_size: u32,
    /// Bytes of LDS per work-group requested at dispatch (static plus dynamic).
    pub group_segment_size: u32,
    /// Address of the kernel descriptor.
    pub kernel_object: GpuAddr,
    /// Address of the kernel arguments.
    pub kernarg_address: GpuAddr,
    /// Completion signal (0: none).
    pub completion_signal: GpuAddr,
}

/// `hsa_barrier_and_packet_t` / `hsa_barrier_or_packet_t`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Barrier {
    /// Header (its type says AND or OR).
    pub header: Header,
    /// Dependency signals (0 entries are ignored).
    pub deps: [GpuAddr; 5],
    /// Completion signal (0: none).
    pub completion_signal: GpuAddr,
}

/// `AmdFormat` of AMD vendor-specific packets (byte 2 of the packet).
pub mod amd_format {
    /// `amd_aql_pm4_ib_packet_t`: run a PM4 indirect buffer.
    pub const PM4_IB: u8 = 1;
    /// `amd_aql_barrier_value_packet_t`: wait for a signal value.
    pub const BARRIER_VALUE: u8 = 2;
}

/// `amd_aql_pm4_ib_packet_t`: the runtime hands the command processor a PM4
/// indirect buffer (ROCR invalidates caches this way after loading code).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pm4Ib {
    /// Header.
    pub header: Header,
    /// Address of the indirect buffer.
    pub ib: GpuAddr,
    /// Its length in dwords.
    pub dwords: u32,
    /// Completion signal (0: none).
    pub completion_signal: GpuAddr,
}

/// `amd_aql_barrier_value_packet_t`: waits until `(value(signal) & mask) cond value`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BarrierValue {
    /// Header.
    pub header: Header,
    /// The signal to watch.
    pub signal: GpuAddr,
    /// The comparand.
    pub value: i64,
    /// Bits of the signal value compared.
    pub mask: i64,
    /// `hsa_signal_condition_t`: 0 EQ, 1 NE, 2 LT, 3 GTE.
    pub cond: u32,
    /// Completion signal (0: none).
    pub completion_signal: GpuAddr,
}

impl BarrierValue {
    /// Whether the condition holds for signal value `v`.
    pub fn met(&self, v: i64) -> bool {
        let v = v & self.mask;
        match self.cond {
            0 => v == self.value,
            1 => v != self.value,
            2 => v < self.value,
            _ => v >= self.value,
        }
    }
}

/// PM4 type-3 opcode of an indirect-buffer jump.
pub const PM4_INDIRECT_BUFFER: u32 = 0x3f;

/// A decoded packet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Packet {
    /// Not yet published (the slot's header is still `Invalid`).
    Invalid,
    /// A kernel dispatch.
    Dispatch(KernelDispatch),
    /// A barrier-AND or barrier-OR packet.
    Barrier(Barrier),
    /// An AMD PM4 indirect-buffer packet.
    Pm4Ib(Pm4Ib),
    /// An AMD barrier-value packet.
    BarrierValue(BarrierValue),
}

/// Most work-items of a work-group.
pub const MAX_GROUP_ITEMS: u64 = 1024;

impl Packet {
    /// Decodes the 64 bytes of ring slot `slot`.
    pub fn decode(p: &[u8; 64], slot: u64) -> Result<Packet, PacketError> {
        let raw = u16_at(p, 0);
        let header = Header::decode(raw).ok_or(PacketError::BadType { slot, raw: raw & 0xff })?;
        match header.kind {
            PacketType::Invalid => Ok(Packet::Invalid),
            PacketType::KernelDispatch => {
                let dimensions = (u16_at(p, 2) & 3) as u8;
                let block = [u16_at(p, 4) as u32, u16_at(p, 6) as u32, u16_at(p, 8) as u32];
                let grid = [u32_at(p, 12), u32_at(p, 16), u32_at(p, 20)];
                let bad = |reason: String| PacketError::BadShape { slot, reason };
                if !(1..=3).contains(&dimensions) {
                    return Err(bad(format!("{dimensions} dimensions")));
                }
                if block.contains(&0) || grid.contains(&0) {
                    return Err(bad(format!("grid {grid:?} / work-group {block:?} has a zero")));
                }
                let items: u64 = block.iter().map(|&b| u64::from(b)).product();
                if items > MAX_GROUP_ITEMS {
                    return Err(bad(format!("work-group of {items} work-items exceeds {MAX_GROUP_ITEMS}")));
                }
                Ok(Packet::Dispatch(KernelDispatch {
                    header,
                    dimensions,
                    block,
                    grid,
                    private_segment_size: u32_at(p, 24),
                    group_segment_size: u32_at(p, 28),
                    kernel_object: GpuAddr(u64_at(p, 32)),
                    kernarg_address: GpuAddr(u64_at(p, 40)),
                    completion_signal: GpuAddr(u64_at(p, 56)),
                }))
            }
            PacketType::BarrierAnd | PacketType::BarrierOr => Ok(Packet::Barrier(Barrier {
                header,
                deps: [0, 1, 2, 3, 4].map(|i| GpuAddr(u64_at(p, 8 + 8 * i))),
                completion_signal: GpuAddr(u64_at(p, 56)),
            })),
            PacketType::Vendor => match p[2] {
                amd_format::PM4_IB => {
                    let jump = u32_at(p, 4);
                    if jump >> 30 != 3 || (jump >> 8) & 0xff != PM4_INDIRECT_BUFFER {
                        return Err(PacketError::BadVendor { slot, reason: format!("PM4 packet without an indirect-buffer jump (dword {jump:#010x})") });
                    }
                    let ib = u64::from(u32_at(p, 8) & !3) | (u64::from(u32_at(p, 12) & 0xffff) << 32);
                    Ok(Packet::Pm4Ib(Pm4Ib { header, ib: GpuAddr(ib), dwords: u32_at(p, 16) & 0xf_ffff, completion_signal: GpuAddr(u64_at(p, 56)) }))
                }
                amd_format::BARRIER_VALUE => Ok(Packet::BarrierValue(BarrierValue {
                    header,
                    signal: GpuAddr(u64_at(p, 8)),
                    value: u64_at(p, 16) as i64,
                    mask: u64_at(p, 24) as i64,
                    cond: u32_at(p, 32),
                    completion_signal: GpuAddr(u64_at(p, 56)),
                })),
                other => Err(PacketError::BadVendor { slot, reason: format!("AMD vendor packet format {other} is not supported") }),
            },
            kind => Err(PacketError::Unsupported { slot, kind }),
        }
    }
}

/// Encodes a header (for loaders that build packets).
pub fn encode_header(kind: PacketType, barrier: bool, acquire: FenceScope, release: FenceScope) -> u16 {
    let ty = match kind {
        PacketType::Vendor => 0,
        PacketType::Invalid => 1,
        PacketType::KernelDispatch => 2,
        PacketType::BarrierAnd => 3,
        PacketType::AgentDispatch => 4,
        PacketType::BarrierOr => 5,
    };
    let scope = |s: FenceScope| match s {
        FenceScope::None => 0u16,
        FenceScope::Agent => 1,
        FenceScope::System => 2,
    };
    ty | (u16::from(barrier) << 8) | (scope(acquire) << 9) | (scope(release) << 11)
}

impl KernelDispatch {
    /// The 64 packet bytes (header included), as a loader writes them.
    pub fn encode(&self) -> [u8; 64] {
        let mut p = [0u8; 64];
        let h = encode_header(PacketType::KernelDispatch, self.header.barrier, self.header.acquire, self.header.release);
        p[0..2].copy_from_slice(&h.to_le_bytes());
        p[2..4].copy_from_slice(&u16::from(self.dimensions).to_le_bytes());
        for i in 0..3 {
            p[4 + 2 * i..6 + 2 * i].copy_from_slice(&(self.block[i] as u16).to_le_bytes());
            p[12 + 4 * i..16 + 4 * i].copy_from_slice(&self.grid[i].to_le_bytes());
        }
        p[24..28].copy_from_slice(&self.private_segment_size.to_le_bytes());
        p[28..32].copy_from_slice(&self.group_segment_size.to_le_bytes());
        p[32..40].copy_from_slice(&self.kernel_object.0.to_le_bytes());
        p[40..48].copy_from_slice(&self.kernarg_address.0.to_le_bytes());
        p[56..64].copy_from_slice(&self.completion_signal.0.to_le_bytes());
        p
    }
}

impl Barrier {
    /// The 64 packet bytes (header included).
    pub fn encode(&self) -> [u8; 64] {
        let mut p = [0u8; 64];
        let h = encode_header(self.header.kind, self.header.barrier, self.header.acquire, self.header.release);
        p[0..2].copy_from_slice(&h.to_le_bytes());
        for (i, d) in self.deps.iter().enumerate() {
            p[8 + 8 * i..16 + 8 * i].copy_from_slice(&d.0.to_le_bytes());
        }
        p[56..64].copy_from_slice(&self.completion_signal.0.to_le_bytes());
        p
    }
}

/// Offsets inside AMD's `amd_signal_t` (what a signal handle points to).
pub mod signal {
    /// `int64_t value`.
    pub const VALUE: u64 = 8;
    /// `uint64_t event_mailbox_ptr` (0: no interrupt).
    pub const EVENT_MAILBOX: u64 = 16;
    /// `uint32_t event_id`.
    pub const EVENT_ID: u64 = 24;
    /// `uint64_t start_ts`.
    pub const START_TS: u64 = 32;
    /// `uint64_t end_ts`.
    pub const END_TS: u64 = 40;
    /// Bytes of the structure.
    pub const BYTES: u64 = 64;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatch_round_trip_and_errors() {
        let d = KernelDispatch {
            header: Header { kind: PacketType::KernelDispatch, barrier: true, acquire: FenceScope::System, release: FenceScope::System },
            dimensions: 1,
            block: [256, 1, 1],
            grid: [1024, 1, 1],
            private_segment_size: 0,
            group_segment_size: 16,
            kernel_object: GpuAddr(0x1000),
            kernarg_address: GpuAddr(0x2000),
            completion_signal: GpuAddr(0x3000),
        };
        let bytes = d.encode();
        assert_eq!(Packet::decode(&bytes, 0), Ok(Packet::Dispatch(d.clone())));
        let mut bad = bytes;
        bad[0] = 9;
        assert_eq!(Packet::decode(&bad, 7), Err(PacketError::BadType { slot: 7, raw: 9 }));
        let mut big = bytes;
        big[4..6].copy_from_slice(&2048u16.to_le_bytes());
        assert!(matches!(Packet::decode(&big, 1), Err(PacketError::BadShape { slot: 1, .. })));
        let mut empty = [0u8; 64];
        empty[0] = 1;
        assert_eq!(Packet::decode(&empty, 0), Ok(Packet::Invalid));
    }

    /// A vendor-specific slot as ROCR writes it: the header, then `AmdFormat` in byte 2.
    fn vendor_slot(format: u8, barrier: bool) -> [u8; 64] {
        let mut p = [0u8; 64];
        let h = encode_header(PacketType::Vendor, barrier, FenceScope::System, FenceScope::System);
        p[0..2].copy_from_slice(&h.to_le_bytes());
        p[2] = format;
        p
    }

    fn put_u32(p: &mut [u8; 64], at: usize, v: u32) {
        p[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }

    fn put_u64(p: &mut [u8; 64], at: usize, v: u64) {
        p[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }

    /// A PM4 type-3 header: opcode, and `count` = dwords after the header minus one.
    fn pm4_type3(opcode: u32, count: u32) -> u32 {
        (3 << 30) | (count << 16) | (opcode << 8)
    }

    #[test]
    fn pm4_ib_packet_decodes_the_indirect_buffer_jump() {
        let ib: u64 = 0x7f12_3456_7000;
        let mut p = vendor_slot(amd_format::PM4_IB, true);
        // The four-dword INDIRECT_BUFFER jump ROCR builds, then the remaining-dword count.
        put_u32(&mut p, 4, pm4_type3(PM4_INDIRECT_BUFFER, 2));
        put_u32(&mut p, 8, ib as u32);
        // Bits above the 48-bit address are not part of it.
        put_u32(&mut p, 12, (ib >> 32) as u32 | 0xabcd_0000);
        // IB_SIZE in bits 0-19, IB_VALID in bit 23.
        put_u32(&mut p, 16, 8 | (1 << 23));
        put_u32(&mut p, 20, 10);
        put_u64(&mut p, 56, 0x5000);
        let want = Pm4Ib {
            header: Header { kind: PacketType::Vendor, barrier: true, acquire: FenceScope::System, release: FenceScope::System },
            ib: GpuAddr(ib),
            dwords: 8,
            completion_signal: GpuAddr(0x5000),
        };
        assert_eq!(Packet::decode(&p, 4), Ok(Packet::Pm4Ib(want)));

        // The two low bits of IB_BASE_LO are not address bits.
        let mut unaligned = p;
        put_u32(&mut unaligned, 8, ib as u32 | 3);
        assert!(matches!(Packet::decode(&unaligned, 4), Ok(Packet::Pm4Ib(Pm4Ib { ib: GpuAddr(a), .. })) if a == ib));
    }

    #[test]
    fn pm4_packet_without_an_indirect_buffer_jump_is_bad_vendor() {
        let mut p = vendor_slot(amd_format::PM4_IB, false);
        for jump in [
            pm4_type3(0x10, 2),                   // a NOP, not a jump
            (2 << 30) | (PM4_INDIRECT_BUFFER << 8), // opcode bits right, but a type-2 header
            0,
        ] {
            put_u32(&mut p, 4, jump);
            match Packet::decode(&p, 9) {
                Err(PacketError::BadVendor { slot: 9, reason }) => assert!(reason.contains(&format!("{jump:#010x}")), "{reason}"),
                other => panic!("jump {jump:#010x}: {other:?}"),
            }
        }
    }

    #[test]
    fn barrier_value_packet_decodes_signal_value_mask_and_condition() {
        let mut p = vendor_slot(amd_format::BARRIER_VALUE, true);
        put_u64(&mut p, 8, 0x1_0000);
        put_u64(&mut p, 16, (-5i64) as u64);
        put_u64(&mut p, 24, 0xffff_ffff);
        put_u32(&mut p, 32, 2);
        put_u64(&mut p, 56, 0x2_0000);
        let want = BarrierValue {
            header: Header { kind: PacketType::Vendor, barrier: true, acquire: FenceScope::System, release: FenceScope::System },
            signal: GpuAddr(0x1_0000),
            value: -5,
            mask: 0xffff_ffff,
            cond: 2,
            completion_signal: GpuAddr(0x2_0000),
        };
        assert_eq!(Packet::decode(&p, 0), Ok(Packet::BarrierValue(want)));
    }

    #[test]
    fn unknown_amd_format_is_bad_vendor_naming_it() {
        for format in [0u8, 3, 0xff] {
            let p = vendor_slot(format, false);
            match Packet::decode(&p, 3) {
                Err(e @ PacketError::BadVendor { slot: 3, .. }) => {
                    assert!(e.to_string().contains(&format!("format {format} ")), "{e}");
                    assert!(e.to_string().starts_with("queue slot 3"), "{e}");
                }
                other => panic!("format {format}: {other:?}"),
            }
        }
    }

    fn waits_for(cond: u32, value: i64, mask: i64) -> BarrierValue {
        let header = Header { kind: PacketType::Vendor, barrier: false, acquire: FenceScope::None, release: FenceScope::None };
        BarrierValue { header, signal: GpuAddr(0x100), value, mask, cond, completion_signal: GpuAddr(0) }
    }

    #[test]
    fn barrier_value_conditions_compare_the_masked_signal_value() {
        // EQ under a mask: only the low byte counts.
        let eq = waits_for(0, 0x12, 0xff);
        assert!(eq.met(0x12));
        assert!(eq.met(0x7700_0012));
        assert!(!eq.met(0x13));
        // NE with every bit compared.
        let ne = waits_for(1, 0, -1);
        assert!(!ne.met(0));
        assert!(ne.met(1));
        assert!(ne.met(i64::MIN));
        // NE under a mask that hides the difference.
        let ne_masked = waits_for(1, 0, 0xf0);
        assert!(!ne_masked.met(0x0f), "bits outside the mask must not count");
        assert!(ne_masked.met(0x10));
        // LT is signed (hsa_signal_value_t is int64_t).
        let lt = waits_for(2, 1, -1);
        assert!(lt.met(0));
        assert!(lt.met(-1));
        assert!(!lt.met(1));
        assert!(!lt.met(2));
        // GTE, and a mask that clears the sign bit turns -1 into a large positive value.
        let gte = waits_for(3, 10, -1);
        assert!(gte.met(10));
        assert!(gte.met(11));
        assert!(!gte.met(9));
        assert!(!gte.met(-1));
        let gte_masked = waits_for(3, 10, i64::MAX);
        assert!(gte_masked.met(-1));
        // The comparand is not masked: a value outside the mask can never be equal.
        assert!(!waits_for(0, 0x100, 0xff).met(0x100));
    }
}
