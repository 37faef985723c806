//! `code_object` against real code objects built from the corpus: e_flags for every
//! target, feature setting and code object version; load segments and symbols; typed
//! errors for broken files; and no panic on 2000 random mutations.

mod support;

use amdgpu_isa::code_object::{
    ArgValueKind, CodeObject, CodeObjectError, CodeObjectVersion, FeatureSetting, InitialSgpr, KernelDescriptor,
    LoadError, MachValue, RelocationKind, SymbolKind, Target, TargetFlags, WorkitemIdVgprs, KERNEL_DESCRIPTOR_SIZE,
};
use proptest::prelude::*;
use support::build::{build_or_fail, read_or_fail, toolchain_for, BuildRequest};
use support::corpus::corpus_dir;
use support::readelf::header_flags_or_fail;

fn built(source: &str, processor: &str, version: Option<u8>) -> (std::path::PathBuf, Vec<u8>) {
    let mut request = BuildRequest::new(corpus_dir().join(source), processor);
    if let Some(version) = version {
        request = request.with_version(version);
    }
    let path = build_or_fail(&request);
    let bytes = read_or_fail(&path);
    (path, bytes)
}

fn parse_ok(bytes: &[u8]) -> CodeObject {
    CodeObject::parse(bytes).unwrap_or_else(|err| panic!("parse failed: {err}"))
}

// ---------------------------------------------------------------- e_flags and versions

fn check_flags(processor: &str, version: Option<u8>, target: Target, xnack: FeatureSetting, sramecc: FeatureSetting) {
    let (path, bytes) = built("saxpy.c", processor, version);
    let code_object = parse_ok(&bytes);
    assert_eq!(code_object.target(), target, "{processor}");
    assert_eq!(code_object.xnack(), xnack, "{processor} xnack");
    assert_eq!(code_object.sramecc(), sramecc, "{processor} sramecc");
    let (readelf_flags, line) = header_flags_or_fail(toolchain_for(processor), &path);
    assert_eq!(code_object.flags().raw, readelf_flags, "{processor}: llvm-readelf says {line}");
    assert_eq!(code_object.flags().generic_version, 0);
}

#[test]
fn e_flags_default_features_are_any_on_all_targets() {
    use FeatureSetting::Any;
    check_flags("gfx90a", None, Target::Gfx90a, Any, Any);
    check_flags("gfx942", None, Target::Gfx942, Any, Any);
    check_flags("gfx950", None, Target::Gfx950, Any, Any);
}

#[test]
fn e_flags_explicit_feature_settings() {
    use FeatureSetting::{Any, Off, On};
    check_flags("gfx90a:xnack+", None, Target::Gfx90a, On, Any);
    check_flags("gfx90a:sramecc-:xnack-", None, Target::Gfx90a, Off, Off);
    check_flags("gfx942:sramecc+:xnack-", None, Target::Gfx942, Off, On);
    check_flags("gfx950:xnack+", None, Target::Gfx950, On, Any);
    check_flags("gfx950:sramecc-", Some(4), Target::Gfx950, Any, Off);
}

fn version_of(processor: &str, version: Option<u8>) -> CodeObjectVersion {
    let (path, bytes) = built("saxpy.c", processor, version);
    let code_object = parse_ok(&bytes);
    // e_flags mean the same in every version from v4 on.
    assert_eq!(code_object.target().name(), Some(processor), "{processor} {version:?}");
    assert_eq!((code_object.xnack(), code_object.sramecc()), (FeatureSetting::Any, FeatureSetting::Any));
    let (readelf_flags, line) = header_flags_or_fail(toolchain_for(processor), &path);
    assert_eq!(code_object.flags().raw, readelf_flags, "{processor} {version:?}: llvm-readelf says {line}");
    code_object.version()
}

#[test]
fn code_object_versions_v4_v5_v6() {
    // Defaults: clang-19 emits v5, clang-22 v6.
    assert_eq!(version_of("gfx90a", None), CodeObjectVersion::V5);
    assert_eq!(version_of("gfx942", None), CodeObjectVersion::V5);
    assert_eq!(version_of("gfx950", None), CodeObjectVersion::V6);
    for processor in ["gfx90a", "gfx942", "gfx950"] {
        assert_eq!(version_of(processor, Some(4)), CodeObjectVersion::V4, "{processor}");
        assert_eq!(version_of(processor, Some(5)), CodeObjectVersion::V5, "{processor}");
        assert_eq!(version_of(processor, Some(6)), CodeObjectVersion::V6, "{processor}");
    }
}

