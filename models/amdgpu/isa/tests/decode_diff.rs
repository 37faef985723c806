//! Differential test against llvm-objdump on random words of every encoding family
//! (fixed seed): same text, or both invalid. Needs llvm-19 and llvm-22 (fails, naming the
//! package, when they are missing). Prints the agreement rate per family.

mod common;

use std::collections::BTreeMap;

use amdgpu_isa::decode::Encoding;
use amdgpu_isa::disasm::text;
use amdgpu_isa::Target;
use common::{normalize, oracle, scratch_dir, Oracle, FILL};

/// `(family, value, mask)` of the fixed prefix bits of each encoding family.
const FAMILIES: &[(Encoding, u32, u32)] = &[
    (Encoding::Sop2, 0x8000_0000, 0xc000_0000),
    (Encoding::Sopk, 0xb000_0000, 0xf000_0000),
    (Encoding::Sop1, 0xbe80_0000, 0xff80_0000),
    (Encoding::Sopc, 0xbf00_0000, 0xff80_0000),
    (Encoding::Sopp, 0xbf80_0000, 0xff80_0000),
    (Encoding::Smem, 0xc000_0000, 0xfc00_0000),
    (Encoding::Vop2, 0x0000_0000, 0x8000_0000),
    (Encoding::Vop1, 0x7e00_0000, 0xfe00_0000),
    (Encoding::Vopc, 0x7c00_0000, 0xfe00_0000),
    (Encoding::Vop3, 0xd000_0000, 0xfc00_0000),
    (Encoding::Vop3p, 0xd380_0000, 0xff80_0000),
    (Encoding::Ds, 0xd800_0000, 0xfc00_0000),
    (Encoding::Flat, 0xdc00_0000, 0xfc00_c000),
    (Encoding::Scratch, 0xdc00_4000, 0xfc00_c000),
    (Encoding::Global, 0xdc00_8000, 0xfc00_c000),
    (Encoding::Mubuf, 0xe000_0000, 0xfc00_0000),
    (Encoding::Mtbuf, 0xe800_0000, 0xfc00_0000),
    (Encoding::Mimg, 0xf000_0000, 0xfc00_0000),
];

const PER_FAMILY: usize = 2000;

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) as u32
    }
}

fn check(target: Target, floor: f64) {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15 ^ target as u64);
    let mut cases = Vec::new();
    let mut fams = Vec::new();
    for &(enc, value, mask) in FAMILIES {
        let mut n = 0;
        while n < PER_FAMILY {
            let w0 = (rng.next() & !mask) | value;
            if Encoding::classify(w0).0 != enc {
                continue;
            }
            let mut c = vec![w0];
            if enc.base_words() == 2 {
                c.push(rng.next());
            }
            cases.push(c);
            fams.push(enc.name());
            n += 1;
        }
    }
    let dir = scratch_dir(&format!("diff-{target}"));
    let expected = oracle(target, &cases, &dir);
    let mut stats: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut examples = Vec::new();
    let mut crashes = 0usize;
    for ((c, fam), exp) in cases.iter().zip(&fams).zip(&expected) {
        let mut words = c.clone();
        words.extend([FILL, FILL]);
        let got = text(target, &words);
        let agree = match (&got, exp) {
            (_, Oracle::Crash) => {
                crashes += 1;
                continue;
            }
            (None, Oracle::Invalid) => true,
            (Some(g), Oracle::Text(e)) => normalize(g) == normalize(e),
            _ => false,
        };
        let s = stats.entry(fam).or_default();
        s.1 += 1;
        if agree {
            s.0 += 1;
        } else {
            examples.push(format!("{fam} {c:08x?}: llvm {exp:?} ours {got:?}"));
        }
    }
    let (ok, n) = stats.values().fold((0, 0), |a, s| (a.0 + s.0, a.1 + s.1));
    let rate = ok as f64 / n as f64;
    let mut report = format!("{target} agreement {ok}/{n} ({:.1}%, {crashes} words crash llvm-objdump and are skipped):", 100.0 * rate);
    for (f, (a, b)) in &stats {
        report.push_str(&format!(" {f} {:.1}%;", 100.0 * *a as f64 / *b as f64));
    }
    println!("{report}");
    if let Some(dump) = std::env::var_os("DIFF_DUMP") {
        std::fs::write(std::path::PathBuf::from(dump).join(format!("{target}.diff")), examples.join("\n")).expect("write dump");
    }
    examples.truncate(10);
    assert!(rate >= floor, "{report}\nagreement below {floor}; examples: {examples:#?}");
}

#[test]
fn random_words_agree_with_llvm_gfx90a() {
    check(Target::Gfx90a, 0.99);
}

#[test]
fn random_words_agree_with_llvm_gfx942() {
    check(Target::Gfx942, 0.99);
}

#[test]
fn random_words_agree_with_llvm_gfx950() {
    check(Target::Gfx950, 0.99);
}
