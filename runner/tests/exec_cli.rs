//! `dojo cc` and `dojo exec` as a user runs them: real clang, real processes, the
//! embedded default topologies.

use std::path::PathBuf;
use std::process::{Command, Output};

fn dojo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dojo")).args(args).output().expect("dojo runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dojo-exec-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn repo(path: &str) -> String {
    format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_example_program_runs_on_the_default_mi300x_and_reports_statistics() {
    let dir = scratch();
    let image = dir.join("hello.co");
    let image = image.to_str().unwrap();
    let built = dojo(&["cc", "--mcpu", "gfx942", "-O2", "-o", image, &repo("examples/gpu/hello.c")]);
    assert!(built.status.success(), "{}", text(&built.stderr));
    let stats = dir.join("stats.json");
    let run = dojo(&["exec", "--threads", "64", "--blocks", "2", "--stats", stats.to_str().unwrap(), "--stats-interval", "200ns", image, "world"]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let out = text(&run.stdout);
    for line in ["hello world from work-item 0 of work-group 0", "hello world from work-item 32 of work-group 1"] {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }
    assert!(out.contains("holding \"world\""), "{out}");
    // The statistics: tables on stderr, JSON in the file, one entry per finished kernel
    // and every component's statistics (per level).
    assert!(text(&run.stderr).contains("kernel _start"), "{}", text(&run.stderr));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    let l2 = &json["components"]["by_type"]["amdgpu.l2"];
    assert!(l2["hits"].as_u64().unwrap() + l2["misses"].as_u64().unwrap() > 0, "L2 statistics: {l2}");
    assert!(json["components"]["components"]["gpu.hbm"]["bytes_read"].as_u64().is_some(), "HBM statistics");
    let kernels = json["kernels"].as_array().unwrap();
    let start = kernels.iter().find(|k| k["kernel"] == "_start").expect("_start statistics");
    assert_eq!(start["grid"], serde_json::json!([128, 1, 1]));
    assert!(start["counters"]["classes"].as_array().unwrap().iter().any(|n| n.as_u64().unwrap() > 0));
    assert!(start["cycles"].as_u64().unwrap() > 0);
    // The time series: cumulative values and per-interval ones, the same columns; the
    // intervals of a counter add up to its last cumulative value.
    let read_csv = |ext: &str| {
        let text = std::fs::read_to_string(stats.with_extension(ext)).unwrap();
        let mut lines = text.lines();
        let header: Vec<String> = lines.next().unwrap().split(',').map(str::to_string).collect();
        let rows: Vec<Vec<String>> = lines.map(|l| l.split(',').map(str::to_string).collect()).collect();
        (header, rows)
    };
    let ((header, cumulative), (interval_header, interval)) = (read_csv("series.csv"), read_csv("interval.csv"));
    assert_eq!(header, interval_header);
    assert!(cumulative.len() >= 2 && cumulative.len() == interval.len(), "{} samples", cumulative.len());
    let col = header.iter().position(|c| c == "amdgpu.l2.misses").expect("an L2 misses column");
    let value = |row: &Vec<String>| row[col].parse::<f64>().unwrap_or(0.0);
    let total: f64 = interval.iter().map(value).sum();
    assert_eq!(total, value(cumulative.last().unwrap()), "intervals add up to the cumulative value");
    // Observed on two workers (--profile, --trace): the same output, a profile on stderr
    // and a Chrome trace with a track per worker and events named by component path.
    let trace = dir.join("trace.json");
    let observed = dojo(&["exec", "--workers", "2", "--profile", "--trace", trace.to_str().unwrap(), "--threads", "64", "--blocks", "2", image, "world"]);
    assert_eq!(observed.status.code(), Some(0), "{}", text(&observed.stderr));
    assert_eq!(text(&observed.stdout), out, "observing changed the program's output");
    let err = text(&observed.stderr);
    for needle in ["profile:", "worker 0:", "worker 1:", "amdgpu.cu", "predicted speedup on 2 workers"] {
        assert!(err.contains(needle), "missing {needle:?} in the profile:\n{err}");
    }
    let trace: serde_json::Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let tracks = events.iter().filter(|e| e["name"] == "thread_name").count();
    assert_eq!(tracks, 2, "one track per worker");
    assert!(events.iter().any(|e| e["cat"] == "window"), "windows in the trace");
    assert!(events.iter().any(|e| e["cat"] == "event" && e["name"].as_str().is_some_and(|n| n.starts_with("gpu."))), "GPU component events in the trace");
    // --ceiling: the same output, then the two copies' figure (copies that fail would
    // fail the command); one worker has nothing to compare.
    let ceiling = dojo(&["exec", "--workers", "2", "--ceiling", "--threads", "64", "--blocks", "2", image, "world"]);
    assert_eq!(ceiling.status.code(), Some(0), "{}", text(&ceiling.stderr));
    let shown = text(&ceiling.stdout);
    assert!(shown.starts_with(&out), "{shown}");
    assert!(shown.contains("ceiling:") && shown.contains("2 one-worker copies at once") && shown.contains("of ceiling:"), "{shown}");
    let alone = dojo(&["exec", "--ceiling", image]);
    assert_ne!(alone.status.code(), Some(0));
    assert!(text(&alone.stderr).contains("--workers N (N at least 2)"), "{}", text(&alone.stderr));
}

#[test]
fn exit_status_faults_and_bad_input_are_reported() {
    let dir = scratch();
    let src = dir.join("exit.c");
    std::fs::write(&src, "#include <stdlib.h>\nint main(int argc, char **argv) { if (argc > 1) exit(9); return 4; }\n").unwrap();
    let image = dir.join("exit.co");
    let (src, image) = (src.to_str().unwrap(), image.to_str().unwrap());
    assert!(dojo(&["cc", "--mcpu", "gfx90a", "-o", image, src]).status.success());
    assert_eq!(dojo(&["exec", image]).status.code(), Some(4), "main's return value");
    assert_eq!(dojo(&["exec", image, "x"]).status.code(), Some(9), "exit()'s status");

    // A GPU program for gfx90a on a gfx942 topology, garbage as an image, a bad shape.
    let wrong = dojo(&["exec", "--topology", &repo("topologies/test-gfx942.toml"), image]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(text(&wrong.stderr).contains("gfx90a"), "{}", text(&wrong.stderr));
    let junk = dir.join("junk.co");
    std::fs::write(&junk, b"not an ELF file").unwrap();
    let bad = dojo(&["exec", junk.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("junk.co"), "{}", text(&bad.stderr));
    let shape = dojo(&["exec", "--threads", "0", image]);
    assert_eq!(shape.status.code(), Some(2));
    assert!(text(&shape.stderr).contains("--threads"), "{}", text(&shape.stderr));

    // A wild store: the fault names kernel, place and address; the status is non-zero.
    let wild = dir.join("wild.c");
    std::fs::write(&wild, "int main(void) { *(volatile int *)0x40 = 1; return 0; }\n").unwrap();
    let wild_co = dir.join("wild.co");
    assert!(dojo(&["cc", "--mcpu", "gfx942", "-o", wild_co.to_str().unwrap(), wild.to_str().unwrap()]).status.success());
    let fault = dojo(&["exec", "--topology", &repo("topologies/test-gfx942.toml"), wild_co.to_str().unwrap()]);
    assert_eq!(fault.status.code(), Some(1));
    let err = text(&fault.stderr);
    assert!(err.contains("GPU fault in kernel _start") && err.contains("0x40"), "{err}");

    // A GPU topology with an impossible compute unit names where the value is written
    // (file:line:col of the defaults entry every compute unit takes), the parameter, its
    // type and the allowed range.
    let bad_topology = dir.join("bad.toml");
    let text_in = std::fs::read_to_string(repo("topologies/test-gfx942.toml")).unwrap();
    std::fs::write(&bad_topology, text_in.replace("[defaults.\"amdgpu.cu\"]\n", "[defaults.\"amdgpu.cu\"]\nwave_slots = 100\n")).unwrap();
    let bad = dojo(&["exec", "--topology", bad_topology.to_str().unwrap(), wild_co.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2));
    let err = text(&bad.stderr);
    let at = format!("{}:", bad_topology.display());
    assert!(err.contains(&at) && err.contains("`wave_slots` of `amdgpu.cu`") && err.contains("100") && err.contains("1 to 64"), "{err}");

    // A compile error is clang's, passed through.
    let broken = dir.join("broken.c");
    std::fs::write(&broken, "int main(void) { return undefined_name; }\n").unwrap();
    let cc = dojo(&["cc", "--mcpu", "gfx942", "-o", dir.join("b.co").to_str().unwrap(), broken.to_str().unwrap()]);
    assert_eq!(cc.status.code(), Some(2));
    assert!(text(&cc.stderr).contains("undefined_name"), "{}", text(&cc.stderr));
}

/// The records of an RFC 4180 CSV text (quoted fields may hold commas, doubled quotes and
/// line breaks).
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut records, mut record, mut field) = (Vec::new(), Vec::new(), String::new());
    let (mut quoted, mut chars) = (false, text.chars().peekable());
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') => assert_eq!(chars.next(), Some('\n'), "a bare CR in {text:?}"),
            (false, '\n') => panic!("a bare LF ends a line in {text:?}"),
            (false, c) => field.push(c),
        }
        if !quoted && c == '\r' {
            record.push(std::mem::take(&mut field));
            records.push(std::mem::take(&mut record));
        }
    }
    assert!(field.is_empty() && record.is_empty(), "the last line has no CRLF: {text:?}");
    records
}

