//! The loader: opens and loads the BPF object built from `bpf/seaccess.bpf.c`, attaches its LSM
//! programs, pins its maps under [`PIN_DIR`] (so that `seaccess enforce run` in another process
//! finds the task storage), installs generations, labels tasks by pidfd and inodes by
//! descriptor, and reads the ring buffer's events.
//!
//! libbpf-rs over aya: the object is C compiled by clang (CO-RE, task and inode storage,
//! arrays of maps), which libbpf loads as the kernel's own samples do; libbpf-sys builds only
//! libbpf from its vendored source (about 20 s, linking Debian's libelf and zlib), where aya
//! would parse the maps itself and has no inode storage.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use libbpf_rs::{Link, MapCore, MapFlags, MapHandle, MapType, Object, ObjectBuilder};

use crate::layout::{
    Av, Avd, Config, Event, FsDef, FsKey, Inode, Key, NamedKey, Node, Task, Trans, AVD_SLOTS,
    FSNAME_LEN, GENERATIONS, MAX_DECISIONS, MAX_FILESYSTEMS, MAX_NAMED, MAX_NODES, MAX_TRANSITIONS,
    NAME_LEN, PORTS, TNAME_LEN,
};

/// Where the maps are pinned (a directory of the BPF filesystem).
pub const PIN_DIR: &str = "/sys/fs/bpf/seaccess";

/// The object, built by build.rs.
static OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/seaccess.bpf.o"));

use crate::{EnforceError, Result};

fn bpf(what: impl FnOnce() -> String) -> impl FnOnce(libbpf_rs::Error) -> EnforceError {
    move |source| EnforceError::Bpf {
        what: what(),
        source,
    }
}

/// The loaded and attached object, its maps, and the generation in use.
pub struct Enforcer {
    /// Kept for as long as the programs must stay attached.
    _links: Vec<Link>,
    _object: Object,
    current: Current,
    decisions: MapHandle,
    transitions: MapHandle,
    named: MapHandle,
    config: MapHandle,
    filesystems: MapHandle,
    ports: MapHandle,
    nodes: MapHandle,
    tasks: MapHandle,
    inodes: MapHandle,
    events: MapHandle,
    seqno: u64,
    /// The inner decisions, transitions and named transitions maps of the generation in use,
    /// which [`Enforcer::extend`] adds to.
    live: Option<(MapHandle, MapHandle, MapHandle)>,
}

/// Entries per batch update: one system call each, not one per entry.
const BATCH: usize = 4096;

/// Inserts the named transitions into `map`, `BATCH` at a time.
fn fill_named(map: &MapHandle, entries: &[(NamedKey, Trans)]) -> Result<()> {
    for chunk in entries.chunks(BATCH) {
        let mut keys = Vec::with_capacity(chunk.len() * (12 + TNAME_LEN));
        let mut values = Vec::with_capacity(chunk.len() * 8);
        for (k, v) in chunk {
            keys.extend(words(&[k.ssid, k.tsid, k.tclass]));
            keys.extend_from_slice(&k.name);
            values.extend(trans_bytes(v));
        }
        let n = u32::try_from(chunk.len()).unwrap_or(u32::MAX);
        map.update_batch(&keys, &values, n, MapFlags::ANY, MapFlags::ANY)
            .map_err(bpf(|| format!("{n} named transitions")))?;
    }
    Ok(())
}

/// Inserts `entries` into `map`, `BATCH` at a time.
fn fill<V>(
    map: &MapHandle,
    entries: &[(Key, V)],
    value: impl Fn(&V) -> Vec<u8>,
    what: &str,
) -> Result<()> {
    for chunk in entries.chunks(BATCH) {
        let mut keys = Vec::with_capacity(chunk.len() * 12);
        let mut values = Vec::new();
        for (k, v) in chunk {
            keys.extend(key_bytes(k));
            values.extend(value(v));
        }
        let n = u32::try_from(chunk.len()).unwrap_or(u32::MAX);
        map.update_batch(&keys, &values, n, MapFlags::ANY, MapFlags::ANY)
            .map_err(bpf(|| {
                format!("{n} {what} from {:?}", chunk.first().map(|e| e.0))
            }))?;
    }
    Ok(())
}