#[test]
fn v4_reads_the_workgroup_size_from_the_packet_v5_from_hidden_arguments() {
    for processor in ["gfx90a", "gfx942", "gfx950"] {
        let (_, v4) = built("collatz.c", processor, Some(4));
        let (_, v5) = built("collatz.c", processor, Some(5));
        let v4 = parse_ok(&v4);
        let v5 = parse_ok(&v5);
        let k4 = v4.kernel("collatz").expect("collatz in v4 object");
        let k5 = v5.kernel("collatz").expect("collatz in v5 object");
        assert!(k4.descriptor.properties.enable_sgpr_dispatch_ptr, "{processor} v4 needs the dispatch packet");
        let kinds = |kernel: &amdgpu_isa::code_object::Kernel| -> Vec<ArgValueKind> {
            kernel.metadata.as_ref().expect("metadata").args.iter().map(|arg| arg.value_kind).collect()
        };
        assert!(!kinds(k4).contains(&ArgValueKind::HiddenGroupSizeX), "{processor} v4");
        assert!(kinds(k5).contains(&ArgValueKind::HiddenGroupSizeX), "{processor} v5");
        assert!(!k5.descriptor.properties.enable_sgpr_dispatch_ptr, "{processor} v5 uses the implicit arguments");
        assert_eq!(v4.metadata().expect("metadata").version, (1, 1));
        assert_eq!(v5.metadata().expect("metadata").version, (1, 2));
    }
}

#[test]
fn e_flags_decoding_is_exact() {
    let flags = TargetFlags::from_e_flags(0x54c);
    assert_eq!((flags.target, flags.xnack, flags.sramecc), (Target::Gfx942, FeatureSetting::Any, FeatureSetting::Any));
    let flags = TargetFlags::from_e_flags(0x0f00 | 0x3f);
    assert_eq!((flags.target, flags.xnack, flags.sramecc), (Target::Gfx90a, FeatureSetting::On, FeatureSetting::On));
    let flags = TargetFlags::from_e_flags(0x0a4f);
    assert_eq!((flags.target, flags.xnack, flags.sramecc), (Target::Gfx950, FeatureSetting::Off, FeatureSetting::Off));
    let flags = TargetFlags::from_e_flags(0x0100_0030);
    assert_eq!(flags.target, Target::Other(MachValue(0x30)));
    assert_eq!(flags.generic_version, 1);
    assert_eq!(flags.xnack, FeatureSetting::Unsupported);
    assert!(!flags.target.is_supported());
    for target in [Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
        assert_eq!(Target::from_e_flags(u32::from(target.mach().0)), target);
    }
}

#[test]
fn unknown_processor_parses_as_other() {
    let (_, mut bytes) = built("saxpy.c", "gfx942", None);
    bytes[48] = 0x30; // e_flags low byte: gfx908
    let code_object = parse_ok(&bytes);
    assert_eq!(code_object.target(), Target::Other(MachValue(0x30)));
    assert!(!code_object.target().is_supported());
    assert_eq!(code_object.kernels().len(), 1);
}

// ---------------------------------------------------------------- descriptor bit layout