#[test]
fn stats_format_rocprof_writes_one_csv_row_per_dispatch_with_the_json_statistics_values() {
    let dir = scratch();
    let image = dir.join("rocprof.co");
    let image = image.to_str().unwrap();
    let built = dojo(&["cc", "--mcpu", "gfx90a", "-O2", "-o", image, &repo("examples/gpu/hello.c")]);
    assert!(built.status.success(), "{}", text(&built.stderr));
    let json_path = dir.join("rocprof-run.json");
    let csv_path = dir.join("rocprof-run.csv");
    let run = |format: &str, path: &std::path::Path| {
        let run = dojo(&["exec", "--threads", "64", "--blocks", "4", "--stats", path.to_str().unwrap(), "--stats-format", format, image, "world"]);
        assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    };
    run("json", &json_path);
    run("rocprof", &csv_path);
    let json = amdgpu::gpu::stats::StatsFile::read(&json_path).unwrap_or_else(|e| panic!("{e}"));
    let csv = parse_csv(&String::from_utf8(std::fs::read(&csv_path).unwrap()).unwrap());
    let header = [
        "Index", "KernelName", "grd", "wgr", "BeginNs", "EndNs", "SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_SALU", "SQ_INSTS_SMEM", "SQ_INSTS_VMEM_RD", "SQ_INSTS_VMEM_WR", "SQ_INSTS_LDS", "SQ_INSTS_BRANCH", "TCC_HIT", "TCC_MISS", "FETCH_SIZE",
        "WRITE_SIZE",
    ];
    assert_eq!(csv[0], header, "the header");
    // One row per dispatch the JSON file has, in its order: the loader's `_begin`, then
    // the user's `_start` (`_end` is there when it finishes before the run stops).
    let rows = &csv[1..];
    let names: Vec<&str> = rows.iter().map(|r| r[1].as_str()).collect();
    let json_names: Vec<&str> = json.kernels.iter().map(|k| k.kernel.as_str()).collect();
    assert_eq!(names, json_names, "one row per dispatch");
    assert_eq!(names[..2], ["_begin", "_start"]);
    let column = |row: &[String], name: &str| -> u64 {
        let i = header.iter().position(|h| *h == name).unwrap();
        row[i].parse().unwrap_or_else(|_| panic!("{name} = {:?} is not a count", row[i]))
    };
    let classes = |k: &amdgpu::gpu::stats::KernelStats, names: &[&str]| -> u64 {
        names.iter().map(|n| k.counters.classes[amdgpu::gpu::stats::CLASSES.iter().position(|c| c == n).unwrap()]).sum()
    };
    for (i, (row, k)) in rows.iter().zip(&json.kernels).enumerate() {
        assert_eq!(row.len(), header.len(), "row {i}: {row:?}");
        assert_eq!(column(row, "Index"), i as u64);
        assert_eq!(row[1], k.kernel);
        assert_eq!(column(row, "grd"), k.grid.iter().map(|&n| u64::from(n)).product::<u64>());
        assert_eq!(column(row, "wgr"), k.block.iter().map(|&n| u64::from(n)).product::<u64>());
        let (begin, end) = (column(row, "BeginNs"), column(row, "EndNs"));
        assert!(begin < end, "row {i}: BeginNs {begin} EndNs {end}");
        assert_eq!((begin, end), (k.start_ps / 1000, k.end_ps / 1000), "row {i}: ns from the JSON's ps");
        let waves = column(row, "SQ_WAVES");
        assert!(waves > 0, "row {i}: no waves");
        assert_eq!(waves, k.counters.waves);
        assert!(column(row, "SQ_INSTS_SALU") > 0 && column(row, "SQ_INSTS_SMEM") > 0, "row {i}: scalar instructions {row:?}");
        assert_eq!(column(row, "SQ_INSTS_VALU"), classes(k, &["valu", "mfma"]));
        assert_eq!(column(row, "SQ_INSTS_SALU"), classes(k, &["salu"]));
        assert_eq!(column(row, "SQ_INSTS_SMEM"), classes(k, &["smem"]));
        assert_eq!(column(row, "SQ_INSTS_VMEM_RD"), classes(k, &["vmem_load"]));
        assert_eq!(column(row, "SQ_INSTS_VMEM_WR"), classes(k, &["vmem_store"]));
        assert_eq!(column(row, "SQ_INSTS_LDS"), classes(k, &["lds"]));
        assert_eq!(column(row, "SQ_INSTS_BRANCH"), classes(k, &["branch"]));
        assert_eq!((column(row, "TCC_HIT"), column(row, "TCC_MISS")), (k.l2.hits, k.l2.misses));
        let kb = |name: &str| -> f64 { row[header.iter().position(|h| *h == name).unwrap()].parse().unwrap() };
        assert_eq!(kb("FETCH_SIZE"), k.hbm_read_bytes as f64 / 1024.0);
        assert_eq!(kb("WRITE_SIZE"), k.hbm_write_bytes as f64 / 1024.0);
    }
    // The user's kernel: 4 groups of one wave each, and vector work.
    assert_eq!(column(&rows[1], "SQ_WAVES"), 4);
    assert!(column(&rows[1], "SQ_INSTS_VALU") > 0 && column(&rows[1], "TCC_HIT") + column(&rows[1], "TCC_MISS") > 0, "{:?}", rows[1]);

    // An unknown format names the choices; a format without --stats is refused.
    let unknown = dojo(&["exec", "--stats", csv_path.to_str().unwrap(), "--stats-format", "nvprof", image]);
    assert_eq!(unknown.status.code(), Some(2));
    let err = text(&unknown.stderr);
    assert!(err.contains("nvprof") && err.contains("json") && err.contains("rocprof"), "{err}");
    let alone = dojo(&["exec", "--stats-format", "rocprof", image]);
    assert_eq!(alone.status.code(), Some(2));
    assert!(text(&alone.stderr).contains("--stats"), "{}", text(&alone.stderr));
}

