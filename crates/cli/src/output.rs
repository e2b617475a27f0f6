//! Outputs that never harm (issue 38): where an `-o PATH` goes, decided before any work.
//!
//! - `-`: standard output, streamed; a closed pipe ends the program quietly
//!   ([`Error::BrokenPipe`], exit status 141 as after `SIGPIPE`).
//! - A symlink is followed: its target is what gets written.
//! - A character device, FIFO or socket is opened for writing and streamed: never replaced.
//! - A regular file or a new path: a temporary file `.sptrans-*.part` in the same directory,
//!   renamed over the path once complete. It gets the existing file's mode, or `0666 & !umask`
//!   for a new file. It is removed on every error and on SIGINT / SIGTERM / SIGHUP (the handler
//!   removes it and exits with 130).
//! - An existing file is replaced only where the user could write it in place (the shell's `>`
//!   would): a read-only file, or another user's file not writable by this one, is refused
//!   before any work; a file owned by someone else keeps its owner and group (the temporary
//!   file takes them, or, where this user may not give them, the finished bytes are copied into
//!   the file in place).
//! - An output that is also an input of the command (the same file, however named) is refused.
//! - Anything else (a directory, a missing or unwritable directory) is an error before any
//!   reading or computing: commands call [`check`] on every output path first.
use std::io::ErrorKind;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::{Error, Result};

/// Where an output goes.
pub(crate) enum Destination {
    /// Standard output.
    Stdout,
    /// A character device, FIFO or socket (the symlink resolved): written directly.
    Special(PathBuf),
    /// A regular file or a new path (the symlink resolved), with the mode the result gets and,
    /// for an existing file, its owner and group (kept).
    Regular { target: PathBuf, mode: u32, owner: Option<(u32, u32)> },
}

fn err(path: &Path, msg: String) -> Error {
    Error::Output { path: path.to_path_buf(), msg }
}

/// An I/O error while writing `path`: a closed pipe is [`Error::BrokenPipe`].
pub(crate) fn io_error(path: &Path, e: std::io::Error) -> Error {
    if e.kind() == ErrorKind::BrokenPipe {
        Error::BrokenPipe
    } else {
        err(path, e.to_string())
    }
}

/// The process's umask (`/proc/self/status`; 022 where it cannot be read).
fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Umask:").and_then(|v| u32::from_str_radix(v.trim(), 8).ok())))
        .unwrap_or(0o022)
}

impl Destination {
    /// Decides where `path` goes (following a symlink), checking that it can be written: the
    /// directory of a new or regular file must exist and be writable; a directory is refused.
    ///
    /// # Errors
    /// [`Error::Output`] naming the path and the reason.
    pub(crate) fn of(path: &Path) -> Result<Destination> {
        if path.as_os_str() == "-" {
            return Ok(Destination::Stdout);
        }
        let name = path.to_string_lossy();
        if let Some(ext) = [".lz4", ".zip", ".7z"].into_iter().find(|e| name.ends_with(e)) {
            return Err(err(path, format!("{ext} compression is not written; use .gz, .zst, .xz or .bz2, or no extension for plain text")));
        }
        let target = match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => {
                // Written through to the target (which may not exist yet: a dangling link makes it).
                let link = std::fs::read_link(path).map_err(|e| err(path, format!("cannot read the symlink: {e}")))?;
                match path.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                }
            }
            _ => path.to_path_buf(),
        };
        match std::fs::metadata(&target) {
            Ok(m) => {
                let t = m.file_type();
                if t.is_dir() {
                    Err(err(path, "is a directory".into()))
                } else if t.is_char_device() || t.is_fifo() || t.is_socket() || t.is_block_device() {
                    Ok(Destination::Special(target))
                } else {
                    // Replaced only where it could be written in place: opening it for writing
                    // (no truncation, nothing changed) asks the kernel exactly that.
                    if let Err(e) = std::fs::OpenOptions::new().write(true).open(&target) {
                        return Err(err(path, format!("cannot replace it: {e} (the file is not writable by this user)")));
                    }
                    check_dir(path, &target)?;
                    Ok(Destination::Regular { mode: m.permissions().mode() & 0o7777, owner: Some((m.uid(), m.gid())), target })
                }
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {
                check_dir(path, &target)?;
                Ok(Destination::Regular { target, mode: 0o666 & !umask(), owner: None })
            }
            Err(e) => Err(err(path, e.to_string())),
        }
    }
}

/// The directory a temporary file for `target` goes to must exist, be a directory and be
/// writable.
fn check_dir(path: &Path, target: &Path) -> Result<()> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(err(path, format!("{} is not a directory", dir.display()))),
        Err(e) => return Err(err(path, format!("directory {}: {e}", dir.display()))),
    }
    // Writable: the same check the temporary file will need, made now, before any work.
    tempfile::Builder::new()
        .prefix(".sptrans-check-")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|e| err(path, format!("cannot write in {}: {e}", dir.display())))
}

