//! Real code as the ISA corpus: every gfx90a code object that Debian's ROCm libraries
//! ship (rocSPARSE, rocRAND), and those of small rocPRIM programs
//! (`corpus/rocprim/*.hip`) and of HIP texture and surface kernels
//! (`corpus/images/*.hip`: the image instructions) built here with Debian's hipcc, must
//!
//! 1. parse with [`CodeObject::parse`] as gfx90a code objects,
//! 2. disassemble (`disassemble_section` over `.text`) exactly as `llvm-objdump-19 -d
//!    --mcpu=gfx90a` does, line for line,
//! 3. execute: every distinct instruction (deduplicated by its words) runs once on the
//!    census's probe wave ([`probe_words`]) and must not stop with
//!    `ExecFault::Unsupported`, unless its form (`gfx90a ENCODING MNEMONIC`) is listed
//!    in `tests/data/census-gaps.txt`. That list only shrinks, so this test gets
//!    stricter by itself as the executor grows.
//!
//! The device code is read from the libraries' `.hip_fatbin` clang offload bundles by
//! `support::offload_bundle` (no external tool per bundle). The test prints its figures
//! (libraries, code objects, kernels, instructions, distinct words, mnemonics, time) and
//! the forms of the corpus the census still lists as gaps, most used first.
//!
//! Needs `scripts/deps` (librocsparse0, librocrand1, librocprim-dev, hipcc, llvm-19): a
//! missing library or tool fails the test naming its package.

mod common;
mod support;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use amdgpu_isa::census::{probe_words, Verdict};
use amdgpu_isa::code_object::{self, CodeObject};
use amdgpu_isa::decode::{decode, Decoded};
use amdgpu_isa::disasm::{disassemble_section, listing, text_symbols, ListingItem};
use amdgpu_isa::Target;
use common::{census_gap_key, census_gaps, compare_listings, objdump_text_body, scratch_dir, tool, ListingComparison};
use support::build::build_with_hipcc;
use support::corpus::{corpus_dir, files_with_extension};
use support::offload_bundle::{self, Entry};

/// The Debian libraries with device code: package and path.
const LIBRARIES: [(&str, &str); 2] = [
    ("librocsparse0", "/usr/lib/x86_64-linux-gnu/librocsparse.so.0"),
    ("librocrand1", "/usr/lib/x86_64-linux-gnu/librocrand.so.1"),
];

/// The rocPRIM header whose contents key the cache of the rocPRIM programs (a new
/// rocPRIM rebuilds them).
const ROCPRIM_VERSION_HEADER: &str = "/usr/include/rocprim/rocprim_version.hpp";

const TARGET: Target = Target::Gfx90a;

/// Where one code object comes from: a file, and the bundle entry inside it.
struct Source {
    /// What a person reads: `librocsparse.so.0 bundle 44 gfx90a:xnack+`.
    name: String,
    /// The group its figures are printed under: the library, or `rocPRIM programs`.
    origin: String,
    file: PathBuf,
    entry: Entry,
}

/// An instruction's words: up to three, and how many are used.
type Words = ([u32; 3], u8);

/// Where an instruction was first seen: source index, label index, address.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Site {
    source: u32,
    label: u32,
    address: u64,
}

/// How often one distinct instruction occurs, and its first site.
#[derive(Copy, Clone, Debug)]
struct Occurrences {
    count: u64,
    first: Site,
}

/// Counts of a group of code objects.
#[derive(Copy, Clone, Debug, Default)]
struct Figures {
    code_objects: usize,
    kernels: usize,
    text_bytes: u64,
    instructions: u64,
    /// Words that are no instruction (llvm-objdump prints `.long`).
    invalid_words: u64,
}

impl Figures {
    fn add(&mut self, other: &Figures) {
        self.code_objects += other.code_objects;
        self.kernels += other.kernels;
        self.text_bytes += other.text_bytes;
        self.instructions += other.instructions;
        self.invalid_words += other.invalid_words;
    }
}

/// What the scanned code objects contributed.
#[derive(Default)]
struct Scan {
    /// Figures by [`Source::origin`].
    figures: BTreeMap<String, Figures>,
    /// The labels of the listing (the `Site::label` names), by source.
    labels: Vec<(u32, Vec<String>)>,
    words: HashMap<Words, Occurrences>,
    /// Failures: parse errors and listing differences.
    failures: Vec<String>,
}

impl Scan {
    fn merge(&mut self, other: Scan) {
        for (origin, figures) in &other.figures {
            self.figures.entry(origin.clone()).or_default().add(figures);
        }
        self.labels.extend(other.labels);
        self.failures.extend(other.failures);
        for (words, occ) in other.words {
            self.words
                .entry(words)
                .and_modify(|o| {
                    o.count += occ.count;
                    o.first = o.first.min(occ.first);
                })
                .or_insert(occ);
        }
    }
}

