//! SDMA (system DMA) queues as a runtime writes them: the ring descriptor the driver
//! registers ([`SdmaRing`]) and the packets of SDMA 4.4 (gfx90a, gfx942, gfx950) that
//! ROCr's `BlitSdma` emits, decoded from the ring's dwords ([`decode`]).
//!
//! The ring is a power-of-two byte buffer; the producer writes packets at its 64-bit
//! write pointer (a monotonic byte count, ROCr's `HwIndexMonotonic` form), stores the
//! new value to the write-pointer word and then to the queue's 64-bit doorbell; the
//! engine reads packets from its read pointer up to the write pointer and stores the
//! read pointer back (also monotonic bytes) as it consumes them. Packets never wrap:
//! ROCr pads the end of the ring with one-dword NOPs (zero dwords).
//!
//! Layouts are those of ROCr's `sdma_registers.h` (`SDMA_PKT_*`), which follow the
//! engine's register specification. Every packet the engine does not implement, and
//! every field value that would change a packet's meaning beyond what is implemented
//! (byte swapping, broadcast copies, register polls other than "always"), is a
//! [`SdmaError`] naming the opcode: the queue stops with a queue error, never skips.

use serde::{Deserialize, Serialize};

use crate::gpu::ids::GpuAddr;

/// An SDMA queue as the driver registered it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SdmaRing {
    /// First byte of the ring.
    pub base: GpuAddr,
    /// Bytes of the ring (a power of two).
    pub bytes: u64,
    /// Address of the 64-bit read pointer the engine writes (bytes, monotonic).
    pub read_pointer: GpuAddr,
    /// Address of the 64-bit write pointer the producer writes (bytes, monotonic).
    pub write_pointer: GpuAddr,
}

/// SDMA opcodes (header bits 7:0).
pub mod op {
    /// No operation (`count` extra dwords follow).
    pub const NOP: u8 = 0;
    /// Copies (sub-opcode selects the form).
    pub const COPY: u8 = 1;
    /// Write a dword to memory after the preceding packets.
    pub const FENCE: u8 = 5;
    /// Raise an interrupt with a context id.
    pub const TRAP: u8 = 6;
    /// Wait for a register or memory value.
    pub const POLL_REGMEM: u8 = 8;
    /// Atomic operation on memory.
    pub const ATOMIC: u8 = 10;
    /// Fill memory with a constant.
    pub const CONST_FILL: u8 = 11;
    /// Timestamps.
    pub const TIMESTAMP: u8 = 13;
}

/// Copy sub-opcodes (header bits 15:8 of [`op::COPY`]).
pub mod copy_sub {
    /// Linear copy.
    pub const LINEAR: u8 = 0;
    /// Linear sub-window (rectangle) copy.
    pub const LINEAR_RECT: u8 = 4;
}

/// `SDMA_SUBOP_TIMESTAMP_GET_GLOBAL`.
pub const TIMESTAMP_GET_GLOBAL: u8 = 2;

/// `SDMA_ATOMIC_ADD64`: the atomic operation code of a 64-bit add.
pub const ATOMIC_ADD64: u8 = 47;

/// The comparison of a poll (`func`, header bits 30:28).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollFunc {
    /// Always true (0).
    Always,
    /// `value < reference` (1).
    Less,
    /// `value <= reference` (2).
    LessEqual,
    /// `value == reference` (3).
    Equal,
    /// `value != reference` (4).
    NotEqual,
    /// `value >= reference` (5).
    GreaterEqual,
    /// `value > reference` (6).
    Greater,
}

impl PollFunc {
    /// Whether `value` (already masked) meets the condition against `reference`.
    pub fn met(self, value: u32, reference: u32) -> bool {
        match self {
            PollFunc::Always => true,
            PollFunc::Less => value < reference,
            PollFunc::LessEqual => value <= reference,
            PollFunc::Equal => value == reference,
            PollFunc::NotEqual => value != reference,
            PollFunc::GreaterEqual => value >= reference,
            PollFunc::Greater => value > reference,
        }
    }
}

