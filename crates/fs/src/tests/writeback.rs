//! The kernel's write-back of a shared map (issue 35 item 7): a WRITE with no calling process
//! reaches the backing file only through an open for writing, as the kernel sends it; the
//! same WRITE as a caller's (checked, a caller needed) is refused.

use std::ffi::OsStr;

use super::{errno, req, Scratch};
use crate::core::Req;

// Break tried: Core::writeback without its access-mode test: the error came from pwrite on the
// backing descriptor (EBADF, which guards it a second time) without the explanation, and the
// test failed on the message.
#[test]
fn a_write_back_goes_through_an_open_for_writing_only() {
    let Some(pol) = super::ready("writeback") else {
        return;
    };
    let s = Scratch::new("writeback");
    std::fs::write(s.src().join("f"), "0123456789").unwrap();
    let core = s.core(&pol);
    let r = req();
    let (n, _) = core.lookup(r, 1, OsStr::new("f")).unwrap();
    let ro = core.open(r, n.id, libc::O_RDONLY).unwrap();
    let e = core.writeback(ro, 0, b"XX").unwrap_err();
    assert_eq!(e.errno(), libc::EBADF);
    assert!(
        e.to_string()
            .contains("write-back through an open for reading"),
        "{e}"
    );
    assert_eq!(
        std::fs::read(s.src().join("f")).unwrap(),
        b"0123456789",
        "the open for reading wrote"
    );
    let rw = core.open(r, n.id, libc::O_RDWR).unwrap();
    assert_eq!(core.writeback(rw, 4, b"ab").unwrap(), 2);
    assert_eq!(std::fs::read(s.src().join("f")).unwrap(), b"0123ab6789");
    // The write-back's request carries no caller: as a caller's write it is refused.
    let none = Req {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    assert_eq!(errno(core.write(none, rw, 0, b"YY")), libc::EACCES);
    assert_eq!(std::fs::read(s.src().join("f")).unwrap(), b"0123ab6789");
    assert_ne!(
        errno(core.writeback(ro + rw + 1, 0, b"ZZ")),
        0,
        "an unknown handle"
    );
    core.release(ro);
    core.release(rw);
}
