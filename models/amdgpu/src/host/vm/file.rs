//! The file an embedder's checkpoint is written to ([`super::Vm::save_checkpoint`]):
//! everything needed to rebuild the machine (the topology with its overrides applied,
//! the worker count, the loaded program's launch) around the engine's own checkpoint.
//!
//! ```text
//!  0  magic      "DOJOVM\0\x01" (the last byte is the format version)
//!  8  checksum   u32 LE, CRC-32C of the payload
//! 12  payload    postcard of `Saved` (the engine checkpoint inside keeps its own
//!                header and checksum)
//! ```
//!
//! Reading checks the magic, reads no more than the file's size (a device or pipe is
//! refused, so `/dev/zero` cannot exhaust memory), checks the checksum, then decodes.

use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};
use simdojo::topology::Topology;

use super::{ProgramLaunch, VmError};

/// Magic and format version.
const MAGIC: [u8; 8] = *b"DOJOVM\0\x01";
/// Bytes before the payload.
const HEADER: usize = 12;

/// What a VM checkpoint holds.
#[derive(Serialize, Deserialize)]
pub(super) struct Saved {
    /// The machine, overrides applied.
    pub topology: Topology,
    /// Worker threads of the saved VM.
    pub workers: u32,
    /// The loaded program, if any.
    pub program: Option<ProgramLaunch>,
    /// `simdojo::engine::Checkpoint` bytes.
    pub engine: Vec<u8>,
}

fn bad(path: &Path, why: impl std::fmt::Display) -> VmError {
    VmError::Checkpoint(format!("{}: {why}", path.display()))
}

/// Writes `saved` to `path` atomically (a temporary file beside it, then a rename).
pub(super) fn write(path: &Path, saved: &Saved) -> Result<(), VmError> {
    let payload = postcard::to_allocvec(saved).map_err(|e| bad(path, e))?;
    let mut bytes = Vec::with_capacity(HEADER + payload.len());
    bytes.extend_from_slice(&MAGIC);
    bytes.extend_from_slice(&crc32c::crc32c(&payload).to_le_bytes());
    bytes.extend_from_slice(&payload);
    simdojo::fs::write_atomically(path, &bytes).map_err(|e| VmError::Io(format!("writing {}: {e}", path.display())))
}

/// Reads and checks a file written by [`write`].
pub(super) fn read(path: &Path) -> Result<Saved, VmError> {
    let io = |e: std::io::Error| VmError::Io(format!("reading {}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(bad(path, "not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(meta.len()).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() < HEADER || bytes[..6] != MAGIC[..6] {
        return Err(bad(path, "not a simdojo VM checkpoint (no DOJOVM header)"));
    }
    if bytes[7] != MAGIC[7] {
        return Err(bad(
            path,
            format!(
                "VM checkpoint format {}, this library reads {}",
                bytes[7], MAGIC[7]
            ),
        ));
    }
    let stored = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    let payload = &bytes[HEADER..];
    let crc = crc32c::crc32c(payload);
    if crc != stored {
        return Err(bad(
            path,
            format!("corrupted: the checksum is {crc:#010x}, the header says {stored:#010x}"),
        ));
    }
    postcard::from_bytes(payload).map_err(|e| bad(path, format!("undecodable payload: {e}")))
}
