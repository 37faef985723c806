//! Every corpus kernel, built with the real toolchain for every target its sidecar lists,
//! runs on the functional executor and its output buffers match the CPU reference.
//! The gfx942 run also writes the executed-opcode coverage report to
//! `target/exec-coverage.txt`.

mod support;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use amdgpu_isa::code_object::{CodeObject, KernelMetadata};
use amdgpu_isa::exec::{run_kernel, DispatchStats, Memory};
use support::build::{build_or_fail, read_or_fail, BuildRequest};
use support::corpus::{load_all, make_args, ArgValue, Buffer, Sidecar};
use support::reference::expected_outputs;

/// Device address of the first argument buffer; buffers are 16 MiB apart.
const BUFFER_BASE: u64 = 0x1_0000_0000;
const BUFFER_STRIDE: u64 = 0x100_0000;

fn buffer_bytes(buffer: &Buffer) -> Vec<u8> {
    match buffer {
        Buffer::U32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Buffer::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Buffer::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Buffer::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

fn read_buffer(mem: &Memory, addr: u64, like: &Buffer) -> Buffer {
    let n = like.len();
    let word = |i: usize| mem.read_u32(addr + 4 * i as u64).expect("output buffer is mapped");
    let dword = |i: usize| mem.read_u64(addr + 8 * i as u64).expect("output buffer is mapped");
    match like {
        Buffer::U32(_) => Buffer::U32((0..n).map(word).collect()),
        Buffer::I32(_) => Buffer::I32((0..n).map(|i| word(i) as i32).collect()),
        Buffer::F32(_) => Buffer::F32((0..n).map(|i| f32::from_bits(word(i))).collect()),
        Buffer::F64(_) => Buffer::F64((0..n).map(|i| f64::from_bits(dword(i))).collect()),
    }
}

/// First mismatch between `got` and `want`, if any.
fn mismatch(got: &Buffer, want: &Buffer, tolerance: f64) -> Option<String> {
    let pairs: Vec<(f64, f64, bool)> = match (got, want) {
        (Buffer::U32(g), Buffer::U32(w)) => g.iter().zip(w).map(|(a, b)| (*a as f64, *b as f64, true)).collect(),
        (Buffer::I32(g), Buffer::I32(w)) => g.iter().zip(w).map(|(a, b)| (*a as f64, *b as f64, true)).collect(),
        (Buffer::F32(g), Buffer::F32(w)) => g.iter().zip(w).map(|(a, b)| (*a as f64, *b as f64, false)).collect(),
        (Buffer::F64(g), Buffer::F64(w)) => g.iter().zip(w).map(|(a, b)| (*a, *b, false)).collect(),
        _ => return Some(format!("element types differ: {} vs {}", got.elem(), want.elem())),
    };
    for (i, (g, w, exact)) in pairs.into_iter().enumerate() {
        let ok = if exact { g == w } else { (g - w).abs() <= tolerance || (g.is_nan() && w.is_nan()) || g == w };
        if !ok {
            return Some(format!("element {i}: got {g}, expected {w}"));
        }
    }
    None
}

/// Kernarg bytes for the explicit arguments at their metadata offsets; buffers get
/// addresses in `mem` and are filled with their initial contents.
fn kernargs(metadata: &KernelMetadata, values: &[ArgValue], mem: &mut Memory) -> (Vec<u8>, Vec<u64>) {
    let explicit: Vec<_> = metadata.args.iter().filter(|a| !a.value_kind.is_hidden()).collect();
    assert_eq!(explicit.len(), values.len(), "sidecar vs metadata argument count");
    let end = explicit.iter().map(|a| (a.offset + a.size) as usize).max().unwrap_or(0);
    let mut bytes = vec![0u8; end];
    let mut addrs = Vec::new();
    for (i, (arg, value)) in explicit.iter().zip(values).enumerate() {
        let raw: Vec<u8> = match value {
            ArgValue::U32(v) => v.to_le_bytes().to_vec(),
            ArgValue::I32(v) => v.to_le_bytes().to_vec(),
            ArgValue::F32(v) => v.to_le_bytes().to_vec(),
            ArgValue::F64(v) => v.to_le_bytes().to_vec(),
            ArgValue::Buffer(b) => {
                let addr = BUFFER_BASE + i as u64 * BUFFER_STRIDE;
                let data = buffer_bytes(b);
                mem.map(addr, data.len().max(4) as u64).expect("map buffer");
                mem.write(addr, &data).expect("fill buffer");
                addrs.push(addr);
                addr.to_le_bytes().to_vec()
            }
        };
        let at = arg.offset as usize;
        bytes[at..at + raw.len()].copy_from_slice(&raw);
        if !matches!(value, ArgValue::Buffer(_)) {
            addrs.push(0);
        }
    }
    (bytes, addrs)
}

/// Runs one sidecar on one processor; `Err` describes the failure.
fn run_one(sidecar: &Sidecar, processor: &str, version: Option<u8>) -> Result<DispatchStats, String> {
    let mut request = BuildRequest::new(sidecar.source_path(), processor);
    if let Some(v) = version {
        request = request.with_version(v);
    }
    let path = build_or_fail(&request);
    let code = CodeObject::parse(&read_or_fail(&path)).map_err(|e| format!("parse: {e}"))?;
    let kernel = code.kernel(&sidecar.kernel).ok_or("kernel missing")?;
    let metadata = kernel.metadata.as_ref().ok_or("no metadata")?;
    let values = make_args(sidecar)?;
    let mut mem = Memory::new();
    let (bytes, addrs) = kernargs(metadata, &values, &mut mem);
    let launch = sidecar.launch;
    let stats = run_kernel(&code, &sidecar.kernel, launch.grid, launch.block, &bytes, &mut mem).map_err(|e| format!("fault: {e}"))?;
    let expected = expected_outputs(sidecar, &values, processor)?;
    for (index, want) in expected {
        let got = read_buffer(&mem, addrs[index], &want);
        if let Some(m) = mismatch(&got, &want, sidecar.tolerance) {
            return Err(format!("output {}: {m}", sidecar.args[index].name));
        }
    }
    if stats.wave_instructions == 0 {
        return Err("no instructions executed".into());
    }
    Ok(stats)
}

/// Runs every sidecar listing `processor`; returns the merged per-opcode counts and
/// asserts that every kernel matched its reference.
fn run_target(processor: &str, version: Option<u8>) -> BTreeMap<String, u64> {
    let mut failures = Vec::new();
    let mut passed = Vec::new();
    let mut coverage = BTreeMap::new();
    for sidecar in load_all() {
        if !sidecar.targets.iter().any(|t| t == processor) {
            continue;
        }
        match run_one(&sidecar, processor, version) {
            Ok(stats) => {
                passed.push(sidecar.file.clone());
                for (op, n) in stats.per_opcode {
                    *coverage.entry(op.mnemonic().to_string()).or_insert(0) += n;
                }
                for (class, n) in stats.per_class {
                    *coverage.entry(format!("class:{class}")).or_insert(0) += n;
                }
            }
            Err(e) => failures.push(format!("{} on {processor}: {e}", sidecar.file)),
        }
    }
    eprintln!("{processor} (v{version:?}): passed {passed:?}");
    assert!(failures.is_empty(), "{} kernels failed on {processor}:\n{}", failures.len(), failures.join("\n"));
    coverage
}

#[test]
fn exec_corpus_gfx90a() {
    run_target("gfx90a", None);
}

#[test]
fn exec_corpus_gfx942_and_coverage_report() {
    let coverage = run_target("gfx942", None);
    let mut text = String::from("# wave-instructions executed per opcode by the gfx942 corpus run\n");
    for (op, n) in &coverage {
        writeln!(text, "{op} {n}").expect("writing to a String");
    }
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("..").join("exec-coverage.txt");
    std::fs::write(&path, text).expect("write coverage report");
    let opcodes = coverage.keys().filter(|k| !k.starts_with("class:")).count();
    assert!(opcodes >= 40, "only {opcodes} distinct opcodes executed");
    for class in ["SOP1", "SOP2", "SOPP", "SMEM", "VOP1", "VOP2", "VOP3", "VOPC", "VOP3P", "DS", "GLOBAL", "VOP1_DPP"] {
        assert!(coverage.contains_key(&format!("class:{class}")), "no {class} instruction executed");
    }
    for needed in ["s_endpgm", "s_barrier", "ds_bpermute_b32", "global_atomic_add", "v_mfma_f32_16x16x4_f32", "v_mov_b32_dpp"] {
        let hit = coverage.contains_key(needed);
        assert!(hit, "{needed} never executed");
    }
}

#[test]
fn exec_corpus_gfx950() {
    run_target("gfx950", None);
}

#[test]
fn exec_corpus_code_object_v4_gfx942() {
    run_target("gfx942", Some(4));
}

/// asm_vector_add with its output pointer moved past the end of the mapped output buffer:
/// the first store lands on an unmapped page and the dispatch stops with a memory fault
/// naming that address.
#[test]
fn out_of_bounds_global_store_in_a_kernel_is_a_memory_fault() {
    let sidecar = load_all().into_iter().find(|s| s.kernel == "asm_vector_add").expect("asm_vector_add sidecar");
    for processor in ["gfx90a", "gfx942", "gfx950"] {
        let path = build_or_fail(&BuildRequest::new(sidecar.source_path(), processor));
        let code = CodeObject::parse(&read_or_fail(&path)).expect("parses");
        let metadata = code.kernel("asm_vector_add").and_then(|k| k.metadata.clone()).expect("metadata");
        let values = make_args(&sidecar).expect("args");
        let mut mem = Memory::new();
        let (mut bytes, _) = kernargs(&metadata, &values, &mut mem);
        let out_arg = metadata.args.iter().filter(|a| !a.value_kind.is_hidden()).nth(2).expect("third argument");
        let bad = BUFFER_BASE + 8 * BUFFER_STRIDE;
        let at = out_arg.offset as usize;
        bytes[at..at + 8].copy_from_slice(&bad.to_le_bytes());
        let launch = sidecar.launch;
        let fault = run_kernel(&code, "asm_vector_add", launch.grid, launch.block, &bytes, &mut mem)
            .expect_err("the store to an unmapped page must fault");
        match fault {
            amdgpu_isa::exec::ExecFault::Memory { addr, .. } => assert_eq!(addr, bad, "{processor}: faulting address"),
            other => panic!("{processor}: expected a memory fault, got {other}"),
        }
    }
}

/// A grid that is not a multiple of the block: the last work-group is partial, its last
/// wave runs with a partial EXEC, and collatz (which reads its work-group size from the
/// hidden arguments, or the dispatch packet under code object v4) still matches the
/// reference for every work-item of the grid.
#[test]
fn partial_work_groups_run_with_partial_exec() {
    let mut sidecar = load_all().into_iter().find(|s| s.kernel == "collatz").expect("collatz sidecar");
    sidecar.launch.grid = [500, 1, 1];
    sidecar.launch.block = [128, 1, 1];
    for (processor, version) in [("gfx90a", None), ("gfx942", None), ("gfx942", Some(4)), ("gfx950", None)] {
        let stats = run_one(&sidecar, processor, version).unwrap_or_else(|e| panic!("{processor} v{version:?}: {e}"));
        assert_eq!(stats.workgroups, 4, "{processor}: ceil(500 / 128) work-groups");
        assert_eq!(stats.waves, 8, "{processor}: two waves per group, the last one partial");
    }
}
