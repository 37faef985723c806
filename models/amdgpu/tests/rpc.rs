//! The RPC protocol end to end on the host: the device runtime's C client,
//! built for the host (one lane per thread), talks to the Rust server over a
//! real shared buffer while many threads print, allocate and exit; plus
//! malformed requests from a hand-driven client, and printf formatting
//! checked against the host C library.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_long, CString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use amdgpu::host::rpc::{
    format_printf_packed, GpuAddr, HostBuffer, HostError, HostServices, Opcode, OutputStream, PortIndex,
    RpcError, RpcLayout, RpcMemory, RpcServer, RpcStatus, CLIENT_IMAGE_SIZE,
};

// ---------------------------------------------------------------- host side

/// What the GPU program did to the host.
#[derive(Default)]
struct Record {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    exits: Vec<i32>,
    aborts: usize,
    live: HashMap<u64, Box<[u8]>>,
    mallocs: usize,
    frees: usize,
}

/// Host services backed by real host allocations (the client runs on the
/// host, so a device address is a host address).
#[derive(Clone, Default)]
struct Host(Arc<Mutex<Record>>);

impl Host {
    fn with<T>(&self, f: impl FnOnce(&mut Record) -> T) -> T {
        f(&mut self.0.lock().expect("no test thread panics while holding the record"))
    }
}

impl HostServices for Host {
    fn write(&mut self, stream: OutputStream, bytes: &[u8]) -> std::io::Result<()> {
        self.with(|r| match stream {
            OutputStream::Stdout => r.stdout.extend_from_slice(bytes),
            OutputStream::Stderr => r.stderr.extend_from_slice(bytes),
        });
        Ok(())
    }
    fn exit(&mut self, status: i32) {
        self.with(|r| r.exits.push(status));
    }
    fn abort(&mut self) {
        self.with(|r| r.aborts += 1);
    }
    fn malloc(&mut self, size: u64) -> Result<GpuAddr, HostError> {
        let size = usize::try_from(size).map_err(|_| HostError("size too large".into()))?;
        let block = vec![0u8; size.max(1)].into_boxed_slice();
        let addr = block.as_ptr() as u64;
        self.with(|r| {
            r.mallocs += 1;
            r.live.insert(addr, block);
        });
        Ok(GpuAddr(addr))
    }
    fn free(&mut self, addr: GpuAddr) -> Result<(), HostError> {
        self.with(|r| {
            r.frees += 1;
            r.live.remove(&addr.0).map(drop).ok_or_else(|| HostError("not allocated by malloc".into()))
        })
    }
}

// ------------------------------------------------------ the host C client

fn runtime_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("runtime")
}

/// Builds the runtime + workload for the host once per test process.
fn host_client_library() -> &'static Path {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("simdojo-rpc-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir is writable");
        let out = dir.join("libdojo_host_client.so");
        let rt = runtime_dir();
        let mut cmd = Command::new("clang-19");
        cmd.args(["-shared", "-fPIC", "-O2", "-DDOJO_RPC_HOST", "-ffreestanding", "-nostdlibinc"])
            .args(["-fvisibility=hidden", "-Wall", "-Wextra", "-Werror", "-isystem"])
            .arg(rt.join("include"));
        for src in ["src/rpc_client.c", "src/start.c", "src/stdio.c", "src/stdlib.c", "src/string.c", "test/host_workload.c"] {
            cmd.arg(rt.join(src));
        }
        cmd.arg("-o").arg(&out).arg("-lpthread");
        let res = cmd.output().expect("clang-19 runs (apt-get install clang-19)");
        assert!(res.status.success(), "host client build failed:\n{}", String::from_utf8_lossy(&res.stderr));
        out
    })
}

/// One loaded client (its own copy of the library, so its own
/// `__llvm_rpc_client`), a shared buffer and a server thread.
struct Rig {
    lib: libloading::Library,
    host: Host,
    stop: Arc<AtomicBool>,
    served: Arc<AtomicUsize>,
    server: Option<std::thread::JoinHandle<Result<(), RpcError>>>,
}

static COPIES: AtomicUsize = AtomicUsize::new(0);

