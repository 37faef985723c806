//! Issue timing of a compute unit in timing mode: which issue category and execution unit
//! each instruction uses, how long it occupies that unit, which wait counter a memory
//! instruction increments, and the `s_waitcnt` limits. Pure tables built once per
//! compute unit from its parameters, indexed by the flat opcode number
//! (`Inst::opcode() as usize`).
//!
//! # The issue model (GCN/CDNA, from AMD's public GCN and CDNA architecture documents)
//!
//! Each SIMD gets an issue opportunity once every `issue_period` cycles (4: the four
//! SIMDs of a CU take turns, one per cycle). At its opportunity a SIMD issues at most one
//! instruction per category ([`IssueUnit`]: VALU/MFMA, scalar ALU and scalar memory,
//! vector memory, LDS, branch, internal), each from a different wave, so a wave issues
//! at most one instruction per opportunity. A category issues only when its unit is free:
//! a wave64 VALU operation occupies the SIMD's 16 lanes for 4 cycles (transcendentals
//! for 16: quarter rate), an MFMA occupies the SIMD's matrix core for its pass count
//! ([`mfma_passes`]) while the wave goes on with independent instructions (the compiler
//! pads dependent reads with `s_nop`, which waits its count + 1 cycles), and the CU's
//! vector memory and LDS pipelines are busy for the cycles their data needs (set by the
//! scheduler from the access, see `timed`).

use amdgpu_isa::exec::{mfma_work, MfmaClass, MfmaWork};
use amdgpu_isa::Target;

use super::lds_banks::LdsShape;
use crate::gpu::stats::class_of;

/// Cycles per instruction class (component parameters of `amdgpu.cu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IssueParams {
    /// VALU occupancy of a wave64 operation on a 16-lane SIMD (4 passes).
    pub valu: u16,
    /// VALU occupancy of a double-precision operation (full rate on CDNA 2/3/4: 4).
    pub valu_f64: u16,
    /// VALU occupancy of a transcendental operation (exp, log, rcp, rsq, sqrt, sin, cos).
    pub trans: u16,
    /// Cycles a scalar ALU operation keeps its wave from issuing again.
    pub salu: u16,
    /// Cycles a taken-or-not branch keeps its wave from issuing again (fetch redirect).
    pub branch: u16,
    /// Cycles the vector memory pipeline spends on a wave64 instruction's addresses (64
    /// lanes at 16 per clock).
    pub mem_issue: u16,
}

/// Which issue category, and so which execution unit, an instruction uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IssueUnit {
    /// The SIMD's vector ALU.
    Valu,
    /// The SIMD's matrix core (the issue itself takes a VALU slot).
    Mfma,
    /// The CU's scalar ALU and scalar memory.
    Scalar,
    /// The CU's vector memory pipeline (texture addresser and data).
    Vmem,
    /// The CU's LDS pipeline.
    Lds,
    /// The branch unit.
    Branch,
    /// Handled in the instruction buffer (`s_waitcnt`, `s_nop`, `s_barrier`, ...).
    Internal,
}

impl IssueUnit {
    /// Number of categories (for per-category arrays).
    pub const COUNT: usize = 7;

    /// Every category, in index order.
    pub const ALL: [IssueUnit; IssueUnit::COUNT] = [
        IssueUnit::Valu,
        IssueUnit::Mfma,
        IssueUnit::Scalar,
        IssueUnit::Vmem,
        IssueUnit::Lds,
        IssueUnit::Branch,
        IssueUnit::Internal,
    ];

    /// Index in per-category arrays.
    pub const fn index(self) -> usize {
        self as usize
    }
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
    /// The category / unit it issues to.
    pub unit: IssueUnit,
    /// Cycles it occupies its unit (VALU and MFMA; the memory pipelines' occupancy
    /// depends on the access and is set at issue).
    pub busy: u16,
    /// MFMA pass counts on gfx90a, gfx942 and gfx950 (0 when not an MFMA).
    pub passes: [u16; 3],
    /// An MFMA whose occupancy doubles when an operand is FP8/BF8 (gfx950 `f8f6f4`).
    pub f8f6f4: bool,
    /// Counters it increments.
    pub mem: MemClass,
    /// `s_waitcnt`.
    pub waitcnt: bool,
    /// `s_nop`: waits its simm16[3:0] + 1 cycles.
    pub nop: bool,
    /// LDS instructions: the shape of the access (for bank conflicts).
    pub lds: LdsShape,
}

impl IssueInfo {
    /// A one-cycle internal instruction (unknown opcode numbers).
    pub const INTERNAL: IssueInfo = IssueInfo {
        cycles: 1,
        unit: IssueUnit::Internal,
        busy: 0,
        passes: [0; 3],
        f8f6f4: false,
        mem: MemClass::None,
        waitcnt: false,
        nop: false,
        lds: LdsShape {
            bytes: 0,
            pair: false,
            st64: false,
        },
    };

