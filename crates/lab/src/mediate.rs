//! What mediates chatroom's and hackbench's sends and receives: nothing (vanilla, and again as
//! the control), the object manager's own hooks on seaccess's cache, or seaccess's cache or a
//! comparison design of [`crate::designs`] asked what the hook asks (how runs are timed is
//! [`crate::runs`]). A socket's send is selinux_socket_sendmsg's `{write}` and a receive
//! selinux_socket_recvmsg's `{read}` on the socket's SID and class; a pipe's is
//! selinux_file_permission's `{write}`/`{read}` on the pipe's inode (`fifo_file`). The designs
//! ask the cache every time; the hooks take their fast paths where the kernel's would (the
//! revalidation skip for pipes: the file was opened with those permissions).

use std::sync::Arc;

use seaccess_objmgr::hooks::fs::{MAY_READ, MAY_WRITE};
use seaccess_objmgr::hooks::socket::SocketSec;
use seaccess_objmgr::{FileSec, InodeSec, ObjectManager, Task};
use seaccess_security::SecurityServer;
use seaccess_types::{AccessServer, ClassId, Sid};

use crate::designs::*;
use crate::LabError;

/// The domains tried for the experiments' processes, in order: the first the policy lets use
/// Unix stream sockets and pipes of its own, silently. Confined ones first, as a chat server
/// would run; unconfined_t last.
pub const DOMAINS: &[&str] = &[
    "system_u:system_r:sshd_t:s0-s0:c0.c1023",
    "system_u:system_r:httpd_t:s0",
    "system_u:system_r:init_t:s0",
    "unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023",
    "unconfined_u:unconfined_r:unconfined_t:s0",
];

/// What the experiments need of their domain, per class.
const NEEDS: &[(&str, &[&str])] = &[
    (
        "unix_stream_socket",
        &[
            "create",
            "connect",
            "connectto",
            "listen",
            "accept",
            "read",
            "write",
        ],
    ),
    ("fifo_file", &["open", "read", "write"]),
];

/// The mediators' names, in the tables' order.
pub const ORDER: &[&str] = &[
    "vanilla",
    "control",
    "seaccess",
    "seaccess_cache",
    "global_mutex",
    "global_rwlock",
    "bucket_mutex",
    "bucket_rwlock",
    "block_mutex",
];

/// One end a message goes through.
pub enum Endpoint {
    Socket(SocketSec),
    Pipe { inode: InodeSec, file: FileSec },
}

/// What a send or a receive asks, and of whom.
pub trait Mediator: Sync {
    fn name(&self) -> String;
    fn send(&self, e: &Endpoint) -> bool;
    fn recv(&self, e: &Endpoint) -> bool;
}

/// No check. Runs twice a round: as `vanilla`, the baseline, and as `control`, whose "overhead"
/// against the baseline is how far from nothing the method lands when nothing differs (the
/// machine's noise, in the same table).
struct Vanilla(&'static str);
impl Mediator for Vanilla {
    fn name(&self) -> String {
        self.0.into()
    }
    fn send(&self, _: &Endpoint) -> bool {
        true
    }
    fn recv(&self, _: &Endpoint) -> bool {
        true
    }
}

/// The object manager's hooks, on seaccess's cache.
struct Hooks<'a> {
    om: &'a ObjectManager,
    task: &'a Task,
}
impl Hooks<'_> {
    fn pipe(&self, inode: &InodeSec, file: &FileSec, mask: u32) -> bool {
        self.om
            .file_permission(self.task, file, inode, mask, "pipe:")
            .is_ok()
    }
}
impl Mediator for Hooks<'_> {
    fn name(&self) -> String {
        "seaccess".into()
    }
    fn send(&self, e: &Endpoint) -> bool {
        match e {
            Endpoint::Socket(s) => self.om.socket_sendmsg(self.task, s).is_ok(),
            Endpoint::Pipe { inode, file } => self.pipe(inode, file, MAY_WRITE),
        }
    }
    fn recv(&self, e: &Endpoint) -> bool {
        match e {
            Endpoint::Socket(s) => self.om.socket_recvmsg(self.task, s).is_ok(),
            Endpoint::Pipe { inode, file } => self.pipe(inode, file, MAY_READ),
        }
    }
}

/// The classes and bits the hooks ask, in the policy's numbers.
pub struct Asks {
    socket: (ClassId, u32, u32),
    fifo: (ClassId, u32, u32),
}