impl Rig {
    fn new(ports: u32) -> Rig {
        let lib_path = host_client_library();
        let copy = lib_path.with_file_name(format!("client-{}.so", COPIES.fetch_add(1, Ordering::Relaxed)));
        std::fs::copy(lib_path, &copy).expect("copy the client library");
        // SAFETY: our own library; its initializers only set up globals.
        let lib = unsafe { libloading::Library::new(&copy) }.expect("load the host client");

        let layout = RpcLayout::new(1, ports).expect("valid layout");
        let buffer = HostBuffer::new(layout.allocation_size()).expect("allocate the shared buffer");
        let mut server = RpcServer::new(layout, buffer.base());
        let image = server.client_image();
        assert_eq!(image.len(), CLIENT_IMAGE_SIZE);
        // SAFETY: the symbol is a 552-byte rpc_client; no thread uses it yet.
        unsafe {
            let sym: libloading::Symbol<*mut u8> = lib.get(b"__llvm_rpc_client").expect("client symbol");
            std::ptr::copy_nonoverlapping(image.as_ptr(), *sym, image.len());
        }

        let host = Host::default();
        let stop = Arc::new(AtomicBool::new(false));
        let served = Arc::new(AtomicUsize::new(0));
        let (mut h, s, n) = (host.clone(), stop.clone(), served.clone());
        let thread = std::thread::spawn(move || {
            // Serve until asked to stop, then drain once more.
            loop {
                let done = s.load(Ordering::Acquire);
                let k = server.poll(&buffer, &mut h)?;
                n.fetch_add(k, Ordering::Relaxed);
                if done && k == 0 {
                    return Ok(());
                }
                if k == 0 {
                    std::thread::yield_now();
                }
            }
        });
        Rig { lib, host, stop, served, server: Some(thread) }
    }

    fn func<T: Copy>(&self, name: &str) -> T {
        // SAFETY: the tests name exported workload functions with their C types.
        unsafe { *self.lib.get::<T>(name.as_bytes()).expect("workload symbol") }
    }

    fn finish(mut self) -> Record {
        self.stop.store(true, Ordering::Release);
        let thread = self.server.take().expect("server thread runs until finish");
        thread.join().expect("server thread does not panic").expect("server reports no error");
        assert!(self.served.load(Ordering::Relaxed) > 0);
        std::mem::take(&mut *self.host.0.lock().expect("record lock"))
    }
}

fn expected_printf_line(id: i32, i: i32) -> String {
    let g = 1.0 / f64::from(i + 1);
    // %g of 1/(i+1) for the i used below (0..6): at most 6 significant digits.
    let g = format!("{g:.6}").trim_end_matches('0').trim_end_matches('.').to_string();
    let e = format!("{:.6e}", f64::from(id) * 1e10);
    let (m, x) = e.split_once('e').expect("rust {:e} has an exponent");
    let x: i32 = x.parse().expect("exponent");
    format!(
        "w{id}.{i} str|{:5.2}|{:<6x}|{}|{}|{:05}|{m}e{}{:02}|{g}|(nil)|%|{}\n",
        f64::from(id) * 0.25,
        id * 4096 + i,
        (b'a' + (id % 26) as u8) as char,
        id as u64 * 1_000_000_007,
        -i,
        if x < 0 { '-' } else { '+' },
        x.abs(),
        if i % 2 == 1 { "odd" } else { "even" },
    )
}

fn sorted_lines(bytes: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(bytes).lines().map(str::to_string).collect();
    lines.sort();
    lines
}

#[test]
fn many_threads_printf_through_fewer_ports() {
    let rig = Rig::new(4);
    let printf: unsafe extern "C" fn(c_int, c_int) -> c_int = rig.func("workload_printf");
    let threads = 12;
    let per_thread = 6;
    let results: Vec<Vec<c_int>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|id| s.spawn(move || (0..per_thread).map(|i| unsafe { printf(id, i) }).collect::<Vec<_>>()))
            .collect();
        handles.into_iter().map(|h| h.join().expect("worker")).collect()
    });
    let record = rig.finish();
    let mut expected = Vec::new();
    for id in 0..threads {
        for i in 0..per_thread {
            let line = expected_printf_line(id, i);
            assert_eq!(results[id as usize][i as usize], line.len() as c_int, "printf's return value");
            expected.push(line.trim_end().to_string());
        }
    }
    expected.sort();
    assert_eq!(sorted_lines(&record.stdout), expected);
    assert!(record.stderr.is_empty());
}