#[test]
fn kernel_descriptor_fields_decode_from_their_bit_positions() {
    let mut bytes = [0u8; KERNEL_DESCRIPTOR_SIZE];
    bytes[0..4].copy_from_slice(&4096u32.to_le_bytes());
    bytes[4..8].copy_from_slice(&272u32.to_le_bytes());
    bytes[8..12].copy_from_slice(&280u32.to_le_bytes());
    bytes[16..24].copy_from_slice(&(-256i64).to_le_bytes());
    // rsrc3: accum_offset field 3 (-> 16), tg_split.
    bytes[44..48].copy_from_slice(&(3u32 | 1 << 16).to_le_bytes());
    // rsrc1: 5 VGPR blocks, SGPR field 4, round_32 = toward zero, denorm_16_64 = none,
    // dx10 clamp, ieee.
    let rsrc1 = 5u32 | 4 << 6 | 3 << 12 | 3 << 18 | 1 << 21 | 1 << 23;
    bytes[48..52].copy_from_slice(&rsrc1.to_le_bytes());
    // rsrc2: private segment, 8 user SGPRs, wg id x and z, workitem id XY, int div0.
    let rsrc2 = 1u32 | 8 << 1 | 1 << 7 | 1 << 9 | 1 << 11 | 1 << 30;
    bytes[52..56].copy_from_slice(&rsrc2.to_le_bytes());
    // properties: private segment buffer, kernarg ptr, dynamic stack.
    bytes[56..58].copy_from_slice(&(1u16 | 1 << 3 | 1 << 11).to_le_bytes());
    // kernarg preload: 2 dwords from dword 4.
    bytes[58..60].copy_from_slice(&(2u16 | 4 << 7).to_le_bytes());

    let kd = KernelDescriptor::decode(&bytes).expect("valid descriptor");
    assert_eq!((kd.group_segment_fixed_size, kd.private_segment_fixed_size, kd.kernarg_size), (4096, 272, 280));
    assert_eq!(kd.kernel_code_entry_byte_offset, -256);
    assert_eq!(kd.accum_offset(), 16);
    assert!(kd.rsrc3.tg_split);
    assert_eq!(kd.vgpr_count(), 48);
    assert_eq!(kd.sgpr_count(), 48);
    use amdgpu_isa::code_object::{DenormMode, RoundMode};
    assert_eq!(kd.rsrc1.float_mode.round_32, RoundMode::Zero);
    assert_eq!(kd.rsrc1.float_mode.round_16_64, RoundMode::NearestEven);
    assert_eq!(kd.rsrc1.float_mode.denorm_32, DenormMode::FlushSourceAndResult);
    assert_eq!(kd.rsrc1.float_mode.denorm_16_64, DenormMode::FlushNone);
    assert!(kd.rsrc1.dx10_clamp && kd.rsrc1.ieee_mode && !kd.rsrc1.debug_mode);
    assert_eq!(kd.rsrc2.user_sgpr_count, 8);
    assert!(kd.rsrc2.enable_sgpr_workgroup_id_x && !kd.rsrc2.enable_sgpr_workgroup_id_y);
    assert!(kd.rsrc2.enable_sgpr_workgroup_id_z);
    assert_eq!(kd.rsrc2.enable_vgpr_workitem_id, WorkitemIdVgprs::Xy);
    assert!(kd.rsrc2.exceptions.int_division_by_zero && !kd.rsrc2.exceptions.fp_inexact);
    assert!(kd.properties.uses_dynamic_stack && !kd.properties.wavefront_size32);
    assert_eq!(kd.wavefront_size(), 64);

    let user: Vec<(InitialSgpr, u8, u8)> = kd.user_sgprs().iter().map(|s| (s.value, s.first, s.count)).collect();
    assert_eq!(
        user,
        vec![
            (InitialSgpr::PrivateSegmentBuffer, 0, 4),
            (InitialSgpr::KernargSegmentPtr, 4, 2),
            (InitialSgpr::PreloadedKernarg { first_dword: 4 }, 6, 2),
        ]
    );
    assert_eq!(kd.implied_user_sgpr_count(), 8);
    let system: Vec<(InitialSgpr, u8)> = kd.system_sgprs().iter().map(|s| (s.value, s.first)).collect();
    assert_eq!(
        system,
        vec![
            (InitialSgpr::WorkgroupIdX, 8),
            (InitialSgpr::WorkgroupIdZ, 9),
            (InitialSgpr::PrivateSegmentWaveOffset, 10),
        ]
    );

    // ENABLE_VGPR_WORKITEM_ID = 3 is reserved.
    bytes[52..56].copy_from_slice(&(3u32 << 11).to_le_bytes());
    let reserved = KernelDescriptor::decode(&bytes).expect_err("reserved encoding");
    assert_eq!(reserved.value, 3);
}

// ---------------------------------------------------------------- loading and symbols

