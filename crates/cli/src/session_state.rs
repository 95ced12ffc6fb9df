//! The state a `seaccess run` session's processes share, owned by the supervisor: the policy,
//! the enforcing mode, the booleans' pending and active values. Each change is checked against
//! the writer's context as selinuxfs checks it (selinuxfs.c's sel_write_enforce,
//! sel_write_bool, sel_commit_bools_write, sel_write_load: `security { setenforce }`,
//! `security { setbool }`, `security { load_policy }` on the `security` initial SID, through an
//! access vector cache that follows the session's own mode, so that a permissive session
//! allows and logs, as avc_has_perm does), then published in the state page that every
//! process maps read-only (layout: seaccess_types::session).
//!
//! The page is written with positioned writes: this crate has no unsafe code, so no mapping
//! of its own. Each field is one aligned 4-byte write, and readers take them under the
//! kernel's sequence protocol (odd while a change is written).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use seaccess_engine::{AuditSink, Engine};
use seaccess_fs::subjects::{self, Match, Subjects};
use seaccess_types::session as layout;
use seaccess_types::{lock, Sid};

mod procs;
pub(crate) use procs::CURRENT_XATTR;

/// The kernel's SECINITSID_SECURITY: the object selinuxfs's writes are checked against.
const SECINITSID_SECURITY: u32 = 2;
/// The context of a process no rule names (as libseaccess's getcon without subjects).
const UNCONFINED: &str = "unconfined_u:unconfined_r:unconfined_t:s0";

struct Inner {
    /// The session's server, the cache following it and its enforcing mode.
    engine: Engine,
    sequence: u32,
    enforcing: bool,
    /// The booleans in the page's order (the policy's, sorted by name).
    names: Vec<String>,
    pending: Vec<bool>,
    pending_seq: u32,
    policy_gen: u32,
}

/// The session's state and its page.
pub(crate) struct SessionState {
    inner: Mutex<Inner>,
    page: File,
    dir: PathBuf,
    subjects: Option<Subjects>,
    /// The contexts processes set with setcon.
    procs: procs::Procs,
    pub(crate) log: Arc<AuditSink>,
}

/// Why a write to the view failed: its errno.
pub(crate) type Errno = i32;

impl SessionState {
    /// The state of a new session in `dir`: the policy image `data` (written to `dir/policy`,
    /// which the processes load), enforcing, the policy's boolean defaults.
    pub(crate) fn create(
        dir: &Path,
        data: &[u8],
        subjects: Option<Subjects>,
        log: Arc<AuditSink>,
    ) -> Result<SessionState, String> {
        let l = log.clone();
        let engine = Engine::builder()
            .enforcing(true)
            .audit(move |r| l.record("AVC", r))
            .from_bytes(data)
            .map_err(|e| format!("the policy: {e}"))?;
        let server = engine.server().clone();
        write_file(&dir.join(layout::POLICY_FILE), data)?;
        let page_path = dir.join(layout::STATE_FILE);
        let page = File::create(&page_path).map_err(|e| format!("{}: {e}", page_path.display()))?;
        let stats = dir.join(layout::STATS_FILE);
        let f = File::create(&stats).map_err(|e| format!("{}: {e}", stats.display()))?;
        f.set_len((layout::STATS_SLOTS * layout::STATS_SLOT_SIZE) as u64)
            .map_err(|e| format!("{}: {e}", stats.display()))?;
        // Every process of the session, whatever its user, writes its own line (the figures are
        // statistics: a forged line misleads avcstat, nothing else).
        set_mode(&stats, 0o666)?;
        set_mode(&page_path, 0o644)?;
        set_mode(&dir.join(layout::POLICY_FILE), 0o644)?;
        let mut names: Vec<String> = server
            .snapshot()
            .booleans()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        names.sort();
        let pending = names
            .iter()
            .map(|n| server.pending_boolean(n).unwrap_or(false))
            .collect();
        let inner = Inner {
            engine,
            sequence: 0,
            enforcing: true,
            names,
            pending,
            pending_seq: 0,
            policy_gen: 0,
        };
        let s = SessionState {
            inner: Mutex::new(inner),
            page,
            dir: dir.to_path_buf(),
            subjects,
            procs: procs::Procs::default(),
            log,
        };
        {
            let mut i = lock(&s.inner);
            s.publish(&mut i)
                .map_err(|e| format!("{}: {e}", page_path.display()))?;
        }
        Ok(s)
    }

