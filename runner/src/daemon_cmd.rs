//! `dojo daemon`: one simulated machine served to many processes over a Unix socket
//! (see `kmd_linux::daemon`), until SIGTERM or SIGINT; then the socket is removed.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, Context as _};
use clap::Args;
use kmd_linux::config::DriverConfig;
use kmd_linux::daemon::server::{Daemon, DaemonLimits};
use kmd_linux::daemon::socket_path::{LocationSource, SocketLocation};
use kmd_linux::identity::SystemIdentity;
use kmd_linux::kfd::Device;

use crate::run::{RunOptions, Session};

/// Arguments of `dojo daemon`.
#[derive(Args, Debug)]
pub struct DaemonArgs {
    #[command(flatten)]
    options: RunOptions,
    /// The socket's directory (default: `$DOJO_RUNTIME_DIR`, else
    /// `$XDG_RUNTIME_DIR/dojo`, else `/tmp/dojo-<uid>`; created 0700).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Most clients connected at once (1 to 4096); one more is refused at the handshake.
    /// Each client reserves address space for the machine's VRAM plus host memory.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=4096))]
    max_clients: u32,
    /// A client that holds no buffer and no queue and sends nothing for this long (such
    /// as `600s`) is disconnected; a new connection has 10 s for its handshake.
    #[arg(long, default_value = "600s", value_parser = wall_duration)]
    idle_timeout: std::time::Duration,
}

/// A wall-clock duration written like a simulated one (`600s`, `1500ms`).
fn wall_duration(text: &str) -> Result<std::time::Duration, String> {
    let t = simdojo::time::Tick::parse_duration_with_unit(text).map_err(|e| e.to_string())?;
    if t.0 == 0 {
        return Err("must be more than zero".into());
    }
    Ok(std::time::Duration::from_nanos(t.0 / 1000))
}

/// Where the daemon of `dir` (or of the environment) listens.
pub fn location(dir: Option<PathBuf>) -> anyhow::Result<SocketLocation> {
    match dir {
        Some(d) => SocketLocation::in_dir(d, LocationSource::DojoRuntimeDir),
        None => SocketLocation::from_env(),
    }
    .map_err(|e| anyhow!("{e}"))
}

/// Blocks SIGTERM and SIGINT in this thread (and the threads it starts later) and
/// returns the set, for `sigwait`.
fn block_stop_signals() -> libc::sigset_t {
    // SAFETY: plain signal-mask calls on a zeroed set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

/// Runs `dojo daemon`.
pub fn run(a: DaemonArgs) -> anyhow::Result<ExitCode> {
    let stop = block_stop_signals();
    let session = Session::for_daemon(&a.options)?;
    for (k, v) in session.vars() {
        std::env::set_var(k, v);
    }
    let config = DriverConfig::from_env().map_err(|e| anyhow!("{e}"))?;
    let system = SystemIdentity::from_topology(&config.topology).map_err(|e| anyhow!("{e}"))?.without_svm();
    let device = Device::start(&config, system).map_err(|e| anyhow!("{e}"))?;
    device.publish_sysfs(session.fake_root());
    let limits =
        DaemonLimits { max_clients: a.max_clients as usize, idle_timeout: a.idle_timeout, ..DaemonLimits::default() };
    let daemon = Daemon::with_limits(device.clone(), session.fake_root().to_path_buf(), limits);
    let location = location(a.dir)?;
    let listener = location.listen().map_err(|e| anyhow!("{e}"))?;
    eprintln!("dojo daemon: listening on {}", location.socket.display());
    let socket = location.socket.clone();
    let serving = daemon.clone();
    std::thread::Builder::new()
        .name("dojo-accept".into())
        .spawn(move || {
            let e = serving.accept_loop(&listener);
            eprintln!("dojo daemon: accepting connections failed: {e}");
        })
        .context("starting the accept thread")?;
    let mut signal = 0;
    // SAFETY: waits on the set blocked above.
    unsafe { libc::sigwait(&stop, &mut signal) };
    let _ = std::fs::remove_file(&socket);
    eprint!("{}", daemon.status());
    device.stop();
    drop(session);
    eprintln!("dojo daemon: stopped by signal {signal}; {} removed", socket.display());
    Ok(ExitCode::SUCCESS)
}