#[test]
fn long_messages_and_long_printf_arguments() {
    let rig = Rig::new(3);
    let long: unsafe extern "C" fn(c_int, c_int) -> c_int = rig.func("workload_long");
    let long_printf: unsafe extern "C" fn(c_int) -> c_int = rig.func("workload_long_printf");
    let lens = [0, 1, 55, 56, 57, 63, 64, 119, 120, 121, 1000, 5000];
    std::thread::scope(|s| {
        for (id, &len) in lens.iter().enumerate() {
            s.spawn(move || {
                assert_eq!(unsafe { long(id as c_int, len) }, 0);
                assert!(unsafe { long_printf(id as c_int) } > 300);
            });
        }
    });
    let record = rig.finish();
    let text = |id: usize, len: i32| -> String { (0..len).map(|k| (b'A' + ((id as i32 + k) % 26) as u8) as char).collect() };
    let arg: String = (0..299).map(|k| (b'a' + (k % 26) as u8) as char).collect();
    let mut want_out = Vec::new();
    let mut want_err_len = 0;
    for (id, &len) in lens.iter().enumerate() {
        want_out.push(text(id, len));
        want_err_len += len as usize;
        want_out.push(format!(
            "[{id}] 0123456789012345678901234567890123456789012345678901234567890123456789 {arg} abc {:>10}|", "xyz"
        ));
    }
    want_out.sort();
    assert_eq!(sorted_lines(&record.stdout), want_out);
    // stderr got every text with no separators: check length and that each
    // text appears whole.
    assert_eq!(record.stderr.len(), want_err_len);
    let err = String::from_utf8(record.stderr).expect("ascii");
    for (id, &len) in lens.iter().enumerate() {
        assert!(err.contains(&text(id, len)), "stderr holds thread {id}'s {len} bytes");
    }
}

#[test]
fn malloc_and_free_round_trip_through_the_host() {
    let rig = Rig::new(2);
    let work: unsafe extern "C" fn(c_int, c_int) -> c_long = rig.func("workload_malloc");
    let sizes = [1, 8, 100, 4096, 65536];
    std::thread::scope(|s| {
        for id in 0..8 {
            s.spawn(move || {
                for &size in &sizes {
                    assert_eq!(unsafe { work(id, size) }, c_long::from(size));
                }
            });
        }
    });
    let record = rig.finish();
    assert_eq!(record.mallocs, 8 * sizes.len() * 2, "one for the block, one for strdup");
    assert_eq!(record.frees, record.mallocs);
    assert!(record.live.is_empty(), "every block was freed");
}

#[test]
fn exit_reports_the_status_and_atoi_works() {
    let rig = Rig::new(2);
    let exit: unsafe extern "C" fn(c_int) -> c_int = rig.func("workload_exit");
    let atoi: unsafe extern "C" fn(*const c_char) -> c_int = rig.func("workload_atoi");
    let s = CString::new("  -42xyz").expect("no NUL");
    assert_eq!(unsafe { atoi(s.as_ptr()) }, -42 + 16);
    assert_eq!(unsafe { exit(3) }, 0);
    assert_eq!(unsafe { exit(0) }, 0);
    let record = rig.finish();
    assert_eq!(record.exits, vec![3, 0]);
    assert_eq!(record.aborts, 0);
}

// ------------------------------------------- a hand-driven, malformed client

/// Speaks the protocol from the test with no C code: writes a header and
/// packets, flips the client outbox, polls.
struct RawClient {
    layout: RpcLayout,
    buffer: HostBuffer,
    server: RpcServer,
    host: Host,
}

