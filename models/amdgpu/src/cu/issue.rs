//! Issue timing of a compute unit in timing mode: how many cycles each instruction keeps
//! its wave from issuing again, which wait counter a memory instruction increments, and
//! the `s_waitcnt` limits. Pure tables built once per compute unit from its parameters,
//! indexed by the flat opcode number (`Inst::opcode() as usize`).

use crate::stats::class_of;

/// Cycles per instruction class (component parameters of `amdgpu.cu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IssueParams {
    /// A wave64 VALU operation on a 16-lane SIMD (4 passes).
    pub valu: u16,
    /// A double-precision VALU operation.
    pub valu_f64: u16,
    /// A transcendental VALU operation (exp, log, rcp, rsq, sqrt, sin, cos).
    pub trans: u16,
    /// A scalar ALU operation.
    pub salu: u16,
    /// A branch or jump (instruction fetch redirect).
    pub branch: u16,
    /// Issuing a vector memory or LDS instruction (address processing).
    pub mem_issue: u16,
}

/// Which wait counters a memory instruction increments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemClass {
    /// Not a memory instruction.
    None,
    /// Buffer, global or scratch access: `vmcnt`.
    Vector,
    /// Flat access: `vmcnt` and `lgkmcnt` (gfx9 counts a flat access in both).
    Flat,
    /// Scalar memory: `lgkmcnt`.
    Scalar,
    /// LDS (`ds_*`): `lgkmcnt`.
    Lds,
}

/// What the scheduler needs to know about one opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IssueInfo {
    /// Cycles before the wave can issue its next instruction.
    pub cycles: u16,
    /// Counters it increments.
    pub mem: MemClass,
    /// `s_waitcnt`.
    pub waitcnt: bool,
}

/// [`IssueInfo`] for every opcode.
#[derive(Clone, Debug)]
pub struct IssueTable {
    by_opcode: Vec<IssueInfo>,
}

impl IssueTable {
    /// The table for `p`.
    pub fn new(p: &IssueParams) -> IssueTable {
        let by_opcode = (0..).map_while(amdgpu_isa::opcode_mnemonic).map(|m| classify(m, p)).collect();
        IssueTable { by_opcode }
    }

    /// The entry of opcode number `op` (one cycle, no memory, for unknown numbers).
    #[inline]
    pub fn get(&self, op: usize) -> IssueInfo {
        self.by_opcode.get(op).copied().unwrap_or(IssueInfo { cycles: 1, mem: MemClass::None, waitcnt: false })
    }
}

/// Transcendental VALU operations (quarter rate).
const TRANSCENDENTAL: [&str; 7] = ["v_exp_", "v_log_", "v_rcp_", "v_rsq_", "v_sqrt_", "v_sin_", "v_cos_"];

/// The issue entry of `mnemonic`.
pub fn classify(mnemonic: &str, p: &IssueParams) -> IssueInfo {
    let m = mnemonic;
    let info = |cycles: u16, mem| IssueInfo { cycles: cycles.max(1), mem, waitcnt: false };
    if m == "s_waitcnt" {
        return IssueInfo { cycles: p.salu.max(1), mem: MemClass::None, waitcnt: true };
    }
    match class_of(m) {
        0 => info(p.salu, MemClass::None),
        1 => info(p.branch, MemClass::None),
        2 => info(p.salu, MemClass::Scalar),
        3 if TRANSCENDENTAL.iter().any(|t| m.starts_with(t)) => info(p.trans, MemClass::None),
        3 if m.contains("_f64") => info(p.valu_f64, MemClass::None),
        3 => info(p.valu, MemClass::None),
        4 => info(mfma_cycles(m).unwrap_or(16), MemClass::None),
        5 => info(p.mem_issue, MemClass::Lds),
        _ if m.starts_with("flat_") => info(p.mem_issue, MemClass::Flat),
        _ if m.starts_with("buffer_") || m.starts_with("global_") || m.starts_with("scratch_") || m.starts_with("tbuffer_") => {
            info(p.mem_issue, MemClass::Vector)
        }
        _ => info(p.salu, MemClass::None),
    }
}