impl Asks {
    pub fn new(server: &SecurityServer) -> Result<Asks, LabError> {
        let g = server.snapshot();
        let one = |class: &str| -> Result<(ClassId, u32, u32), LabError> {
            let c = g.class(class).map_err(|e| LabError::Domains {
                what: format!("{class}: {e}"),
            })?;
            let bit = |p: &str| {
                g.perms(c, &[p])
                    .map(|a| a.0)
                    .map_err(|e| LabError::Domains {
                        what: format!("{class} {p}: {e}"),
                    })
            };
            Ok((c, bit("read")?, bit("write")?))
        };
        Ok(Asks {
            socket: one("unix_stream_socket")?,
            fifo: one("fifo_file")?,
        })
    }
}

/// A comparison design (or seaccess's own cache, as `seaccess_cache`) asked what the hook asks,
/// without the rest of the hook: the caches compared on the same footing, where `seaccess` is
/// what an object manager gets, the whole hook.
struct Design<'a> {
    cache: &'a dyn DecisionCache,
    task: Sid,
    asks: &'a Asks,
}
impl Design<'_> {
    fn allows(&self, e: &Endpoint, write: bool) -> bool {
        let (sid, (class, read_bit, write_bit)) = match e {
            Endpoint::Socket(s) => (s.sid(), self.asks.socket),
            Endpoint::Pipe { inode, .. } => (inode.sid(), self.asks.fifo),
        };
        let bit = if write { write_bit } else { read_bit };
        self.cache
            .decide(self.task, sid, class)
            .is_ok_and(|d| d.allowed.0 & bit == bit)
    }
}
impl Mediator for Design<'_> {
    fn name(&self) -> String {
        match self.cache.name() {
            "seaccess" => "seaccess_cache".into(),
            n => n.into(),
        }
    }
    fn send(&self, e: &Endpoint) -> bool {
        self.allows(e, true)
    }
    fn recv(&self, e: &Endpoint) -> bool {
        self.allows(e, false)
    }
}

/// A fresh instance of every comparison design and of seaccess's cache (caches start empty
/// each round).
pub struct Designs {
    /// A bare cache, not the engine's: one of the designs compared, made fresh each round.
    avc: seaccess_avc::Avc,
    gm: GlobalMutex,
    grw: GlobalRwLock,
    bm: BucketMutex,
    brw: BucketRwLock,
    blk: BlockMutex,
}

impl Designs {
    pub fn new(server: &Arc<dyn AccessServer>) -> Designs {
        Designs {
            avc: seaccess_avc::Avc::new(server.clone(), seaccess_avc::DEFAULT_CAPACITY),
            gm: GlobalMutex::new(server.clone()),
            grw: GlobalRwLock::new(server.clone()),
            bm: BucketMutex::new(server.clone()),
            brw: BucketRwLock::new(server.clone()),
            blk: BlockMutex::new(server.clone()),
        }
    }
}

/// Every mediator, the order rotated by `round` so that each runs first as often as the others.
pub fn all<'a>(
    om: &'a ObjectManager,
    task: &'a Task,
    sid: Sid,
    asks: &'a Asks,
    d: &'a Designs,
    round: usize,
) -> Vec<Box<dyn Mediator + 'a>> {
    let design = |cache: &'a dyn DecisionCache| -> Box<dyn Mediator + 'a> {
        Box::new(Design {
            cache,
            task: sid,
            asks,
        })
    };
    let mut v: Vec<Box<dyn Mediator + 'a>> = vec![
        Box::new(Vanilla("vanilla")),
        Box::new(Vanilla("control")),
        Box::new(Hooks { om, task }),
        design(&d.avc),
        design(&d.gm),
        design(&d.grw),
        design(&d.bm),
        design(&d.brw),
        design(&d.blk),
    ];
    let k = round % v.len();
    v.rotate_left(k);
    v
}

/// The first of `domains` the policy lets do all the experiments do on its own sockets and
/// pipes, with nothing audited.
pub fn pick_domain(server: &SecurityServer, domains: &[&str]) -> Result<(String, Sid), LabError> {
    let g = server.snapshot();
    let mut why = Vec::new();
    'next: for d in domains {
        let s = match g.context_to_sid(d) {
            Ok(s) => s,
            Err(e) => {
                why.push(format!("{d}: {e}"));
                continue;
            }
        };
        for (class, perms) in NEEDS {
            let verdict = g
                .class(class)
                .and_then(|c| Ok((g.perms(c, perms)?, g.compute_av(s, s, c)?)));
            match verdict {
                Ok((want, av))
                    if av.allowed.0 & want.0 == want.0
                        && av.auditallow.0 & want.0 == 0
                        && !av.flags.permissive() => {}
                Ok(_) => {
                    why.push(format!(
                        "{d}: {class} {{ {} }} not all allowed silently",
                        perms.join(" ")
                    ));
                    continue 'next;
                }
                Err(e) => {
                    why.push(format!("{d}: {class}: {e}"));
                    continue 'next;
                }
            }
        }
        return Ok((d.to_string(), s));
    }
    Err(LabError::Domains {
        what: why.join("; "),
    })
}