/// One side (source or destination) of a rectangle copy, in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RectSide {
    /// Dword-aligned base address.
    pub base: GpuAddr,
    /// Offsets of the first element (x, y, z).
    pub offset: [u32; 3],
    /// Elements per row.
    pub pitch: u64,
    /// Elements per slice.
    pub slice: u64,
}

impl RectSide {
    /// The address of element (`x`, `y`, `z`) of the rectangle (elements of
    /// `element_bytes`).
    pub fn address(&self, x: u32, y: u32, z: u32, element_bytes: u64) -> u64 {
        let e = u64::from(self.offset[0] + x)
            + u64::from(self.offset[1] + y) * self.pitch
            + u64::from(self.offset[2] + z) * self.slice;
        self.base.0.wrapping_add(e * element_bytes)
    }
}

/// A decoded SDMA packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SdmaPacket {
    /// Does nothing.
    Nop,
    /// Copies `bytes` bytes from `src` to `dst`.
    CopyLinear {
        /// Source.
        src: GpuAddr,
        /// Destination.
        dst: GpuAddr,
        /// Bytes (the packet's count + 1).
        bytes: u64,
    },
    /// Copies a rectangle of `extent` elements of `element_bytes` bytes.
    CopyRect {
        /// Bytes per element (1, 2, 4, 8 or 16).
        element_bytes: u64,
        /// Source.
        src: RectSide,
        /// Destination.
        dst: RectSide,
        /// Elements in x, y and z.
        extent: [u32; 3],
    },
    /// Writes `data` to the dword at `addr`.
    Fence {
        /// Dword address.
        addr: GpuAddr,
        /// Value.
        data: u32,
    },
    /// Raises an interrupt with context id `context` (ROCr passes the signal's event id).
    Trap {
        /// `int_ctx` (28 bits).
        context: u32,
    },
    /// Waits until `func(value & mask, reference)` holds, `value` being the dword at
    /// `addr` (a memory poll) or, for a register poll, nothing the engine can read: only
    /// [`PollFunc::Always`] register polls decode (ROCr's HDP flush).
    Poll {
        /// A memory poll (`false`: a register poll that is always met).
        memory: bool,
        /// The comparison.
        func: PollFunc,
        /// The dword polled.
        addr: GpuAddr,
        /// The reference value.
        reference: u32,
        /// The mask applied to the polled value.
        mask: u32,
    },
    /// A 64-bit atomic add of `value` to the quadword at `addr` (ROCr's signal decrement
    /// adds all ones).
    AtomicAdd64 {
        /// Quadword address.
        addr: GpuAddr,
        /// Addend.
        value: u64,
    },
    /// Fills `bytes` bytes at `dst` with units of `unit_bytes` bytes of `data`.
    ConstantFill {
        /// Destination.
        dst: GpuAddr,
        /// The constant (its low `unit_bytes` bytes are repeated).
        data: u32,
        /// Bytes per unit: 1, 2 or 4.
        unit_bytes: u64,
        /// Bytes filled.
        bytes: u64,
    },
    /// Writes the GPU's global timestamp counter (64 bits) to `addr`.
    Timestamp {
        /// Quadword address.
        addr: GpuAddr,
    },
}

/// Why a packet cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SdmaError {
    /// The opcode (or opcode and sub-opcode) is not an SDMA packet the engine runs.
    #[error("unknown SDMA packet: opcode {op} sub-opcode {sub_op} (header {header:#010x})")]
    Unknown {
        /// Header bits 7:0.
        op: u8,
        /// Header bits 15:8.
        sub_op: u8,
        /// The whole header dword.
        header: u32,
    },
    /// A field selects a form of a known packet that the engine does not implement.
    #[error("SDMA {packet} packet with {what} is not supported (header {header:#010x})")]
    Unsupported {
        /// The packet's name.
        packet: &'static str,
        /// The field and value.
        what: String,
        /// The header dword.
        header: u32,
    },
    /// The packet extends past the dwords the producer published.
    #[error("SDMA {packet} packet of {needed} dwords, but only {available} were published")]
    Truncated {
        /// The packet's name.
        packet: &'static str,
        /// Dwords the packet has.
        needed: usize,
        /// Dwords available.
        available: usize,
    },
}