impl Enforcer {
    /// Loads the object (the verifier runs here), attaches every program and pins the maps
    /// under `pin_dir` (replacing what an earlier daemon left there). Nothing is confined
    /// until a task is labeled, and no generation is in use until [`Enforcer::install`].
    pub fn load(pin_dir: &Path) -> Result<Enforcer> {
        let open = ObjectBuilder::default()
            .open_memory(OBJECT)
            .map_err(bpf(|| "opening the BPF object".into()))?;
        let object = open
            .load()
            .map_err(bpf(|| "loading the BPF object (the verifier)".into()))?;
        let mut links = Vec::new();
        for prog in object.progs_mut() {
            let name = prog.name().to_string_lossy().into_owned();
            links.push(
                prog.attach_lsm()
                    .map_err(bpf(|| format!("attaching {name}")))?,
            );
        }
        if pin_dir.exists() {
            std::fs::remove_dir_all(pin_dir).map_err(|source| EnforceError::System {
                what: format!("removing the old pins in {}", pin_dir.display()),
                source,
            })?;
        }
        std::fs::create_dir_all(pin_dir).map_err(|source| EnforceError::System {
            what: format!("creating {}", pin_dir.display()),
            source,
        })?;
        let handle = |name: &str| -> Result<MapHandle> {
            let map = object
                .maps()
                .find(|m| m.name() == name)
                .ok_or_else(|| EnforceError::Missing(format!("map {name}")))?;
            let mut h = MapHandle::try_from(&map).map_err(bpf(|| format!("map {name}")))?;
            h.pin(pin_dir.join(name))
                .map_err(bpf(|| format!("pinning map {name}")))?;
            Ok(h)
        };
        let current = handle("current")?;
        Ok(Enforcer {
            current: Current::map(&current)?,
            decisions: handle("decisions")?,
            transitions: handle("transitions")?,
            named: handle("named")?,
            config: handle("config")?,
            filesystems: handle("filesystems")?,
            ports: handle("ports")?,
            nodes: handle("nodes")?,
            tasks: handle("task_store")?,
            inodes: handle("inode_store")?,
            events: handle("events")?,
            _links: links,
            _object: object,
            seqno: 0,
            live: None,
        })
    }

    /// The generation in use (0: none yet).
    pub fn seqno(&self) -> u64 {
        self.seqno
    }

    /// Installs one generation and switches to it: fresh inner maps filled in the slot the
    /// generation in use does not use, then the one 64-bit store of the new seqno into
    /// `current`. Returns the new seqno. A hook that read the old seqno goes on with the old
    /// maps (the outer maps hold them until it ends); grants remembered under the old seqno no
    /// longer match.
    pub fn install(
        &mut self,
        decisions: &[(Key, Av)],
        transitions: &[(Key, Trans)],
        named: &[(NamedKey, Trans)],
        filesystems: &[(FsKey, FsDef)],
        net: (&[u32], &[Node]),
        config: &Config,
    ) -> Result<u64> {
        let next = self.seqno + 1;
        let slot = u32::try_from(next % u64::from(GENERATIONS)).unwrap_or(0);
        let dec = inner(MapType::Hash, "sea_decisions", 12, 16, MAX_DECISIONS)?;
        fill(&dec, decisions, av_bytes, "decisions")?;
        let tr = inner(MapType::Hash, "sea_transitions", 12, 8, MAX_TRANSITIONS)?;
        fill(&tr, transitions, trans_bytes, "transitions")?;
        let nm = inner(
            MapType::Hash,
            "sea_named",
            12 + TNAME_LEN as u32,
            8,
            MAX_NAMED,
        )?;
        fill_named(&nm, named)?;
        let fs = inner(
            MapType::Hash,
            "sea_filesystems",
            FSNAME_LEN as u32,
            8,
            MAX_FILESYSTEMS,
        )?;
        for (k, v) in filesystems {
            fs.update(&k.name, &words(&[v.sid, v.kind]), MapFlags::ANY)
                .map_err(bpf(|| {
                    format!("file system {}", String::from_utf8_lossy(&k.name))
                }))?;
        }
        let (ports, nodes) = net;
        let pmap = inner(MapType::Array, "sea_ports", 4, 4, PORTS)?;
        for (i, chunk) in ports.chunks(BATCH).enumerate() {
            let keys: Vec<u8> = (0..chunk.len())
                .flat_map(|j| u32::try_from(i * BATCH + j).unwrap_or(0).to_ne_bytes())
                .collect();
            let n = u32::try_from(chunk.len()).unwrap_or(0);
            pmap.update_batch(&keys, &words(chunk), n, MapFlags::ANY, MapFlags::ANY)
                .map_err(bpf(|| format!("the ports from {}", i * BATCH)))?;
        }
        let nmap = inner(MapType::Array, "sea_nodes", 4, 40, MAX_NODES)?;
        for (i, n) in nodes.iter().enumerate() {
            let mut v = words(&[n.v6, n.sid]);
            v.extend_from_slice(&n.addr);
            v.extend_from_slice(&n.mask);
            let k = u32::try_from(i).unwrap_or(u32::MAX);
            nmap.update(&k.to_ne_bytes(), &v, MapFlags::ANY)
                .map_err(bpf(|| format!("nodecon entry {i}")))?;
        }
        let cfg = inner(MapType::Array, "sea_config", 4, 48, 1)?;
        cfg.update(&0u32.to_ne_bytes(), &config_bytes(config), MapFlags::ANY)
            .map_err(bpf(|| "the config".into()))?;
        for (outer, innerm, what) in [
            (&self.decisions, &dec, "decisions"),
            (&self.transitions, &tr, "transitions"),
            (&self.named, &nm, "named"),
            (&self.filesystems, &fs, "filesystems"),
            (&self.ports, &pmap, "ports"),
            (&self.nodes, &nmap, "nodes"),
            (&self.config, &cfg, "config"),
        ] {
            outer
                .update(
                    &slot.to_ne_bytes(),
                    &innerm.as_fd().as_raw_fd().to_ne_bytes(),
                    MapFlags::ANY,
                )
                .map_err(bpf(|| format!("slot {slot} of {what}")))?;
        }
        self.current.store(next);
        self.seqno = next;
        self.live = Some((dec, tr, nm));
        Ok(next)
    }