fn fail_missing(what: &str, package: &str) -> ! {
    panic!("{what} is missing: install it with `apt-get install -y --no-install-recommends {package}` (scripts/deps)")
}

/// Every gfx90a entry of the offload bundles in `file[start..start + len]`.
fn gfx90a_entries(file: &Path, label: &str, origin: &str, region: (u64, u64)) -> Vec<Source> {
    let handle = File::open(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let entries = offload_bundle::entries(&handle, region.0, region.1).unwrap_or_else(|e| panic!("{label}: {e}"));
    entries
        .into_iter()
        .filter(|entry| entry.processor() == Some(TARGET.name()))
        .map(|entry| Source {
            name: format!("{label} bundle {} {}", entry.bundle, entry.triple.rsplit("--").next().unwrap_or("?")),
            origin: origin.to_string(),
            file: file.to_path_buf(),
            entry,
        })
        .collect()
}

/// The gfx90a code objects of the Debian libraries.
fn library_sources() -> Vec<Source> {
    let mut out = Vec::new();
    for (package, path) in LIBRARIES {
        let path = Path::new(path);
        if !path.exists() {
            fail_missing(&path.display().to_string(), package);
        }
        let region = offload_bundle::fatbin_section(path)
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("{} has no .hip_fatbin section", path.display()));
        let label = path.file_name().and_then(|n| n.to_str()).unwrap_or("?");
        let found = gfx90a_entries(path, label, label, region);
        assert!(!found.is_empty(), "{} has no gfx90a code object", path.display());
        out.extend(found);
    }
    out
}

/// The rocPRIM programs, built (or taken from the cache) and read as bundles.
fn rocprim_sources() -> Vec<Source> {
    if !Path::new(ROCPRIM_VERSION_HEADER).exists() {
        fail_missing(ROCPRIM_VERSION_HEADER, "librocprim-dev");
    }
    hipcc_sources("rocprim", "rocPRIM programs", &[Path::new(ROCPRIM_VERSION_HEADER)])
}

/// The programs of `corpus/DIR` (HIP), built with hipcc (or taken from the cache; `keys`
/// are further inputs of the cache key) and read as bundles, counted under `origin`.
/// Builds run on one thread per core.
fn hipcc_sources(dir: &str, origin: &str, keys: &[&Path]) -> Vec<Source> {
    let programs = files_with_extension(&corpus_dir().join(dir), "hip");
    assert!(!programs.is_empty(), "corpus/{dir} holds no .hip program");
    let mut built: Vec<(usize, PathBuf)> = on_workers(
        programs.len(),
        |_| Vec::new(),
        |built, i| {
            let bundle = build_with_hipcc(&programs[i], keys).unwrap_or_else(|e| panic!("building {}: {e}", programs[i].display()));
            built.push((i, bundle));
        },
    )
    .into_iter()
    .flatten()
    .collect();
    built.sort();
    built
        .into_iter()
        .flat_map(|(i, bundle)| {
            let len = std::fs::metadata(&bundle).unwrap_or_else(|e| panic!("{}: {e}", bundle.display())).len();
            let label = format!("{dir}/{}", programs[i].file_name().and_then(|n| n.to_str()).unwrap_or("?"));
            let found = gfx90a_entries(&bundle, &label, origin, (0, len));
            assert!(!found.is_empty(), "{label}: hipcc wrote no gfx90a code object");
            found
        })
        .collect()
}

/// Runs `work(state, i)` for every `i < n` on one thread per core, items taken in order
/// as threads free up; each thread has its own `state`, made by `init(thread)`. Returns
/// the states.
fn on_workers<S: Send>(n: usize, init: impl Fn(usize) -> S + Sync, work: impl Fn(&mut S, usize) + Sync) -> Vec<S> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|thread| {
                let (next, init, work) = (&next, &init, &work);
                scope.spawn(move || {
                    let mut state = init(thread);
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= n {
                            return state;
                        }
                        work(&mut state, i);
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
    })
}

/// `llvm-objdump -d --mcpu=gfx90a` of a code object given on standard input. The
/// listing goes through a file in `scratch` (llvm-objdump writes each line with its
/// own system call: into a pipe that costs more than the disassembly).
fn objdump(bytes: &[u8], scratch: &Path) -> String {
    let listing = File::create(scratch).unwrap_or_else(|e| panic!("{}: {e}", scratch.display()));
    let mut child = Command::new(tool("llvm-objdump", 19))
        .args(["-d", "--mcpu=gfx90a", "-"])
        .stdin(Stdio::piped())
        .stdout(listing)
        .stderr(Stdio::piped())
        .spawn()
        .expect("llvm-objdump-19 starts");
    // The tool reads all of its input before it prints (into a file: nothing blocks);
    // dropping stdin closes it.
    let mut stdin = child.stdin.take().expect("piped stdin");
    let written = stdin.write_all(bytes);
    drop(stdin);
    let out = child.wait_with_output().expect("llvm-objdump-19 runs");
    assert!(out.status.success(), "llvm-objdump-19 failed: {}", String::from_utf8_lossy(&out.stderr));
    written.expect("llvm-objdump-19 reads all of its input");
    std::fs::read_to_string(scratch).unwrap_or_else(|e| panic!("{}: {e}", scratch.display()))
}

