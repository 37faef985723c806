//! How much host memory a simulation may take: the least of what the host has
//! available (`MemAvailable`), the process's address-space limit (`RLIMIT_AS`, `ulimit
//! -v`) and its control group's memory limit (cgroup v2 `memory.max`, v1
//! `memory.limit_in_bytes`, less what the group already uses). [`Limits::default`]
//! allows half of it, so that a topology too large for the machine is refused before
//! anything is allocated.
//!
//! [`Limits::default`]: crate::topology::Limits

use std::fmt;
use std::path::{Path, PathBuf};

/// Which of the host's limits bounds the memory a process may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemorySource {
    /// `MemAvailable` of `/proc/meminfo`.
    Available,
    /// The process's `RLIMIT_AS` (`ulimit -v`).
    AddressSpace,
    /// The control group's memory limit less its current use.
    Cgroup,
}

impl fmt::Display for MemorySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemorySource::Available => "the host's available memory (MemAvailable)",
            MemorySource::AddressSpace => "the address-space limit (RLIMIT_AS, `ulimit -v`)",
            MemorySource::Cgroup => "the control group's memory limit (memory.max) less its use",
        })
    }
}

/// The memory a new allocation of this process can get at most, and which limit says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostMemory {
    /// Bytes.
    pub bytes: u64,
    /// The limit that gives `bytes`.
    pub source: MemorySource,
}

/// The least of the host's memory limits, or `None` where the host states none
/// (not Linux).
pub fn host_memory() -> Option<HostMemory> {
    [
        available_host_memory().map(|bytes| HostMemory { bytes, source: MemorySource::Available }),
        address_space_limit().map(|bytes| HostMemory { bytes, source: MemorySource::AddressSpace }),
        cgroup_memory_left().map(|bytes| HostMemory { bytes, source: MemorySource::Cgroup }),
    ]
    .into_iter()
    .flatten()
    .min_by_key(|m| m.bytes)
}

/// The host memory available to new allocations (Linux: `MemAvailable` of
/// `/proc/meminfo`), or `None` where the host does not say.
pub fn available_host_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The soft `RLIMIT_AS` of this process in bytes (the `getrlimit` value, read from
/// `/proc/self/limits` so that no unsafe call is needed), or `None` when unlimited.
pub fn address_space_limit() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max address space"))?;
    line.trim_start_matches("Max address space").split_whitespace().next()?.parse().ok()
}

/// What this process's control group may still allocate: for the group and each of its
/// ancestors with a limit, the limit less the group's use, the least of them; `None`
/// without a limit.
pub fn cgroup_memory_left() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut least: Option<u64> = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next()) else { continue };
        let (root, max, current) = match controllers {
            "" => (PathBuf::from("/sys/fs/cgroup"), "memory.max", "memory.current"),
            c if c.split(',').any(|c| c == "memory") => {
                (PathBuf::from("/sys/fs/cgroup/memory"), "memory.limit_in_bytes", "memory.usage_in_bytes")
            }
            _ => continue,
        };
        for dir in ancestors(&root, path) {
            let Some(limit) = read_count(&dir.join(max)) else { continue };
            let used = read_count(&dir.join(current)).unwrap_or(0);
            let left = limit.saturating_sub(used);
            least = Some(least.map_or(left, |l| l.min(left)));
        }
    }
    least
}

/// The group directory `path` under `root` and its ancestors up to `root`, those that
/// exist (inside a container the group's path may be above the mount).
fn ancestors(root: &Path, path: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut rel = PathBuf::from(path.trim_start_matches('/'));
    loop {
        let dir = root.join(&rel);
        if dir.is_dir() {
            out.push(dir);
        }
        if !rel.pop() {
            break;
        }
    }
    out
}

/// A byte count from a cgroup file; `None` for `max`, an unreadable file, or v1's
/// "no limit" (a value near `i64::MAX`).
fn read_count(path: &Path) -> Option<u64> {
    let n: u64 = std::fs::read_to_string(path).ok()?.trim().parse().ok()?;
    (n < 1 << 62).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_limit_is_at_most_each() {
        let least = host_memory().expect("Linux states MemAvailable");
        assert!(least.bytes <= available_host_memory().unwrap());
        if let Some(limit) = address_space_limit() {
            assert!(least.bytes <= limit);
        }
        if let Some(left) = cgroup_memory_left() {
            assert!(least.bytes <= left);
        }
    }

    #[test]
    fn unlimited_cgroup_values_are_no_limit() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("memory.max");
        std::fs::write(&file, "max\n").unwrap();
        assert_eq!(read_count(&file), None);
        std::fs::write(&file, "9223372036854771712\n").unwrap();
        assert_eq!(read_count(&file), None);
        std::fs::write(&file, "1073741824\n").unwrap();
        assert_eq!(read_count(&file), Some(1 << 30));
    }
}