    /// Adds decisions and transitions to the generation in use, in place: no entry it holds
    /// changes, so no hook can decide differently than before except where it missed (and was
    /// refused), and the grants remembered under its seqno stay valid, as the kernel's AVC
    /// fills entries without a new seqno. Before any [`Enforcer::install`], an error.
    pub fn extend(
        &self,
        decisions: &[(Key, Av)],
        transitions: &[(Key, Trans)],
        named: &[(NamedKey, Trans)],
    ) -> Result<()> {
        let (dec, tr, nm) = self
            .live
            .as_ref()
            .ok_or_else(|| EnforceError::Missing("a generation in use to extend".into()))?;
        fill(dec, decisions, av_bytes, "decisions")?;
        fill(tr, transitions, trans_bytes, "transitions")?;
        fill_named(nm, named)
    }

    /// Labels the task `pidfd` refers to (confines it: from now on its hooks are checked).
    pub fn set_task(&self, pidfd: BorrowedFd<'_>, sid: u32) -> Result<()> {
        set_task(&self.tasks, pidfd, sid)
    }

    /// The label of the task `pidfd` refers to, if it is confined.
    pub fn task(&self, pidfd: BorrowedFd<'_>) -> Result<Option<Task>> {
        task(&self.tasks, pidfd)
    }

    /// Labels the inode `fd` is open on.
    pub fn set_inode(&self, fd: BorrowedFd<'_>, sid: u32) -> Result<()> {
        let v = Inode {
            sid,
            flags: crate::layout::INODE_LABELED,
        };
        let b = words(&[v.sid, v.flags]);
        self.inodes
            .update(&fd.as_raw_fd().to_ne_bytes(), &b, MapFlags::ANY)
            .map_err(bpf(|| "labeling an inode".into()))
    }

    /// The label of the inode `fd` is open on, if it is labeled.
    pub fn inode(&self, fd: BorrowedFd<'_>) -> Result<Option<Inode>> {
        inode(&self.inodes, fd)
    }

    /// The events the ring buffer holds now, and those arriving within `timeout`.
    pub fn events(&self, timeout: std::time::Duration) -> Result<Vec<Event>> {
        let got = std::cell::RefCell::new(Vec::new());
        let mut b = libbpf_rs::RingBufferBuilder::new();
        b.add(&self.events, |data: &[u8]| {
            if let Some(e) = parse_event(data) {
                got.borrow_mut().push(e);
            }
            0
        })
        .map_err(bpf(|| "the ring buffer".into()))?;
        let rb = b.build().map_err(bpf(|| "the ring buffer".into()))?;
        match rb.poll(timeout) {
            // A signal for the daemon (SIGHUP, SIGTERM) ends the wait: no events, not an error.
            Err(e) if e.kind() == libbpf_rs::ErrorKind::Interrupted => {}
            r => r.map_err(bpf(|| "polling the ring buffer".into()))?,
        }
        rb.consume()
            .map_err(bpf(|| "reading the ring buffer".into()))?;
        drop(rb);
        Ok(got.into_inner())
    }
}

