//! The gfx950 transposing LDS loads (`ds_read_b64_tr_b4`, `_b8`, `_b16`,
//! `ds_read_b96_tr_b6`) against a reference written here as a matrix transpose: within
//! each group of 16 lanes, the elements of the lanes' blocks, taken in lane order, fill an
//! `E x 16` matrix row by row (E elements per block), and lane `i` receives column `i`.
//! The layout and its sources are in the executor's `ds_transpose` module docs; so are
//! the decisions these tests pin: an inactive lane's block reads as zero and its registers
//! are kept, a block not wholly inside LDS reads as zero, `ds_read_b96_tr_b6` ignores the
//! low four address bits. Programs are assembled with llvm-mc-22.

mod common;

use std::sync::OnceLock;

use amdgpu_isa::exec::{run_single_wave, Memory, Program, Wave, WaveStatus};
use amdgpu_isa::Target;
use proptest::prelude::*;

const BASE: u64 = 0x10_0000;
const TARGET: Target = Target::Gfx950;

/// The four loads, in the order the test program issues them.
#[derive(Clone, Copy, Debug)]
struct Form {
    /// Bits of one element.
    bits: usize,
    /// Bytes of one lane's block.
    block: usize,
    /// Low address bits the load ignores.
    ignored_low_bits: u32,
}

const B4: Form = Form { bits: 4, block: 8, ignored_low_bits: 0 };
const B8: Form = Form { bits: 8, block: 8, ignored_low_bits: 0 };
const B16: Form = Form { bits: 16, block: 8, ignored_low_bits: 0 };
const B6: Form = Form { bits: 6, block: 12, ignored_low_bits: 4 };

/// The program text for one instruction offset: b4 into v[2:3], b8 into v[4:5], b16 into
/// v[6:7] (addresses in v0), b6 into v[8:10] (addresses in v1), and b16 again into a[0:1].
fn source(offset: u32) -> String {
    format!(
        "ds_read_b64_tr_b4 v[2:3], v0 offset:{offset}\n\
         ds_read_b64_tr_b8 v[4:5], v0 offset:{offset}\n\
         ds_read_b64_tr_b16 v[6:7], v0 offset:{offset}\n\
         ds_read_b96_tr_b6 v[8:10], v1 offset:{offset}\n\
         ds_read_b64_tr_b16 a[0:1], v0 offset:{offset}"
    )
}

/// The offsets the property tests draw from; each program is assembled once.
const OFFSETS: [u32; 3] = [0, 8, 1000];

fn program(offset_idx: usize) -> Program {
    static WORDS: OnceLock<Vec<Vec<u32>>> = OnceLock::new();
    let words = WORDS.get_or_init(|| OFFSETS.iter().map(|&o| common::assemble(TARGET, &source(o))).collect());
    Program::from_words(TARGET, BASE, &words[offset_idx])
}

/// Runs `program` on `w` with `lds`.
fn run(program: &Program, w: &mut Wave, lds: &mut [u8]) {
    w.pc = BASE;
    w.status = WaveStatus::Running;
    run_single_wave(program, w, &mut Memory::new(), lds, 100).expect("the transposing loads execute");
}

/// The value a destination register holds before the loads (to see inactive lanes kept).
fn sentinel(reg: usize, lane: usize) -> u32 {
    0xdead_0000 | (reg as u32) << 8 | lane as u32
}

/// A wave with addresses `b64_addr` in v0 and `b6_addr` in v1, sentinels in v2-v10 and
/// a0-a1.
fn wave(b64_addr: &[u32], b6_addr: &[u32], exec: u64) -> Wave {
    let mut w = Wave::new(BASE, 0x3f0);
    w.set_exec(exec);
    for lane in 0..64 {
        w.vgpr[0][lane] = b64_addr[lane];
        w.vgpr[1][lane] = b6_addr[lane];
        for reg in 2..=10 {
            w.vgpr[reg][lane] = sentinel(reg, lane);
        }
        for reg in 0..=1 {
            w.agpr[reg][lane] = sentinel(0x80 + reg, lane);
        }
    }
    w
}

/// Reads `bits` bits at bit position `at` of a little-endian byte string.
fn get_bits(bytes: &[u8], at: usize, bits: usize) -> u32 {
    (0..bits).map(|b| (((bytes[(at + b) / 8] >> ((at + b) % 8)) & 1) as u32) << b).sum()
}

