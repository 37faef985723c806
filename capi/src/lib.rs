//! The C API of simdojo (`libsimdojo.so`, `libsimdojo.a`, header `include/simdojo.h`,
//! generated from this file by cbindgen and kept fresh by `tests/header.rs`).
//!
//! A `dojo_vm_t *` is an opaque, reference-counted handle on an `amdgpu::host::vm::Vm`. It is
//! not a pointer to memory: it names an entry of a process-wide table, and every call
//! looks it up, so a destroyed, released-twice, never-created or NULL handle is the
//! error `DOJO_ERR_HANDLE` (or `DOJO_ERR_NULL`), never a crash. Handles are never reused.
//!
//! Every function returns `DOJO_OK` (0) or a negative `DOJO_ERR_*` code, and on an error
//! sets this thread's message (`dojo_last_error`), the text the `dojo` command prints for
//! the same mistake. No panic crosses the boundary: one is caught and reported as
//! `DOJO_ERR_INTERNAL`, and the VM it happened in answers `DOJO_ERR_INTERNAL` from then on.
//!
//! Thread safety: every function may be called from any thread. Calls on one VM
//! serialize (a call waits while another thread's `dojo_vm_step` or `dojo_vm_run` holds
//! it); calls on different VMs run in parallel. `dojo_last_error` is per thread.

#![allow(non_camel_case_types)]
// The exported functions take C pointers whose contract the header states; they stay safe
// `extern "C"` functions, as C callers cannot see `unsafe`.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{c_char, c_int, c_uint, CStr, CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use amdgpu::host::vm::{Vm, VmError};

/// A simulated machine (opaque; see the crate docs).
pub struct dojo_vm_t {
    _opaque: (),
}

/// Success.
pub const DOJO_OK: c_int = 0;
/// A required pointer argument was NULL.
pub const DOJO_ERR_NULL: c_int = -1;
/// The handle is not a live VM (destroyed, released too often, or never created).
pub const DOJO_ERR_HANDLE: c_int = -2;
/// An argument is out of range or not UTF-8.
pub const DOJO_ERR_ARGUMENT: c_int = -3;
/// A file could not be read or written.
pub const DOJO_ERR_IO: c_int = -4;
/// The topology, or an override of it, is malformed.
pub const DOJO_ERR_TOPOLOGY: c_int = -5;
/// The program is not a usable GPU program or could not be loaded.
pub const DOJO_ERR_PROGRAM: c_int = -6;
/// The call does not fit the VM's state (a second program, the exit code before the
/// end, destroying a VM others still hold, ...).
pub const DOJO_ERR_STATE: c_int = -7;
/// The checkpoint is corrupted, not a VM checkpoint, or does not fit.
pub const DOJO_ERR_CHECKPOINT: c_int = -8;
/// The simulation failed (a component error).
pub const DOJO_ERR_SIMULATION: c_int = -9;
/// An internal error (a caught panic): a bug in simdojo.
pub const DOJO_ERR_INTERNAL: c_int = -10;

/// A failed call: its code and message.
struct Failure(c_int, String);