/// The maps a daemon pinned under `pin_dir` (its [`PIN_DIR`]), opened by another process
/// (`seaccess enforce run`, `context`, `label`): only root may open them.
pub struct Pinned {
    tasks: MapHandle,
    inodes: MapHandle,
}

impl Pinned {
    /// Opens the task and inode storage pinned under `pin_dir`.
    pub fn open(pin_dir: &Path) -> Result<Pinned> {
        let open = |name: &str| {
            let path = pin_dir.join(name);
            MapHandle::from_pinned_path(&path)
                .map_err(bpf(|| format!("opening {}", path.display())))
        };
        Ok(Pinned {
            tasks: open("task_store")?,
            inodes: open("inode_store")?,
        })
    }

    /// Labels the task `pidfd` refers to (see [`Enforcer::set_task`]).
    pub fn set_task(&self, pidfd: BorrowedFd<'_>, sid: u32) -> Result<()> {
        set_task(&self.tasks, pidfd, sid)
    }

    /// The label of the task `pidfd` refers to, if it is confined.
    pub fn task(&self, pidfd: BorrowedFd<'_>) -> Result<Option<Task>> {
        task(&self.tasks, pidfd)
    }

    /// The label of the inode `fd` is open on, if it is labeled.
    pub fn inode(&self, fd: BorrowedFd<'_>) -> Result<Option<Inode>> {
        inode(&self.inodes, fd)
    }
}

fn task(tasks: &MapHandle, pidfd: BorrowedFd<'_>) -> Result<Option<Task>> {
    let v = tasks
        .lookup(&pidfd.as_raw_fd().to_ne_bytes(), MapFlags::ANY)
        .map_err(bpf(|| "reading a task's label".into()))?;
    Ok(v.and_then(|b| {
        let w = read_words::<24>(&b)?;
        let mut avd = [Avd::default(); AVD_SLOTS];
        for (i, e) in avd.iter_mut().enumerate() {
            let x = &w[8 + 4 * i..12 + 4 * i];
            *e = Avd {
                tsid: x[0],
                tclass: x[1],
                perms: x[2],
                pad: x[3],
            };
        }
        Some(Task {
            sid: w[0],
            exec_sid: w[1],
            flags: w[2],
            avd_next: w[3],
            avd_seqno: u64::from_ne_bytes(b.get(16..24)?.try_into().ok()?),
            avd_ssid: w[6],
            pad: w[7],
            avd,
        })
    }))
}

fn inode(inodes: &MapHandle, fd: BorrowedFd<'_>) -> Result<Option<Inode>> {
    let v = inodes
        .lookup(&fd.as_raw_fd().to_ne_bytes(), MapFlags::ANY)
        .map_err(bpf(|| "reading an inode's label".into()))?;
    Ok(v.and_then(|b| {
        let w = read_words::<2>(&b)?;
        Some(Inode {
            sid: w[0],
            flags: w[1],
        })
    }))
}

/// `t` as `struct sea_task`'s bytes.
fn task_bytes(t: &Task) -> Vec<u8> {
    let mut b = words(&[t.sid, t.exec_sid, t.flags, t.avd_next]);
    b.extend_from_slice(&t.avd_seqno.to_ne_bytes());
    b.extend_from_slice(&words(&[t.avd_ssid, t.pad]));
    for e in &t.avd {
        b.extend_from_slice(&words(&[e.tsid, e.tclass, e.perms, e.pad]));
    }
    b
}

fn set_task(tasks: &MapHandle, pidfd: BorrowedFd<'_>, sid: u32) -> Result<()> {
    let t = Task {
        sid,
        ..Task::default()
    };
    tasks
        .update(
            &pidfd.as_raw_fd().to_ne_bytes(),
            &task_bytes(&t),
            MapFlags::ANY,
        )
        .map_err(bpf(|| "labeling a task".into()))
}