#[test]
fn flat_image_holds_text_and_descriptors_at_their_addresses() {
    for (source, processor) in [("saxpy.c", "gfx90a"), ("reduce_sum.hip", "gfx942"), ("int_arith.cl", "gfx950")] {
        let (_, bytes) = built(source, processor, None);
        let code_object = parse_ok(&bytes);
        let segments = code_object.load_segments();
        assert!(segments.iter().any(|s| s.executable), "{source}: no executable segment");
        assert!(segments.iter().all(|s| s.file_bytes.len() as u64 <= s.mem_size));
        let image = code_object.flat_image().expect("small image");
        assert_eq!(image.len() as u64, code_object.image_span());
        let text = code_object.text();
        let start = text.address.0 as usize;
        assert_eq!(&image[start..start + text.bytes.len()], &text.bytes[..], "{source}: .text in image");
        for kernel in code_object.kernels() {
            let at = kernel.descriptor_address.0 as usize;
            let kd_bytes: &[u8; KERNEL_DESCRIPTOR_SIZE] =
                image[at..at + KERNEL_DESCRIPTOR_SIZE].try_into().expect("64 bytes");
            assert_eq!(KernelDescriptor::decode(kd_bytes).expect("descriptor"), kernel.descriptor);
            let entry = kernel.entry.0;
            assert!(entry >= text.address.0 && entry < text.address.0 + text.bytes.len() as u64);
            // The kernel's code symbol sits at the entry address.
            let function = code_object.symbol(&kernel.name).expect("kernel function symbol");
            assert_eq!(function.kind, SymbolKind::Function);
            assert_eq!(function.value, kernel.entry, "{source}: entry");
            let descriptor_symbol = code_object.symbol(&kernel.descriptor_symbol).expect("kd symbol");
            assert_eq!((descriptor_symbol.kind, descriptor_symbol.size), (SymbolKind::Object, 64));
        }
    }
}

#[test]
fn several_kernels_are_matched_to_their_own_metadata() {
    for processor in ["gfx90a", "gfx942", "gfx950"] {
        let (_, bytes) = built("two_kernels.cl", processor, None);
        let code_object = parse_ok(&bytes);
        let mut names: Vec<&str> = code_object.kernels().iter().map(|k| k.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["add_offset", "scale_by"], "{processor}");
        for (name, block) in [("scale_by", 64), ("add_offset", 256)] {
            let kernel = code_object.kernel(name).expect("kernel");
            let metadata = kernel.metadata.as_ref().expect("metadata");
            assert_eq!((metadata.name.as_str(), metadata.symbol.as_str()), (name, kernel.descriptor_symbol.as_str()));
            assert_eq!(metadata.reqd_workgroup_size, Some([block, 1, 1]), "{processor} {name}");
            assert_eq!(metadata.max_flat_workgroup_size, block, "{processor} {name}");
        }
        let entries: Vec<u64> = code_object.kernels().iter().map(|k| k.entry.0).collect();
        assert_ne!(entries[0], entries[1], "{processor}: distinct entry points");
    }
}

fn read_u64(image: &[u8], address: u64) -> u64 {
    let at = address as usize;
    u64::from_le_bytes(image[at..at + 8].try_into().expect("8 bytes"))
}

#[test]
fn load_image_applies_relative_relocations_for_the_base_address() {
    const BASE: u64 = 0x7f00_0000_0000;
    for processor in ["gfx90a", "gfx942", "gfx950"] {
        let (_, bytes) = built("global_tables.c", processor, None);
        let code_object = parse_ok(&bytes);
        let tables = code_object.symbol("tables").expect("tables symbol").value.0;
        let table_a = code_object.symbol("table_a").expect("table_a symbol").value.0;
        let table_b = code_object.symbol("table_b").expect("table_b symbol").value.0;
        let relocations = code_object.relocations();
        assert_eq!(relocations.len(), 2, "{processor}");
        assert!(relocations.iter().all(|r| r.kind == RelocationKind::Relative64), "{processor}");

        let unrelocated = code_object.flat_image().expect("image");
        let loaded = code_object.load_image(BASE).expect("relocated image");
        assert_eq!(read_u64(&loaded, tables), BASE + table_a, "{processor}: tables[0]");
        assert_eq!(read_u64(&loaded, tables + 8), BASE + table_b, "{processor}: tables[1]");
        assert_eq!(&loaded[table_a as usize..table_a as usize + 4], &1i32.to_le_bytes());
        assert_eq!(&loaded[table_b as usize + 12..table_b as usize + 16], &40i32.to_le_bytes());
        // Only the relocated words differ from the unrelocated image.
        let differing: Vec<usize> = (0..loaded.len()).filter(|&i| loaded[i] != unrelocated[i]).collect();
        assert!(differing.iter().all(|&i| (i as u64) >= tables && (i as u64) < tables + 16), "{processor}");
        // RELA relocations keep the addend out of the image: loaded at base 0 the table holds
        // the link addresses.
        let at_zero = code_object.load_image(0).expect("base 0");
        assert_eq!(read_u64(&at_zero, tables), table_a, "{processor}: link address");
    }
}