    /// The whole page, under the sequence protocol.
    fn publish(&self, i: &mut Inner) -> std::io::Result<()> {
        let g = i.engine.server().snapshot();
        let size = layout::size(i.names.len());
        let mut b = vec![0u8; size];
        let put = |b: &mut [u8], at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_ne_bytes());
        put(&mut b, layout::VERSION, layout::STATUS_VERSION);
        put(&mut b, layout::ENFORCING, u32::from(i.enforcing));
        put(&mut b, layout::POLICYLOAD, i.engine.server().seqno().0);
        put(
            &mut b,
            layout::DENY_UNKNOWN,
            u32::from(g.handle_unknown() != seaccess_types::HandleUnknown::Allow),
        );
        put(&mut b, layout::MAGIC_AT, layout::MAGIC);
        put(&mut b, layout::NBOOLS, i.names.len() as u32);
        put(&mut b, layout::PENDING_SEQ, i.pending_seq);
        put(&mut b, layout::POLICY_GEN, i.policy_gen);
        put(
            &mut b,
            layout::REJECT_UNKNOWN,
            u32::from(g.handle_unknown() == seaccess_types::HandleUnknown::Reject),
        );
        put(&mut b, layout::MLS, u32::from(g.policy().mls));
        for (k, name) in i.names.iter().enumerate() {
            let at = layout::BOOLS_AT + k * layout::BOOL_SIZE;
            let n = name.as_bytes();
            let len = n.len().min(layout::NAME_LEN - 1);
            b[at..at + len].copy_from_slice(&n[..len]);
            b[at + layout::NAME_LEN] = u8::from(g.boolean(name).unwrap_or(false));
            b[at + layout::NAME_LEN + 1] = u8::from(i.pending.get(k).copied().unwrap_or(false));
        }
        // Odd while the rest is written, even (advanced by two) once it is.
        self.page.write_all_at(
            &(i.sequence.wrapping_add(1)).to_ne_bytes(),
            layout::SEQUENCE as u64,
        )?;
        put(&mut b, layout::SEQUENCE, i.sequence.wrapping_add(1));
        self.page
            .write_all_at(&b[layout::ENFORCING..], layout::ENFORCING as u64)?;
        self.page.set_len(size as u64)?;
        i.sequence = i.sequence.wrapping_add(2);
        self.page
            .write_all_at(&i.sequence.to_ne_bytes(), layout::SEQUENCE as u64)?;
        self.page.write_all_at(
            &layout::STATUS_VERSION.to_ne_bytes(),
            layout::VERSION as u64,
        )?;
        Ok(())
    }

    /// The context process `pid` runs in, as libseaccess's getcon gives it: the one it set
    /// with setcon since its last exec (session_state::procs), else the one the labels
    /// interposer handed it at its last exec (an exec context or a type transition), else the
    /// session's subjects rules; EACCES when no rule gives it one.
    fn context_of(&self, g: &seaccess_security::Generation, pid: u32) -> Result<String, Errno> {
        // A request names its thread; the context is its process's.
        let pid = procs::tgid_of(pid).ok_or(libc_errno::ESRCH)?;
        if let procs::Known::Set(c) = self.procs.lookup(pid)? {
            return Ok(c);
        }
        if let Some(c) = exec_context(pid) {
            return Ok(c);
        }
        let Some(rules) = &self.subjects else {
            return Ok(UNCONFINED.to_string());
        };
        let info = subjects::proc_info(pid).ok_or(libc_errno::ESRCH)?;
        let rule = rules.find(&info.info).ok_or(libc_errno::EACCES)?;
        if rule.matches != Match::Transition {
            return Ok(rule.context.clone());
        }
        let sid = g
            .context_to_sid(&rule.context)
            .map_err(|_| libc_errno::EACCES)?;
        let exe = subjects::exe_path(pid, info.info.exe.ok_or(libc_errno::EACCES)?)
            .map_err(|_| libc_errno::EACCES)?;
        let fc = seaccess_label::FileContexts::open(
            Path::new("/etc/selinux")
                .join(policy_type())
                .join("contexts/files/file_contexts")
                .as_path(),
        )
        .map_err(|_| libc_errno::EACCES)?;
        let exe_ctx = fc
            .context(exe.as_bytes(), seaccess_label::FileKind::File)
            .ok()
            .flatten()
            .ok_or(libc_errno::EACCES)?;
        let exe_sid = g.context_to_sid(exe_ctx).map_err(|_| libc_errno::EACCES)?;
        let class = g.class("process").map_err(|_| libc_errno::EACCES)?;
        let new = g
            .compute_create(sid, exe_sid, class, None)
            .map_err(|_| libc_errno::EACCES)?;
        g.sid_to_context(new).map_err(|_| libc_errno::EACCES)
    }

    /// avc_has_perm(current_sid(), SECINITSID_SECURITY, SECCLASS_SECURITY, perm): Ok when
    /// allowed (or denied in a permissive session or domain, with its record), EACCES with
    /// its AVC record when refused; a caller without a context is refused.
    fn check(&self, i: &Inner, pid: u32, perm: &str) -> Result<(), Errno> {
        let g = i.engine.server().snapshot();
        let ctx = self.context_of(&g, pid)?;
        let ssid = g.context_to_sid(&ctx).map_err(|_| libc_errno::EACCES)?;
        let tsid = g
            .initial_sid(SECINITSID_SECURITY)
            .unwrap_or(Sid(SECINITSID_SECURITY));
        let class = g.class("security").map_err(|_| libc_errno::EACCES)?;
        let av = g.perms(class, &[perm]).map_err(|_| libc_errno::EACCES)?;
        let aux = format!("pid={pid} comm=\"{}\"", comm(pid));
        i.engine
            .avc()
            .has_perm(ssid, tsid, class, av, Some(&aux))
            .map_err(|_| libc_errno::EACCES)
    }

    /// The auid/ses part of the kernel's records (unset: this kernel has no audit login ids).
    fn ids(pid: u32) -> String {
        let read = |f: &str| {
            std::fs::read_to_string(format!("/proc/{pid}/{f}"))
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "4294967295".into())
        };
        format!("auid={} ses={}", read("loginuid"), read("sessionid"))
    }

    /// `enforce` read.
    pub(crate) fn enforcing(&self) -> bool {
        lock(&self.inner).enforcing
    }

    /// sel_write_enforce: a value that changes the mode needs `setenforce`.
    pub(crate) fn set_enforcing(&self, pid: u32, on: bool) -> Result<(), Errno> {
        let mut i = lock(&self.inner);
        if i.enforcing == on {
            return Ok(());
        }
        self.check(&i, pid, "setenforce")?;
        self.log.record(
            "MAC_STATUS",
            &format!(
                "enforcing={} old_enforcing={} {} enabled=1 old-enabled=1 lsm=selinux res=1",
                u8::from(on),
                u8::from(i.enforcing),
                Self::ids(pid)
            ),
        );
        i.enforcing = on;
        i.engine.set_enforcing(on);
        self.publish(&mut i)
            .map_err(|e| e.raw_os_error().unwrap_or(libc_errno::EIO))
    }

    /// The booleans' names, sorted.
    pub(crate) fn boolean_names(&self) -> Vec<String> {
        lock(&self.inner).names.clone()
    }

    /// `booleans/NAME` read: "active pending".
    pub(crate) fn boolean(&self, k: usize) -> Option<(bool, bool)> {
        let i = lock(&self.inner);
        let name = i.names.get(k)?;
        Some((
            i.engine.server().snapshot().boolean(name).ok()?,
            *i.pending.get(k)?,
        ))
    }

    /// sel_write_bool: `setbool`, then the pending value.
    pub(crate) fn set_pending(&self, pid: u32, k: usize, v: bool) -> Result<(), Errno> {
        let mut i = lock(&self.inner);
        self.check(&i, pid, "setbool")?;
        let p = i.pending.get_mut(k).ok_or(libc_errno::EINVAL)?;
        *p = v;
        i.pending_seq = i.pending_seq.wrapping_add(1);
        let at = layout::BOOLS_AT + k * layout::BOOL_SIZE + layout::NAME_LEN + 1;
        self.page
            .write_all_at(&[u8::from(v)], at as u64)
            .map_err(|e| e.raw_os_error().unwrap_or(libc_errno::EIO))?;
        self.page
            .write_all_at(&i.pending_seq.to_ne_bytes(), layout::PENDING_SEQ as u64)
            .map_err(|e| e.raw_os_error().unwrap_or(libc_errno::EIO))
    }

    /// sel_commit_bools_write's check alone (a write of 0 commits nothing but is checked).
    pub(crate) fn check_setbool(&self, pid: u32) -> Result<(), Errno> {
        let i = lock(&self.inner);
        self.check(&i, pid, "setbool")
    }

    /// A process of the session published the context its setcon gave it (`value`, from its
    /// thread `tid` acting as `uid`): checked as the kernel's selinux_lsm_setattr checks
    /// LSM_ATTR_CURRENT, against the context the session believes the process has now
    /// (`process {setcurrent}` on itself, a context of the policy or EINVAL, then `process
    /// {dyntransition}` to it, each denial EACCES with its AVC record), then kept for the
    /// process's later writes until it execs (session_state::procs). libseaccess applies no
    /// bounds rule to a multi-threaded process, so neither does this; nothing changes on a
    /// refusal.
    pub(crate) fn setcon(&self, tid: u32, uid: u32, value: &[u8]) -> Result<(), Errno> {
        let pid = procs::tgid_of(tid).ok_or(libc_errno::ESRCH)?;
        let i = lock(&self.inner);
        let g = i.engine.server().snapshot();
        let old = self.context_of(&g, pid)?;
        let osid = g.context_to_sid(&old).map_err(|_| libc_errno::EACCES)?;
        let class = g.class("process").map_err(|_| libc_errno::EACCES)?;
        let perm = |p: &str| g.perms(class, &[p]).map_err(|_| libc_errno::EACCES);
        let aux = format!("pid={pid} comm=\"{}\"", comm(pid));
        i.engine
            .avc()
            .has_perm(osid, osid, class, perm("setcurrent")?, Some(&aux))
            .map_err(|_| libc_errno::EACCES)?;
        // The value as /proc/PID/attr/current takes it: a trailing newline or NUL is not part
        // of the context, and an empty one is no context (EINVAL: setcon(NULL) is refused).
        let text = std::str::from_utf8(value).map_err(|_| libc_errno::EINVAL)?;
        let text = text.trim_end_matches(['\0', '\n']);
        if text.is_empty() {
            return Err(libc_errno::EINVAL);
        }
        let nsid = g.context_to_sid(text).map_err(|_| libc_errno::EINVAL)?;
        i.engine
            .avc()
            .has_perm(osid, nsid, class, perm("dyntransition")?, Some(&aux))
            .map_err(|_| libc_errno::EACCES)?;
        let new = g.sid_to_context(nsid).map_err(|_| libc_errno::EINVAL)?;
        self.procs.record(pid, uid, &new)
    }

    /// sel_commit_bools_write: `setbool`, then every pending value made active (security_set_bools:
    /// one record per boolean that changes, a new policy load count).
    pub(crate) fn commit(&self, pid: u32) -> Result<(), Errno> {
        let mut i = lock(&self.inner);
        self.check(&i, pid, "setbool")?;
        let g = i.engine.server().snapshot();
        for (name, v) in i.names.iter().zip(&i.pending) {
            let old = g.boolean(name).unwrap_or(false);
            if old != *v {
                self.log.record(
                    "MAC_CONFIG_CHANGE",
                    &format!(
                        "bool={name} val={} old_val={} {}",
                        u8::from(*v),
                        u8::from(old),
                        Self::ids(pid)
                    ),
                );
            }
            let _ = i.engine.server().set_boolean(name, *v);
        }
        i.engine.server().commit_booleans();
        self.publish(&mut i)
            .map_err(|e| e.raw_os_error().unwrap_or(libc_errno::EIO))
    }

    /// sel_write_load: `load_policy`, then the new policy for every process of the session
    /// (booleans kept by name, as the kernel keeps them across a load).
    pub(crate) fn load(&self, pid: u32, data: &[u8]) -> Result<(), Errno> {
        let mut i = lock(&self.inner);
        self.check(&i, pid, "load_policy")?;
        i.engine.reload_bytes(data).map_err(|e| {
            self.log.record(
                "SELINUX_ERR",
                &format!("seaccess run: policy load by pid {pid} refused: {e}"),
            );
            libc_errno::EINVAL
        })?;
        write_file(&self.dir.join(layout::POLICY_FILE), data).map_err(|_| libc_errno::EIO)?;
        let mut names: Vec<String> = i
            .engine
            .server()
            .snapshot()
            .booleans()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        names.sort();
        i.pending = names
            .iter()
            .map(|n| i.engine.server().pending_boolean(n).unwrap_or(false))
            .collect();
        i.names = names;
        i.policy_gen = i.policy_gen.wrapping_add(1);
        self.log.record(
            "MAC_POLICY_LOAD",
            &format!("policy loaded {} lsm=selinux res=1", Self::ids(pid)),
        );
        self.publish(&mut i)
            .map_err(|e| e.raw_os_error().unwrap_or(libc_errno::EIO))
    }

    /// The figures of selinuxfs's `status` page (struct selinux_status_t).
    pub(crate) fn status_bytes(&self) -> Vec<u8> {
        let mut b = vec![0u8; 20];
        let _ = self.page.read_exact_at(&mut b, 0);
        b
    }

    /// policyvers, mls, deny_unknown, reject_unknown.
    pub(crate) fn facts(&self) -> (bool, bool, bool) {
        let g = lock(&self.inner).engine.server().snapshot();
        let hu = g.handle_unknown();
        (
            g.policy().mls,
            hu != seaccess_types::HandleUnknown::Allow,
            hu == seaccess_types::HandleUnknown::Reject,
        )
    }

    /// The policy image the session enforces.
    pub(crate) fn policy_image(&self) -> Vec<u8> {
        std::fs::read(self.dir.join(layout::POLICY_FILE)).unwrap_or_default()
    }

    /// avc/cache_stats: one line a process of the session (and one for those that exited).
    pub(crate) fn cache_stats(&self) -> String {
        let mut out = String::from("lookups hits misses allocations reclaims frees\n");
        let Ok(b) = std::fs::read(self.dir.join(layout::STATS_FILE)) else {
            return out;
        };
        for (k, slot) in b.chunks_exact(layout::STATS_SLOT_SIZE).enumerate() {
            let w: Vec<u64> = slot
                .chunks_exact(8)
                .map(|c| u64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
                .collect();
            // The retired line always, a process's while it holds its slot.
            if k != layout::STATS_RETIRED && w.first() == Some(&0) {
                continue;
            }
            let line: Vec<String> = w.iter().skip(1).take(6).map(u64::to_string).collect();
            out.push_str(&line.join(" "));
            out.push('\n');
        }
        out
    }
}