/// A fresh inner map like the object's template for it (same type, sizes and flags, as an
/// array of maps requires).
fn inner(ty: MapType, name: &str, key: u32, value: u32, max: u32) -> Result<MapHandle> {
    let opts = libbpf_rs::libbpf_sys::bpf_map_create_opts {
        sz: std::mem::size_of::<libbpf_rs::libbpf_sys::bpf_map_create_opts>() as _,
        map_flags: if ty == MapType::Hash {
            libbpf_rs::libbpf_sys::BPF_F_NO_PREALLOC
        } else {
            0
        },
        ..Default::default()
    };
    MapHandle::create(ty, Some(name), key, value, max, &opts)
        .map_err(bpf(|| format!("creating a {name} map")))
}

fn words(w: &[u32]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn read_words<const N: usize>(b: &[u8]) -> Option<[u32; N]> {
    let mut out = [0u32; N];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u32::from_ne_bytes(b.get(i * 4..i * 4 + 4)?.try_into().ok()?);
    }
    Some(out)
}

fn key_bytes(k: &Key) -> Vec<u8> {
    words(&[k.ssid, k.tsid, k.tclass])
}

fn trans_bytes(v: &Trans) -> Vec<u8> {
    words(&[v.newsid, v.pad])
}

fn av_bytes(v: &Av) -> Vec<u8> {
    words(&[v.allowed, v.auditallow, v.auditdeny, v.flags])
}

fn config_bytes(c: &Config) -> Vec<u8> {
    words(&[
        c.enforcing,
        c.unlabeled_sid,
        c.file_sid,
        c.kernel_sid,
        c.flags,
        c.port_sid,
        c.node_sid,
        c.nodes,
        c.prot_sock,
        c.local_low,
        c.local_high,
        c.pad,
    ])
}

/// An event as the BPF side laid it out (layout.h's struct sea_event); None if short.
fn parse_event(b: &[u8]) -> Option<Event> {
    let u64at = |o: usize| Some(u64::from_ne_bytes(b.get(o..o + 8)?.try_into().ok()?));
    let w = read_words::<10>(b.get(8..48)?)?;
    Some(Event {
        seqno: u64at(0)?,
        kind: w[0],
        ssid: w[1],
        tsid: w[2],
        tclass: w[3],
        requested: w[4],
        denied: w[5],
        audited: w[6],
        permissive: w[7],
        pid: w[8],
        dev: w[9],
        ino: u64at(48)?,
        comm: b.get(56..72)?.try_into().ok()?,
        name: b.get(72..72 + NAME_LEN)?.try_into().ok()?,
        dev_name: b.get(72 + NAME_LEN..104 + NAME_LEN)?.try_into().ok()?,
    })
}

/// The `current` array mapped into this process: the seqno is switched by one 64-bit store
/// that a hook's one 64-bit load sees whole (a bpf() update of the element is a memcpy, which
/// promises no such thing).
struct Current {
    ptr: std::ptr::NonNull<std::ffi::c_void>,
    len: usize,
}

// SAFETY: the mapping is only reached through an AtomicU64 (see Current::store).
#[allow(unsafe_code)]
unsafe impl Send for Current {}

impl Current {
    #[allow(unsafe_code)]
    fn map(map: &MapHandle) -> Result<Current> {
        let len = rustix::param::page_size();
        // SAFETY: a fresh shared mapping of the map's one page (an array map with
        // BPF_F_MMAPABLE maps its values from offset 0), placed by the kernel where nothing
        // else is; it is unmapped only by Drop.
        let ptr = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                rustix::mm::MapFlags::SHARED,
                map.as_fd(),
                0,
            )
        }
        .map_err(|e| EnforceError::System {
            what: "mapping the current map".into(),
            source: e.into(),
        })?;
        let ptr = std::ptr::NonNull::new(ptr).ok_or_else(|| EnforceError::System {
            what: "mapping the current map".into(),
            source: std::io::Error::other("a null mapping"),
        })?;
        Ok(Current { ptr, len })
    }

    #[allow(unsafe_code)]
    fn store(&self, seqno: u64) {
        // SAFETY: the mapping is page-aligned (so aligned for u64), at least 8 bytes long and
        // lives as long as self; the kernel side reads it only with whole 64-bit loads.
        let word = unsafe { AtomicU64::from_ptr(self.ptr.as_ptr().cast::<u64>()) };
        word.store(seqno, Ordering::SeqCst);
    }
}

impl Drop for Current {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: the mapping made by Current::map, with its length; nothing uses it after.
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr(), self.len) };
    }
}
