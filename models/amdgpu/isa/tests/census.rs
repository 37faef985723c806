//! The executor's coverage census (`amdgpu_isa::census`): every instruction form of
//! gfx90a, gfx942 and gfx950 that the decoder's tables hold must execute.
//!
//! Forms that do not execute yet are listed in `tests/data/census-gaps.txt` (one
//! `TARGET ENCODING MNEMONIC` line each). The test fails on a gap that is not listed,
//! printing it, and on a listed form that now executes, so the list only shrinks. The
//! goal is an empty list.

mod common;

use std::collections::BTreeSet;

use amdgpu_isa::census::{census, Verdict};
use amdgpu_isa::Target;
use common::{census_gap_key as key, census_gaps, CENSUS_GAPS_FILE as GAPS_FILE};

#[test]
fn every_form_executes_or_is_a_listed_gap() {
    let listed = census_gaps();
    let mut found = BTreeSet::new();
    let mut unexpected = Vec::new();
    let mut summary = Vec::new();
    for target in Target::ALL {
        let report = census(target);
        summary.push(format!("{target}: {}/{} forms execute", report.executed(), report.total()));
        for (form, verdict) in &report.gaps {
            let k = key(target, form.encoding.name(), form.opcode.mnemonic());
            if !listed.contains(&k) {
                let why = match verdict {
                    Verdict::Missing { words, fault } => format!("{fault} (words {words:08x?})"),
                    Verdict::OnlyIllegal { words, fault } => format!("every variant is refused: {fault} (words {words:08x?})"),
                    Verdict::Unencodable { words } => format!("the table's words {words:08x?} do not decode back"),
                    Verdict::Executes => unreachable!("gaps hold no executing forms"),
                };
                unexpected.push(format!("{k}: {why}"));
            }
            found.insert(k);
        }
    }
    let fixed: Vec<&String> = listed.difference(&found).collect();
    if std::env::var_os("UPDATE_CENSUS").is_some() {
        let mut out = String::from("# Instruction forms the executor does not run yet; see tests/census.rs.\n");
        for k in &found {
            out.push_str(k);
            out.push('\n');
        }
        std::fs::write(GAPS_FILE, out).expect("write the gap list");
        return;
    }
    assert!(
        unexpected.is_empty() && fixed.is_empty(),
        "{}\nforms that do not execute and are not listed in {GAPS_FILE}:\n{}\n\nlisted forms that now execute (remove them, or rerun with UPDATE_CENSUS=1):\n{}",
        summary.join("\n"),
        unexpected.join("\n"),
        fixed.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n"),
    );
}
