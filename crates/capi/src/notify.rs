//! libselinux's netlink socket, which the kernel makes readable at every policy load and
//! enforcing switch: here an eventfd, written by the library's own listeners (a reload, a
//! boolean commit, security_setenforce) and drained by avc_netlink_check_nb. It exists once a
//! program asks for it.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use once_cell::race::OnceBox;

use crate::ffi::{Errno, Res};

/// Made racing (two threads asking at once each make one, the second closed), never waited
/// for: see [`crate::fork`].
static EVENTS: OnceBox<Option<OwnedFd>> = OnceBox::new();

fn events() -> Option<&'static OwnedFd> {
    EVENTS
        .get_or_init(|| {
            Box::new(
                rustix::event::eventfd(
                    0,
                    rustix::event::EventfdFlags::CLOEXEC | rustix::event::EventfdFlags::NONBLOCK,
                )
                .ok(),
            )
        })
        .as_ref()
}

/// The descriptor (made at the first call).
pub(crate) fn fd() -> Res<i32> {
    events().map(|f| f.as_raw_fd()).ok_or(Errno(libc::EMFILE))
}

/// A change happened: the descriptor becomes readable (if anyone asked for it).
pub(crate) fn changed() {
    if let Some(Some(f)) = EVENTS.get() {
        let _ = rustix::io::write(f.as_fd(), &1u64.to_ne_bytes());
    }
}

/// Takes every pending notification.
pub(crate) fn drain() {
    if let Some(Some(f)) = EVENTS.get() {
        let mut b = [0u8; 8];
        let _ = rustix::io::read(f.as_fd(), &mut b);
    }
}