impl RawClient {
    fn new(lanes: u32, ports: u32) -> RawClient {
        let layout = RpcLayout::new(lanes, ports).expect("valid layout");
        let buffer = HostBuffer::new(layout.allocation_size()).expect("buffer");
        let server = RpcServer::new(layout, buffer.base());
        RawClient { layout, buffer, server, host: Host::default() }
    }

    fn word(&self, offset: u64) -> u32 {
        self.buffer.load_u32_acquire(self.buffer.base() + offset).expect("in bounds")
    }

    /// Client inbox == client outbox: the client owns the port.
    fn client_owns(&self, port: u32) -> bool {
        self.word(self.layout.client_inbox_offset() + 4 * u64::from(port))
            == self.word(self.layout.client_outbox_offset() + 4 * u64::from(port))
    }

    /// Opens `port` with `opcode`, fills lane packets with `words`, sends.
    fn send(&self, port: u32, mask: u64, opcode: u32, words: &[(u32, [u64; 8])]) {
        assert!(self.client_owns(port));
        let base = self.buffer.base();
        let mut header = mask.to_le_bytes().to_vec();
        header.extend_from_slice(&opcode.to_le_bytes());
        header.extend_from_slice(&[0; 4]);
        self.buffer.write(base + self.layout.header_offset() + 16 * u64::from(port), &header).expect("header");
        for (lane, packet) in words {
            let bytes: Vec<u8> = packet.iter().flat_map(|w| w.to_le_bytes()).collect();
            let at = self.layout.packet_offset() + self.layout.port_packet_bytes() * u64::from(port) + 64 * u64::from(*lane);
            self.buffer.write(base + at, &bytes).expect("packet");
        }
        let outbox = base + self.layout.client_outbox_offset() + 4 * u64::from(port);
        let v = self.buffer.load_u32_acquire(outbox).expect("outbox");
        self.buffer.store_u32_release(outbox, v ^ 1).expect("outbox");
    }

    fn poll(&mut self) -> Result<usize, RpcError> {
        self.server.poll(&self.buffer, &mut self.host)
    }
}

fn opcode_c(n: u32) -> u32 {
    (u32::from(b'c') << 24) | n
}

#[test]
fn unknown_opcodes_are_reported_and_the_port_handed_back() {
    let mut c = RawClient::new(64, 4);
    for (port, opcode) in [(0, opcode_c(99)), (2, 0xdead_beef), (0, opcode_c(12) /* HOST_CALL */)] {
        c.send(port, u64::MAX, opcode, &[(0, [7; 8])]);
        let err = c.poll().expect_err("unknown opcode is an error");
        assert_eq!(err, RpcError::UnhandledOpcode { port: PortIndex(port), opcode: Opcode(opcode) });
        assert_eq!(err.status(), RpcStatus::UnhandledOpcode);
        assert_eq!(err.status() as u32, 0x1001);
        assert!(c.client_owns(port), "the port went back to the client");
        assert_eq!(c.poll(), Ok(0), "nothing else pending");
    }
}

#[test]
fn huge_transfer_is_rejected_before_allocating() {
    let mut c = RawClient::new(1, 2);
    let mut packet = [0u64; 8];
    packet[0] = 1 << 40;
    c.send(1, 1, opcode_c(2), &[(0, packet)]);
    match c.poll() {
        Err(RpcError::TransferTooLarge { port, opcode, lane, size, .. }) => {
            assert_eq!((port, opcode, lane, size), (PortIndex(1), Opcode::WRITE_TO_STDOUT, 0, 1 << 40));
        }
        other => panic!("expected TransferTooLarge, got {other:?}"),
    }
    // The failed port is dropped; other ports are still served.
    c.send(0, 1, opcode_c(0), &[(0, [0; 8])]);
    assert_eq!(c.poll(), Ok(1));
    assert!(c.client_owns(0));
}