/// `count` rounds of a send and a receive on one socket and on one pipe through the mediator
/// named `mediator`, on one thread: the checks alone, for callgrind to count (`seaccess-lab lab
/// --callgrind` runs this twice and differences the totals). Returns how many checks passed.
pub fn check_loop(
    server: Arc<SecurityServer>,
    mediator: &str,
    count: u64,
) -> Result<u64, LabError> {
    let (_, sid) = pick_domain(&server, DOMAINS)?;
    let dynserver: Arc<dyn AccessServer> = server.clone();
    let Objects {
        om,
        task,
        sock,
        inode,
        file,
    } = objects(&server, sid)?;
    let sock = Endpoint::Socket(sock);
    let pipe = Endpoint::Pipe { inode, file };
    let asks = Asks::new(&server)?;
    let designs = Designs::new(&dynserver);
    let all = all(&om, &task, sid, &asks, &designs, 0);
    let m = all
        .iter()
        .find(|m| m.name() == mediator)
        .ok_or_else(|| LabError::Objmgr {
            what: format!(
                "no mediator {mediator}: expected one of {}",
                ORDER.join(", ")
            ),
        })?;
    let mut passed = 0u64;
    for _ in 0..count {
        passed += u64::from(m.send(&sock))
            + u64::from(m.recv(&sock))
            + u64::from(m.send(&pipe))
            + u64::from(m.recv(&pipe));
    }
    Ok(std::hint::black_box(passed))
}

/// What the hooks are asked about in the instruction counts: the object manager over a
/// server, a task of one domain, and a Unix stream socket and a pipe (its inode and its file
/// opened for reading and writing) of its own.
pub(crate) struct Objects {
    pub om: Arc<ObjectManager>,
    pub task: Task,
    pub sock: SocketSec,
    pub inode: InodeSec,
    pub file: FileSec,
}

/// [`Objects`] for a task of SID `sid`, on an object manager over `server`.
pub(crate) fn objects(server: &Arc<SecurityServer>, sid: Sid) -> Result<Objects, LabError> {
    use seaccess_objmgr::hooks::fs::MountOpts;
    use seaccess_objmgr::hooks::socket::family;
    use seaccess_objmgr::Cred;

    let engine = seaccess_engine::Engine::builder()
        .object_manager(true)
        .over_server(server.clone());
    let om = engine
        .object_manager()
        .map_err(|e| objmgr("the object manager", e))?
        .clone();
    // A send and a receive ask the cache, as the kernel's do and as the experiments measure:
    // the socket's remembered grant is off (bench hit-path turns it on for a row of its own).
    om.fast_paths().set_sockets(false);
    let task = Task::new(std::process::id(), "checks", Cred::new(sid));
    let sock = om
        .socket_create(&task, family::UNIX, libc::SOCK_STREAM, 0, false)
        .map_err(|e| objmgr("socket", e))?;
    let sb = om
        .mount("pipefs", "pipefs", &MountOpts::default())
        .map_err(|e| objmgr("pipefs", e))?;
    let inode = om.inode_init_as(&task, &sb, 1, libc::S_IFIFO | 0o600, "pipe:", None);
    let file = om
        .file_open(&task, &inode, "pipe:", libc::O_RDWR)
        .map_err(|e| objmgr("open a pipe", e))?;
    Ok(Objects {
        om,
        task,
        sock,
        inode,
        file,
    })
}

/// A hook's error, named by what was being done.
pub(crate) fn objmgr(what: &str, e: impl std::fmt::Display) -> LabError {
    LabError::Objmgr {
        what: format!("{what}: {e}"),
    }
}

/// A system call's error, named by what was being done.
pub(crate) fn sys(what: &str) -> impl Fn(std::io::Error) -> LabError + '_ {
    move |e| LabError::Sys {
        what: what.into(),
        source: e,
    }
}

/// A thread of a run, on a small stack (a full chatroom run has 1,800 of them).
pub(crate) fn spawn<'scope, F>(
    s: &'scope std::thread::Scope<'scope, '_>,
    f: F,
) -> Result<std::thread::ScopedJoinHandle<'scope, std::io::Result<()>>, LabError>
where
    F: FnOnce() -> std::io::Result<()> + Send + 'scope,
{
    std::thread::Builder::new()
        .stack_size(64 << 10)
        .spawn_scoped(s, f)
        .map_err(sys("thread"))
}