/// The name of a packet kind (for errors and statistics).
fn name(op: u8, sub_op: u8) -> &'static str {
    match (op, sub_op) {
        (op::NOP, _) => "NOP",
        (op::COPY, copy_sub::LINEAR) => "COPY_LINEAR",
        (op::COPY, copy_sub::LINEAR_RECT) => "COPY_LINEAR_RECT",
        (op::FENCE, _) => "FENCE",
        (op::TRAP, _) => "TRAP",
        (op::POLL_REGMEM, _) => "POLL_REGMEM",
        (op::ATOMIC, _) => "ATOMIC",
        (op::CONST_FILL, _) => "CONSTANT_FILL",
        (op::TIMESTAMP, _) => "TIMESTAMP",
        _ => "unknown",
    }
}

/// Dwords of the packet whose header is `header`.
pub fn packet_dwords(header: u32) -> Result<usize, SdmaError> {
    let (op, sub_op) = (header as u8, (header >> 8) as u8);
    Ok(match (op, sub_op) {
        // NOP: `count` (bits 29:16) extra dwords.
        (op::NOP, _) => 1 + ((header >> 16) & 0x3fff) as usize,
        (op::COPY, copy_sub::LINEAR) => 7,
        (op::COPY, copy_sub::LINEAR_RECT) => 13,
        (op::FENCE, _) => 4,
        (op::TRAP, _) => 2,
        (op::POLL_REGMEM, _) => 6,
        (op::ATOMIC, _) => 8,
        (op::CONST_FILL, _) => 5,
        (op::TIMESTAMP, _) => 3,
        _ => return Err(SdmaError::Unknown { op, sub_op, header }),
    })
}

fn addr(lo: u32, hi: u32) -> GpuAddr {
    GpuAddr(u64::from(lo) | (u64::from(hi) << 32))
}

fn bits(v: u32, lo: u32, n: u32) -> u32 {
    (v >> lo) & ((1u32 << n) - 1)
}