    /// The MFMA occupancy on `target`, given the instruction's first two words (gfx950
    /// `f8f6f4`: CBSZ and BLGP pick the formats; an FP8/BF8 operand doubles it).
    pub fn mfma_busy(&self, target: Target, words: &[u32]) -> u16 {
        let i = match target {
            Target::Gfx90a => 0,
            Target::Gfx942 => 1,
            _ => 2,
        };
        let passes = self.passes[i];
        if self.f8f6f4 && f8f6f4_has_fp8(words) {
            passes * 2
        } else {
            passes
        }
    }
}

/// Whether a VOP3P-MAI `f8f6f4` instruction has an FP8 or BF8 operand: CBSZ (word 0,
/// bits 10:8) is A's format and BLGP (word 1, bits 31:29) B's; 0 = fp8, 1 = bf8, 2 = fp6,
/// 3 = bf6, 4 = fp4.
fn f8f6f4_has_fp8(words: &[u32]) -> bool {
    let cbsz = words.first().map_or(0, |w| (w >> 8) & 7);
    let blgp = words.get(1).map_or(0, |w| (w >> 29) & 7);
    cbsz <= 1 || blgp <= 1
}

/// [`IssueInfo`] for every opcode.
#[derive(Clone, Debug)]
pub struct IssueTable {
    by_opcode: Vec<IssueInfo>,
}

impl IssueTable {
    /// The table for `p`.
    pub fn new(p: &IssueParams) -> IssueTable {
        let by_opcode = (0..)
            .map_while(amdgpu_isa::opcode_mnemonic)
            .map(|m| classify(m, p))
            .collect();
        IssueTable { by_opcode }
    }

    /// The entry of opcode number `op` (one cycle, internal, for unknown numbers).
    #[inline]
    pub fn get(&self, op: usize) -> IssueInfo {
        self.by_opcode
            .get(op)
            .copied()
            .unwrap_or(IssueInfo::INTERNAL)
    }
}

/// Transcendental VALU operations (quarter rate).
const TRANSCENDENTAL: [&str; 7] = [
    "v_exp_", "v_log_", "v_rcp_", "v_rsq_", "v_sqrt_", "v_sin_", "v_cos_",
];

/// Scalar instructions the instruction buffer handles without a scalar ALU slot.
const INTERNAL: [&str; 9] = [
    "s_nop",
    "s_waitcnt",
    "s_barrier",
    "s_sleep",
    "s_setprio",
    "s_endpgm",
    "s_sethalt",
    "s_trap",
    "s_icache_inv",
];

/// The issue entry of `mnemonic`.
pub fn classify(mnemonic: &str, p: &IssueParams) -> IssueInfo {
    let m = mnemonic;
    let info = |cycles: u16, unit, busy: u16, mem| IssueInfo {
        cycles: cycles.max(1),
        unit,
        busy,
        passes: [0; 3],
        f8f6f4: false,
        mem,
        waitcnt: false,
        nop: false,
        lds: LdsShape::default(),
    };
    if INTERNAL
        .iter()
        .any(|i| m == *i || (m.starts_with(i) && m[i.len()..].starts_with('_')))
    {
        return IssueInfo {
            waitcnt: m == "s_waitcnt",
            nop: m == "s_nop",
            ..info(p.salu, IssueUnit::Internal, 0, MemClass::None)
        };
    }
    match class_of(m) {
        0 => info(p.salu, IssueUnit::Scalar, 0, MemClass::None),
        1 => info(p.branch, IssueUnit::Branch, 0, MemClass::None),
        2 => info(p.salu, IssueUnit::Scalar, 0, MemClass::Scalar),
        3 if TRANSCENDENTAL.iter().any(|t| m.starts_with(t)) => {
            info(p.valu, IssueUnit::Valu, p.trans, MemClass::None)
        }
        3 if m.contains("_f64") => info(p.valu, IssueUnit::Valu, p.valu_f64, MemClass::None),
        3 => info(p.valu, IssueUnit::Valu, p.valu, MemClass::None),
        4 => {
            let work = mfma_work(m);
            let passes = [Target::Gfx90a, Target::Gfx942, Target::Gfx950]
                .map(|t| work.map_or(16, |w| mfma_passes(t, &w)));
            let f8f6f4 = work.is_some_and(|w| w.class == MfmaClass::F8f6f4);
            IssueInfo {
                passes,
                f8f6f4,
                ..info(p.valu, IssueUnit::Mfma, 0, MemClass::None)
            }
        }
        5 => IssueInfo {
            lds: LdsShape::of(m),
            ..info(p.mem_issue, IssueUnit::Lds, 0, MemClass::Lds)
        },
        _ if m.starts_with("flat_") => info(p.mem_issue, IssueUnit::Vmem, 0, MemClass::Flat),
        _ if m.starts_with("buffer_")
            || m.starts_with("global_")
            || m.starts_with("scratch_")
            || m.starts_with("tbuffer_")
            || m.starts_with("image_") =>
        {
            info(p.mem_issue, IssueUnit::Vmem, 0, MemClass::Vector)
        }
        _ => info(p.salu, IssueUnit::Scalar, 0, MemClass::None),
    }
}

