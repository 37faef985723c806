//! Every corpus kernel, built for every target it lists, parses; its kernel descriptor
//! agrees with the metadata note as printed by `llvm-readelf --notes`, with the `.amdhsa_*`
//! directives of assembly sources, and with its launch sidecar; and every sidecar's CPU
//! reference yields exactly the output buffers the sidecar declares.

mod support;

use amdgpu_isa::code_object::{ArgValueKind, CodeObject, Kernel, KernelMetadata, Target};
use support::asm_directives;
use support::build::{build_or_fail, read_or_fail, toolchain_for, BuildRequest, Language};
use support::corpus::{load_all, make_args, ArgValue, Sidecar};
use support::readelf::{notes_or_fail, ReadelfKernel};
use support::reference::{expected_outputs, quantize};

const VGPR_GRANULE: u32 = 8;
const SGPR_GRANULE: u32 = 16;

fn target_of(processor: &str) -> Target {
    match processor.split(':').next() {
        Some("gfx90a") => Target::Gfx90a,
        Some("gfx942") => Target::Gfx942,
        Some("gfx950") => Target::Gfx950,
        _ => panic!("corpus lists unknown processor {processor}"),
    }
}

/// Descriptor vs metadata: sizes equal, register counts consistent with the granules.
fn check_descriptor_against_metadata(what: &str, kernel: &Kernel, metadata: &KernelMetadata) {
    let kd = &kernel.descriptor;
    assert_eq!(kd.kernarg_size, metadata.kernarg_segment_size, "{what}: kernarg size");
    assert_eq!(kd.group_segment_fixed_size, metadata.group_segment_fixed_size, "{what}: group segment");
    assert_eq!(kd.private_segment_fixed_size, metadata.private_segment_fixed_size, "{what}: private segment");
    assert_eq!(kd.wavefront_size(), metadata.wavefront_size, "{what}: wavefront size");
    assert_eq!(kd.properties.uses_dynamic_stack, metadata.uses_dynamic_stack, "{what}: dynamic stack");

    // Unified VGPR file: AccVGPRs start at accum_offset (a multiple of 4). With AGPRs in
    // use, the metadata .vgpr_count counts the whole unified range (accum_offset +
    // agprs); without, only architected VGPRs, all below accum_offset.
    let accum_offset = kd.accum_offset();
    assert_eq!(accum_offset % 4, 0);
    if metadata.agpr_count > 0 {
        assert_eq!(metadata.vgpr_count, accum_offset + metadata.agpr_count, "{what}: unified VGPR count");
    } else {
        assert_eq!(accum_offset, metadata.vgpr_count.max(1).next_multiple_of(4), "{what}: accum_offset");
    }
    let needed = metadata.vgpr_count.max(1);
    let allocated = kd.vgpr_count();
    assert!(
        allocated >= needed && allocated < needed + VGPR_GRANULE,
        "{what}: descriptor allocates {allocated} VGPRs for {needed} used"
    );
    let sgprs = kd.sgpr_count();
    assert!(
        sgprs >= metadata.sgpr_count && sgprs < metadata.sgpr_count.max(1) + SGPR_GRANULE,
        "{what}: descriptor allocates {sgprs} SGPRs for {} used",
        metadata.sgpr_count
    );
    // USER_SGPR_COUNT covers every enabled user SGPR.
    assert!(
        u32::from(kd.rsrc2.user_sgpr_count) >= kd.implied_user_sgpr_count(),
        "{what}: USER_SGPR_COUNT {} < enabled {}",
        kd.rsrc2.user_sgpr_count,
        kd.implied_user_sgpr_count()
    );
    assert!(kd.properties.enable_sgpr_kernarg_segment_ptr || metadata.kernarg_segment_size == 0, "{what}: kernarg ptr");
}