/// Decodes the packet at the start of `dw` (the dwords published from the read
/// pointer on); returns it and its size in dwords.
pub fn decode(dw: &[u32]) -> Result<(SdmaPacket, usize), SdmaError> {
    let Some(&header) = dw.first() else {
        return Err(SdmaError::Truncated { packet: "any", needed: 1, available: 0 });
    };
    let (op, sub_op) = (header as u8, (header >> 8) as u8);
    let n = packet_dwords(header)?;
    let packet = name(op, sub_op);
    if dw.len() < n {
        return Err(SdmaError::Truncated { packet, needed: n, available: dw.len() });
    }
    let unsupported = |what: String| SdmaError::Unsupported { packet, what, header };
    let p = match (op, sub_op) {
        (op::NOP, _) => SdmaPacket::Nop,
        (op::COPY, copy_sub::LINEAR) => {
            // Header bit 27 is `broadcast` (a second destination follows).
            if header & (1 << 27) != 0 {
                return Err(unsupported("broadcast".into()));
            }
            if bits(dw[2], 16, 2) != 0 || bits(dw[2], 24, 2) != 0 {
                return Err(unsupported(format!("byte swapping (parameter dword {:#010x})", dw[2])));
            }
            // SDMA 4.4's count is 30 bits of bytes - 1 (ROCr 5.2 fills 22 of them).
            let bytes = u64::from(bits(dw[1], 0, 30)) + 1;
            SdmaPacket::CopyLinear { src: addr(dw[3], dw[4]), dst: addr(dw[5], dw[6]), bytes }
        }
        (op::COPY, copy_sub::LINEAR_RECT) => {
            let element = bits(header, 29, 3);
            if element > 4 {
                return Err(unsupported(format!("element size code {element}")));
            }
            if bits(dw[12], 16, 2) != 0 || bits(dw[12], 24, 2) != 0 {
                return Err(unsupported(format!("byte swapping (dword 12 {:#010x})", dw[12])));
            }
            let side = |lo: usize| RectSide {
                base: addr(dw[lo], dw[lo + 1]),
                offset: [bits(dw[lo + 2], 0, 14), bits(dw[lo + 2], 16, 14), bits(dw[lo + 3], 0, 11)],
                pitch: u64::from(bits(dw[lo + 3], 13, 19)) + 1,
                slice: u64::from(bits(dw[lo + 4], 0, 28)) + 1,
            };
            SdmaPacket::CopyRect {
                element_bytes: 1 << element,
                src: side(1),
                dst: side(6),
                extent: [bits(dw[11], 0, 14) + 1, bits(dw[11], 16, 14) + 1, bits(dw[12], 0, 11) + 1],
            }
        }
        (op::FENCE, _) => SdmaPacket::Fence { addr: addr(dw[1], dw[2]), data: dw[3] },
        (op::TRAP, _) => SdmaPacket::Trap { context: bits(dw[1], 0, 28) },
        (op::POLL_REGMEM, _) => {
            let func = match bits(header, 28, 3) {
                0 => PollFunc::Always,
                1 => PollFunc::Less,
                2 => PollFunc::LessEqual,
                3 => PollFunc::Equal,
                4 => PollFunc::NotEqual,
                5 => PollFunc::GreaterEqual,
                6 => PollFunc::Greater,
                f => return Err(unsupported(format!("compare function {f}"))),
            };
            let memory = header & (1 << 31) != 0;
            if !memory && func != PollFunc::Always {
                return Err(unsupported(format!("a register poll (register {:#x}) that is not always met", dw[1])));
            }
            SdmaPacket::Poll { memory, func, addr: addr(dw[1], dw[2]), reference: dw[3], mask: dw[4] }
        }
        (op::ATOMIC, _) => {
            let operation = bits(header, 25, 7) as u8;
            if operation != ATOMIC_ADD64 {
                return Err(unsupported(format!("atomic operation {operation}")));
            }
            if header & (1 << 16) != 0 {
                return Err(unsupported("the loop bit".into()));
            }
            SdmaPacket::AtomicAdd64 { addr: addr(dw[1], dw[2]), value: u64::from(dw[3]) | (u64::from(dw[4]) << 32) }
        }
        (op::CONST_FILL, _) => {
            if bits(header, 16, 2) != 0 {
                return Err(unsupported(format!("byte swapping (sw {})", bits(header, 16, 2))));
            }
            let fill = bits(header, 30, 2);
            if fill == 3 {
                return Err(unsupported("fill size code 3".into()));
            }
            let unit_bytes = 1u64 << fill;
            // `count` is bytes - 1; whole units are written.
            let units = (u64::from(bits(dw[4], 0, 22)) >> fill) + 1;
            SdmaPacket::ConstantFill { dst: addr(dw[1], dw[2]), data: dw[3], unit_bytes, bytes: units * unit_bytes }
        }
        (op::TIMESTAMP, TIMESTAMP_GET_GLOBAL) => SdmaPacket::Timestamp { addr: addr(dw[1], dw[2]) },
        (op::TIMESTAMP, s) => return Err(unsupported(format!("timestamp sub-opcode {s} (only GET_GLOBAL, 2, is)"))),
        _ => return Err(SdmaError::Unknown { op, sub_op, header }),
    };
    Ok((p, n))
}

