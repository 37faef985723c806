//! File helpers shared by the engine and its embedders.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically: into a temporary file in the same directory,
/// synced, then renamed over `path`, so a reader sees the old file or the whole new one
/// and a failed write (a full disk) leaves `path` as it was. The file gets mode 0644 on
/// Unix, like a file `std::fs::write` creates under the usual umask.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".partial-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o644));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_data()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Reads the file at `path` whole, refusing one of more than `limit` bytes with an error
/// of kind `FileTooLarge` that says so: no more than `limit + 1` bytes are read, so a
/// device such as `/dev/zero` or an endless pipe cannot exhaust memory.
pub fn read_bounded(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let too_large = || std::io::Error::new(std::io::ErrorKind::FileTooLarge, format!("the file is larger than {limit} bytes"));
    let meta = file.metadata()?;
    if meta.is_file() && meta.len() > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_bounded_stops_at_the_limit_even_on_an_endless_device() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"12345").unwrap();
        assert_eq!(read_bounded(&path, 5).unwrap(), b"12345");
        assert_eq!(read_bounded(&path, 4).unwrap_err().kind(), std::io::ErrorKind::FileTooLarge);
        let e = read_bounded(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::FileTooLarge);
        assert!(e.to_string().contains("larger than 1048576 bytes"), "{e}");
    }

    #[test]
    fn replaces_the_file_whole_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        write_atomically(&path, b"first").unwrap();
        write_atomically(&path, b"second, longer").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second, longer");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.bin")]);
    }

    #[test]
    fn a_missing_directory_is_an_error_and_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no/such/dir/out.bin");
        let e = write_atomically(&path, b"x").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    }
}