/// Writes the low `bits` bits of `v` at bit position `at` of a little-endian byte string.
fn put_bits(bytes: &mut [u8], at: usize, bits: usize, v: u32) {
    for b in 0..bits {
        let bit = ((v >> b) & 1) as u8;
        bytes[(at + b) / 8] |= bit << ((at + b) % 8);
    }
}

/// The reference: each lane's result block (bytes), or `None` for inactive lanes.
fn reference(form: Form, lds: &[u8], addr: &[u32], offset: u32, exec: u64) -> Vec<Option<Vec<u8>>> {
    let active = |lane: usize| (exec >> lane) & 1 != 0;
    // The block each lane supplies.
    let blocks: Vec<Vec<u8>> = (0..64)
        .map(|lane| {
            let at = (addr[lane].wrapping_add(offset) >> form.ignored_low_bits << form.ignored_low_bits) as usize;
            match lds.get(at..at + form.block) {
                Some(b) if active(lane) => b.to_vec(),
                _ => vec![0; form.block],
            }
        })
        .collect();
    let per_block = form.block * 8 / form.bits;
    let mut out = vec![None; 64];
    for group in 0..4 {
        // The group's elements in lane order, as a `per_block x 16` row-major matrix.
        let stream: Vec<u8> = blocks[16 * group..16 * group + 16].concat();
        let matrix = |row: usize, col: usize| get_bits(&stream, (16 * row + col) * form.bits, form.bits);
        for col in 0..16 {
            let lane = 16 * group + col;
            if !active(lane) {
                continue;
            }
            let mut result = vec![0u8; form.block];
            for row in 0..per_block {
                put_bits(&mut result, row * form.bits, form.bits, matrix(row, col));
            }
            out[lane] = Some(result);
        }
    }
    out
}

/// The bytes of registers `first..first + n` of one lane.
fn reg_bytes(regs: &amdgpu_isa::exec::RegFile, first: usize, n: usize, lane: usize) -> Vec<u8> {
    (first..first + n).flat_map(|r| regs[r][lane].to_le_bytes()).collect()
}

/// Checks one form's destination registers against the reference.
fn check(
    form: Form,
    name: &str,
    regs: &amdgpu_isa::exec::RegFile,
    first: usize,
    want: &[Option<Vec<u8>>],
    sentinel_base: usize,
) -> Result<(), TestCaseError> {
    let n = form.block / 4;
    for (lane, want) in want.iter().enumerate() {
        let got = reg_bytes(regs, first, n, lane);
        match want {
            Some(w) => prop_assert_eq!(&got, w, "{} lane {}", name, lane),
            None => {
                let kept: Vec<u8> = (0..n).flat_map(|r| sentinel(sentinel_base + r, lane).to_le_bytes()).collect();
                prop_assert_eq!(&got, &kept, "{} inactive lane {} is kept", name, lane);
            }
        }
    }
    Ok(())
}

/// A lane address: mostly inside a small LDS (also misaligned and straddling its end),
/// sometimes anywhere.
fn address(lds_len: u32) -> impl Strategy<Value = u32> {
    prop_oneof![
        6 => 0..lds_len,
        2 => (0..lds_len / 8).prop_map(|b| 8 * b),
        1 => (lds_len - 16)..(lds_len + 16),
        1 => any::<u32>(),
    ]
}

const LDS_LEN: usize = 2048;

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Every form, with random LDS contents, addresses, offsets and EXEC, matches the
    /// matrix reference; inactive lanes keep their registers.
    #[test]
    fn transposing_loads_match_the_matrix_reference(
        lds in prop::collection::vec(any::<u8>(), LDS_LEN),
        b64_addr in prop::collection::vec(address(LDS_LEN as u32), 64),
        b6_addr in prop::collection::vec(address(LDS_LEN as u32), 64),
        exec in prop_oneof![Just(u64::MAX), any::<u64>(), Just(0xffff_0000_ffff_0000u64), Just(0)],
        offset_idx in 0..OFFSETS.len(),
    ) {
        let offset = OFFSETS[offset_idx];
        let mut w = wave(&b64_addr, &b6_addr, exec);
        let mut mem = lds.clone();
        run(&program(offset_idx), &mut w, &mut mem);
        prop_assert_eq!(&mem, &lds, "the loads do not write LDS");
        check(B4, "tr_b4", &w.vgpr, 2, &reference(B4, &lds, &b64_addr, offset, exec), 2)?;
        check(B8, "tr_b8", &w.vgpr, 4, &reference(B8, &lds, &b64_addr, offset, exec), 4)?;
        check(B16, "tr_b16", &w.vgpr, 6, &reference(B16, &lds, &b64_addr, offset, exec), 6)?;
        check(B6, "tr_b6", &w.vgpr, 8, &reference(B6, &lds, &b6_addr, offset, exec), 8)?;
        check(B16, "tr_b16 into AccVGPRs", &w.agpr, 0, &reference(B16, &lds, &b64_addr, offset, exec), 0x80)?;
    }
}

