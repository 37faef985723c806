//! Prints the executor's coverage per target and category, and every form that does not
//! execute (`cargo run --release -p amdgpu-isa --example census [gfx942]`).

use amdgpu_isa::census::{census, Verdict};
use amdgpu_isa::Target;

fn main() {
    let only: Option<String> = std::env::args().nth(1);
    for target in Target::ALL {
        if only.as_deref().is_some_and(|t| t != target.name()) {
            continue;
        }
        let report = census(target);
        println!("{target}: {}/{} forms execute", report.executed(), report.total());
        for (cat, (total, ok)) in &report.per_category {
            println!("  {:14} {ok}/{total}", cat.name());
        }
        for (form, verdict) in &report.gaps {
            let what = match verdict {
                Verdict::Missing { words, fault } => format!("missing {words:08x?}: {fault}"),
                Verdict::OnlyIllegal { words, fault } => format!("only illegal {words:08x?}: {fault}"),
                Verdict::Unencodable { words } => format!("unencodable {words:08x?}"),
                Verdict::Executes => continue,
            };
            println!("  GAP {target} {:?} {} {}", form.category, form.opcode.mnemonic(), what);
        }
    }
}