#[test]
fn bad_free_pointer_and_bad_stream_name_port_opcode_and_address() {
    let mut c = RawClient::new(1, 2);
    let mut packet = [0u64; 8];
    packet[0] = 0xdead_0000;
    c.send(0, 1, opcode_c(11), &[(0, packet)]);
    let err = c.poll().expect_err("free of a pointer malloc never returned");
    assert!(matches!(err, RpcError::BadPointer { port: PortIndex(0), opcode: Opcode::FREE, addr: 0xdead_0000, .. }));
    let text = err.to_string();
    assert!(text.contains("0xdead0000") && text.contains("FREE") && text.contains("port 0"), "{text}");

    packet[0] = 0x1234;
    c.send(1, 1, opcode_c(4), &[(0, packet)]);
    let err = c.poll().expect_err("unknown stream");
    assert_eq!(
        err,
        RpcError::BadStream { port: PortIndex(1), opcode: Opcode::WRITE_TO_STREAM, lane: 0, stream: 0x1234 }
    );
}

#[test]
fn buffer_outside_memory_is_an_error_not_a_crash() {
    let layout = RpcLayout::new(64, 8).expect("layout");
    let buffer = HostBuffer::new(64).expect("tiny buffer");
    let mut server = RpcServer::new(layout, buffer.base() + 4096);
    let err = server.poll(&buffer, &mut Host::default()).expect_err("reads outside the buffer");
    assert!(matches!(err, RpcError::Memory { .. }), "{err:?}");
    assert!(RpcLayout::new(48, 8).is_err());
    assert!(RpcLayout::new(64, 4097).is_err());
    assert!(RpcLayout::new(64, 0).is_err());
}

#[test]
fn layout_matches_llvm_allocation_sizes() {
    assert_eq!(RpcLayout::new(64, 4096).expect("layout").allocation_size(), 16_875_520);
    assert_eq!(RpcLayout::new(32, 4096).expect("layout").allocation_size(), 8_486_912);
    let l = RpcLayout::new(64, 3).expect("layout");
    assert_eq!((l.client_outbox_offset(), l.header_offset(), l.packet_offset()), (12, 24, 72));
    let image = l.client_image(0x1000);
    assert_eq!(image.len(), 552);
    assert_eq!(&image[0..8], &[3, 0, 0, 0, 0, 0, 0, 0]);
    let ptr = |i: usize| u64::from_le_bytes(image[8 + 8 * i..16 + 8 * i].try_into().expect("8 bytes"));
    assert_eq!([ptr(0), ptr(1), ptr(2), ptr(3)], [0x1000, 0x100c, 0x1018, 0x1048]);
    assert!(image[40..].iter().all(|&b| b == 0), "lock bits clear");
}

// ------------------------------------------ printf against the C library

extern "C" {
    fn snprintf(buf: *mut c_char, n: usize, fmt: *const c_char, ...) -> c_int;
}

/// A value as the device passes it: packed bytes, plus the string behind a
/// `%s` pointer.
trait Packed {
    fn pack(&self, args: &mut Vec<u8>, strings: &mut Vec<Vec<u8>>);
}
impl Packed for i32 {
    fn pack(&self, a: &mut Vec<u8>, _: &mut Vec<Vec<u8>>) {
        a.extend_from_slice(&self.to_le_bytes());
    }
}
impl Packed for u32 {
    fn pack(&self, a: &mut Vec<u8>, _: &mut Vec<Vec<u8>>) {
        a.extend_from_slice(&self.to_le_bytes());
    }
}
impl Packed for i64 {
    fn pack(&self, a: &mut Vec<u8>, _: &mut Vec<Vec<u8>>) {
        a.extend_from_slice(&self.to_le_bytes());
    }
}
impl Packed for u64 {
    fn pack(&self, a: &mut Vec<u8>, _: &mut Vec<Vec<u8>>) {
        a.extend_from_slice(&self.to_le_bytes());
    }
}
impl Packed for f64 {
    fn pack(&self, a: &mut Vec<u8>, _: &mut Vec<Vec<u8>>) {
        a.extend_from_slice(&self.to_le_bytes());
    }
}
impl Packed for *const c_char {
    fn pack(&self, a: &mut Vec<u8>, s: &mut Vec<Vec<u8>>) {
        a.extend_from_slice(&(*self as u64).to_le_bytes());
        if !self.is_null() {
            // SAFETY: the tests pass pointers of live CStrings.
            s.push(unsafe { std::ffi::CStr::from_ptr(*self) }.to_bytes().to_vec());
        }
    }
}