/// Our MessagePack decoding vs llvm-readelf's rendering of the same note.
fn check_metadata_against_readelf(what: &str, metadata: &KernelMetadata, readelf: &ReadelfKernel) {
    assert_eq!(readelf.get(".name"), metadata.name, "{what}");
    assert_eq!(readelf.get(".symbol"), metadata.symbol, "{what}");
    let numbers = [
        (".sgpr_count", metadata.sgpr_count),
        (".vgpr_count", metadata.vgpr_count),
        (".kernarg_segment_size", metadata.kernarg_segment_size),
        (".kernarg_segment_align", metadata.kernarg_segment_align),
        (".group_segment_fixed_size", metadata.group_segment_fixed_size),
        (".private_segment_fixed_size", metadata.private_segment_fixed_size),
        (".wavefront_size", metadata.wavefront_size),
        (".max_flat_workgroup_size", metadata.max_flat_workgroup_size),
    ];
    for (key, ours) in numbers {
        assert_eq!(readelf.number(key), u64::from(ours), "{what}: {key}");
    }
    if readelf.fields.contains_key(".agpr_count") {
        assert_eq!(readelf.number(".agpr_count"), u64::from(metadata.agpr_count), "{what}: .agpr_count");
    }
    assert_eq!(readelf.args.len(), metadata.args.len(), "{what}: argument count");
    for (index, (theirs, ours)) in readelf.args.iter().zip(&metadata.args).enumerate() {
        assert_eq!(theirs.get(".offset").map(String::as_str), Some(ours.offset.to_string().as_str()), "{what} arg {index}");
        assert_eq!(theirs.get(".size").map(String::as_str), Some(ours.size.to_string().as_str()), "{what} arg {index}");
        assert_eq!(
            theirs.get(".value_kind").cloned(),
            Some(ours.value_kind.name().to_string()),
            "{what} arg {index} value kind"
        );
    }
}

/// The sidecar's arguments are exactly the explicit (non-hidden) kernel arguments.
fn check_sidecar_against_metadata(what: &str, sidecar: &Sidecar, args: &[ArgValue], metadata: &KernelMetadata) {
    let explicit: Vec<_> = metadata.args.iter().filter(|arg| !arg.value_kind.is_hidden()).collect();
    assert_eq!(explicit.len(), sidecar.args.len(), "{what}: sidecar argument count");
    for ((spec, value), arg) in sidecar.args.iter().zip(args).zip(explicit) {
        assert_eq!(value.kernarg_size(), arg.size, "{what}: size of {}", spec.name);
        let expected_kind =
            if matches!(value, ArgValue::Buffer(_)) { ArgValueKind::GlobalBuffer } else { ArgValueKind::ByValue };
        assert_eq!(arg.value_kind, expected_kind, "{what}: kind of {}", spec.name);
        if let Some(name) = &arg.name {
            assert_eq!(name, &spec.name, "{what}: argument name");
        }
    }
    let launch = sidecar.launch;
    if let Some(required) = metadata.reqd_workgroup_size {
        assert_eq!(required, launch.block, "{what}: block vs reqd_work_group_size");
    }
    let block: u32 = launch.block.iter().product();
    assert!(block <= metadata.max_flat_workgroup_size, "{what}: block {block} > max flat size");
    for dim in 0..3 {
        assert_eq!(launch.grid[dim] % launch.block[dim], 0, "{what}: grid not a multiple of block in dim {dim}");
    }
}

