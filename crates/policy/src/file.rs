//! Reading a binary policy from a path: the one place this crate does I/O.
//!
//! A policy path can come from a user who is not the one running the program (an environment
//! variable of a setuid program, a mount option, a Python argument), so whatever it names must
//! neither hang the reader nor exhaust its memory: a FIFO with no writer blocks `open` and
//! `read` forever, `/dev/zero` reads without end, a huge sparse file asks for gigabytes. A policy
//! is therefore a regular file, opened without blocking, and read up to a bound.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use rustix::fs::{Mode, OFlags};

use crate::error::{PolicyError, Result};

/// The largest policy file read, in bytes: 256 MiB.
///
/// Real policies are far smaller: Debian's refpolicy (default and MLS, version 33) is about
/// 2.1 MiB, and distributions' policies are a few MiB (the largest part of a big one is its
/// filename transitions); the kernel itself has no limit but its memory. A hundred times
/// Debian's leaves room for policies built from much larger modules, while a file past it
/// (which the reader would hold whole, then parse into several times its size) is refused
/// before it is read.
pub const MAX_POLICY_FILE: u64 = 256 << 20;

/// The bytes of the policy file at `path`: a regular file of at most [`MAX_POLICY_FILE`] bytes.
///
/// The file is opened with `O_NONBLOCK` (a FIFO's open must not wait for a writer),
/// `O_NOCTTY` and `O_CLOEXEC`; its type and size are taken from the open descriptor (never
/// from the path again, which may be replaced meanwhile). Errors name the path: one that cannot
/// be opened or read ([`PolicyError::Io`]), a directory, FIFO, device or socket
/// ([`PolicyError::NotRegularFile`]), a file larger than the bound, or one that grew past it
/// while it was read ([`PolicyError::TooLarge`]).
pub fn read_file(path: impl AsRef<Path>) -> Result<Vec<u8>> {
    read_bounded(path.as_ref(), MAX_POLICY_FILE)
}

fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>> {
    let io = |source: std::io::Error| PolicyError::Io {
        path: path.to_path_buf(),
        source,
    };
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io(e.into()))?;
    let file = File::from(fd);
    let meta = file.metadata().map_err(io)?;
    let kind = kind_of(&meta.file_type());
    if kind != "regular file" {
        return Err(PolicyError::NotRegularFile {
            path: path.to_path_buf(),
            kind,
        });
    }
    if meta.len() > max {
        return Err(PolicyError::TooLarge {
            path: path.to_path_buf(),
            size: meta.len(),
            max,
        });
    }
    let mut data = Vec::new();
    // The size fstat gave, which is at most `max`: one allocation for a file that does not grow.
    data.try_reserve_exact(usize::try_from(meta.len()).unwrap_or(0))
        .map_err(|_| {
            io(std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                format!("no memory for {} bytes", meta.len()),
            ))
        })?;
    // One byte past the bound tells a file that grew past it from one that ends there.
    file.take(max.saturating_add(1))
        .read_to_end(&mut data)
        .map_err(io)?;
    let read = data.len() as u64;
    if read > max {
        return Err(PolicyError::TooLarge {
            path: path.to_path_buf(),
            size: read,
            max,
        });
    }
    Ok(data)
}

/// What a file type is, in the words of an error message.
fn kind_of(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_file() {
        "regular file"
    } else if t.is_dir() {
        "directory"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use std::path::PathBuf;
    use std::sync::mpsc;
    use std::time::Duration;

    /// `read_file(path)` on another thread, failed if it takes longer than a few seconds: a
    /// reader that blocks shows as a failure, not a hung test run.
    fn read_within_deadline(path: PathBuf) -> Result<Vec<u8>> {
        let (tx, rx) = mpsc::channel();
        let p = path.clone();
        std::thread::spawn(move || {
            let _ = tx.send(read_file(&p));
        });
        rx.recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("reading {} did not finish within 10 s", path.display()))
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "seaccess-policy-file-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_fifo_is_refused_at_once() {
        let d = scratch("fifo");
        let fifo = d.join("policy");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let e = read_within_deadline(fifo.clone()).unwrap_err();
        assert!(
            matches!(e, PolicyError::NotRegularFile { kind: "FIFO", .. }),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            format!(
                "{}: not a regular file but a FIFO: a policy is read from a regular file",
                fifo.display()
            )
        );
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn dev_zero_and_a_directory_are_refused() {
        let e = read_within_deadline("/dev/zero".into()).unwrap_err();
        assert!(
            matches!(
                e,
                PolicyError::NotRegularFile {
                    kind: "character device",
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().starts_with("/dev/zero: "), "{e}");
        let d = scratch("dir");
        let e = read_within_deadline(d.clone()).unwrap_err();
        assert!(
            matches!(
                e,
                PolicyError::NotRegularFile {
                    kind: "directory",
                    ..
                }
            ),
            "{e}"
        );
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_file_past_the_bound_is_refused_unread() {
        let d = scratch("big");
        let big = d.join("policy");
        // Sparse: no block of it is written, and none is read.
        File::create(&big)
            .unwrap()
            .set_len(MAX_POLICY_FILE + 1)
            .unwrap();
        let e = read_within_deadline(big.clone()).unwrap_err();
        assert!(
            matches!(e, PolicyError::TooLarge { size, max: MAX_POLICY_FILE, .. } if size == MAX_POLICY_FILE + 1),
            "{e}"
        );
        assert!(
            e.to_string().starts_with(&format!("{}: ", big.display())),
            "{e}"
        );
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_file_at_the_bound_is_read_whole_and_one_past_it_is_refused() {
        let d = scratch("bound");
        let f = d.join("policy");
        std::fs::write(&f, b"0123456789").unwrap();
        assert_eq!(read_bounded(&f, 10).unwrap(), b"0123456789");
        assert!(matches!(
            read_bounded(&f, 9),
            Err(PolicyError::TooLarge {
                size: 10,
                max: 9,
                ..
            })
        ));
        std::fs::remove_dir_all(d).unwrap();
    }

    /// A file with more bytes than fstat said (one that grew, or a /proc file, whose size is 0):
    /// the read itself stops one byte past the bound.
    #[test]
    fn a_file_longer_than_its_size_is_cut_at_the_bound() {
        let e = read_bounded(Path::new("/proc/self/status"), 16).unwrap_err();
        assert!(
            matches!(
                e,
                PolicyError::TooLarge {
                    size: 17,
                    max: 16,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn a_missing_file_is_an_io_error_naming_it() {
        let e = read_file("/nonexistent/policy.33").unwrap_err();
        match &e {
            PolicyError::Io { source, .. } => {
                assert_eq!(source.kind(), std::io::ErrorKind::NotFound)
            }
            e => panic!("{e}"),
        }
        assert!(e.to_string().starts_with("/nonexistent/policy.33: "), "{e}");
    }
}