/// Issue cycles of a `v_mfma_*` / `v_smfmac_*` from its shape, per the CDNA 3/4 table
/// (shared/reference/cdna-parts.md): 16 cycles for a 16x16 output block, 32 for 32x32, 8
/// for 4x4 (assumed); twice that with f32 inputs, four times with f64 inputs. `None` when
/// the mnemonic has no `MxNxK` shape. gfx90a uses the same numbers (an approximation:
/// CDNA 2 takes twice as long for some 16-bit shapes).
pub fn mfma_cycles(mnemonic: &str) -> Option<u16> {
    let parts: Vec<&str> = mnemonic.split('_').collect();
    let i = parts.iter().position(|t| t.split('x').count() == 3 && t.starts_with(|c: char| c.is_ascii_digit()))?;
    let shape = parts[i];
    let m: u16 = shape.split('x').next()?.parse().ok()?;
    let k_part = shape.split('x').nth(2)?;
    let digits = k_part.chars().take_while(|c| c.is_ascii_digit()).count();
    let suffix = if digits < k_part.len() { &k_part[digits..] } else { parts.get(i + 1).copied().unwrap_or("") };
    let base = match m {
        4 => 8,
        32 => 32,
        _ => 16,
    };
    let scale = if suffix.starts_with("f64") {
        4
    } else if suffix.starts_with("f32") {
        2
    } else {
        1
    };
    Some(base * scale)
}

/// The counter limits of an `s_waitcnt` (gfx9 simm16: vmcnt in bits 3:0 and 15:14,
/// expcnt in 6:4, lgkmcnt in 11:8). A limit at its field's maximum waits for nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitLimits {
    /// Outstanding vector memory instructions allowed.
    pub vm: u32,
    /// Outstanding LDS, scalar memory (and flat) instructions allowed.
    pub lgkm: u32,
}

/// Largest `vmcnt` (waits for nothing).
pub const VM_MAX: u32 = 63;
/// Largest `lgkmcnt` (waits for nothing).
pub const LGKM_MAX: u32 = 15;

/// Decodes the simm16 of `s_waitcnt`.
pub fn waitcnt_limits(simm16: u32) -> WaitLimits {
    WaitLimits { vm: (simm16 & 0xf) | ((simm16 >> 14) & 3) << 4, lgkm: (simm16 >> 8) & 0xf }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: IssueParams = IssueParams { valu: 4, valu_f64: 8, trans: 16, salu: 1, branch: 4, mem_issue: 4 };

    #[test]
    fn classes_get_their_cycles_and_counters() {
        assert_eq!(classify("v_add_f32_e32", &P), IssueInfo { cycles: 4, mem: MemClass::None, waitcnt: false });
        assert_eq!(classify("v_fma_f64", &P).cycles, 8);
        assert_eq!(classify("v_exp_f32_e32", &P).cycles, 16);
        assert_eq!(classify("s_add_u32", &P).cycles, 1);
        assert_eq!(classify("s_cbranch_scc1", &P).cycles, 4);
        assert_eq!(classify("s_load_dwordx2", &P).mem, MemClass::Scalar);
        assert_eq!(classify("global_load_dword", &P).mem, MemClass::Vector);
        assert_eq!(classify("buffer_store_dword", &P).mem, MemClass::Vector);
        assert_eq!(classify("flat_load_dword", &P).mem, MemClass::Flat);
        assert_eq!(classify("ds_read_b32", &P).mem, MemClass::Lds);
        assert!(classify("s_waitcnt", &P).waitcnt);
    }

    #[test]
    fn mfma_cycles_follow_the_parts_table() {
        assert_eq!(mfma_cycles("v_mfma_f64_16x16x4_f64"), Some(64));
        assert_eq!(mfma_cycles("v_mfma_f64_16x16x4f64"), Some(64));
        assert_eq!(mfma_cycles("v_mfma_f32_32x32x2_f32"), Some(64));
        assert_eq!(mfma_cycles("v_mfma_f32_32x32x2f32"), Some(64));
        assert_eq!(mfma_cycles("v_mfma_f32_16x16x4_f32"), Some(32));
        assert_eq!(mfma_cycles("v_mfma_f32_32x32x8_f16"), Some(32));
        assert_eq!(mfma_cycles("v_mfma_f32_16x16x16_f16"), Some(16));
        assert_eq!(mfma_cycles("v_mfma_f32_16x16x32_fp8_fp8"), Some(16));
        assert_eq!(mfma_cycles("v_mfma_f32_32x32x16_fp8_fp8"), Some(32));
        assert_eq!(mfma_cycles("v_add_f32"), None);
    }

    #[test]
    fn waitcnt_fields_decode() {
        // s_waitcnt vmcnt(0) lgkmcnt(0): 0x0070 (expcnt 7).
        assert_eq!(waitcnt_limits(0x0070), WaitLimits { vm: 0, lgkm: 0 });
        // lgkmcnt(0) only: vmcnt 63 = 0xf | 3 << 14.
        assert_eq!(waitcnt_limits(0xc07f), WaitLimits { vm: VM_MAX, lgkm: 0 });
        // vmcnt(20): low 4 bits 4, high bits 1.
        assert_eq!(waitcnt_limits(0x4f74), WaitLimits { vm: 20, lgkm: LGKM_MAX });
    }
}
