//! `dojo sweep --set KEY=V1,V2 [--set KEY2=A,B] -- COMMAND ...`: a parameter study. Runs
//! `dojo COMMAND` once per point of the grid the `--set` lists span (their Cartesian
//! product), with that point's `--set` flags added, as many at once as `--jobs` allows;
//! collects each point's statistics and writes `results.csv`, `results.json` and a plot
//! (`plot.svg`) of one metric into `--out`: a column by name, the sum over instances of a
//! metric named by its end (`--plot l2.misses`), with its unit on the axis; an unknown
//! metric is an error listing close names, and a failed point's reason is printed.
//!
//! Statistics per command: `exec` and `run` get `--stats FILE` (per-kernel statistics
//! summed over kernels, with derived rates, and every component's statistics under
//! `components.`; the default metric is `cycles` in timing mode, else `l2.hit_rate`),
//! `sim` gets `--stats FILE` (the component statistics), `bench
//! gpu` and `bench gemm` get `--json`. Every numeric value becomes a column named by its
//! JSON path (`counters.l1.hits`, `by_type.phold.lp.events`). A point that fails keeps
//! its row, with its exit status and the metrics empty, and the sweep exits 1.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::{bail, Context as _};
use clap::Args;
use serde_json::Value;

use crate::output::outln;
use crate::rocprof_csv::csv_field;

/// Arguments of `dojo sweep`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// A swept parameter: `KEY=V1,V2,...` (KEY as in `--set`; values may not contain
    /// commas). Repeatable: the sweep runs every combination.
    #[arg(long = "set", value_name = "KEY=V1,V2", required = true)]
    set: Vec<String>,
    /// Points run at the same time (default: the host's cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Directory for the results, the plot and each point's output.
    #[arg(long, default_value = "sweep")]
    out: PathBuf,
    /// The metric to plot (a column name; default: the command's main figure).
    #[arg(long)]
    plot: Option<String>,
    /// The dojo command to run at every point: `exec ...`, `sim ...`, `run ...`,
    /// `bench gpu ...` or `bench gemm ...` (after `--`).
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// How a command reports its statistics.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Report {
    /// `--stats FILE` with a list of per-kernel statistics.
    Kernels,
    /// `--stats FILE` with a simdojo statistics report.
    Components,
    /// `--json` on standard output.
    Json,
}

impl Report {
    /// The report of `command` and its default metric: for GPU programs the cycles in
    /// timing mode, else (functional mode, where cycles do not depend on the caches or
    /// memory) the L2 hit rate, which does.
    fn of(command: &[String]) -> anyhow::Result<(Report, &'static str)> {
        let words: Vec<&str> = command.iter().map(String::as_str).take(2).collect();
        let timing = command.iter().any(|w| w == "timing" || w.ends_with("mode=timing"));
        let gpu_default = if timing { "cycles" } else { "l2.hit_rate" };
        Ok(match words.as_slice() {
            ["exec", ..] | ["run", ..] => (Report::Kernels, gpu_default),
            ["sim", ..] => (Report::Components, "events"),
            ["bench", "gpu"] => (Report::Json, "wave_instructions_per_sec"),
            ["bench", "gemm"] => (Report::Json, "run_seconds"),
            _ => bail!("dojo sweep runs `exec`, `run`, `sim`, `bench gpu` or `bench gemm`, not `{}`", command.join(" ")),
        })
    }
}

/// One point of the grid: its `(key, value)` pairs in `--set` order.
type Point = Vec<(String, String)>;

/// The grid the `--set KEY=V1,V2` lists span, first key varying slowest.
fn grid(sets: &[String]) -> anyhow::Result<Vec<Point>> {
    let mut axes = Vec::new();
    for s in sets {
        let (key, values) = s.split_once('=').with_context(|| format!("--set {s}: expected KEY=V1,V2,..."))?;
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect();
        if values.is_empty() {
            bail!("--set {s}: no values");
        }
        // The key must parse as an override (the values are checked by each run).
        format!("{key}={}", values[0])
            .parse::<simdojo::topology::overrides::Override>()
            .map_err(|e| anyhow::anyhow!("--set {e}"))?;
        axes.push((key.trim().to_string(), values));
    }
    let mut points: Vec<Point> = vec![Vec::new()];
    for (key, values) in &axes {
        points = points
            .into_iter()
            .flat_map(|p| values.iter().map(move |v| p.iter().cloned().chain([(key.clone(), v.clone())]).collect()))
            .collect();
    }
    Ok(points)
}