#[test]
fn bad_relocations_are_load_errors() {
    let (_, good) = built("global_tables.c", "gfx942", None);
    let relocation = parse_ok(&good).relocations()[0].clone();
    // Find the Elf64_Rela entry: r_offset, r_info (symbol 0, type 13), r_addend.
    let mut entry = Vec::new();
    entry.extend_from_slice(&relocation.offset.0.to_le_bytes());
    entry.extend_from_slice(&13u64.to_le_bytes());
    entry.extend_from_slice(&relocation.addend.to_le_bytes());
    let at = good.windows(entry.len()).position(|w| w == entry).expect("rela entry in file");

    let mut bytes = good.clone();
    bytes[at..at + 8].copy_from_slice(&0xffff_0000u64.to_le_bytes());
    let code_object = parse_ok(&bytes);
    match code_object.load_image(0x1000) {
        Err(LoadError::OutOfImage { offset, kind, .. }) => {
            assert_eq!((offset.0, kind), (0xffff_0000, RelocationKind::Relative64));
        }
        other => panic!("expected OutOfImage, got {other:?}"),
    }

    let mut bytes = good.clone();
    bytes[at + 8] = 99; // r_type 99
    let code_object = parse_ok(&bytes);
    assert_eq!(code_object.relocations()[0].kind, RelocationKind::Other(99));
    assert_eq!(
        code_object.load_image(0x1000),
        Err(LoadError::UnsupportedRelocation { offset: relocation.offset, r_type: 99 })
    );
}

// ---------------------------------------------------------------- typed errors

fn saxpy_gfx942() -> Vec<u8> {
    built("saxpy.c", "gfx942", None).1
}

fn kd_file_offset(bytes: &[u8]) -> usize {
    // Find the descriptor through the parsed image: file offset = vaddr for the first
    // PT_LOAD of an ld.lld code object (it maps file offset 0 at address 0).
    let code_object = parse_ok(bytes);
    let kernel = &code_object.kernels()[0];
    let segment = &code_object.load_segments()[0];
    assert_eq!(segment.vaddr.0, 0, "first segment maps offset 0");
    kernel.descriptor_address.0 as usize
}

#[test]
fn broken_headers_give_typed_errors() {
    let good = saxpy_gfx942();
    assert!(matches!(CodeObject::parse(&good[..10]), Err(CodeObjectError::MalformedElf { .. })));
    assert!(matches!(CodeObject::parse(&good[..40]), Err(CodeObjectError::MalformedElf { .. })));

    let mut bytes = good.clone();
    bytes[4] = 1; // ELFCLASS32
    assert_eq!(CodeObject::parse(&bytes), Err(CodeObjectError::NotElf64Le { class: 1, data: 1 }));

    let mut bytes = good.clone();
    bytes[7] = 0; // EI_OSABI = SYSV
    assert_eq!(CodeObject::parse(&bytes), Err(CodeObjectError::WrongOsAbi { os_abi: 0 }));

    let mut bytes = good.clone();
    bytes[8] = 1; // code object v3
    assert_eq!(CodeObject::parse(&bytes), Err(CodeObjectError::UnsupportedVersion { abi_version: 1 }));

    let mut bytes = good.clone();
    bytes[18..20].copy_from_slice(&62u16.to_le_bytes()); // EM_X86_64
    assert_eq!(CodeObject::parse(&bytes), Err(CodeObjectError::WrongMachine { machine: 62 }));
}

