//! The Rust mirror of `bpf/layout.h`, the contract between the BPF object and the daemon: the
//! maps' keys and values, field for field. SIDs are the engine's; classes and permissions are
//! the object manager's numbering ([`seaccess_objmgr::classes`]), never the policy's.

/// The generations kept side by side: the one in use and the one being filled.
pub const GENERATIONS: u32 = 2;
/// Entries each generation's decisions map can hold.
pub const MAX_DECISIONS: u32 = 1 << 20;
/// Entries each generation's transitions map can hold.
pub const MAX_TRANSITIONS: u32 = 1 << 16;
/// The bytes of a name an event carries.
pub const NAME_LEN: usize = 64;
/// The protocols a port SID is kept for, in the ports map's order: index `P * 65536 + port`.
pub const PORT_PROTOCOLS: [u8; 4] = [6, 17, 132, 33];
/// Entries of each generation's ports map.
pub const PORTS: u32 = 4 * 65536;
/// Entries each generation's nodes map can hold.
pub const MAX_NODES: u32 = 64;
/// Entries each generation's named transitions map can hold.
pub const MAX_NAMED: u32 = 1 << 16;
/// The bytes of a name in [`NamedKey`] (a longer name is not in the map).
pub const TNAME_LEN: usize = 64;

/// Key of the named transitions map (`struct sea_nkey`).
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NamedKey {
    /// The creating task's SID.
    pub ssid: u32,
    /// The directory's SID.
    pub tsid: u32,
    /// The object manager's class number.
    pub tclass: u32,
    /// The new object's name, NUL-padded.
    pub name: [u8; TNAME_LEN],
}

impl NamedKey {
    /// The key of `name` under (`ssid`, `tsid`, `tclass`); None if the name does not fit with
    /// its NUL (or holds one).
    pub fn new(ssid: u32, tsid: u32, tclass: u32, name: &str) -> Option<NamedKey> {
        let b = name.as_bytes();
        if b.len() >= TNAME_LEN || b.contains(&0) {
            return None;
        }
        let mut n = [0u8; TNAME_LEN];
        n[..b.len()].copy_from_slice(b);
        Some(NamedKey {
            ssid,
            tsid,
            tclass,
            name: n,
        })
    }
}
/// Entries each generation's filesystems map can hold.
pub const MAX_FILESYSTEMS: u32 = 1024;
/// The bytes of a file system type's name in [`FsKey`] (longer names are not in the map).
pub const FSNAME_LEN: usize = 32;

/// Key of the decisions and transitions maps (`struct sea_key`).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    /// The subject's SID.
    pub ssid: u32,
    /// The object's SID.
    pub tsid: u32,
    /// The object manager's class number.
    pub tclass: u32,
}

/// [`Av::flags`]: the source domain is permissive.
pub const AV_PERMISSIVE: u32 = 1;

/// One decision in the object manager's bits (`struct sea_av`).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Av {
    /// Granted permissions.
    pub allowed: u32,
    /// Granted permissions to record.
    pub auditallow: u32,
    /// Denied permissions to record.
    pub auditdeny: u32,
    /// [`AV_PERMISSIVE`].
    pub flags: u32,
}

/// The SID a new object or an exec's new domain gets (`struct sea_trans`).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Trans {
    /// The new SID.
    pub newsid: u32,
    /// Zero.
    pub pad: u32,
}

/// One generation's settings (`struct sea_config`).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// 0: permissive (decisions logged, nothing denied).
    pub enforcing: u32,
    /// The initial SID `unlabeled`.
    pub unlabeled_sid: u32,
    /// The initial SID `file`: inodes nobody labeled.
    pub file_sid: u32,
    /// The initial SID `kernel`.
    pub kernel_sid: u32,
    /// [`CONFIG_EXTSOCKCLASS`].
    pub flags: u32,
    /// The initial SID `port`: a port no portcon names.
    pub port_sid: u32,
    /// The initial SID `node`: an address no nodecon names.
    pub node_sid: u32,
    /// Entries of the nodes map.
    pub nodes: u32,
    /// net.ipv4.ip_unprivileged_port_start: ports below it ask `name_bind`.
    pub prot_sock: u32,
    /// net.ipv4.ip_local_port_range's low end: ports below it ask `name_bind`.
    pub local_low: u32,
    /// Its high end: ports above it ask `name_bind`.
    pub local_high: u32,
    /// Zero.
    pub pad: u32,
}

/// One nodecon entry (`struct sea_node`).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Node {
    /// 0: IPv4 (address and mask in the first 4 bytes); 1: IPv6.
    pub v6: u32,
    /// Its SID.
    pub sid: u32,
    /// The address, network byte order.
    pub addr: [u8; 16],
    /// The mask.
    pub mask: [u8; 16],
}

/// [`Config::flags`]: the policy declares extended_socket_class, which gives SCTP, ICMP and the
/// newer address families socket classes of their own (socket_type_to_security_class).
pub const CONFIG_EXTSOCKCLASS: u32 = 1;

/// Key of the filesystems map (`struct sea_fskey`): a file system type's name, NUL-padded.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FsKey {
    /// The name (struct file_system_type's, as the kernel's security_fs_use looks it up).
    pub name: [u8; FSNAME_LEN],
}

impl FsKey {
    /// The key of file system type `name`; None if it does not fit with its NUL.
    pub fn new(name: &str) -> Option<FsKey> {
        let b = name.as_bytes();
        if b.len() >= FSNAME_LEN || b.contains(&0) {
            return None;
        }
        let mut key = FsKey::default();
        key.name[..b.len()].copy_from_slice(b);
        Some(key)
    }
}