/// What one point gave.
struct Outcome {
    status: Option<i32>,
    metrics: BTreeMap<String, f64>,
    /// The last line of its standard error (why it failed, when it did).
    reason: String,
}

fn run_point(exe: &Path, command: &[String], report: Report, point: &Point, dir: &Path, index: usize) -> anyhow::Result<Outcome> {
    let mut args: Vec<String> = command.to_vec();
    // Options go before a `--` or an image path would end them: insert them right after
    // the subcommand words.
    let at = if command.first().map(String::as_str) == Some("bench") { 2 } else { 1 };
    let mut extra = Vec::new();
    for (k, v) in point {
        extra.push("--set".to_string());
        extra.push(format!("{k}={v}"));
    }
    let stats = dir.join(format!("point-{index}.json"));
    match report {
        Report::Kernels | Report::Components => {
            extra.push("--stats".into());
            extra.push(stats.display().to_string());
        }
        Report::Json => extra.push("--json".into()),
    }
    args.splice(at.min(args.len())..at.min(args.len()), extra);
    let out = Command::new(exe).args(&args).output().with_context(|| format!("running {}", exe.display()))?;
    std::fs::write(dir.join(format!("point-{index}.stdout")), &out.stdout)?;
    std::fs::write(dir.join(format!("point-{index}.stderr")), &out.stderr)?;
    let mut metrics = BTreeMap::new();
    if out.status.success() {
        let json: Value = match report {
            Report::Json => serde_json::from_slice(&out.stdout).with_context(|| format!("point {index}: the command's JSON"))?,
            _ => serde_json::from_str(&std::fs::read_to_string(&stats).with_context(|| format!("reading {}", stats.display()))?)?,
        };
        if report == Report::Kernels {
            // Each counter summed over the kernels, derived rates, and the components'
            // statistics under `components.`.
            metrics = amdgpu::host::vm::metrics::kernel_columns(&json);
            if let Some(components) = json.get("components") {
                amdgpu::host::vm::metrics::flatten("components", components, &mut metrics);
            }
        } else {
            amdgpu::host::vm::metrics::flatten("", &json, &mut metrics);
        }
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let reason = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
    Ok(Outcome { status: out.status.code(), metrics, reason })
}

/// Runs `dojo sweep`.
pub fn run(a: SweepArgs) -> anyhow::Result<ExitCode> {
    let (report, default_metric) = Report::of(&a.command)?;
    let points = grid(&a.set)?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let exe = std::env::current_exe().context("finding the dojo executable")?;
    let jobs = a.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).clamp(1, points.len());
    let results: Vec<Mutex<Option<anyhow::Result<Outcome>>>> = points.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(point) = points.get(i) else { break };
                let r = run_point(&exe, &a.command, report, point, &a.out, i);
                *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            });
        }
    });
    let outcomes: Vec<Outcome> = results
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()).unwrap_or_else(|| Err(anyhow::anyhow!("not run"))))
        .collect::<anyhow::Result<_>>()?;

    let keys: Vec<&str> = points.first().map(|p| p.iter().map(|(k, _)| k.as_str()).collect()).unwrap_or_default();
    let columns: Vec<String> = {
        let mut all: Vec<String> = outcomes.iter().flat_map(|o| o.metrics.keys().cloned()).collect();
        all.sort();
        all.dedup();
        all
    };
    let mut csv = String::new();
    let header: Vec<String> = keys.iter().map(|k| csv_field(k)).chain(["status".into()]).chain(columns.iter().map(|c| csv_field(c))).collect();
    csv.push_str(&header.join(","));
    csv.push('\n');
    let mut rows = Vec::new();
    for (point, o) in points.iter().zip(&outcomes) {
        let mut fields: Vec<String> = point.iter().map(|(_, v)| csv_field(v)).collect();
        fields.push(o.status.map_or("signal".into(), |c| c.to_string()));
        fields.extend(columns.iter().map(|c| o.metrics.get(c).map_or(String::new(), |x| x.to_string())));
        csv.push_str(&fields.join(","));
        csv.push('\n');
        rows.push(serde_json::json!({
            "point": point.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect::<serde_json::Map<_, _>>(),
            "status": o.status,
            "metrics": o.metrics,
        }));
    }
    let csv_path = a.out.join("results.csv");
    std::fs::write(&csv_path, csv).with_context(|| format!("writing {}", csv_path.display()))?;
    let json_path = a.out.join("results.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(&rows)?).with_context(|| format!("writing {}", json_path.display()))?;

    let failed = outcomes.iter().filter(|o| o.status != Some(0)).count();
    for (i, (point, o)) in points.iter().zip(&outcomes).enumerate() {
        if o.status != Some(0) {
            let at: Vec<String> = point.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let status = o.status.map_or("a signal".to_string(), |c| format!("status {c}"));
            eprintln!("dojo sweep: point {i} ({}) failed with {status}: {}", at.join(" "), o.reason);
        }
    }
    outln!("{} points ({failed} failed), {} metrics: {}", points.len(), columns.len(), csv_path.display())?;
    let wanted = a.plot.as_deref().unwrap_or(default_metric);
    let plot_path = a.out.join("plot.svg");
    match choose_metric(wanted, &columns) {
        Choice::Column(metric) => {
            if plot(&plot_path, &metric, &points, &outcomes)? {
                outln!("plot of {metric}: {}", plot_path.display())?;
            }
        }
        Choice::Sum(parts) => {
            // The metric of every instance (`l2.misses` of each XCD's L2): their sum.
            let name = format!("{wanted} (sum of {})", parts.len());
            let summed: Vec<Outcome> = outcomes
                .iter()
                .map(|o| {
                    let values: Vec<f64> = parts.iter().filter_map(|c| o.metrics.get(c).copied()).collect();
                    let metrics = if values.is_empty() { BTreeMap::new() } else { BTreeMap::from([(name.clone(), values.iter().sum())]) };
                    Outcome { status: o.status, metrics, reason: String::new() }
                })
                .collect();
            if plot(&plot_path, &name, &points, &summed)? {
                outln!("plot of {name}: {}", plot_path.display())?;
            }
        }
        Choice::None(close) if a.plot.is_some() => {
            let hint = if close.is_empty() { String::new() } else { format!("; close names: {}", close.join(", ")) };
            bail!("--plot {wanted}: no point reported such a metric{hint} (every column is in {})", csv_path.display());
        }
        Choice::None(_) => eprintln!("dojo sweep: no point reported `{wanted}`; no plot (columns are in {})", csv_path.display()),
    }
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Which column(s) a metric name means.
#[derive(Debug, PartialEq)]
enum Choice {
    /// One column: the name itself, the one column ending in it, or the sum over
    /// instances the statistics already hold (under `by_type`).
    Column(String),
    /// Several instances' columns ending in it, to be summed.
    Sum(Vec<String>),
    /// None; the columns whose names are close to it.
    None(Vec<String>),
}

/// The column(s) `wanted` names among `columns`: the whole name, else the columns whose
/// name ends in `.wanted` (one; the `by_type` sum if there is one; else all of them,
/// summed), else none with the close names (those sharing its last part, or containing it).
fn choose_metric(wanted: &str, columns: &[String]) -> Choice {
    if columns.iter().any(|c| c == wanted) {
        return Choice::Column(wanted.to_string());
    }
    let suffix = format!(".{wanted}");
    let ending: Vec<&String> = columns.iter().filter(|c| c.ends_with(&suffix)).collect();
    match ending.as_slice() {
        [] => {}
        [one] => return Choice::Column((*one).clone()),
        many => {
            if let Some(sum) = many.iter().find(|c| c.contains(".by_type.")) {
                return Choice::Column((*sum).clone());
            }
            return Choice::Sum(many.iter().map(|c| (*c).clone()).collect());
        }
    }
    // Close: the same last part, a part of the name, or within two edits of it.
    let last = wanted.rsplit('.').next().unwrap_or(wanted);
    let close: Vec<String> = columns
        .iter()
        .filter(|c| {
            let tail = c.rsplit('.').next().unwrap_or(c);
            c.contains(wanted) || tail == last || strsim::levenshtein(tail, last) <= 2 || strsim::levenshtein(c, wanted) <= 2
        })
        .take(8)
        .cloned()
        .collect();
    Choice::None(close)
}

/// Plots `metric` against the first key's values, one line per combination of the
/// other keys; false when no point has the metric.
fn plot(path: &Path, metric: &str, points: &[Point], outcomes: &[Outcome]) -> anyhow::Result<bool> {
    use plotters::prelude::*;
    let values: Vec<Option<f64>> = outcomes.iter().map(|o| o.metrics.get(metric).copied()).collect();
    let Some(max) = values.iter().flatten().copied().reduce(f64::max) else { return Ok(false) };
    let min = values.iter().flatten().copied().fold(f64::INFINITY, f64::min).min(0.0);
    let first_key_values: Vec<String> = {
        let mut v: Vec<String> = points.iter().filter_map(|p| p.first().map(|(_, v)| v.clone())).collect();
        v.dedup();
        let mut seen = Vec::new();
        for x in v {
            if !seen.contains(&x) {
                seen.push(x);
            }
        }
        seen
    };
    let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for (p, v) in points.iter().zip(&values) {
        let Some(v) = v else { continue };
        let x = p.first().and_then(|(_, x)| first_key_values.iter().position(|f| f == x)).unwrap_or(0) as f64;
        let rest: Vec<String> = p.iter().skip(1).map(|(k, v)| format!("{k}={v}")).collect();
        series.entry(rest.join(" ")).or_default().push((x, *v));
    }
    let err = |e: &dyn std::fmt::Display| anyhow::anyhow!("drawing {}: {e}", path.display());
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let x_name = points.first().and_then(|p| p.first()).map_or("point", |(k, _)| k.as_str());
    let top = if max > min { max + (max - min) * 0.05 } else { max + 1.0 };
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{metric} by {x_name}"), ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(-0.5f64..(first_key_values.len() as f64 - 0.5), min..top)
        .map_err(|e| err(&e))?;
    let labels = first_key_values.clone();
    chart
        .configure_mesh()
        .x_desc(x_name)
        .y_desc(match amdgpu::host::vm::metrics::unit_of(metric) {
            Some(unit) => format!("{metric} ({unit})"),
            None => metric.to_string(),
        })
        .x_labels(labels.len().max(2))
        .x_label_formatter(&|x| labels.get(x.round().max(0.0) as usize).filter(|_| (x - x.round()).abs() < 1e-6).cloned().unwrap_or_default())
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(if name.is_empty() { metric.to_string() } else { name.clone() })
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart.draw_series(pts.iter().map(|&(x, y)| Circle::new((x, y), 4, color.filled()))).map_err(|e| err(&e))?;
    }
    chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw().map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_metric_is_a_column_a_by_type_sum_a_sum_of_instances_or_close_names() {
        let cols: Vec<String> = [
            "cycles",
            "components.components.gpu.xcd[0].l2.misses",
            "components.components.gpu.xcd[1].l2.misses",
            "components.by_type.amdgpu.l2.misses",
            "components.components.gpu.hbm.reads",
            "components.components.gpu.hbm.writes",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(choose_metric("cycles", &cols), Choice::Column("cycles".into()));
        assert_eq!(choose_metric("l2.misses", &cols), Choice::Column("components.by_type.amdgpu.l2.misses".into()));
        let without_sum: Vec<String> = cols.iter().filter(|c| !c.contains("by_type")).cloned().collect();
        assert!(matches!(choose_metric("l2.misses", &without_sum), Choice::Sum(ref v) if v.len() == 2));
        assert_eq!(choose_metric("hbm.reads", &cols), Choice::Column("components.components.gpu.hbm.reads".into()));
        let Choice::None(close) = choose_metric("hbm.raeds", &cols) else { panic!("a typo is no metric") };
        assert!(close.iter().any(|c| c.ends_with("hbm.reads")), "{close:?}");
    }

    #[test]
    fn the_grid_is_the_cartesian_product_in_order() {
        let g = grid(&["l2.size=1MiB,2MiB".into(), "l2.policy=lru,srrip,ideal".into()]).unwrap();
        assert_eq!(g.len(), 6);
        assert_eq!(g[0], vec![("l2.size".into(), "1MiB".into()), ("l2.policy".into(), "lru".into())]);
        assert_eq!(g[5], vec![("l2.size".into(), "2MiB".into()), ("l2.policy".into(), "ideal".into())]);
        assert!(grid(&["nodot=1".into()]).is_err());
        assert!(grid(&["l2.size=".into()]).is_err());
    }
}