impl SdmaPacket {
    /// The packet's name as ROCr's `SDMA_PKT_*` types call it.
    pub fn name(&self) -> &'static str {
        match self {
            SdmaPacket::Nop => "NOP",
            SdmaPacket::CopyLinear { .. } => "COPY_LINEAR",
            SdmaPacket::CopyRect { .. } => "COPY_LINEAR_RECT",
            SdmaPacket::Fence { .. } => "FENCE",
            SdmaPacket::Trap { .. } => "TRAP",
            SdmaPacket::Poll { .. } => "POLL_REGMEM",
            SdmaPacket::AtomicAdd64 { .. } => "ATOMIC",
            SdmaPacket::ConstantFill { .. } => "CONSTANT_FILL",
            SdmaPacket::Timestamp { .. } => "TIMESTAMP",
        }
    }
}

#[cfg(test)]
mod tests {
    //! Packets built field by field as ROCr 5.2.3's `BlitSdma<uint64_t, true, -1>`
    //! (`BlitSdmaV4`, gfx9) builds them.

    use super::*;

    #[test]
    fn copy_linear_counts_bytes_minus_one() {
        // BuildCopyCommand: op COPY, sub-op LINEAR, count = size - 1.
        let dw = [0x0000_0001, 4095, 0, 0x1000_0000, 0x7f, 0x2000_0040, 0x1];
        let (p, n) = decode(&dw).unwrap();
        assert_eq!(n, 7);
        assert_eq!(p, SdmaPacket::CopyLinear { src: GpuAddr(0x7f_1000_0000), dst: GpuAddr(0x1_2000_0040), bytes: 4096 });
        // The largest count SDMA 4.4 accepts (30 bits).
        let dw = [1, 0x3fff_ffff, 0, 0, 0, 0, 0];
        assert!(matches!(decode(&dw).unwrap().0, SdmaPacket::CopyLinear { bytes, .. } if bytes == 1 << 30));
    }

    #[test]
    fn copy_linear_forms_not_implemented_are_errors() {
        let dw = [1 | (1 << 27), 0, 0, 0, 0, 0, 0];
        assert!(matches!(decode(&dw), Err(SdmaError::Unsupported { packet: "COPY_LINEAR", .. })));
        let dw = [1, 0, 1 << 16, 0, 0, 0, 0];
        assert!(matches!(decode(&dw), Err(SdmaError::Unsupported { .. })));
    }

    #[test]
    fn fence_trap_and_timestamp() {
        let (p, n) = decode(&[5, 0x1008, 0x7f, 0xfffe]).unwrap();
        assert_eq!((p, n), (SdmaPacket::Fence { addr: GpuAddr(0x7f_0000_1008), data: 0xfffe }, 4));
        // int_ctx is 28 bits.
        let (p, n) = decode(&[6, 0xf123_4567]).unwrap();
        assert_eq!((p, n), (SdmaPacket::Trap { context: 0x0123_4567 }, 2));
        let (p, n) = decode(&[13 | (2 << 8), 0x20, 0x7f]).unwrap();
        assert_eq!((p, n), (SdmaPacket::Timestamp { addr: GpuAddr(0x7f_0000_0020) }, 3));
        assert!(matches!(decode(&[13 | (1 << 8), 0, 0]), Err(SdmaError::Unsupported { packet: "TIMESTAMP", .. })));
    }

    #[test]
    fn poll_regmem_as_rocr_builds_it() {
        // BuildPollCommand: mem_poll 1, func 3 (equal), mask all ones, interval 4,
        // retry 0xfff.
        let header = 8 | (3 << 28) | (1 << 31);
        let (p, n) = decode(&[header, 0x108, 0x7f, 0, 0xffff_ffff, 4 | (0xfff << 16)]).unwrap();
        assert_eq!(n, 6);
        assert_eq!(p, SdmaPacket::Poll { memory: true, func: PollFunc::Equal, addr: GpuAddr(0x7f_0000_0108), reference: 0, mask: !0 });
        // ROCr's HDP flush: {0x8, 0x0, 0x80000000, 0, 0, 0}, a register poll that is
        // always met.
        let (p, _) = decode(&[0x8, 0, 0x8000_0000, 0, 0, 0]).unwrap();
        assert!(matches!(p, SdmaPacket::Poll { memory: false, func: PollFunc::Always, .. }));
        // A register poll that waits for a value cannot run.
        assert!(matches!(decode(&[8 | (3 << 28), 0x1234, 0, 0, 0, 0]), Err(SdmaError::Unsupported { .. })));
        assert!(PollFunc::Greater.met(2, 1) && !PollFunc::Greater.met(1, 1));
        assert!(PollFunc::LessEqual.met(1, 1) && !PollFunc::Less.met(1, 1));
    }