/// Peak matrix operations per CU per clock of `target` for input `class` (an
/// operation = a multiply or an add; `F8f6f4` at its FP6/FP4 rate). From the parts table
/// (`shared/reference/cdna-parts.md`: AMD's CDNA 2/3/4 white papers and the ROCm
/// specification tables); gfx90a's original bf16 forms run at half the `_1k` rate; xf32
/// exists only on gfx942. `None` where the target has no such instruction.
pub fn peak_ops_per_cu_clock(target: Target, class: MfmaClass) -> Option<u64> {
    use MfmaClass as C;
    Some(match (target, class) {
        (Target::Gfx90a, C::F64 | C::F32) => 256,
        (Target::Gfx90a, C::F16 | C::Bf16 | C::I8) => 1024,
        (Target::Gfx90a, C::Bf16Legacy) => 512,
        (Target::Gfx942, C::F64 | C::F32) => 256,
        (Target::Gfx942, C::Xf32) => 1024,
        (Target::Gfx942, C::F16 | C::Bf16) => 2048,
        (Target::Gfx942, C::I8 | C::Fp8) => 4096,
        (Target::Gfx950, C::F64) => 128,
        (Target::Gfx950, C::F32) => 256,
        (Target::Gfx950, C::F16 | C::Bf16) => 4096,
        (Target::Gfx950, C::I8 | C::Fp8) => 8192,
        (Target::Gfx950, C::F8f6f4) => 16384,
        _ => return None,
    })
}