impl From<VmError> for Failure {
    fn from(e: VmError) -> Failure {
        let code = match &e {
            VmError::Io(_) => DOJO_ERR_IO,
            VmError::Topology(_) => DOJO_ERR_TOPOLOGY,
            VmError::Argument(_) => DOJO_ERR_ARGUMENT,
            VmError::Program(_) => DOJO_ERR_PROGRAM,
            VmError::State(_) => DOJO_ERR_STATE,
            VmError::Checkpoint(_) => DOJO_ERR_CHECKPOINT,
            VmError::Simulation(_) => DOJO_ERR_SIMULATION,
            _ => DOJO_ERR_INTERNAL,
        };
        Failure(code, e.to_string())
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_error(message: &str) {
    let text = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// Runs `f`, turning its failure or panic into a code and this thread's message.
fn guard(f: impl FnOnce() -> Result<(), Failure>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => DOJO_OK,
        Ok(Err(Failure(code, message))) => {
            set_error(&message);
            code
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("unknown");
            set_error(&format!("internal error (a bug in simdojo): panic: {what}"));
            DOJO_ERR_INTERNAL
        }
    }
}

/// One live handle.
struct Entry {
    refs: u64,
    vm: Arc<Mutex<Vm>>,
}

/// Live handles by value, and live strings returned by `dojo_vm_stats_json`.
static HANDLES: Mutex<BTreeMap<usize, Entry>> = Mutex::new(BTreeMap::new());
static STRINGS: Mutex<BTreeSet<usize>> = Mutex::new(BTreeSet::new());
/// The next handle value: never reused, never 0, never dereferenced.
static NEXT: AtomicUsize = AtomicUsize::new(0x1000);

fn handles() -> std::sync::MutexGuard<'static, BTreeMap<usize, Entry>> {
    // Every critical section is a single map operation: a poisoned map is consistent.
    HANDLES.lock().unwrap_or_else(|e| e.into_inner())
}

fn register(vm: Vm) -> *mut dojo_vm_t {
    let id = NEXT.fetch_add(16, Ordering::Relaxed);
    handles().insert(
        id,
        Entry {
            refs: 1,
            vm: Arc::new(Mutex::new(vm)),
        },
    );
    id as *mut dojo_vm_t
}

fn lookup(vm: *const dojo_vm_t) -> Result<Arc<Mutex<Vm>>, Failure> {
    if vm.is_null() {
        return Err(Failure(DOJO_ERR_NULL, "the VM handle is NULL".into()));
    }
    handles()
        .get(&(vm as usize))
        .map(|e| e.vm.clone())
        .ok_or_else(|| Failure(DOJO_ERR_HANDLE, format!("{vm:p} is not a live VM handle (destroyed, released too often, or never created)")))
}

/// Runs `f` on the VM behind `vm`, holding it for the call.
fn with_vm<T>(
    vm: *const dojo_vm_t,
    f: impl FnOnce(&mut Vm) -> Result<T, VmError>,
) -> Result<T, Failure> {
    let cell = lookup(vm)?;
    let mut guard = cell.lock().map_err(|_| {
        Failure(
            DOJO_ERR_INTERNAL,
            "the VM is unusable: an earlier call on it panicked".into(),
        )
    })?;
    f(&mut guard).map_err(Failure::from)
}

fn text<'a>(what: &str, p: *const c_char) -> Result<&'a CStr, Failure> {
    if p.is_null() {
        return Err(Failure(DOJO_ERR_NULL, format!("{what} is NULL")));
    }
    // SAFETY: the caller passes a NUL-terminated string (the header's contract).
    Ok(unsafe { CStr::from_ptr(p) })
}

fn utf8(what: &str, p: *const c_char) -> Result<String, Failure> {
    text(what, p)?
        .to_str()
        .map(str::to_string)
        .map_err(|_| Failure(DOJO_ERR_ARGUMENT, format!("{what} is not UTF-8")))
}

fn path(what: &str, p: *const c_char) -> Result<PathBuf, Failure> {
    Ok(PathBuf::from(OsStr::from_bytes(text(what, p)?.to_bytes())))
}

fn out<T>(what: &str, p: *mut T) -> Result<(), Failure> {
    if p.is_null() {
        return Err(Failure(DOJO_ERR_NULL, format!("{what} is NULL")));
    }
    Ok(())
}

/// Writes `value` to `p` unless `p` is NULL (an optional result).
fn put<T>(p: *mut T, value: T) {
    if !p.is_null() {
        // SAFETY: the caller passes NULL or a pointer to writable storage.
        unsafe { p.write(value) };
    }
}

/// The library's version (`"0.1.0"`, the workspace's): a static string, never freed.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn dojo_version() -> *const c_char {
    const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    VERSION.as_ptr().cast()
}

/// The message of this thread's last failed call ("" if none failed). The string stays
/// valid until the next failing call on this thread. Thread-safe.
#[no_mangle]
pub extern "C" fn dojo_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// Creates a VM from the topology file `topology_path` (TOML or JSON) and stores its
/// handle (one reference) in `*out`. Thread-safe.
#[no_mangle]
pub extern "C" fn dojo_vm_create(topology_path: *const c_char, out: *mut *mut dojo_vm_t) -> c_int {
    guard(|| {
        self::out("out", out)?;
        let vm = Vm::from_file(&path("topology_path", topology_path)?)?;
        put(out, register(vm));
        Ok(())
    })
}

/// Creates a VM from a topology given as text (JSON if it starts with `{`, else TOML;
/// includes are relative to the working directory). Thread-safe.
#[no_mangle]
pub extern "C" fn dojo_vm_create_from_string(
    topology_toml: *const c_char,
    out: *mut *mut dojo_vm_t,
) -> c_int {
    guard(|| {
        self::out("out", out)?;
        let vm = Vm::from_text(&utf8("topology_toml", topology_toml)?)?;
        put(out, register(vm));
        Ok(())
    })
}

/// Adds a reference to `vm`. Thread-safe.
#[no_mangle]
pub extern "C" fn dojo_vm_retain(vm: *mut dojo_vm_t) -> c_int {
    guard(|| {
        lookup(vm)?;
        if let Some(e) = handles().get_mut(&(vm as usize)) {
            e.refs += 1;
        }
        Ok(())
    })
}