/// Refuses an output that is one of the command's inputs (the same file, through any name or
/// link): writing it would destroy what is being read.
///
/// # Errors
/// [`Error::Output`] naming the output and the input.
pub(crate) fn distinct(output: &Path, inputs: &[&Path]) -> Result<()> {
    if output.as_os_str() == "-" {
        return Ok(());
    }
    let Ok(o) = std::fs::metadata(output) else { return Ok(()) };
    for input in inputs.iter().filter(|p| p.as_os_str() != "-") {
        if let Ok(i) = std::fs::metadata(input) {
            if i.dev() == o.dev() && i.ino() == o.ino() && o.is_file() {
                return Err(err(output, format!("is also the input {}: refusing to overwrite it (write elsewhere)", input.display())));
            }
        }
    }
    Ok(())
}

/// Checks an output path before any work: see [`Destination::of`].
///
/// # Errors
/// As [`Destination::of`].
pub(crate) fn check(path: &Path) -> Result<()> {
    Destination::of(path).map(drop)
}

/// Temporary files alive now, removed by the signal handler.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Installs (once) the handler that removes the live temporary files on SIGINT, SIGTERM and
/// SIGHUP and exits with status 130.
fn install_handler() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            if let Ok(live) = LIVE.lock() {
                for p in live.iter() {
                    let _ = std::fs::remove_file(p);
                }
            }
            std::process::exit(130);
        });
    });
}

/// A temporary file beside the output, removed on drop (errors) and by the signal handler;
/// [`Temporary::persist`] renames it into place.
pub(crate) struct Temporary {
    file: Option<tempfile::NamedTempFile>,
    path: PathBuf,
}

impl Temporary {
    /// A new temporary file in `target`'s directory, with `mode`.
    ///
    /// # Errors
    /// [`Error::Output`] when it cannot be created.
    pub(crate) fn beside(target: &Path, mode: u32) -> Result<Temporary> {
        install_handler();
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let file = tempfile::Builder::new()
            .prefix(".sptrans-")
            .suffix(".part")
            .permissions(std::fs::Permissions::from_mode(mode))
            .tempfile_in(dir)
            .map_err(|e| err(target, format!("cannot create a temporary file in {}: {e}", dir.display())))?;
        // tempfile applies the mode through the umask: set it exactly.
        let _ = std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(mode));
        let path = file.path().to_path_buf();
        if let Ok(mut live) = LIVE.lock() {
            live.push(path.clone());
        }
        Ok(Temporary { file: Some(file), path })
    }

    /// The open file.
    pub(crate) fn file(&self) -> &std::fs::File {
        match &self.file {
            Some(f) => f.as_file(),
            None => unreachable!("the temporary file is held until persisted"),
        }
    }

    /// Syncs and renames it over `target`. An existing file owned by someone else (`owner`)
    /// keeps its owner and group: the temporary file takes them first, or, where this user may
    /// not give them away, its bytes are copied into the existing file in place.
    ///
    /// # Errors
    /// [`Error::Output`] when the sync, the rename or the copy fails (the temporary file is
    /// removed).
    pub(crate) fn persist(mut self, target: &Path, owner: Option<(u32, u32)>) -> Result<()> {
        let file = self.file.take().ok_or_else(|| err(target, "temporary file already gone".into()))?;
        file.as_file().sync_all().map_err(|e| err(target, e.to_string()))?;
        if let Some((uid, gid)) = owner {
            let mine = file.as_file().metadata().map_err(|e| err(target, e.to_string()))?;
            if (mine.uid(), mine.gid()) != (uid, gid) && std::os::unix::fs::fchown(file.as_file(), Some(uid), Some(gid)).is_err() {
                let mut src = file.reopen().map_err(|e| err(target, e.to_string()))?;
                let mut dst = std::fs::OpenOptions::new()
                    .write(true)
                    .truncate(true)
                    .open(target)
                    .map_err(|e| err(target, format!("cannot write it in place: {e}")))?;
                std::io::copy(&mut src, &mut dst).map_err(|e| err(target, format!("cannot write it in place: {e}")))?;
                dst.sync_all().map_err(|e| err(target, e.to_string()))?;
                return Ok(());
            }
        }
        file.persist(target).map_err(|e| err(target, format!("cannot move the finished file into place: {}", e.error)))?;
        Ok(())
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        // NamedTempFile removes itself when dropped unpersisted; forget it in the handler's list.
        if let Ok(mut live) = LIVE.lock() {
            live.retain(|p| p != &self.path);
        }
    }
}

/// A writer that remembers whether a write failed because the reader closed the pipe (the
/// bodies that write outputs report errors as text).
pub(crate) struct Watch<W: std::io::Write> {
    inner: W,
    broken: bool,
}

impl<W: std::io::Write> Watch<W> {
    pub(crate) fn new(inner: W) -> Self {
        Self { inner, broken: false }
    }

    /// Whether a write or flush met a closed pipe.
    pub(crate) fn broken(&self) -> bool {
        self.broken
    }

    fn note<T>(&mut self, r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r {
            self.broken |= e.kind() == ErrorKind::BrokenPipe;
        }
        r
    }
}

impl<W: std::io::Write> std::io::Write for Watch<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.inner.write(buf);
        self.note(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.flush();
        self.note(r)
    }
}