macro_rules! same_as_libc {
    ($fmt:expr $(, $arg:expr)*) => {{
        let fmt = CString::new($fmt).expect("no NUL");
        let mut buf = vec![0 as c_char; 8192];
        // SAFETY: a NUL-terminated format whose conversions match the arguments.
        let n = unsafe { snprintf(buf.as_mut_ptr(), buf.len(), fmt.as_ptr() $(, $arg)*) };
        assert!((n as usize) < buf.len(), "snprintf output fits");
        let want: Vec<u8> = buf[..n as usize].iter().map(|&c| c as u8).collect();
        #[allow(unused_mut)]
        let (mut args, mut strings) = (Vec::<u8>::new(), Vec::<Vec<u8>>::new());
        $( Packed::pack(&$arg, &mut args, &mut strings); )*
        let got = format_printf_packed(fmt.as_bytes_with_nul(), &args, &strings).expect("formats");
        assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want), "format {:?}", $fmt);
    }};
}

#[test]
fn printf_formatting_matches_the_c_library() {
    let hello = CString::new("hello").expect("no NUL");
    let s = hello.as_ptr();
    let null: *const c_char = std::ptr::null();
    for v in [0i32, 1, -1, 42, -42, i32::MAX, i32::MIN] {
        same_as_libc!("[%d|%i|%5d|%-5d|%05d|%+d|% d|%.3d|%8.3d|%-+8.3d|%.0d]", v, v, v, v, v, v, v, v, v, v, v);
        same_as_libc!("[%u|%x|%X|%o|%#x|%#X|%#o|%08x|%-#10x|%.5x|%#.0o]", v, v, v, v, v, v, v, v, v, v, v);
        same_as_libc!("[%hd|%hhd|%hu|%hhx|%c]", v, v, v, v, 65 + (v & 15));
    }
    for v in [0i64, -1, i64::MIN, i64::MAX, 1 << 40] {
        same_as_libc!("[%ld|%lld|%lu|%lx|%#llo|%zd|%jd|%20ld|%-20lx|]", v, v, v, v, v, v, v, v, v);
    }
    for v in [0.0, -0.0, 1.0, -1.5, 0.1, 2.5, 3.5, 123456.789, 1e-5, 1e-300, 5e-324, 1e300, 9.9999995, 0.00012345, f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
        same_as_libc!("[%f|%.0f|%#.0f|%10.3f|%-10.2f|%+f|% f|%010.2f]", v, v, v, v, v, v, v, v);
        same_as_libc!("[%e|%.0e|%#.0e|%E|%12.3e|%-+12.2e]", v, v, v, v, v, v);
        same_as_libc!("[%g|%G|%.0g|%.3g|%#g|%#.3g|%10g|%-10.4g|%.10g]", v, v, v, v, v, v, v, v, v);
        same_as_libc!("[%a|%A|%.0a|%.3a|%.13a|%20a|%-20a|%020a|%#a]", v, v, v, v, v, v, v, v, v);
    }
    same_as_libc!("[%s|%10s|%-10s|%.2s|%10.3s|%s|%.3s|%%|%5%]", s, s, s, s, s, null, null);
    same_as_libc!("[%*d|%-*d|%.*f|%*.*s|%*d]", 6i32, 42i32, 6i32, 42i32, 2i32, 1.23456, 8i32, 2i32, s, -6i32, 7i32);
    same_as_libc!("[%p|%20p|%-20p|%p]", 0x1234u64, 0xdeadbeefu64, 0xabcu64, 0u64);
    same_as_libc!("no conversions at all, just text");
    // glibc rejects a format ending in a lone '%'; the server prints the text
    // before it, like LLVM's parser, which stops there.
    assert_eq!(format_printf_packed(b"trailing %\0", &[], &[]).expect("formats"), b"trailing ");
}