/// Parses, disassembles, compares and counts one code object.
fn scan(index: u32, source: &Source, scratch: &Path, scan: &mut Scan) {
    let file = File::open(&source.file).unwrap_or_else(|e| panic!("{}: {e}", source.file.display()));
    let bytes = source.entry.read(&file).unwrap_or_else(|e| panic!("{}: {e}", source.name));
    let co = match CodeObject::parse(&bytes) {
        Ok(co) => co,
        Err(e) => {
            scan.failures.push(format!("{}: does not parse: {e}", source.name));
            return;
        }
    };
    if co.target() != code_object::Target::Gfx90a {
        scan.failures.push(format!("{}: parsed as {:?}, not gfx90a", source.name, co.target()));
        return;
    }
    let text = co.text();
    let labels = text_symbols(&co);
    let ours = disassemble_section(TARGET, &text.bytes, text.address.0, &labels);
    let llvm = objdump(&bytes, scratch);
    let cmp: ListingComparison = compare_listings(objdump_text_body(&llvm), &ours, 8);
    if !cmp.matches() {
        scan.failures.push(format!(
            "{}: the listing differs from llvm-objdump's: {} of {} lines ({} lines ours):\n{}",
            source.name,
            cmp.mismatches,
            cmp.expected_lines,
            cmp.got_lines,
            cmp.examples.join("\n")
        ));
    }
    // Count the instructions the listing shows.
    let mut figures =
        Figures { code_objects: 1, kernels: co.kernels().len(), text_bytes: text.bytes.len() as u64, ..Figures::default() };
    let mut label_names = Vec::new();
    for item in listing(TARGET, &text.bytes, text.address.0, &labels) {
        match item {
            ListingItem::Label(symbol) => label_names.push(symbol.name.clone()),
            ListingItem::Zeros { .. } => {}
            ListingItem::Code { address, decoded: Decoded::Inst(inst), .. } => {
                let mut words = [0u32; 3];
                words[..inst.words().len()].copy_from_slice(inst.words());
                // Code before the first label cannot occur: text_symbols labels the start.
                let site = Site { source: index, label: label_names.len().saturating_sub(1) as u32, address };
                let key = (words, inst.words().len() as u8);
                scan.words.entry(key).or_insert(Occurrences { count: 0, first: site }).count += 1;
                figures.instructions += 1;
            }
            ListingItem::Code { .. } => figures.invalid_words += 1,
        }
    }
    scan.figures.entry(source.origin.clone()).or_default().add(&figures);
    scan.labels.push((index, label_names));
}

fn print_figures(origin: &str, f: &Figures) {
    println!(
        "{origin}: {} gfx90a code objects, {} kernels, {} bytes of .text, {} instructions, {} words that are none",
        f.code_objects, f.kernels, f.text_bytes, f.instructions, f.invalid_words
    );
}

/// One form of the corpus: how it is used and what the probe found.
#[derive(Default)]
struct FormUse {
    occurrences: u64,
    distinct: usize,
    /// Occurrences and distinct words that stopped with `Unsupported`.
    unsupported_occurrences: u64,
    unsupported_distinct: usize,
    /// One unsupported instance: words, fault, first site.
    example: Option<(Words, String, Site)>,
}

/// Scans every code object (largest first, one thread per core).
fn scan_all(sources: &[Source]) -> Scan {
    let mut order: Vec<usize> = (0..sources.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sources[i].entry.size));
    let dir = scratch_dir("rocm-corpus");
    let scans = on_workers(
        order.len(),
        |thread| (Scan::default(), dir.join(format!("listing-{thread}.txt"))),
        |(mine, scratch), k| scan(order[k] as u32, &sources[order[k]], scratch, mine),
    );
    // The listings are scratch files only; failing to remove them is harmless.
    let _ = std::fs::remove_dir_all(&dir);
    let mut total = Scan::default();
    for (mine, _) in scans {
        total.merge(mine);
    }
    total
}

/// Runs every distinct instruction once on the census's probe wave.
fn probe_all(distinct: &[(Words, Occurrences)]) -> Vec<Verdict> {
    let mut verdicts: Vec<(usize, Verdict)> = on_workers(
        distinct.len(),
        |_| Vec::new(),
        |out, i| {
            let ((words, n), _) = &distinct[i];
            out.push((i, probe_words(TARGET, &words[..*n as usize])));
        },
    )
    .into_iter()
    .flatten()
    .collect();
    verdicts.sort_by_key(|(i, _)| *i);
    verdicts.into_iter().map(|(_, verdict)| verdict).collect()
}

