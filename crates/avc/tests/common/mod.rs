//! What the cache's tests share: the names a scripted server gives, and a deadline for tests
//! that wait on other threads.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use seaccess_types::{ClassId, PolicyNames, Seqno, Sid};

/// A scripted server's names at one seqno: SID n is `u:r:tn`, every class is `class`, and
/// bit b is `perm` if given, else `pb`.
struct Names {
    seqno: Seqno,
    class: &'static str,
    perm: Option<&'static str>,
}

impl PolicyNames for Names {
    fn seqno(&self) -> Seqno {
        self.seqno
    }
    fn class_id(&self, name: &str) -> Option<ClassId> {
        (name == self.class).then_some(ClassId(1))
    }
    fn perm_bit(&self, _: ClassId, _: &str) -> Option<u32> {
        None
    }
    fn class_name(&self, _: ClassId) -> Option<String> {
        Some(self.class.into())
    }
    fn perm_name(&self, _: ClassId, bit: u32) -> Option<String> {
        Some(self.perm.map_or_else(|| format!("p{bit}"), String::from))
    }
    fn sid_to_context(&self, sid: Sid) -> Option<String> {
        Some(format!("u:r:t{}", sid.0))
    }
}

pub fn names(
    seqno: Seqno,
    class: &'static str,
    perm: Option<&'static str>,
) -> Arc<dyn PolicyNames> {
    Arc::new(Names { seqno, class, perm })
}

/// Ends the test process, naming `what`, unless the guard is dropped within `limit` (the
/// cache's crate cannot use the testkit's, which depends on it).
#[must_use]
pub fn deadline(what: &str, limit: Duration) -> std::sync::mpsc::Sender<()> {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let what = what.to_string();
    std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(limit) {
            eprintln!("DEADLINE: {what} did not finish within {limit:?}: ending the test process");
            std::process::abort();
        }
    });
    tx
}