#[test]
fn printf_with_a_huge_width_or_precision_fails_instead_of_exhausting_the_host() {
    use amdgpu::host::rpc::{PrintfError, PRINTF_MAX_FIELD};
    // Written widths and precisions, and `*` ones from the arguments.
    let star = |v: i32| v.to_le_bytes().to_vec();
    for (fmt, args) in [
        (&b"%999999999999d\0"[..], 7i32.to_le_bytes().to_vec()),
        (b"%.99999999f\0", 1.5f64.to_bits().to_le_bytes().to_vec()),
        (b"%*d\0", [star(i32::MIN), star(1)].concat()),
        (b"%.*e\0", [star(70_000), 1.5f64.to_bits().to_le_bytes().to_vec()].concat()),
    ] {
        let got = format_printf_packed(fmt, &args, &[]);
        assert!(matches!(got, Err(PrintfError::FieldTooLarge { .. })), "{}: {got:?}", String::from_utf8_lossy(fmt));
    }
    // The limit itself formats.
    let at_limit = format!("%{PRINTF_MAX_FIELD}d\0");
    let out = format_printf_packed(at_limit.as_bytes(), &7i32.to_le_bytes(), &[]).expect("at the limit");
    assert_eq!(out.len(), PRINTF_MAX_FIELD);
}

#[test]
fn printf_whose_output_passes_the_per_call_limit_fails() {
    use amdgpu::host::rpc::{PrintfError, PRINTF_MAX_FIELD, PRINTF_MAX_OUTPUT};
    // Each conversion is within the field limit; together they pass the call's limit.
    let n = PRINTF_MAX_OUTPUT / PRINTF_MAX_FIELD + 1;
    let fmt = format!("{}\0", format!("%{PRINTF_MAX_FIELD}d").repeat(n));
    let args: Vec<u8> = (0..n).flat_map(|_| 7i32.to_le_bytes()).collect();
    assert_eq!(format_printf_packed(fmt.as_bytes(), &args, &[]), Err(PrintfError::OutputTooLarge));
    // One conversion fewer than the limit allows still formats.
    let fits = PRINTF_MAX_OUTPUT / PRINTF_MAX_FIELD;
    let fmt = format!("{}\0", format!("%{PRINTF_MAX_FIELD}d").repeat(fits));
    assert_eq!(
        format_printf_packed(fmt.as_bytes(), &args[..4 * fits], &[]).expect("fits").len(),
        fits * PRINTF_MAX_FIELD
    );
}

mod printf_fuzz {
    //! Fuzzing the printf formatter: any format, argument block and strings give text or
    //! an error, never a panic, and never more than the per-call limit. The case count is
    //! proptest's (`PROPTEST_CASES`, 256 by default; raise it for a long run).
    use amdgpu::host::rpc::{format_printf_packed, PRINTF_MAX_OUTPUT};
    use proptest::prelude::*;

    /// Conversion characters, flags, digits and `*`, so that formats parse deep.
    const ALPHABET: &[u8] = b"%%%%-+ #0123456789.*hljztLqdiuoxXbBcspnfFeEgGaA%abc\n";

    proptest! {
        #[test]
        fn any_format_gives_bounded_text_or_an_error(
            fmt in prop::collection::vec(prop::sample::select(ALPHABET), 0..64),
            args in prop::collection::vec(any::<u8>(), 0..128),
            strings in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..32), 0..4),
        ) {
            if let Ok(text) = format_printf_packed(&fmt, &args, &strings) {
                prop_assert!(text.len() <= PRINTF_MAX_OUTPUT);
            }
        }

        #[test]
        fn arbitrary_bytes_as_a_format_never_panic(fmt in prop::collection::vec(any::<u8>(), 0..128), args in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = format_printf_packed(&fmt, &args, &[]);
        }
    }
}

#[test]
fn argv_block_and_kernel_arguments() {
    use amdgpu::host::rpc::launch::{end_kernargs, ArgBlock};
    let block = ArgBlock::new(0x1000, &["prog", "-x"], &["A=1"]);
    assert_eq!((block.argc, block.argv, block.envp), (2, 0x1000, 0x1018));
    let word = |i: usize| u64::from_le_bytes(block.bytes[8 * i..8 * i + 8].try_into().expect("8 bytes"));
    // argv[0], argv[1], NULL, envp[0], NULL, then "prog\0-x\0A=1\0".
    assert_eq!([word(0), word(1), word(2), word(3), word(4)], [0x1028, 0x102d, 0, 0x1030, 0]);
    assert_eq!(&block.bytes[40..], b"prog\0-x\0A=1\0");
    let k = block.start_kernargs(0x2000);
    assert_eq!(k.len(), 32);
    assert_eq!(&k[0..4], &2u32.to_le_bytes());
    assert_eq!(&k[24..32], &0x2000u64.to_le_bytes());
    assert_eq!(end_kernargs(0x2000), 0x2000u64.to_le_bytes());
}