/// SELINUXTYPE of the policy root the session sees.
fn policy_type() -> String {
    let text = std::fs::read_to_string("/etc/selinux/config").unwrap_or_default();
    text.lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("SELINUXTYPE=")
                .map(|v| v.trim().to_string())
        })
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "targeted".into())
}

fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn write_file(path: &Path, data: &[u8]) -> Result<(), String> {
    // A new file renamed into place: a process loading the old image reads it whole.
    let tmp = path.with_extension("new");
    std::fs::write(&tmp, data)
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn set_mode(path: &Path, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The errnos the view answers (the values of Linux's asm-generic/errno-base.h).
pub(crate) mod libc_errno {
    pub const ESRCH: i32 = 3;
    pub const EIO: i32 = 5;
    pub const EAGAIN: i32 = 11;
    pub const EACCES: i32 = 13;
    pub const EINVAL: i32 = 22;
    pub const EOPNOTSUPP: i32 = 95;
}

/// `SEACCESS_CONTEXT` in the environment process `pid` started with, where the labels
/// interposer puts the context an exec gave it (crates/capi/preload; libseaccess's getcon reads
/// it first). Not for a secure-execution process (AT_SECURE in its auxiliary vector, or a
/// vector that cannot be read): its environment is its caller's, as libseaccess ignores it
/// there too.
fn exec_context(pid: u32) -> Option<String> {
    let auxv = std::fs::read(format!("/proc/{pid}/auxv")).ok()?;
    let word = |b: &[u8]| <[u8; 8]>::try_from(b).ok().map(u64::from_ne_bytes);
    const AT_SECURE: u64 = 23;
    if auxv
        .chunks_exact(16)
        .any(|p| word(&p[..8]) == Some(AT_SECURE) && word(&p[8..]) != Some(0))
    {
        return None;
    }
    let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let v = env
        .split(|b| *b == 0)
        .find_map(|kv| kv.strip_prefix(b"SEACCESS_CONTEXT=".as_slice()))?;
    std::str::from_utf8(v).ok().map(str::to_string)
}