/// With consecutive blocks (lane `l` at `l * stride`) each group's element stream is a
/// row-major `E x 16` matrix, so lane `i` of group `g` receives its elements
/// `i, 16 + i, 32 + i, ...`: spelled out here with element `n` of the whole LDS stream
/// holding `n` (modulo the element range) for every form.
#[test]
fn consecutive_blocks_give_each_lane_a_column() {
    // (form, LDS bytes between lanes' blocks, first destination register)
    let cases = [(B4, 8usize, 2usize), (B8, 8, 4), (B16, 8, 6), (B6, 16, 8)];
    for (form, stride, first) in cases {
        let per_block = form.block * 8 / form.bits;
        let mut lds = vec![0u8; 64 * 16];
        // Element n of lane l's block is element E l + n of the stream and holds that index.
        for lane in 0..64 {
            for n in 0..per_block {
                let value = ((lane * per_block + n) % (1 << form.bits)) as u32;
                put_bits(&mut lds[lane * stride..], n * form.bits, form.bits, value);
            }
        }
        let addrs: Vec<u32> = (0..64).map(|l| (l * stride) as u32).collect();
        let mut w = wave(&addrs, &addrs, u64::MAX);
        run(&program(0), &mut w, &mut lds);
        for lane in 0..64 {
            let (group, i) = (lane / 16, lane % 16);
            let got = reg_bytes(&w.vgpr, first, form.block / 4, lane);
            for k in 0..per_block {
                // Element i + 16 k of the group's stream, which starts at element 16 E g.
                let want = ((16 * per_block * group + 16 * k + i) % (1 << form.bits)) as u32;
                assert_eq!(get_bits(&got, k * form.bits, form.bits), want, "{} bits: lane {lane} element {k}", form.bits);
            }
        }
    }
}

/// Two hand-checked lanes of `ds_read_b64_tr_b16` over halfwords `h` at byte `2 h`
/// holding `h`, lane `l` addressing byte `8 l`: lane 5 gets halfwords 5, 21, 37, 53 and
/// lane 18 (group 1, column 2) halfwords 66, 82, 98, 114.
#[test]
fn tr_b16_pins_two_lanes() {
    let mut lds: Vec<u8> = (0..512u16).flat_map(|h| h.to_le_bytes()).collect();
    let addrs: Vec<u32> = (0..64).map(|l| 8 * l).collect();
    let mut w = wave(&addrs, &addrs, u64::MAX);
    run(&program(0), &mut w, &mut lds);
    assert_eq!([w.vgpr[6][5], w.vgpr[7][5]], [5 | 21 << 16, 37 | 53 << 16]);
    assert_eq!([w.vgpr[6][18], w.vgpr[7][18]], [66 | 82 << 16, 98 | 114 << 16]);
}

/// `ds_read_b96_tr_b6` reads each block from the 16-byte boundary at or below its
/// address: addresses `16 l + (l mod 16)` give the same result as `16 l`.
#[test]
fn tr_b6_ignores_the_low_four_address_bits() {
    let lds: Vec<u8> = (0..1024u32).map(|b| (b * 37 + 11) as u8).collect();
    let aligned: Vec<u32> = (0..64).map(|l| 16 * l).collect();
    let misaligned: Vec<u32> = (0..64).map(|l| 16 * l + l % 16).collect();
    let mut a = wave(&aligned, &aligned, u64::MAX);
    let mut b = wave(&aligned, &misaligned, u64::MAX);
    run(&program(0), &mut a, &mut lds.clone());
    run(&program(0), &mut b, &mut lds.clone());
    for reg in 8..=10 {
        assert_eq!(a.vgpr[reg], b.vgpr[reg], "v{reg}");
    }
}