/// `.amdhsa_*` directive values vs the assembled descriptor.
fn check_asm_directives(what: &str, source: &str, kernel: &Kernel) {
    let blocks = asm_directives::parse(source);
    let block = blocks.iter().find(|block| block.name == kernel.name).expect("an .amdhsa_kernel block");
    let kd = &kernel.descriptor;
    assert_eq!(u64::from(kd.kernarg_size), block.value_or("kernarg_size", 0), "{what}");
    assert_eq!(u64::from(kd.group_segment_fixed_size), block.value_or("group_segment_fixed_size", 0), "{what}");
    assert_eq!(u64::from(kd.private_segment_fixed_size), block.value_or("private_segment_fixed_size", 0), "{what}");
    assert_eq!(u64::from(kd.accum_offset()), block.value_or("accum_offset", 4), "{what}");
    let props = &kd.properties;
    assert_eq!(u64::from(props.enable_sgpr_dispatch_ptr), block.value_or("user_sgpr_dispatch_ptr", 0), "{what}");
    assert_eq!(
        u64::from(props.enable_sgpr_kernarg_segment_ptr),
        block.value_or("user_sgpr_kernarg_segment_ptr", 0),
        "{what}"
    );
    assert_eq!(u64::from(kd.rsrc2.enable_sgpr_workgroup_id_x), block.value_or("system_sgpr_workgroup_id_x", 1), "{what}");
    assert_eq!(
        u64::from(kd.rsrc2.enable_vgpr_workitem_id.encoding()),
        block.value_or("system_vgpr_workitem_id", 0),
        "{what}"
    );
    assert_eq!(u64::from(kd.rsrc1.ieee_mode), block.value_or("ieee_mode", 1), "{what}: ieee mode");
    let denorm_32 = u64::from(kd.rsrc1.float_mode.denorm_32.encoding());
    assert_eq!(denorm_32, block.value_or("float_denorm_mode_32", 0), "{what}: denorm mode 32");
    // VGPRs: next_free_vgpr rounded up to the granule.
    let next_free_vgpr = block.value_or("next_free_vgpr", 0) as u32;
    assert_eq!(kd.vgpr_count(), next_free_vgpr.div_ceil(VGPR_GRANULE).max(1) * VGPR_GRANULE, "{what}: vgprs");
    // SGPRs: next_free_sgpr plus VCC/flat scratch/xnack reservations, in granules of 16.
    let next_free_sgpr = block.value_or("next_free_sgpr", 0) as u32;
    assert!(kd.sgpr_count() >= next_free_sgpr, "{what}: {} SGPRs < next_free_sgpr {next_free_sgpr}", kd.sgpr_count());
    assert_eq!(u32::from(kd.rsrc2.user_sgpr_count), kd.implied_user_sgpr_count(), "{what}: user SGPR count");
}

fn check_target(processor: &str, version: Option<u8>) {
    let mut checked = 0;
    for sidecar in load_all() {
        if !sidecar.targets.iter().any(|t| t == processor) {
            continue;
        }
        let what = format!("{} ({}) for {processor} (code object version {version:?})", sidecar.kernel, sidecar.source);
        let source_path = sidecar.source_path();
        let mut request = BuildRequest::new(&source_path, processor);
        if let Some(version) = version {
            request = request.with_version(version);
        }
        let path = build_or_fail(&request);
        let code_object = CodeObject::parse(&read_or_fail(&path)).unwrap_or_else(|err| panic!("{what}: {err}"));
        assert_eq!(code_object.target(), target_of(processor), "{what}");
        let kernel = code_object.kernel(&sidecar.kernel).unwrap_or_else(|| panic!("{what}: kernel missing"));
        let metadata = kernel.metadata.as_ref().unwrap_or_else(|| panic!("{what}: no metadata"));
        assert_eq!(metadata.symbol, kernel.descriptor_symbol);
        // Compilers record the target string; hand-written assembly metadata may omit it.
        if let Some(meta_target) = code_object.metadata().and_then(|m| m.target.clone()) {
            assert_eq!(meta_target, format!("amdgcn-amd-amdhsa--{processor}"), "{what}: amdhsa.target");
        }

        check_descriptor_against_metadata(&what, kernel, metadata);
        let notes = notes_or_fail(toolchain_for(processor), &path);
        let readelf = notes
            .kernels
            .iter()
            .find(|k| k.fields.get(".name") == Some(&sidecar.kernel))
            .unwrap_or_else(|| panic!("{what}: llvm-readelf shows no such kernel"));
        check_metadata_against_readelf(&what, metadata, readelf);

        let args = make_args(&sidecar).unwrap_or_else(|err| panic!("{err}"));
        check_sidecar_against_metadata(&what, &sidecar, &args, metadata);

        if Language::of(&source_path) == Some(Language::Asm) {
            let source = std::fs::read_to_string(&source_path).expect("assembly source");
            check_asm_directives(&what, &source, kernel);
        }
        checked += 1;
    }
    assert!(checked >= 14, "only {checked} corpus kernels list {processor}");
}

#[test]
fn corpus_gfx90a() {
    check_target("gfx90a", None);
}

#[test]
fn corpus_gfx942() {
    check_target("gfx942", None);
}

#[test]
fn corpus_gfx950() {
    check_target("gfx950", None);
}

#[test]
fn corpus_code_object_v4_all_targets() {
    for processor in ["gfx90a", "gfx942", "gfx950"] {
        check_target(processor, Some(4));
    }
}

#[test]
fn corpus_code_object_v6_gfx942() {
    check_target("gfx942", Some(6));
}

