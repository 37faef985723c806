//! `dojo isa coverage [--mcpu gfxNNN] [--gaps] [--json]`: how many instruction forms of
//! each target the executor runs, counted by `amdgpu_isa::census` (every form of the
//! decoder's tables executed on a probe wave).

use std::process::ExitCode;

use amdgpu::isa::census::{census, Category, Verdict};
use amdgpu::isa::Target;
use crate::output::outln;

/// `dojo isa ...`.
#[derive(clap::Subcommand, Debug)]
pub enum IsaCommand {
    /// Executed / total instruction forms per target and per category.
    Coverage {
        /// Only this target (gfx90a, gfx942, gfx950).
        #[arg(long)]
        mcpu: Option<Target>,
        /// Also list every form that does not execute.
        #[arg(long)]
        gaps: bool,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cmd: IsaCommand) -> anyhow::Result<ExitCode> {
    let IsaCommand::Coverage { mcpu, gaps, json } = cmd;
    let targets: Vec<Target> = match mcpu {
        Some(t) => vec![t],
        None => Target::ALL.to_vec(),
    };
    let mut complete = true;
    let mut doc = serde_json::Map::new();
    for target in targets {
        let report = census(target);
        complete &= report.gaps.is_empty();
        if json {
            let mut cats = serde_json::Map::new();
            for cat in Category::ALL {
                let (total, ok) = report.per_category.get(&cat).copied().unwrap_or((0, 0));
                cats.insert(cat.name().into(), serde_json::json!({ "total": total, "executed": ok }));
            }
            let missing: Vec<String> = report.gaps.iter().map(|(f, _)| format!("{} {}", f.encoding.name(), f.opcode.mnemonic())).collect();
            doc.insert(
                target.name().into(),
                serde_json::json!({ "total": report.total(), "executed": report.executed(), "categories": cats, "missing": missing }),
            );
            continue;
        }
        outln!("{target}: {}/{} instruction forms execute ({:.1}%)", report.executed(), report.total(), percent(report.executed(), report.total()))?;
        for cat in Category::ALL {
            if let Some(&(total, ok)) = report.per_category.get(&cat) {
                outln!("  {:14} {ok:>5}/{total:<5} {:5.1}%", cat.name(), percent(ok, total))?;
            } else if cat == Category::Image {
                // Counted like the others: the tables hold no image form for this target.
                outln!("  {:14} {:>5}/{:<5} (the target has no image instructions)", cat.name(), 0, 0)?;
            }
        }
        if gaps {
            for (form, verdict) in &report.gaps {
                let why = match verdict {
                    Verdict::Missing { fault, .. } => fault.to_string(),
                    Verdict::OnlyIllegal { fault, .. } => format!("every variant is refused: {fault}"),
                    Verdict::Unencodable { words } => format!("table words {words:08x?} do not decode back"),
                    Verdict::Executes => continue,
                };
                outln!("  missing {} {}: {why}", form.encoding.name(), form.opcode.mnemonic())?;
            }
        }
    }
    if json {
        outln!("{}", serde_json::to_string_pretty(&doc)?)?;
    }
    Ok(if complete { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        100.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}