#[test]
fn broken_descriptor_names_the_symbol() {
    let good = saxpy_gfx942();
    let kd = kd_file_offset(&good);

    let mut bytes = good.clone();
    bytes[kd + 53] |= 0b11 << 3; // rsrc2 bits 12:11 = 3
    match CodeObject::parse(&bytes) {
        Err(CodeObjectError::DescriptorField { symbol, field, value, file_offset }) => {
            assert_eq!(symbol, "saxpy.kd");
            assert_eq!(field, "compute_pgm_rsrc2.enable_vgpr_workitem_id");
            assert_eq!((value, file_offset), (3, kd as u64));
        }
        other => panic!("expected DescriptorField, got {other:?}"),
    }

    let mut bytes = good.clone();
    bytes[kd + 16..kd + 24].copy_from_slice(&0x7fff_0000i64.to_le_bytes());
    match CodeObject::parse(&bytes) {
        Err(CodeObjectError::EntryOutOfCode { symbol, offset, .. }) => {
            assert_eq!(symbol, "saxpy.kd");
            assert_eq!(offset, 0x7fff_0000);
        }
        other => panic!("expected EntryOutOfCode, got {other:?}"),
    }
}

#[test]
fn broken_metadata_is_reported_with_its_location() {
    let good = saxpy_gfx942();
    // Rename the required key ".kernarg_segment_size" inside the MessagePack note.
    let needle = b".kernarg_segment_size";
    let at = good.windows(needle.len()).position(|w| w == needle).expect("metadata key present");
    let mut bytes = good.clone();
    bytes[at + 1] = b'K';
    match CodeObject::parse(&bytes) {
        Err(CodeObjectError::MetadataField { location, field, problem }) => {
            assert_eq!(location, "amdhsa.kernels[0] (saxpy)");
            assert_eq!(field, ".kernarg_segment_size");
            assert_eq!(problem, "missing");
        }
        other => panic!("expected MetadataField, got {other:?}"),
    }

    let needle = b"global_buffer";
    let at = good.windows(needle.len()).position(|w| w == needle).expect("value kind present");
    let mut bytes = good.clone();
    bytes[at] = b'G';
    match CodeObject::parse(&bytes) {
        Err(CodeObjectError::MetadataField { location, field, .. }) => {
            assert!(location.starts_with("amdhsa.kernels[0] (saxpy).args["), "{location}");
            assert_eq!(field, ".value_kind");
        }
        other => panic!("expected MetadataField, got {other:?}"),
    }
}

// ---------------------------------------------------------------- robustness

fn mutation_seeds() -> Vec<Vec<u8>> {
    vec![
        built("saxpy.c", "gfx942", None).1,
        built("reduce_sum.hip", "gfx90a", None).1,
        built("asm_lds_reverse.s", "gfx950", None).1,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: ProptestConfig::default().cases.max(2000), failure_persistence: None, ..ProptestConfig::default() })]

    /// Any mutation of a real code object parses to Ok or Err, never a panic.
    #[test]
    fn random_mutations_never_panic(
        seed in 0usize..3,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), any::<bool>()), 1..12),
        truncate in proptest::option::weighted(0.1, any::<prop::sample::Index>()),
    ) {
        thread_local! {
            static SEEDS: Vec<Vec<u8>> = mutation_seeds();
        }
        let mut bytes = SEEDS.with(|seeds| seeds[seed].clone());
        for (index, value, header_region) in edits {
            // Half of the edits land in the first 0x800 bytes: headers, notes, descriptors.
            let len = if header_region { bytes.len().min(0x800) } else { bytes.len() };
            let at = index.index(len);
            bytes[at] = value;
        }
        if let Some(cut) = truncate {
            bytes.truncate(cut.index(bytes.len()));
        }
        let result = CodeObject::parse(&bytes);
        if let Ok(code_object) = result {
            // Whatever parsed must be internally usable without panicking either.
            let _ = code_object.flat_image();
            let _ = code_object.load_image(0x7f00_0000_0000);
            for kernel in code_object.kernels() {
                let _ = kernel.descriptor.user_sgprs();
                let _ = kernel.descriptor.system_sgprs();
            }
        }
    }
}
