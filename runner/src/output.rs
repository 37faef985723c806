//! Writing the command's results to standard output without panicking: `out!` and
//! `outln!` are `print!` and `println!` that return an error instead. A closed pipe
//! (`dojo plugins | head -1`) becomes [`BrokenPipe`], which `main` turns into a quiet
//! exit; any other failure (a full disk, `> /dev/full`) is reported with what was
//! being written.

use std::io::Write;

/// The reader of standard output went away: stop quietly.
#[derive(Debug)]
pub struct BrokenPipe;

impl std::fmt::Display for BrokenPipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("standard output was closed")
    }
}

impl std::error::Error for BrokenPipe {}

/// Writes `args` to standard output.
pub fn write(args: std::fmt::Arguments<'_>) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_fmt(args).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(BrokenPipe.into()),
        Err(e) => Err(anyhow::Error::new(e).context("writing to standard output")),
    }
}

/// `print!` that returns an error (see the [module docs](self)).
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::write(format_args!($($arg)*)) };
}

/// `println!` that returns an error (see the [module docs](self)).
macro_rules! outln {
    () => { $crate::output::write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::output::write(format_args!("{}\n", format_args!($($arg)*))) };
}

pub(crate) use {out, outln};