/// On a terminal `dojo exec` shows a live progress line (simulated time, events/s) on
/// standard error; through a pipe it shows none. The terminal is `script`'s
/// pseudo-terminal (util-linux); the line's first update draws at once.
#[test]
fn a_terminal_shows_a_progress_line_and_a_pipe_none() {
    let dir = scratch().join("progress");
    std::fs::create_dir_all(&dir).unwrap();
    let image = dir.join("valu.co");
    let built = dojo(&["cc", "--mcpu", "gfx942", "-o", image.to_str().unwrap(), "-X=-DITERATIONS=2000", &repo("benches/gpu/valu.c")]);
    assert!(built.status.success(), "{}", text(&built.stderr));
    let args = ["exec", "--blocks", "128", "--threads", "256", image.to_str().unwrap()];
    let piped = dojo(&args);
    assert!(piped.status.success(), "{}", text(&piped.stderr));
    assert!(!text(&piped.stderr).contains("events/s"), "a progress line through a pipe: {}", text(&piped.stderr));
    let command = std::iter::once(env!("CARGO_BIN_EXE_dojo")).chain(args).collect::<Vec<_>>().join(" ");
    let tty = Command::new("script").args(["-qec", &command, "/dev/null"]).output().expect("script (util-linux)");
    assert!(tty.status.success(), "{}", text(&tty.stdout));
    let shown = text(&tty.stdout);
    assert!(shown.contains("events/s") && shown.contains("sim "), "no progress line on a terminal: {shown:?}");
    assert!(shown.contains("checksum"), "the program's output: {shown:?}");
}