#[test]
fn corpus_covers_every_language_and_feature() {
    let sidecars = load_all();
    let languages: Vec<Language> = sidecars.iter().filter_map(|s| Language::of(&s.source_path())).collect();
    for language in [Language::C, Language::OpenCl, Language::Hip, Language::Asm] {
        assert!(languages.contains(&language), "no {} kernel in the corpus", language.name());
    }
    // Every source file has a sidecar, and every sidecar's source exists.
    let dir = support::corpus::corpus_dir();
    for entry in std::fs::read_dir(&dir).expect("corpus dir") {
        let path = entry.expect("entry").path();
        if Language::of(&path).is_some() {
            let name = path.file_name().and_then(|n| n.to_str()).expect("utf-8 name").to_string();
            assert!(sidecars.iter().any(|s| s.source == name), "{name} has no sidecar");
        }
    }
    for sidecar in &sidecars {
        assert!(sidecar.source_path().is_file(), "{}: source {} missing", sidecar.file, sidecar.source);
    }
}

#[test]
fn references_produce_the_declared_outputs() {
    for sidecar in load_all() {
        let args = make_args(&sidecar).unwrap_or_else(|err| panic!("{err}"));
        for target in &sidecar.targets {
            let outputs = expected_outputs(&sidecar, &args, target).unwrap_or_else(|err| panic!("{}: {err}", sidecar.file));
            let declared: Vec<usize> =
                sidecar.args.iter().enumerate().filter(|(_, spec)| spec.output).map(|(i, _)| i).collect();
            let produced: Vec<usize> = outputs.iter().map(|(i, _)| *i).collect();
            assert_eq!(produced, declared, "{}: outputs", sidecar.file);
            for (index, buffer) in &outputs {
                let spec = &sidecar.args[*index];
                assert_eq!(Some(buffer.len()), spec.len, "{}: length of {}", sidecar.file, spec.name);
                assert_eq!(Some(buffer.elem()), spec.elem.as_deref(), "{}: type of {}", sidecar.file, spec.name);
            }
        }
    }
}

#[test]
fn reference_helpers_match_known_values() {
    use support::reference::{bf8_format, collatz_steps, fp8_format, int_arith_one};
    // OCP E4M3 (gfx950): 1.0 = 0x38, max 448 = 0x7e, smallest subnormal 2^-9 = 0x01.
    let ocp = fp8_format("gfx950");
    assert_eq!(quantize(1.0, ocp), (0x38, 1.0));
    assert_eq!(quantize(448.0, ocp), (0x7e, 448.0));
    assert_eq!(quantize(2f32.powi(-9), ocp), (0x01, 2f32.powi(-9)));
    assert_eq!(quantize(-1.0, ocp), (0xb8, -1.0));
    // FNUZ E4M3 (gfx942): bias 8, so 1.0 = 0x40 and max 240 = 0x7f.
    let fnuz = fp8_format("gfx942");
    assert_eq!(quantize(1.0, fnuz), (0x40, 1.0));
    assert_eq!(quantize(240.0, fnuz), (0x7f, 240.0));
    // Ties to even: 1.0625 lies halfway between 1.0 and 1.125 (E4M3 has 3 mantissa bits).
    assert_eq!(quantize(1.0625, ocp).1, 1.0);
    assert_eq!(quantize(1.1875, ocp).1, 1.25);
    // E5M2: 1.0 = 0x3c (OCP, bias 15), 0x40 (FNUZ, bias 16); 3.0 exact.
    assert_eq!(quantize(1.0, bf8_format("gfx950")).0, 0x3c);
    assert_eq!(quantize(1.0, bf8_format("gfx942")).0, 0x40);
    assert_eq!(quantize(3.0, bf8_format("gfx950")).1, 3.0);
    // FNUZ has no negative zero.
    assert_eq!(quantize(-0.0, fnuz).0, 0x00);
    assert_eq!(quantize(-0.0, ocp).0, 0x80);

    assert_eq!(collatz_steps(1), 0);
    assert_eq!(collatz_steps(6), 8);
    assert_eq!(collatz_steps(27), 111);
    assert_eq!(int_arith_one(0, 0), 0);
    assert_eq!(int_arith_one(1, 0), 2_654_435_761u32.wrapping_add(1).wrapping_sub(1));
}
