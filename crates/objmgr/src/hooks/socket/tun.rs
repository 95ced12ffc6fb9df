//! TUN/TAP device hooks (hooks.c, selinux_tun_dev_*): a userspace network stack handing out
//! tun devices (as a sandbox's netstack does) labels each device and the socket behind it.

use std::sync::atomic::{AtomicU32, Ordering::*};

use seaccess_types::Sid;

use super::{SocketSec, SECINITSID_UNLABELED};
use crate::audit::AuditData;
use crate::classes::{tun_socket, Class};
use crate::counters::Hook;
use crate::cred::Task;
use crate::error::Result;
use crate::ObjectManager;

/// A tun device's blob (tun_security_struct): its SID, which opening it relabels.
#[derive(Debug)]
pub struct TunSec {
    sid: AtomicU32,
}

impl TunSec {
    /// The device's SID now.
    pub fn sid(&self) -> Sid {
        Sid(self.sid.load(Acquire))
    }
}

impl ObjectManager {
    /// A new tun device's blob (selinux_tun_dev_alloc_security): the creating task's SID.
    pub fn tun_dev_alloc_security(&self, task: &Task) -> TunSec {
        TunSec {
            sid: AtomicU32::new(task.sid().0),
        }
    }

    /// TUNSETIFF creating a device (selinux_tun_dev_create): `tun_socket {create}` from the
    /// task to itself (not its setsockcreatecon SID: the device's socket is the kernel's own).
    pub fn tun_dev_create(&self, task: &Task) -> Result<()> {
        self.check(
            Hook::TunDevCreate,
            task,
            task.sid(),
            Class::TUN_SOCKET,
            tun_socket::CREATE,
            &AuditData::None,
        )
        .map(|_| ())
    }

    /// Attaching a queue to a multiqueue device (selinux_tun_dev_attach_queue): `tun_socket
    /// {attach_queue}` from the task to the device.
    pub fn tun_dev_attach_queue(&self, task: &Task, tun: &TunSec) -> Result<()> {
        self.check(
            Hook::TunDevAttachQueue,
            task,
            tun.sid(),
            Class::TUN_SOCKET,
            tun_socket::ATTACH_QUEUE,
            &AuditData::None,
        )
        .map(|_| ())
    }

    /// The socket a device's queue uses (selinux_tun_dev_attach): the device's SID, class
    /// `tun_socket`. No check.
    pub fn tun_dev_attach(&self, tun: &TunSec) -> SocketSec {
        SocketSec::new(
            tun.sid(),
            Class::TUN_SOCKET,
            0,
            0,
            self.initial_or_null(SECINITSID_UNLABELED),
        )
    }

    /// TUNSETIFF opening an existing persistent device (selinux_tun_dev_open): `tun_socket
    /// {relabelfrom}` from the task to the device, then `{relabelto}` from the task to itself;
    /// the device then takes the task's SID.
    pub fn tun_dev_open(&self, task: &Task, tun: &TunSec) -> Result<()> {
        let hook = Hook::TunDevOpen;
        let sid = task.sid();
        self.check(
            hook,
            task,
            tun.sid(),
            Class::TUN_SOCKET,
            tun_socket::RELABELFROM,
            &AuditData::None,
        )?;
        self.check(
            hook,
            task,
            sid,
            Class::TUN_SOCKET,
            tun_socket::RELABELTO,
            &AuditData::None,
        )?;
        tun.sid.store(sid.0, Release);
        Ok(())
    }
}