impl RawClient {
    /// Writes lane packets without touching the header, then flips.
    fn send_packets(&self, port: u32, packets: &[(u32, [u8; 64])]) {
        assert!(self.client_owns(port), "the client owns the port before sending");
        let base = self.buffer.base();
        for (lane, bytes) in packets {
            let at = self.layout.packet_offset() + self.layout.port_packet_bytes() * u64::from(port) + 64 * u64::from(*lane);
            self.buffer.write(base + at, bytes).expect("packet");
        }
        let outbox = base + self.layout.client_outbox_offset() + 4 * u64::from(port);
        let v = self.buffer.load_u32_acquire(outbox).expect("outbox");
        self.buffer.store_u32_release(outbox, v ^ 1).expect("outbox");
    }

    fn lane_word(&self, port: u32, lane: u32) -> u64 {
        let at = self.layout.packet_offset() + self.layout.port_packet_bytes() * u64::from(port) + 64 * u64::from(lane);
        let mut b = [0u8; 8];
        self.buffer.read(self.buffer.base() + at, &mut b).expect("packet");
        u64::from_le_bytes(b)
    }
}

#[test]
fn wave64_write_streams_across_polls_without_blocking() {
    let mut c = RawClient::new(64, 2);
    let lanes = [0u32, 5, 63];
    let texts: Vec<Vec<u8>> = lanes.iter().map(|&l| (0..(40 + 50 * l as usize)).map(|k| b'a' + ((k + l as usize) % 26) as u8).collect()).collect();
    let mask = lanes.iter().fold(0u64, |m, &l| m | 1 << l);
    // First packet: the size and 56 bytes.
    let first: Vec<(u32, [u8; 64])> = lanes
        .iter()
        .zip(&texts)
        .map(|(&l, t)| {
            let mut p = [0u8; 64];
            p[..8].copy_from_slice(&(t.len() as u64).to_le_bytes());
            let n = t.len().min(56);
            p[8..8 + n].copy_from_slice(&t[..n]);
            (l, p)
        })
        .collect();
    let mut header = mask.to_le_bytes().to_vec();
    header.extend_from_slice(&Opcode::WRITE_TO_STDOUT.0.to_le_bytes());
    header.extend_from_slice(&[0; 4]);
    c.buffer.write(c.buffer.base() + c.layout.header_offset() + 16, &header).expect("header");
    c.send_packets(1, &first);
    let mut idx = 56;
    let longest = texts.iter().map(Vec::len).max().expect("three lanes");
    while idx < longest {
        assert_eq!(c.poll(), Ok(1), "the server takes a packet and returns without waiting");
        assert_eq!(c.poll(), Ok(0), "nothing to do until the client sends again");
        let next: Vec<(u32, [u8; 64])> = lanes
            .iter()
            .zip(&texts)
            .map(|(&l, t)| {
                let mut p = [0u8; 64];
                if idx < t.len() {
                    let n = (t.len() - idx).min(64);
                    p[..n].copy_from_slice(&t[idx..idx + n]);
                }
                (l, p)
            })
            .collect();
        c.send_packets(1, &next);
        idx += 64;
    }
    assert_eq!(c.poll(), Ok(1));
    assert!(c.client_owns(1), "the reply is there");
    for (&l, t) in lanes.iter().zip(&texts) {
        assert_eq!(c.lane_word(1, l), t.len() as u64, "lane {l} is told how much was written");
    }
    let record = c.host.with(|r| std::mem::take(&mut r.stdout));
    assert_eq!(record, texts.concat(), "lanes print in lane order, each whole");
    assert_eq!(c.poll(), Ok(0));
}
