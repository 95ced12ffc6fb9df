//! Opening a policy: only a regular file, bounded, read without blocking; every failure an
//! error naming the path and the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use seaccess_engine::{Engine, EngineError};
use seaccess_testkit::compile;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("seaccess-engine-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `Engine::open(path)` on another thread, failed if it takes more than 10 s: a reader that
/// blocks on a FIFO or reads a device without end shows as a failure, not a hung run.
fn open_within_deadline(path: &Path) -> Result<Engine, EngineError> {
    let (tx, rx) = mpsc::channel();
    let p = path.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(Engine::open(&p));
    });
    rx.recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("opening {} did not finish within 10 s", path.display()))
}

fn refused(path: &Path, words: &str) {
    let e = match open_within_deadline(path) {
        Ok(_) => panic!("{} was opened as a policy", path.display()),
        Err(e) => e,
    };
    assert!(matches!(e, EngineError::Read(_)), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains(&path.display().to_string()) && text.contains(words),
        "{text}"
    );
}

#[test]
fn a_directory_a_fifo_and_a_device_are_refused_by_kind() {
    let d = scratch("kinds");
    refused(&d, "directory");
    let fifo = d.join("fifo");
    rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::RUSR).unwrap();
    refused(&fifo, "FIFO");
    refused(Path::new("/dev/zero"), "character device");
    refused(&d.join("missing"), "No such file");
}

#[test]
fn a_file_past_the_bound_is_refused_before_it_is_read() {
    let d = scratch("big");
    let big = d.join("policy.33");
    let f = std::fs::File::create(&big).unwrap();
    // Sparse: the size is what is refused, no disk or memory is spent.
    f.set_len(seaccess_security::MAX_POLICY_FILE + 1).unwrap();
    refused(&big, "larger than");
}

#[test]
fn a_truncated_policy_is_a_load_error_naming_the_path() {
    let full = std::fs::read(compile("example", 33)).unwrap();
    let d = scratch("truncated");
    let cut = d.join("policy.33");
    std::fs::write(&cut, &full[..full.len() / 2]).unwrap();
    let e = match Engine::open(&cut) {
        Ok(_) => panic!("half a policy was loaded"),
        Err(e) => e,
    };
    assert!(matches!(e, EngineError::Load { .. }), "{e:?}");
    let text = e.to_string();
    assert!(text.starts_with(&format!("{}: ", cut.display())), "{text}");
    // The same bytes from memory are called what they are.
    let e = Engine::from_bytes(&full[..full.len() / 2]).err().unwrap();
    assert!(e.to_string().starts_with("policy image: "), "{e}");
    // And the whole file opens.
    let engine = Engine::open(compile("example", 33)).unwrap();
    assert_eq!(engine.seqno().0, 1);
}

/// The bare server is read by the engine's one reader: a directory or a truncated policy is
/// refused with its path named, as `Engine::open` refuses it.
#[test]
fn a_bare_server_is_read_as_the_engine_reads_one() {
    let d = scratch("bare");
    let e = seaccess_engine::load_server(&d).err().unwrap();
    assert!(matches!(e, EngineError::Read(_)), "{e:?}");
    assert!(e.to_string().contains(&d.display().to_string()), "{e}");
    let data = std::fs::read(compile("example", 33)).unwrap();
    let cut = d.join("cut.33");
    std::fs::write(&cut, &data[..data.len() / 2]).unwrap();
    let e = seaccess_engine::load_server(&cut).err().unwrap();
    assert!(matches!(e, EngineError::Load { .. }), "{e:?}");
    assert!(e.to_string().starts_with(&cut.display().to_string()), "{e}");
    let s = seaccess_engine::load_server(compile("example", 33)).unwrap();
    assert!(s.snapshot().class("file").is_ok());
    std::fs::remove_dir_all(&d).unwrap();
}
