//! The oracle's socket and SysV IPC operations, as the probe performs them (socket, bind to
//! 127.0.0.1, the get of a new IPC_PRIVATE object and its IPC_RMID), through objmgr's socket
//! and IPC hooks in the kernel's order.

use std::net::{Ipv4Addr, SocketAddr};

use seaccess_lab::LabError;
use seaccess_objmgr::hooks::ipc::ipc_cmd::IPC_RMID;
use seaccess_objmgr::hooks::socket::{family, SockAddr, SocketSec};
use seaccess_objmgr::{ObjectManager, ObjmgrError, Task};

/// CAP_NET_BIND_SERVICE (include/uapi/linux/capability.h).
const CAP_NET_BIND_SERVICE: u32 = 10;

fn refused(what: &str, e: ObjmgrError) -> LabError {
    LabError::Refused {
        what: format!("{what}: {e}"),
        errno: e.errno(),
    }
}

/// socket(2) of the probe's KIND (selinux_socket_create); `Err` for a kind it does not know.
fn new_socket(
    om: &ObjectManager,
    task: &Task,
    kind: &str,
) -> Result<Result<SocketSec, LabError>, String> {
    let (fam, ty) = match kind {
        "tcp" => (family::INET, libc::SOCK_STREAM),
        "udp" => (family::INET, libc::SOCK_DGRAM),
        "unix" => (family::UNIX, libc::SOCK_STREAM),
        _ => return Err(format!("{kind}: no such socket kind")),
    };
    Ok(om
        .socket_create(task, fam, ty, 0, false)
        .map_err(|e| refused(&format!("socket {kind}"), e)))
}

/// socket:KIND: the socket's creation (its close asks nothing).
pub fn socket(om: &ObjectManager, task: &Task, kind: &str) -> Result<Result<(), LabError>, String> {
    Ok(new_socket(om, task, kind)?.map(|_| ()))
}

/// KIND,PORT: a new socket of KIND and the address 127.0.0.1:PORT (the probe's bind and
/// connect), or the socket's refusal.
fn loopback(
    om: &ObjectManager,
    task: &Task,
    arg: &str,
) -> Result<Result<(SocketSec, SockAddr, u16), LabError>, String> {
    let (kind, port) = arg
        .split_once(',')
        .ok_or_else(|| format!("{arg}: not KIND,PORT"))?;
    let port: u16 = port.parse().map_err(|_| format!("{arg}: not a port"))?;
    Ok(new_socket(om, task, kind)?.map(|sock| {
        let addr = SockAddr::Inet(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
        (sock, addr, port)
    }))
}

/// bind:KIND,PORT: the socket, selinux_socket_bind ({bind}, {name_bind} where the port asks it,
/// {node_bind}), then inet_bind's own CAP_NET_BIND_SERVICE for a port below 1024 (the kernel
/// asks it after the LSM hook, in __inet_bind).
pub fn bind(om: &ObjectManager, task: &Task, arg: &str) -> Result<Result<(), LabError>, String> {
    let (sock, addr, port) = match loopback(om, task, arg)? {
        Ok(s) => s,
        Err(e) => return Ok(Err(e)),
    };
    let what = format!("bind {arg}");
    Ok(om
        .socket_bind(task, &sock, &addr)
        .and_then(|()| {
            if port < 1024 {
                om.capable(task, CAP_NET_BIND_SERVICE)
            } else {
                Ok(())
            }
        })
        .map_err(|e| refused(&what, e)))
}

/// connect:KIND,PORT: a new socket of KIND connected to 127.0.0.1:PORT
/// (selinux_socket_connect: `{connect}`, and `{name_connect}` on the port's SID for TCP). The
/// probe reports a connect the LSMs let through as ok, whether or not anything listens.
pub fn connect(om: &ObjectManager, task: &Task, arg: &str) -> Result<Result<(), LabError>, String> {
    let (sock, addr, _) = match loopback(om, task, arg)? {
        Ok(s) => s,
        Err(e) => return Ok(Err(e)),
    };
    let what = format!("connect {arg}");
    Ok(om
        .socket_connect(task, &sock, &addr)
        .map_err(|e| refused(&what, e)))
}

/// shm:, sem:, msg: the new object (selinux_shm_alloc_security, _sem_, _msg_queue_: its
/// `{create}`); with `rmid` (the probe's "PATH/rmid" line), its IPC_RMID (`{destroy}`).
pub fn ipc(
    om: &ObjectManager,
    task: &Task,
    kind: &str,
    rmid: bool,
) -> Result<Result<(), LabError>, String> {
    let what = format!("{kind} IPC_PRIVATE");
    let r = match kind {
        "shm" => created(&what, rmid, om.shm_alloc_security(task, 0), |o| {
            om.shm_shmctl(task, o, IPC_RMID)
        })?,
        "sem" => created(&what, rmid, om.sem_alloc_security(task, 0), |o| {
            om.sem_semctl(task, o, IPC_RMID)
        })?,
        "msg" => created(&what, rmid, om.msg_queue_alloc_security(task, 0), |o| {
            om.msg_queue_msgctl(task, o, IPC_RMID)
        })?,
        _ => return Err(format!("{kind}: no such IPC kind")),
    };
    Ok(r.map_err(|e| refused(&what, e)))
}

/// The create's answer; with `rmid`, the removal's, of an object the probe made: there the
/// create must pass here too (an error of the comparison, not a refusal).
fn created<T>(
    what: &str,
    rmid: bool,
    made: seaccess_objmgr::Result<T>,
    remove: impl FnOnce(&T) -> seaccess_objmgr::Result<()>,
) -> Result<seaccess_objmgr::Result<()>, String> {
    if !rmid {
        return Ok(made.map(|_| ()));
    }
    let o = made.map_err(|e| format!("{what}: the create the probe made is refused here: {e}"))?;
    Ok(remove(&o))
}