/// The forms (`gfx90a ENCODING MNEMONIC`) of the distinct instructions with what the
/// probe found, and how many mnemonics they have.
fn forms_of(distinct: &[(Words, Occurrences)], verdicts: &[Verdict]) -> (BTreeMap<String, FormUse>, usize) {
    let mut forms: BTreeMap<String, FormUse> = BTreeMap::new();
    let mut mnemonics = BTreeSet::new();
    for (((words, n), occ), verdict) in distinct.iter().zip(verdicts) {
        let Decoded::Inst(inst) = decode(TARGET, &words[..*n as usize]) else {
            unreachable!("the scan kept only decoded words")
        };
        mnemonics.insert(inst.opcode().mnemonic());
        let form = forms.entry(census_gap_key(TARGET, inst.encoding().name(), inst.opcode().mnemonic())).or_default();
        form.occurrences += occ.count;
        form.distinct += 1;
        if let Verdict::Missing { fault, .. } | Verdict::OnlyIllegal { fault, .. } = verdict {
            form.unsupported_occurrences += occ.count;
            form.unsupported_distinct += 1;
            if form.example.as_ref().is_none_or(|(_, _, site)| occ.first < *site) {
                form.example = Some(((*words, *n), fault.to_string(), occ.first));
            }
        }
    }
    (forms, mnemonics.len())
}

#[test]
fn every_gfx90a_instruction_of_debian_rocm_decodes_disassembles_and_executes() {
    let started = Instant::now();
    tool("llvm-objdump", 19);
    let mut sources = library_sources();
    sources.extend(rocprim_sources());
    sources.extend(hipcc_sources("images", "image programs", &[]));
    let built = started.elapsed();

    let total = scan_all(&sources);
    let scanned = started.elapsed();
    let mut distinct: Vec<(Words, Occurrences)> = total.words.iter().map(|(w, o)| (*w, *o)).collect();
    distinct.sort_by_key(|(w, _)| *w);
    let verdicts = probe_all(&distinct);
    let probed = started.elapsed();
    let (forms, mnemonics) = forms_of(&distinct, &verdicts);

    let labels: HashMap<u32, &Vec<String>> = total.labels.iter().map(|(i, l)| (*i, l)).collect();
    let describe = |((words, n), fault, site): &(Words, String, Site)| {
        let function = labels.get(&site.source).and_then(|l| l.get(site.label as usize)).map_or("?", |s| s.as_str());
        format!(
            "{} in {} at {:#x}: words {:08x?} ({fault})",
            sources[site.source as usize].name,
            function,
            site.address,
            &words[..*n as usize]
        )
    };

    let mut all = Figures::default();
    for (origin, figures) in &total.figures {
        all.add(figures);
        print_figures(origin, figures);
    }
    print_figures(&format!("all ({} libraries, the rocPRIM and the image programs)", LIBRARIES.len()), &all);
    println!("distinct instruction words: {}, mnemonics: {mnemonics}, forms: {}", distinct.len(), forms.len());
    println!(
        "time: {:.1}s (sources {:.1}s, decode+disassemble+llvm-objdump {:.1}s, probe {:.1}s)",
        probed.as_secs_f64(),
        built.as_secs_f64(),
        (scanned - built).as_secs_f64(),
        (probed - scanned).as_secs_f64()
    );

    let gaps = census_gaps();
    let mut listed_in_corpus: Vec<(&String, &FormUse)> = forms.iter().filter(|(k, _)| gaps.contains(*k)).collect();
    listed_in_corpus.sort_by_key(|(k, f)| (std::cmp::Reverse(f.occurrences), *k));
    println!("forms of the corpus the census lists as gaps ({}): occurrences, distinct words, of which unsupported here", listed_in_corpus.len());
    for (key, form) in &listed_in_corpus {
        println!(
            "  {key}: {} occurrences, {} distinct; unsupported: {} occurrences, {} distinct{}",
            form.occurrences,
            form.distinct,
            form.unsupported_occurrences,
            form.unsupported_distinct,
            form.example.as_ref().map_or(String::new(), |e| format!("; e.g. {}", describe(e)))
        );
    }

    let mut failures = total.failures;
    for (key, form) in &forms {
        if form.unsupported_distinct > 0 && !gaps.contains(key) {
            let example = form.example.as_ref().map_or(String::new(), describe);
            failures.push(format!(
                "{key} is unsupported ({} occurrences, {} distinct words) and not a listed census gap; e.g. {example}",
                form.unsupported_occurrences, form.unsupported_distinct
            ));
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