    #[test]
    fn atomic_decrement_as_rocr_builds_it() {
        // BuildAtomicDecrementCommand: ADD64 of all ones (a decrement).
        let header = 10 | (u32::from(ATOMIC_ADD64) << 25);
        let (p, n) = decode(&[header, 0x2000, 0x7f, !0, !0, 0, 0, 0]).unwrap();
        assert_eq!((p, n), (SdmaPacket::AtomicAdd64 { addr: GpuAddr(0x7f_0000_2000), value: u64::MAX }, 8));
        let swap = 10 | (39 << 25);
        let e = decode(&[swap, 0, 0, 0, 0, 0, 0, 0]).unwrap_err();
        assert!(e.to_string().contains("atomic operation 39"), "{e}");
    }

    #[test]
    fn constant_fill_of_dwords() {
        // BuildFillCommand: fillsize 2 (dwords), count = (dwords - 1) * 4.
        let header = 11 | (2 << 30);
        let (p, n) = decode(&[header, 0x100, 0x7f, 0xdead_beef, (256 - 1) * 4]).unwrap();
        assert_eq!(n, 5);
        assert_eq!(p, SdmaPacket::ConstantFill { dst: GpuAddr(0x7f_0000_0100), data: 0xdead_beef, unit_bytes: 4, bytes: 1024 });
    }

    #[test]
    fn copy_rect_fields() {
        // A 2D copy of 16-byte elements: 3 x 5 elements, source pitch 64 elements at
        // offset (1, 2), destination pitch 8 at offset (0, 0).
        let header = 1 | (4 << 8) | (4 << 29);
        let mut dw = [0u32; 13];
        dw[0] = header;
        dw[1] = 0x1000;
        dw[3] = 1 | (2 << 16);
        dw[4] = 63 << 13;
        dw[6] = 0x8000;
        dw[9] = 7 << 13;
        dw[11] = 2 | (4 << 16);
        let (p, n) = decode(&dw).unwrap();
        assert_eq!(n, 13);
        let SdmaPacket::CopyRect { element_bytes, src, dst, extent } = p else { panic!("{p:?}") };
        assert_eq!((element_bytes, extent), (16, [3, 5, 1]));
        assert_eq!(src.address(0, 0, 0, 16), 0x1000 + (1 + 2 * 64) * 16);
        assert_eq!(dst.address(2, 4, 0, 16), 0x8000 + (2 + 4 * 8) * 16);
    }

    #[test]
    fn nops_and_unknown_opcodes() {
        // ROCr pads the ring's end with zero dwords: one-dword NOPs.
        assert_eq!(decode(&[0]).unwrap(), (SdmaPacket::Nop, 1));
        assert_eq!(decode(&[3 << 16, 0, 0, 0]).unwrap(), (SdmaPacket::Nop, 4));
        // GCR (17) is an SDMA 5 packet: unknown here, with its opcode named.
        let e = decode(&[17 | (1 << 8), 0, 0, 0, 0]).unwrap_err();
        assert_eq!(e, SdmaError::Unknown { op: 17, sub_op: 1, header: 0x111 });
        assert!(e.to_string().contains("opcode 17"), "{e}");
        assert!(matches!(decode(&[1 | (1 << 8)]), Err(SdmaError::Unknown { op: 1, sub_op: 1, .. })));
        // A packet longer than what was published.
        assert_eq!(decode(&[5, 0]).unwrap_err(), SdmaError::Truncated { packet: "FENCE", needed: 4, available: 2 });
    }
}
