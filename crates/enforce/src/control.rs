//! The daemon's control socket and the files it keeps in its run directory, and the client
//! side of both (`seaccess enforce run`, `context`, `label`, `status`).
//!
//! The socket (`enforce.sock`, mode 0600 in a 0700 directory) takes one request a connection,
//! one line: `sid CONTEXT`, answered `ok SID` once the generation in use decides CONTEXT as a
//! task (BPF cannot wait for userspace: a task must not carry a SID before its decisions
//! exist), or `error WHY`. Only root is served: the peer's credentials from SO_PEERCRED, then
//! its effective uid as it is now (a root process that passed its connection on, or dropped
//! its privileges since connecting, is refused).
//!
//! The files, each replaced whole (written beside, then renamed) so a reader never sees half
//! of one: `enforce.pid`; `sids`, one `SID CONTEXT` line per SID of the generation in use;
//! `enforce.status`, `KEY VALUE` lines (pid, generation, mode, policy, pin_dir, sids).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use rustix::fs::{Mode, OFlags};
use rustix::process::{Pid, PidfdFlags};

use crate::bpf::Pinned;
use crate::error::{sys, EnforceError, Result};

/// Where the daemon keeps its socket and files.
pub const RUN_DIR: &str = "/run/seaccess";
/// The control socket's name in the run directory.
pub const SOCKET: &str = "enforce.sock";
/// The pid file's name.
pub const PID_FILE: &str = "enforce.pid";
/// The SID list's name.
pub const SIDS_FILE: &str = "sids";
/// The file systems' defaults: one line per file system type, `NAME SID` (the SID an inode
/// nobody labeled there is decided with), `NAME creator` or `NAME unchecked`.
pub const FILESYSTEMS_FILE: &str = "filesystems";
/// The status file's name.
pub const STATUS_FILE: &str = "enforce.status";

/// How long a client or the daemon waits on the other end of a connection.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Writes `text` to `dir/name` whole: a temporary file beside it, then a rename.
pub(crate) fn write_atomic(dir: &Path, name: &str, text: &str) -> Result<()> {
    let tmp = dir.join(format!(".{name}.tmp"));
    let path = dir.join(name);
    std::fs::write(&tmp, text).map_err(sys(format!("writing {}", tmp.display())))?;
    std::fs::rename(&tmp, &path).map_err(sys(format!("renaming to {}", path.display())))
}