/// Drops a reference to `vm`; the last one tears the VM down (after any call still
/// running on another thread) and the handle becomes invalid. Thread-safe.
#[no_mangle]
pub extern "C" fn dojo_vm_release(vm: *mut dojo_vm_t) -> c_int {
    guard(|| {
        lookup(vm)?;
        let gone = {
            let mut map = handles();
            match map.get_mut(&(vm as usize)) {
                Some(e) if e.refs > 1 => {
                    e.refs -= 1;
                    None
                }
                _ => map.remove(&(vm as usize)),
            }
        };
        // Dropped outside the table's lock: tearing a GPU down takes a while.
        drop(gone);
        Ok(())
    })
}

/// Releases the last reference to `vm` and tears it down; `DOJO_ERR_STATE` (and no
/// change) if other references remain. Thread-safe.
#[no_mangle]
pub extern "C" fn dojo_vm_destroy(vm: *mut dojo_vm_t) -> c_int {
    guard(|| {
        lookup(vm)?;
        let refs = handles().get(&(vm as usize)).map_or(0, |e| e.refs);
        if refs > 1 {
            return Err(Failure(DOJO_ERR_STATE, format!("dojo_vm_destroy: {} other references to the VM remain (dojo_vm_release drops one)", refs - 1)));
        }
        let gone = handles().remove(&(vm as usize));
        drop(gone);
        Ok(())
    })
}

/// Applies one `--set` style override, `SELECTOR.PARAM=VALUE` (such as `l2.size=4MiB`),
/// before the simulation starts. Thread-safe (serialized per VM).
#[no_mangle]
pub extern "C" fn dojo_vm_set(vm: *mut dojo_vm_t, assignment: *const c_char) -> c_int {
    guard(|| {
        let a = utf8("assignment", assignment)?;
        with_vm(vm, |v| v.apply_overrides(&[a]))
    })
}

/// Sets the worker threads (at least 1) before the simulation starts; results do not
/// depend on it. Thread-safe (serialized per VM).
#[no_mangle]
pub extern "C" fn dojo_vm_set_workers(vm: *mut dojo_vm_t, workers: c_uint) -> c_int {
    guard(|| with_vm(vm, |v| v.set_workers(workers)))
}

/// Loads the `main()` GPU program `code_object_path` (built by `dojo cc`) with its
/// arguments `argv[0..argc]` (argv[0] of the program is the path; `argv` may be NULL
/// when `argc` is 0), as `dojo exec` runs it on one work-item; its output goes to this
/// process's stdout and stderr. Builds the GPU. Thread-safe (serialized per VM).
#[no_mangle]
pub extern "C" fn dojo_vm_load_program(
    vm: *mut dojo_vm_t,
    code_object_path: *const c_char,
    argc: c_int,
    argv: *const *const c_char,
) -> c_int {
    dojo_vm_load_program_grid(vm, code_object_path, argc, argv, std::ptr::null(), std::ptr::null())
}

/// [`dojo_vm_load_program`] with `main` run by a grid, as `dojo exec --threads T --blocks
/// B` runs it: `threads` points to the work-items per work-group (X, Y, Z; at most 1024
/// in all) and `blocks` to the work-groups (X, Y, Z); either may be NULL for 1, 1, 1. A
/// shape out of the hardware's range fails with `DOJO_ERR_ARGUMENT` and the limit in
/// the message. Thread-safe (serialized per VM).
#[no_mangle]
pub extern "C" fn dojo_vm_load_program_grid(
    vm: *mut dojo_vm_t,
    code_object_path: *const c_char,
    argc: c_int,
    argv: *const *const c_char,
    threads: *const u32,
    blocks: *const u32,
) -> c_int {
    guard(|| {
        let image = path("code_object_path", code_object_path)?;
        if argc < 0 {
            return Err(Failure(DOJO_ERR_ARGUMENT, format!("argc is {argc}")));
        }
        if argc > 0 && argv.is_null() {
            return Err(Failure(
                DOJO_ERR_NULL,
                format!("argv is NULL with argc {argc}"),
            ));
        }
        let args = (0..argc as usize)
            // SAFETY: argv holds argc pointers (the header's contract).
            .map(|i| utf8(&format!("argv[{i}]"), unsafe { *argv.add(i) }))
            .collect::<Result<Vec<_>, _>>()?;
        let shape = |p: *const u32| -> [u32; 3] {
            if p.is_null() {
                [1, 1, 1]
            } else {
                // SAFETY: a non-NULL shape points to three values (the header's contract).
                unsafe { [*p, *p.add(1), *p.add(2)] }
            }
        };
        let (threads, blocks) = (shape(threads), shape(blocks));
        with_vm(vm, |v| v.load_program(&image, &args, threads, blocks))
    })
}