/// [`FsDef::kind`]: inodes nobody labeled are [`FsDef::sid`].
pub const FS_FIXED: u32 = 1;
/// [`FsDef::kind`]: fs_use_task: an object takes its creator's SID, kept when a confined task
/// makes it; one an unconfined task made is not checked.
pub const FS_CREATOR: u32 = 3;
/// [`FsDef::kind`]: labels by path inside the file system (genfscon with several entries):
/// not checked.
pub const FS_UNCHECKED: u32 = 4;

/// How inodes nobody labeled are labeled on a file system type (`struct sea_fsdef`).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FsDef {
    /// Their SID ([`FS_FIXED`]); 0 otherwise.
    pub sid: u32,
    /// [`FS_FIXED`], [`FS_CREATOR`] or [`FS_UNCHECKED`].
    pub kind: u32,
}

/// [`Task::flags`]: an exec chose [`Task::exec_sid`], applied when it commits.
pub const TASK_EXEC_PENDING: u32 = 1;

/// Entries in a task's decision cache (`SEA_AVD_SLOTS`).
pub const AVD_SLOTS: usize = 4;

/// One entry of a task's decision cache (`struct sea_avd`): `perms` on (`tsid`, `tclass`)
/// granted cleanly (allowed, none auditallow'ed). `tsid` 0 marks an empty entry.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Avd {
    /// The target SID.
    pub tsid: u32,
    /// The class.
    pub tclass: u32,
    /// Object manager bits granted cleanly.
    pub perms: u32,
    /// Zero.
    pub pad: u32,
}

/// Task storage (`struct sea_task`): a task without it is not confined. The daemon writes
/// only the label (the cache empty); the rest is the BPF side's.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Task {
    /// The task's SID.
    pub sid: u32,
    /// The domain an exec in progress chose.
    pub exec_sid: u32,
    /// [`TASK_EXEC_PENDING`].
    pub flags: u32,
    /// The cache entry the next clean grant takes.
    pub avd_next: u32,
    /// The generation the cache's entries were decided in (0: none).
    pub avd_seqno: u64,
    /// The task SID they were decided for.
    pub avd_ssid: u32,
    /// Zero.
    pub pad: u32,
    /// The cache.
    pub avd: [Avd; AVD_SLOTS],
}

/// [`Inode::flags`]: the daemon or a create labeled the inode.
pub const INODE_LABELED: u32 = 1;

/// Inode storage (`struct sea_inode`): the label (grants are kept per task, [`Task::avd`]).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Inode {
    /// The inode's SID.
    pub sid: u32,
    /// [`INODE_LABELED`].
    pub flags: u32,
}

/// [`Event::kind`]: an `avc:  denied` record.
pub const EV_DENIED: u32 = 1;
/// [`Event::kind`]: an auditallow'ed grant, an `avc:  granted` record.
pub const EV_GRANTED: u32 = 2;
/// [`Event::kind`]: no decision for the key; denied, and the daemon fills it.
pub const EV_MISS: u32 = 3;

/// One record on the ring buffer (`struct sea_event`).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct Event {
    /// The generation decided in.
    pub seqno: u64,
    /// [`EV_DENIED`], [`EV_GRANTED`] or [`EV_MISS`].
    pub kind: u32,
    /// The subject's SID.
    pub ssid: u32,
    /// The object's SID.
    pub tsid: u32,
    /// The object manager's class number.
    pub tclass: u32,
    /// Requested permissions.
    pub requested: u32,
    /// Denied permissions.
    pub denied: u32,
    /// The permissions the record names.
    pub audited: u32,
    /// 1 when the decision was permissive.
    pub permissive: u32,
    /// The task's thread-group id.
    pub pid: u32,
    /// The inode's device (the kernel's new_encode_dev).
    pub dev: u32,
    /// The inode's number.
    pub ino: u64,
    /// The task's comm.
    pub comm: [u8; 16],
    /// The dentry's name, NUL-terminated.
    pub name: [u8; NAME_LEN],
    /// The superblock's `s_id`, NUL-terminated: the record's `dev="..."`, as the kernel
    /// prints it.
    pub dev_name: [u8; 32],
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// The sizes and offsets layout.h gives (x86_64): a field moved on one side only fails here.
    #[test]
    fn the_structs_match_layout_h() {
        assert_eq!(size_of::<Key>(), 12);
        assert_eq!(size_of::<Av>(), 16);
        assert_eq!(size_of::<Trans>(), 8);
        assert_eq!(size_of::<Config>(), 48);
        assert_eq!(offset_of!(Config, port_sid), 20);
        assert_eq!(offset_of!(Config, local_high), 40);
        assert_eq!(size_of::<Node>(), 40);
        assert_eq!(size_of::<NamedKey>(), 76);
        assert_eq!(offset_of!(Node, mask), 24);
        assert_eq!(offset_of!(Config, flags), 16);
        assert_eq!(size_of::<Task>(), 96);
        assert_eq!(offset_of!(Task, avd), 32);
        assert_eq!(size_of::<FsKey>(), 32);
        assert_eq!(size_of::<FsDef>(), 8);
        assert_eq!(size_of::<Inode>(), 8);
        assert_eq!(offset_of!(Event, ino), 48);
        assert_eq!(offset_of!(Event, comm), 56);
        assert_eq!(offset_of!(Event, dev_name), 136);
        assert_eq!(size_of::<Event>(), 168);
    }
}