/// Whether the peer of `stream` is root now: SO_PEERCRED's uid (at connect time), then the
/// effective uid the process has at this moment, read through a descriptor of its /proc
/// directory (which keeps answering for that process only: ESRCH once it is gone, even if its
/// pid is reused).
pub(crate) fn peer_is_root(stream: &UnixStream) -> std::result::Result<(), String> {
    let cred = rustix::net::sockopt::socket_peercred(stream)
        .map_err(|e| format!("the peer's credentials: {e}"))?;
    let pid = cred.pid.as_raw_nonzero();
    if cred.uid.as_raw() != 0 {
        return Err(format!(
            "refused: the peer (pid {pid}) is uid {}, not root",
            cred.uid.as_raw()
        ));
    }
    let gone = |e: rustix::io::Errno| format!("refused: the peer (pid {pid}): {e}");
    let dir = rustix::fs::open(
        format!("/proc/{pid}"),
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(gone)?;
    let fd = rustix::fs::openat(
        &dir,
        c"status",
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(gone)?;
    let mut status = String::new();
    std::io::Read::read_to_string(&mut std::fs::File::from(fd), &mut status)
        .map_err(|e| format!("refused: the peer's status: {e}"))?;
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .ok_or("refused: the peer's status has no Uid line")?;
    if euid != "0" {
        return Err(format!(
            "refused: the peer (pid {pid}) runs as uid {euid} now, not root"
        ));
    }
    Ok(())
}

/// Serves one connection: the peer checked, one request read, `decide` asked, its answer
/// written. Errors of the connection itself are returned for the daemon's log.
pub(crate) fn serve_one(
    stream: UnixStream,
    decide: &mut dyn FnMut(&str) -> std::result::Result<u32, String>,
) -> std::result::Result<(), String> {
    stream
        .set_nonblocking(false)
        .and_then(|()| stream.set_read_timeout(Some(TIMEOUT)))
        .and_then(|()| stream.set_write_timeout(Some(TIMEOUT)))
        .map_err(|e| format!("a connection: {e}"))?;
    // The request is read before the peer is judged (a refusal closing on unread data would
    // reach the peer as ECONNRESET instead of its answer), and nothing is done before.
    let mut line = String::new();
    BufReader::new(&stream)
        .take_line(&mut line)
        .map_err(|e| format!("reading a request: {e}"))?;
    // Each answer in one write: a reader's one recv gets it whole.
    let mut w = &stream;
    if let Err(why) = peer_is_root(&stream) {
        let _ = w.write_all(format!("error {why}\n").as_bytes());
        return Err(why);
    }
    let answer = match line.trim_end().split_once(' ') {
        Some(("sid", ctx)) => match decide(ctx) {
            Ok(sid) => format!("ok {sid}"),
            Err(why) => format!("error {why}"),
        },
        _ => format!("error an unknown request: {:?}", line.trim_end()),
    };
    w.write_all(format!("{answer}\n").as_bytes())
        .map_err(|e| format!("answering: {e}"))
}

/// Reads one line, at most 4 KiB (a context is far shorter).
trait TakeLine {
    fn take_line(self, line: &mut String) -> std::io::Result<usize>;
}

impl<R: std::io::Read> TakeLine for BufReader<R> {
    fn take_line(self, line: &mut String) -> std::io::Result<usize> {
        std::io::Read::take(self, 4096).read_line(line)
    }
}

/// The daemon running with run directory `run_dir`: its status file's values, or an error
/// saying no daemon runs.
pub fn status(run_dir: &Path) -> Result<HashMap<String, String>> {
    let pid_path = run_dir.join(PID_FILE);
    let no = |why: String| {
        EnforceError::Daemon(format!(
            "no seaccess enforce daemon runs ({why}): start one with `seaccess enforce --policy ...`"
        ))
    };
    let pid = std::fs::read_to_string(&pid_path)
        .map_err(|e| no(format!("{}: {e}", pid_path.display())))?;
    let pid: i32 = pid
        .trim()
        .parse()
        .map_err(|_| no(format!("{} holds no pid", pid_path.display())))?;
    let alive = Pid::from_raw(pid).is_some_and(|p| rustix::process::test_kill_process(p).is_ok());
    if !alive {
        return Err(no(format!("pid {pid} of {} is gone", pid_path.display())));
    }
    let path = run_dir.join(STATUS_FILE);
    let text =
        std::fs::read_to_string(&path).map_err(|e| no(format!("{}: {e}", path.display())))?;
    Ok(text
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect())
}

/// The SIDs of the generation in use and their contexts (the `sids` file).
pub fn sids(run_dir: &Path) -> Result<HashMap<u32, String>> {
    let path = run_dir.join(SIDS_FILE);
    let text =
        std::fs::read_to_string(&path).map_err(sys(format!("reading {}", path.display())))?;
    Ok(text
        .lines()
        .filter_map(|l| {
            let (sid, ctx) = l.split_once(' ')?;
            Some((sid.parse().ok()?, ctx.to_string()))
        })
        .collect())
}

/// The running daemon's pinned maps.
fn pinned(run_dir: &Path) -> Result<Pinned> {
    let st = status(run_dir)?;
    let dir = st.get("pin_dir").ok_or_else(|| {
        EnforceError::Daemon(format!(
            "{} names no pin_dir",
            run_dir.join(STATUS_FILE).display()
        ))
    })?;
    Pinned::open(Path::new(dir))
}

/// The context of SID `sid` in the generation in use.
fn context_of(run_dir: &Path, sid: u32) -> Result<String> {
    Ok(sids(run_dir)?
        .remove(&sid)
        .unwrap_or_else(|| format!("SID {sid} (not in the generation's sids)")))
}

/// Asks the daemon to decide `context` as a task; returns its SID.
pub fn request_sid(run_dir: &Path, context: &str) -> Result<u32> {
    let path = run_dir.join(SOCKET);
    let stream = UnixStream::connect(&path).map_err(|e| {
        EnforceError::Daemon(format!(
            "no seaccess enforce daemon answers at {} ({e}): start one with `seaccess enforce --policy ...`",
            path.display()
        ))
    })?;
    stream
        .set_read_timeout(Some(TIMEOUT))
        .map_err(sys("the control socket"))?;
    (&stream)
        .write_all(format!("sid {context}\n").as_bytes())
        .map_err(sys(format!("writing to {}", path.display())))?;
    let mut line = String::new();
    BufReader::new(&stream)
        .take_line(&mut line)
        .map_err(sys(format!("reading from {}", path.display())))?;
    let line = line.trim_end();
    if let Some(sid) = line.strip_prefix("ok ") {
        return sid
            .parse()
            .map_err(|_| EnforceError::Daemon(format!("the daemon answered {line:?}")));
    }
    let why = line.strip_prefix("error ").unwrap_or(line);
    Err(EnforceError::Daemon(format!(
        "the daemon refused {context}: {why}"
    )))
}

/// Confines this process in `context`: the daemon decides it, then the pinned task storage
/// labels this process (its pidfd). Call it last before exec: from here on every hook checks
/// this process, and an exec follows the policy's transitions.
pub fn confine_self(run_dir: &Path, context: &str) -> Result<u32> {
    let sid = request_sid(run_dir, context)?;
    let maps = pinned(run_dir)?;
    let pidfd = rustix::process::pidfd_open(rustix::process::getpid(), PidfdFlags::empty())
        .map_err(|e| sys("opening this process's pidfd")(e.into()))?;
    maps.set_task(pidfd.as_fd(), sid)?;
    Ok(sid)
}

/// The context of task `pid` (None: not confined).
pub fn task_context(run_dir: &Path, pid: i32) -> Result<Option<String>> {
    let maps = pinned(run_dir)?;
    let p =
        Pid::from_raw(pid).ok_or_else(|| EnforceError::Daemon(format!("{pid} is not a pid")))?;
    let pidfd = rustix::process::pidfd_open(p, PidfdFlags::empty())
        .map_err(|e| sys(format!("process {pid}"))(e.into()))?;
    match maps.task(pidfd.as_fd())? {
        Some(t) => Ok(Some(context_of(run_dir, t.sid)?)),
        None => Ok(None),
    }
}

/// How the BPF side decides an inode (see [`inode_context`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InodeLabel {
    /// Labeled: by the daemon, or by a confined task's create.
    Labeled(String),
    /// Nobody labeled it: its file system type's default.
    Default {
        /// The context.
        context: String,
        /// The file system type.
        fstype: String,
    },
    /// Not checked (why, in words).
    Unchecked(String),
}

/// How the inode at `path` (itself: a link is not followed) is decided: its label, else its
/// file system's default as the daemon's generation in use gives it.
pub fn inode_context(run_dir: &Path, path: &Path) -> Result<InodeLabel> {
    let maps = pinned(run_dir)?;
    let fd = rustix::fs::open(
        path,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| sys(format!("opening {}", path.display()))(e.into()))?;
    if let Some(i) = maps.inode(fd.as_fd())? {
        return Ok(InodeLabel::Labeled(context_of(run_dir, i.sid)?));
    }
    let fstype = crate::label::fstype(fd.as_fd())
        .map_err(sys(format!("the file system of {}", path.display())))?;
    let list = run_dir.join(FILESYSTEMS_FILE);
    let text =
        std::fs::read_to_string(&list).map_err(sys(format!("reading {}", list.display())))?;
    let entry = text
        .lines()
        .filter_map(|l| l.split_once(' '))
        .find(|(name, _)| *name == fstype)
        .map(|(_, v)| v.to_string());
    // A type the policy does not name: the initial SID unlabeled (SECURITY_FS_USE_NONE).
    let value = entry.unwrap_or_else(|| crate::initial::SECINITSID_UNLABELED.to_string());
    Ok(match value.as_str() {
        "creator" => InodeLabel::Unchecked(format!(
            "a {fstype} object no confined task made (it would carry its creator's context)"
        )),
        "unchecked" => InodeLabel::Unchecked(format!(
            "{fstype} labels by path inside the file system, which is not computed"
        )),
        sid => InodeLabel::Default {
            context: context_of(run_dir, sid.parse().unwrap_or(0))?,
            fstype,
        },
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::net::UnixListener;
    use std::process::{Command, Stdio};

    /// A request sent by a python client as `who` (`root`, `nobody`, or `dropped`: root at
    /// connect, uid 65534 when it sends); the answer it got, and whether `decide` was asked.
    fn ask(who: &str, request: &str) -> Option<(String, bool)> {
        if !rustix::process::geteuid().is_root() {
            println!("SKIP: the control socket tests run as root");
            return None;
        }
        let dir =
            std::env::temp_dir().join(format!("seaccess-control-{who}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let path = dir.join(SOCKET);
        let listener = UnixListener::bind(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let script = format!(
            "import os, socket, sys\n\
             s = socket.socket(socket.AF_UNIX)\n\
             s.connect({path:?})\n\
             if {dropped}: os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534)\n\
             print('ready', flush=True)\n\
             s.sendall({request:?}.encode() + b'\\n')\n\
             print(s.recv(4096).decode().strip(), flush=True)\n",
            path = path.display().to_string(),
            dropped = if who == "dropped" { "True" } else { "False" },
        );
        let mut cmd = if who == "nobody" {
            let mut c = Command::new("setpriv");
            c.args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "/usr/bin/python3",
            ]);
            c
        } else {
            Command::new("/usr/bin/python3")
        };
        let mut child = cmd
            .args(["-c", &script])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        // The client has connected (and dropped its privileges) before the server looks at it.
        out.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready");
        let (stream, _) = listener.accept().unwrap();
        let mut asked = false;
        let _ = serve_one(stream, &mut |ctx| {
            asked = true;
            if ctx.contains("bad") {
                Err("invalid context".into())
            } else {
                Ok(7)
            }
        });
        line.clear();
        out.read_line(&mut line).unwrap();
        child.wait().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        Some((line.trim().to_string(), asked))
    }

    #[test]
    fn root_is_served() {
        let Some((answer, asked)) = ask("root", "sid system_u:system_r:initrc_t:s0") else {
            return;
        };
        assert_eq!(answer, "ok 7");
        assert!(asked);
        let (answer, _) = ask("root", "sid bad_u:bad_r:bad_t").unwrap();
        assert_eq!(answer, "error invalid context");
        let (answer, asked) = ask("root", "label /etc/shadow").unwrap();
        assert!(answer.starts_with("error an unknown request"), "{answer}");
        assert!(!asked);
    }

    /// SO_PEERCRED's uid: a peer that is not root is refused before anything is asked.
    #[test]
    fn a_peer_not_root_is_refused() {
        let Some((answer, asked)) = ask("nobody", "sid system_u:system_r:initrc_t:s0") else {
            return;
        };
        assert!(
            answer.starts_with("error refused") && answer.contains("is uid 65534, not root"),
            "{answer}"
        );
        assert!(!asked);
    }

    /// The peer as it is now: root when it connected, uid 65534 when served: refused.
    #[test]
    fn a_peer_that_dropped_root_is_refused() {
        let Some((answer, asked)) = ask("dropped", "sid system_u:system_r:initrc_t:s0") else {
            return;
        };
        assert!(
            answer.starts_with("error refused") && answer.contains("now"),
            "{answer}"
        );
        assert!(!asked);
    }

    /// The status of a daemon whose pid is gone is "no daemon", not a stale answer.
    #[test]
    fn a_dead_daemon_is_not_running() {
        let dir = std::env::temp_dir().join(format!("seaccess-status-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        write_atomic(&dir, STATUS_FILE, "pid 1\ngeneration 4\npin_dir /nowhere\n").unwrap();
        write_atomic(&dir, SIDS_FILE, "3 system_u:object_r:unlabeled_t:s0\n").unwrap();
        write_atomic(&dir, PID_FILE, &format!("{}\n", std::process::id())).unwrap();
        assert_eq!(status(&dir).unwrap().get("generation").unwrap(), "4");
        assert_eq!(sids(&dir).unwrap()[&3], "system_u:object_r:unlabeled_t:s0");
        // A pid no process has (the kernel's pid_max is below 2^22 + 1 by default).
        write_atomic(&dir, PID_FILE, "4194305\n").unwrap();
        let e = status(&dir).unwrap_err().to_string();
        assert!(e.contains("no seaccess enforce daemon runs"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