/// Handles every event of the next simulated time. `*active` (if not NULL) is 1 while
/// the simulation can go on, 0 once it ended. Thread-safe (serialized per VM).
#[no_mangle]
pub extern "C" fn dojo_vm_step(vm: *mut dojo_vm_t, active: *mut c_int) -> c_int {
    guard(|| {
        let going = with_vm(vm, |v| v.step())?;
        put(active, c_int::from(going));
        Ok(())
    })
}

/// Runs to the end; `*ticks` (if not NULL) is the simulated time then, in picoseconds.
/// Thread-safe (serialized per VM; other VMs run in parallel).
#[no_mangle]
pub extern "C" fn dojo_vm_run(vm: *mut dojo_vm_t, ticks: *mut u64) -> c_int {
    guard(|| {
        let t = with_vm(vm, |v| v.run())?;
        put(ticks, t);
        Ok(())
    })
}

/// Runs until simulated time `ticks` (picoseconds) or the end; `*active` as in
/// `dojo_vm_step`. Thread-safe (serialized per VM).
#[no_mangle]
pub extern "C" fn dojo_vm_run_until(vm: *mut dojo_vm_t, ticks: u64, active: *mut c_int) -> c_int {
    guard(|| {
        let going = with_vm(vm, |v| v.run_until(ticks))?;
        put(active, c_int::from(going));
        Ok(())
    })
}

/// Stores the simulated time (picoseconds) in `*ticks`. Thread-safe.
#[no_mangle]
pub extern "C" fn dojo_vm_now(vm: *mut dojo_vm_t, ticks: *mut u64) -> c_int {
    guard(|| {
        out("ticks", ticks)?;
        let t = with_vm(vm, |v| Ok(v.now()))?;
        put(ticks, t);
        Ok(())
    })
}

/// Stores the exit status in `*code`: the program's, as `dojo exec` exits (1 after a GPU
/// fault), or the simulation's for a topology without a program. `DOJO_ERR_STATE`
/// before the end. Thread-safe.
#[no_mangle]
pub extern "C" fn dojo_vm_exit_code(vm: *mut dojo_vm_t, code: *mut c_int) -> c_int {
    guard(|| {
        out("code", code)?;
        let c = with_vm(vm, |v| v.exit_code())?;
        put(code, c);
        Ok(())
    })
}

/// Writes the whole machine to `path` (atomically); `dojo_vm_restore_checkpoint` rebuilds
/// it, in this process (while `vm` lives) or another. Thread-safe (serialized per VM).
#[no_mangle]
pub extern "C" fn dojo_vm_save_checkpoint(vm: *mut dojo_vm_t, path: *const c_char) -> c_int {
    guard(|| {
        let p = self::path("path", path)?;
        with_vm(vm, |v| v.save_checkpoint(&p))
    })
}

/// Creates a VM from a checkpoint file (on the saved VM's worker count), ready to
/// continue; stores its handle in `*out`. A corrupted or foreign file is
/// `DOJO_ERR_CHECKPOINT`. Thread-safe.
#[no_mangle]
pub extern "C" fn dojo_vm_restore_checkpoint(
    path: *const c_char,
    out: *mut *mut dojo_vm_t,
) -> c_int {
    guard(|| {
        self::out("out", out)?;
        let vm = Vm::restore(&self::path("path", path)?, None)?;
        put(out, register(vm));
        Ok(())
    })
}

/// Stores the statistics as a JSON object in `*json` (`ticks`, `finished`, `exit_code`,
/// `kernels`, `components`; the same for any worker count and after a restore). Free it
/// with `dojo_string_free`. Thread-safe.
#[no_mangle]
pub extern "C" fn dojo_vm_stats_json(vm: *mut dojo_vm_t, json: *mut *mut c_char) -> c_int {
    guard(|| {
        out("json", json)?;
        let text = with_vm(vm, |v| v.stats_json())?;
        let raw = CString::new(text)
            .map_err(|_| Failure(DOJO_ERR_INTERNAL, "statistics hold a NUL byte".into()))?
            .into_raw();
        STRINGS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(raw as usize);
        put(json, raw);
        Ok(())
    })
}

/// Frees a string returned by this library (NULL is accepted); any other pointer, or a
/// second free, is `DOJO_ERR_ARGUMENT` and frees nothing. Thread-safe.
#[no_mangle]
pub extern "C" fn dojo_string_free(s: *mut c_char) -> c_int {
    guard(|| {
        if s.is_null() {
            return Ok(());
        }
        if !STRINGS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(s as usize))
        {
            return Err(Failure(
                DOJO_ERR_ARGUMENT,
                format!("{s:p} is not a string from this library, or was freed already"),
            ));
        }
        // SAFETY: `s` came from `CString::into_raw` above and was not freed (the set said).
        drop(unsafe { CString::from_raw(s) });
        Ok(())
    })
}