/// Pass count (cycles the SIMD's matrix core is busy) of `work` on `target`: its
/// operations over the SIMD's share (a quarter) of the CU's peak rate, at least 4. This
/// reproduces the published pass counts, e.g. CDNA 3: f32 32x32x2 = 64, f16 16x16x16 =
/// 16, fp8 16x16x32 = 16; CDNA 4: f8f6f4 16x16x128 = 16 (32 with an FP8 operand, see
/// [`IssueInfo::mfma_busy`]); CDNA 2: f16 16x16x16 = 32, f32 4x4x1 (16 blocks) = 8. An
/// instruction the target lacks (it would not decode there) gets 16.
pub fn mfma_passes(target: Target, work: &MfmaWork) -> u16 {
    let Some(peak) = peak_ops_per_cu_clock(target, work.class) else {
        return 16;
    };
    let per_simd = (peak / 4).max(1);
    u16::try_from(work.ops().div_ceil(per_simd).max(4)).unwrap_or(u16::MAX)
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
    WaitLimits {
        vm: (simm16 & 0xf) | ((simm16 >> 14) & 3) << 4,
        lgkm: (simm16 >> 8) & 0xf,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: IssueParams = IssueParams {
        valu: 4,
        valu_f64: 4,
        trans: 16,
        salu: 1,
        branch: 4,
        mem_issue: 4,
    };

    #[test]
    fn all_lists_the_units_in_index_order() {
        for (i, unit) in IssueUnit::ALL.iter().enumerate() {
            assert_eq!(unit.index(), i);
        }
    }

    #[test]
    fn classes_get_their_units_cycles_and_counters() {
        let add = classify("v_add_f32_e32", &P);
        assert_eq!(
            (add.unit, add.busy, add.cycles, add.mem),
            (IssueUnit::Valu, 4, 4, MemClass::None)
        );
        assert_eq!(classify("v_fma_f64", &P).busy, 4);
        assert_eq!(classify("v_exp_f32_e32", &P).busy, 16);
        assert_eq!(classify("s_add_u32", &P).unit, IssueUnit::Scalar);
        assert_eq!(classify("s_cbranch_scc1", &P).unit, IssueUnit::Branch);
        assert_eq!(classify("s_load_dwordx2", &P).mem, MemClass::Scalar);
        assert_eq!(classify("global_load_dword", &P).unit, IssueUnit::Vmem);
        assert_eq!(classify("buffer_store_dword", &P).mem, MemClass::Vector);
        let sample = classify("image_sample", &P);
        assert_eq!((sample.unit, sample.mem), (IssueUnit::Vmem, MemClass::Vector));
        assert_eq!(classify("flat_load_dword", &P).mem, MemClass::Flat);
        assert_eq!(classify("ds_read_b32", &P).unit, IssueUnit::Lds);
        let wait = classify("s_waitcnt", &P);
        assert!(wait.waitcnt && wait.unit == IssueUnit::Internal);
        assert!(classify("s_nop", &P).nop);
        assert_eq!(classify("s_barrier", &P).unit, IssueUnit::Internal);
        assert_eq!(
            classify("s_nop_something_else", &P).unit,
            IssueUnit::Internal
        );
        assert_eq!(
            classify("s_nand_b32", &P).unit,
            IssueUnit::Scalar,
            "a prefix of a word is not the word"
        );
    }

    fn passes(target: Target, m: &str) -> u16 {
        mfma_passes(
            target,
            &mfma_work(m).unwrap_or_else(|| panic!("{m} is an MFMA")),
        )
    }

    #[test]
    fn mfma_passes_follow_the_published_counts() {
        // CDNA 3 (the issue's and the parts table's figures).
        assert_eq!(passes(Target::Gfx942, "v_mfma_f32_32x32x2_f32"), 64);
        assert_eq!(passes(Target::Gfx942, "v_mfma_f32_16x16x4_f32"), 32);
        assert_eq!(passes(Target::Gfx942, "v_mfma_f32_32x32x8_f16"), 32);
        assert_eq!(passes(Target::Gfx942, "v_mfma_f32_16x16x16_f16"), 16);
        assert_eq!(passes(Target::Gfx942, "v_mfma_f32_16x16x32_fp8_fp8"), 16);
        assert_eq!(passes(Target::Gfx942, "v_mfma_f32_32x32x16_fp8_fp8"), 32);
        // CDNA 4.
        assert_eq!(passes(Target::Gfx950, "v_mfma_f32_16x16x32_f16"), 16);
        assert_eq!(passes(Target::Gfx950, "v_mfma_f32_32x32x16_f16"), 32);
        assert_eq!(passes(Target::Gfx950, "v_mfma_f32_16x16x128_f8f6f4"), 16);
        assert_eq!(passes(Target::Gfx950, "v_mfma_f32_32x32x64_f8f6f4"), 32);
        assert_eq!(passes(Target::Gfx950, "v_mfma_f64_16x16x4_f64"), 64);
        // CDNA 2: half the CDNA 3 f16 rate; multi-block f32 forms.
        assert_eq!(passes(Target::Gfx90a, "v_mfma_f32_16x16x16f16"), 32);
        assert_eq!(passes(Target::Gfx90a, "v_mfma_f32_32x32x8f16"), 64);
        assert_eq!(passes(Target::Gfx90a, "v_mfma_f32_32x32x2f32"), 64);
        assert_eq!(passes(Target::Gfx90a, "v_mfma_f32_32x32x1f32"), 64);
        assert_eq!(passes(Target::Gfx90a, "v_mfma_f32_4x4x1f32"), 8);
        assert_eq!(passes(Target::Gfx90a, "v_mfma_f64_16x16x4f64"), 32);
        assert_eq!(passes(Target::Gfx90a, "v_mfma_f32_32x32x4bf16_1k"), 64);
        assert_eq!(
            passes(Target::Gfx90a, "v_mfma_f32_32x32x4bf16"),
            64,
            "original bf16: half the _1k rate"
        );
    }

    #[test]
    fn an_fp8_operand_doubles_f8f6f4() {
        let p = classify("v_mfma_f32_16x16x128_f8f6f4", &P);
        assert!(p.f8f6f4);
        // CBSZ = 2 (fp6), BLGP = 4 (fp4): 16; CBSZ = 0 (fp8): 32.
        assert_eq!(p.mfma_busy(Target::Gfx950, &[2 << 8, 4 << 29]), 16);
        assert_eq!(p.mfma_busy(Target::Gfx950, &[0, 4 << 29]), 32);
        assert_eq!(p.mfma_busy(Target::Gfx950, &[3 << 8, 1 << 29]), 32);
    }

    #[test]
    fn waitcnt_fields_decode() {
        // s_waitcnt vmcnt(0) lgkmcnt(0): 0x0070 (expcnt 7).
        assert_eq!(waitcnt_limits(0x0070), WaitLimits { vm: 0, lgkm: 0 });
        // lgkmcnt(0) only: vmcnt 63 = 0xf | 3 << 14.
        assert_eq!(
            waitcnt_limits(0xc07f),
            WaitLimits {
                vm: VM_MAX,
                lgkm: 0
            }
        );
        // vmcnt(20): low 4 bits 4, high bits 1.
        assert_eq!(
            waitcnt_limits(0x4f74),
            WaitLimits {
                vm: 20,
                lgkm: LGKM_MAX
            }
        );
    }
}
