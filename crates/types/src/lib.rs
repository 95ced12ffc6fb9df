//! The vocabulary that crosses seaccess's seams: security identifiers, class numbers, access
//! vectors and decisions.
//!
//! As in the kernel, the object manager, the access vector cache and the security server talk to
//! each other only in these terms, never in context strings or policy structures. This crate must
//! never depend on any other seaccess crate, nor on anything that does I/O.

#![forbid(unsafe_code)]

use std::fmt;

pub mod bytes;
pub mod lock;
pub mod session;

/// A mutex's guard, poisoned or not (see [`mod@lock`] for the rest of the set).
pub use lock::lock;

/// A security identifier: a small integer standing for one security context in one SID table.
///
/// SID 0 is never valid (the kernel's `SECSID_NULL`); initial SIDs keep the numbers the policy
/// gives them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sid(pub u32);

impl Sid {
    /// The kernel's `SECSID_NULL`: no context.
    pub const NULL: Sid = Sid(0);
}

impl fmt::Display for Sid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A security class as the policy numbers it (1-based; 0 is "no class").
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClassId(pub u16);

impl fmt::Display for ClassId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A set of permissions of one class, bit `n` standing for the permission whose value is `n + 1`
/// in the policy's class (commons included).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct AccessVector(pub u32);

impl AccessVector {
    pub const NONE: AccessVector = AccessVector(0);
    pub const ALL: AccessVector = AccessVector(u32::MAX);

    /// The vector holding only the permission at bit `bit` (0-based); `None` past bit 31.
    pub fn bit(bit: u32) -> Option<AccessVector> {
        1u32.checked_shl(bit).map(AccessVector)
    }
    pub fn contains(self, other: AccessVector) -> bool {
        self.0 & other.0 == other.0
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Bit positions set in this vector, lowest first.
    pub fn bits(self) -> impl Iterator<Item = u32> {
        let v = self.0;
        (0..32).filter(move |b| v & (1 << b) != 0)
    }
}

impl std::ops::BitOr for AccessVector {
    type Output = AccessVector;
    fn bitor(self, rhs: Self) -> Self {
        AccessVector(self.0 | rhs.0)
    }
}
impl std::ops::BitAnd for AccessVector {
    type Output = AccessVector;
    fn bitand(self, rhs: Self) -> Self {
        AccessVector(self.0 & rhs.0)
    }
}
impl std::ops::Not for AccessVector {
    type Output = AccessVector;
    fn not(self) -> Self {
        AccessVector(!self.0)
    }
}

impl fmt::LowerHex for AccessVector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerHex::fmt(&self.0, f)
    }
}

/// A policy generation number: bumped by every load, reload and boolean commit.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Seqno(pub u32);

impl Seqno {
    /// Whether this seqno is newer than `other`, in serial-number arithmetic (RFC 1982): the
    /// server's counter wraps after 2^32 changes, so of two seqnos the newer is the one reached
    /// from the other by adding less than 2^31. Compare seqnos only with this, never with `<`
    /// (the derived `Ord` is numeric and wrong across the wrap).
    pub fn is_after(self, other: Seqno) -> bool {
        (self.0.wrapping_sub(other.0) as i32) > 0
    }
}

impl fmt::Display for Seqno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Flags on a decision, as the kernel's `AVD_FLAGS_*`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct DecisionFlags(pub u32);

impl DecisionFlags {
    /// The source domain is a permissive type: denials are logged but not enforced.
    pub const PERMISSIVE: DecisionFlags = DecisionFlags(0x0001);
    pub fn permissive(self) -> bool {
        self.0 & Self::PERMISSIVE.0 != 0
    }
}

/// The security server's answer for one (source, target, class) triple: the counterpart of the
/// kernel's `struct av_decision`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct AvDecision {
    pub allowed: AccessVector,
    /// The permissions this decision covers; the kernel always decides every bit.
    pub decided: AccessVector,
    pub auditallow: AccessVector,
    pub auditdeny: AccessVector,
    pub seqno: Seqno,
    pub flags: DecisionFlags,
}

impl AvDecision {
    /// The starting point of every computation: nothing allowed, every denial audited.
    pub fn deny_all(seqno: Seqno) -> AvDecision {
        AvDecision {
            allowed: AccessVector::NONE,
            decided: AccessVector::ALL,
            auditallow: AccessVector::NONE,
            auditdeny: AccessVector::ALL,
            seqno,
            flags: DecisionFlags::default(),
        }
    }
}

/// An extended-permission (ioctl, netlink message) decision for one driver: 256 function bits per
/// vector, as the kernel's `struct extended_perms_decision`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct XpermsDecision {
    pub driver: u8,
    pub allowed: [u32; 8],
    pub auditallow: [u32; 8],
    pub dontaudit: [u32; 8],
}

impl XpermsDecision {
    /// Whether function `func` of this driver is allowed.
    pub fn allows(&self, func: u8) -> bool {
        bit_in(&self.allowed, func)
    }
    pub fn audits_allow(&self, func: u8) -> bool {
        bit_in(&self.auditallow, func)
    }
    pub fn dontaudits(&self, func: u8) -> bool {
        bit_in(&self.dontaudit, func)
    }
}

fn bit_in(v: &[u32; 8], b: u8) -> bool {
    v[usize::from(b >> 5)] & (1u32 << (b & 31)) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_round_trip() {
        let v = AccessVector(0b1010_0001);
        assert_eq!(v.bits().collect::<Vec<_>>(), vec![0, 5, 7]);
        assert_eq!(AccessVector::bit(32), None);
        assert!(AccessVector::ALL.contains(v));
    }

    #[test]
    fn xperm_bits() {
        let mut d = XpermsDecision::default();
        d.allowed[7] = 1 << 31;
        assert!(d.allows(255));
        assert!(!d.allows(254));
    }
}

/// Why the security server could not answer the cache.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerError {
    /// The SID names no context.
    InvalidSid(Sid),
    /// The class number is not in the policy.
    InvalidClass(ClassId),
    /// Anything else, said in words.
    Other(String),
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerError::InvalidSid(s) => write!(f, "SID {s} is not in the SID table"),
            ServerError::InvalidClass(c) => write!(f, "class number {c} is not in the policy"),
            ServerError::Other(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for ServerError {}

/// A listener for a policy generation about to be published (it answers from that generation
/// alone, with its seqno).
pub type PrepareFn = Box<dyn Fn(&dyn AccessServer) + Send + Sync>;
/// A listener for a policy change that has been published, given its seqno.
pub type ChangeFn = Box<dyn Fn(Seqno) + Send + Sync>;

/// Where a cache learns of policy changes: before each new generation is published (to compute
/// its decisions ahead) and after (to switch to them). Each call registers a listener until the
/// returned [`Registration`] is dropped. Prepare listeners run on the changing thread, one
/// change at a time; change listeners run after the change's locks are released, in
/// publication order, each seqno once.
pub trait PolicyEvents {
    fn on_policy_prepare(&self, f: PrepareFn) -> Registration;
    fn on_policy_change(&self, f: ChangeFn) -> Registration;
}

/// A listener's registration: dropping it unregisters the listener (a listener running at that
/// moment finishes its call). [`Registration::keep`] leaves it registered for good.
#[must_use = "dropping a Registration unregisters its listener at once"]
pub struct Registration {
    unregister: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl Registration {
    /// A registration that runs `unregister` when dropped.
    pub fn new(unregister: impl FnOnce() + Send + Sync + 'static) -> Registration {
        Registration {
            unregister: Some(Box::new(unregister)),
        }
    }

    /// Keeps the listener registered for as long as its source lives.
    pub fn keep(mut self) {
        self.unregister = None;
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(f) = self.unregister.take() {
            f();
        }
    }
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.unregister.is_some() {
            "Registration"
        } else {
            "Registration(kept)"
        })
    }
}

/// One policy generation's names and numbers: its classes, permissions and SID contexts, and
/// what it says about what it does not define, all of policy [`PolicyNames::seqno`].
///
/// A class or permission number means something only in the generation that gave it: a reload
/// may renumber every class. So numbers are only handed out by a value of this trait, with the
/// seqno they belong to, and are used only with a decision of that same seqno (compare
/// [`AvDecision::seqno`]; the cache's `check_at` does), and a record or label names a decision
/// only with the names of the decision's own generation.
pub trait PolicyNames: Send + Sync {
    /// The generation these names are of.
    fn seqno(&self) -> Seqno;
    /// A class's number by name (the kernel's selinux_set_mapping); None when the policy does
    /// not define it.
    fn class_id(&self, name: &str) -> Option<ClassId>;
    /// A permission's bit (from 0) in a class, by name; None when the class lacks it.
    fn perm_bit(&self, class: ClassId, name: &str) -> Option<u32>;
    /// A class's name, for audit records.
    fn class_name(&self, class: ClassId) -> Option<String>;
    /// A permission's name (bit counted from 0), for audit records.
    fn perm_name(&self, class: ClassId, bit: u32) -> Option<String>;
    /// The context of a SID in this generation, for audit records. A SID kept for a context
    /// this policy does not define ([`LabelServer::context_to_sid_force`]) gives the unlabeled
    /// initial SID's context, as the kernel's security_sid_to_context does.
    fn sid_to_context(&self, sid: Sid) -> Option<String>;
    /// The text of a SID kept for a context this policy does not define, None for any other
    /// SID (the kernel's security_sid_to_context_inval, which audit records add as `srawcon=`
    /// and `trawcon=`). The default keeps no such SIDs.
    fn sid_to_context_inval(&self, _sid: Sid) -> Option<String> {
        None
    }
    /// The policy's capabilities, for object managers deciding which checks to make
    /// (open_perms, extended_socket_class, ...). The default declares none.
    fn policy_caps(&self) -> PolicyCaps {
        PolicyCaps::NONE
    }
    /// What the policy says to do with classes and permissions it does not define.
    fn handle_unknown(&self) -> HandleUnknown {
        HandleUnknown::Deny
    }
}

/// The security server as the access vector cache sees it: the counterpart of the kernel's
/// security.h. Only SIDs, class numbers and bit vectors cross this seam, so the cache never
/// needs to know what a policy is.
///
/// Each call answers from the generation the server has at that moment, and says which: a
/// decision carries its seqno, and names and numbers come only through [`AccessServer::names`],
/// bound to theirs. A caller that resolves names and then asks for a decision must check that
/// both seqnos agree, and resolve again when they do not (as `Avc::check_at` lets it):
/// resolving in one call and deciding in another otherwise pairs one policy's class numbers
/// with another's decision when a reload comes between.
pub trait AccessServer: Send + Sync {
    /// The decision for (ssid, tsid, class) under the current policy; its `seqno` says which,
    /// and `class` means what it means in that policy.
    fn compute_av(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<AvDecision, ServerError>;
    /// The ioctl drivers with extended-permission rules for this triple, or None when no such
    /// rule covers it (then the base permission alone decides), with the seqno of the
    /// computation.
    fn xperm_drivers(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
    ) -> Result<(Option<[u32; 8]>, Seqno), ServerError>;
    /// The ioctl extended-permission decision for one driver, with the seqno of the computation.
    fn compute_xperms(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        driver: u8,
    ) -> Result<(XpermsDecision, Seqno), ServerError>;
    /// The netlink message-type high bytes with nlmsg extended-permission rules for this
    /// triple, or None when no extended-permission rule of any kind covers it (then the base
    /// permission alone decides), with the seqno of the computation. A server without netlink
    /// rules answers with ioctl's coverage and no type flagged: every message type is then
    /// denied wherever ioctl rules cover the triple, as the kernel's would be.
    fn nlmsg_drivers(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
    ) -> Result<(Option<[u32; 8]>, Seqno), ServerError> {
        let (d, at) = self.xperm_drivers(ssid, tsid, class)?;
        Ok((d.map(|_| [0; 8]), at))
    }
    /// The netlink-message extended-permission decision for one high byte of the message type,
    /// with the seqno of the computation (by default: nothing allowed).
    fn compute_nlmsg_xperms(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        driver: u8,
    ) -> Result<(XpermsDecision, Seqno), ServerError> {
        let _ = (ssid, tsid, class);
        Ok((
            XpermsDecision {
                driver,
                ..Default::default()
            },
            self.seqno(),
        ))
    }
    /// The current policy seqno.
    fn seqno(&self) -> Seqno;
    /// The names and numbers of the current generation, all of one seqno (the one it reports),
    /// however the server changes while they are held.
    fn names(&self) -> std::sync::Arc<dyn PolicyNames>;
}

/// What a policy says to do with the classes and permissions an object manager enforces but the
/// policy does not define (the policy's handle_unknown; the kernel's deny_unknown,
/// reject_unknown and allow_unknown).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HandleUnknown {
    /// Such permissions are denied.
    Deny,
    /// An object manager whose classes the policy lacks must refuse the policy.
    Reject,
    /// Such permissions are allowed.
    Allow,
}

/// How a filesystem type's inodes are labelled (the policy's fs_use_* statements; the kernel's
/// SECURITY_FS_USE_XATTR, _TRANS and _TASK).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FsUse {
    /// From each inode's security.selinux attribute; new inodes by type transition.
    Xattr,
    /// Every inode by type transition from the creating task and the filesystem's SID.
    Trans,
    /// Every inode takes the SID of the task that creates it.
    Task,
    /// Labels the filesystem itself keeps and reports (the kernel's SECURITY_FS_USE_NATIVE,
    /// as NFSv4.2's labeled NFS).
    Native,
    /// A behaviour by which no inode is labelled from the statement itself (the kernel's
    /// SECURITY_FS_USE_GENFS and _NONE, and 0, which policies may hold): inodes get the
    /// filesystem's SID, or genfscon's where the kernel looks it up.
    Other,
}

/// What an object manager asks the security server besides access decisions: the labels of new
/// objects, contexts from clients, the validity of relabels, and the SIDs the policy gives
/// filesystems, ports and network nodes (the kernel's security_transition_sid,
/// security_context_to_sid, security_validate_transition, security_fs_use, security_genfs_sid,
/// security_port_sid, security_node_sid, security_netif_sid). Like [`AccessServer`], only
/// SIDs, class numbers and plain values cross it.
pub trait LabelServer: AccessServer {
    /// The SID of a context given as text (a client's, an attribute's); an error if the current
    /// policy does not define it.
    fn context_to_sid(&self, context: &str) -> Result<Sid, ServerError>;
    /// The SID of a context given as text, kept even if the current policy does not define it
    /// (the kernel's security_context_to_sid_force, for a relabel by a task with
    /// `CAP_MAC_ADMIN`): such an "unmapped" SID keeps its text
    /// ([`PolicyNames::sid_to_context_inval`] gives it back), is decided as the unlabeled
    /// initial SID, and becomes the context itself once a loaded policy defines it. The default
    /// keeps nothing: a context the policy does not define is refused as by
    /// [`LabelServer::context_to_sid`].
    fn context_to_sid_force(&self, context: &str) -> Result<Sid, ServerError> {
        self.context_to_sid(context)
    }
    /// The SID of initial SID number `n` (1 = kernel, ...), if the policy defines it.
    fn initial_sid(&self, n: u32) -> Option<Sid>;
    /// Whether `sid` is initial SID number `n` of the current policy: `initial_sid(n) ==
    /// Some(sid)`, which a server whose SIDs say what they are answers without a lookup (a hook
    /// asks this of every socket it checks, nearly always of a socket that is no initial SID).
    fn is_initial_sid(&self, sid: Sid, n: u32) -> bool {
        self.initial_sid(n) == Some(sid)
    }
    /// Whether initial SID `n`, when defined, is always `Sid(n)`, in every policy this server
    /// will load: then a SID whose number is not `n` is not initial SID `n`, which a caller may
    /// conclude once, at set-up, without asking per SID.
    fn initial_sids_numbered(&self) -> bool {
        false
    }
    /// The SID a new object of `class` gets when `ssid` creates it in (or for) `tsid`, with the
    /// new object's last path component when it has one (name-based type transitions).
    fn transition_sid(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        name: Option<&str>,
    ) -> Result<Sid, ServerError>;
    /// The SID a member object takes (type_member rules), as the kernel's security_member_sid.
    fn member_sid(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<Sid, ServerError>;
    /// Whether the policy's validatetrans constraints let `task` relabel an object of `class`
    /// from `old` to `new` (false: they forbid it).
    fn validate_transition(
        &self,
        old: Sid,
        new: Sid,
        task: Sid,
        class: ClassId,
    ) -> Result<bool, ServerError>;
    /// Whether a task may go from `old` to `new` where only a bounded transition is allowed (a
    /// multithreaded setcon, an exec under no_new_privs or nosuid without the process2
    /// permissions): the same type, or `new`'s type bounded (through its chain of typebounds)
    /// by `old`'s, as the kernel's security_bounded_transition.
    fn bounded_transition(&self, old: Sid, new: Sid) -> Result<bool, ServerError>;
    /// How inodes of a filesystem type are labelled, and the filesystem's SID, if an fs_use
    /// statement names the type.
    fn fs_use(&self, fstype: &str) -> Option<(FsUse, Sid)>;
    /// The SID genfscon statements give a path on a filesystem type, if any does.
    fn genfs_sid(&self, fstype: &str, path: &str, class: ClassId) -> Option<Sid>;
    /// The SID of a port (`protocol` is the IP protocol number: 6 TCP, 17 UDP, ...).
    fn port_sid(&self, protocol: u8, port: u16) -> Sid;
    /// The SID of a network node (address).
    fn node_sid(&self, addr: std::net::IpAddr) -> Sid;
    /// The SID of a network interface.
    fn netif_sid(&self, name: &str) -> Sid;
}

/// A policy capability: a policy's declaration that it is written for a newer kernel behaviour
/// (the kernel's POLICYDB_CAP_*, in its order, so `bit` is the bit in the policy's capability
/// bitmap). Most change what object managers check, not what the security server answers:
/// each variant says who applies it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PolicyCap {
    /// Object manager: peer and packet checks use the peer class (labeled networking).
    NetworkPeerControls,
    /// Object manager: opening a file checks the `open` permission.
    OpenPerms,
    /// Object manager: sockets of newer families get their own classes, not `socket`.
    ExtendedSocketClass,
    /// Object manager: packet and peer checks apply even with no labeled networking set up.
    AlwaysCheckNetwork,
    /// Object manager: cgroup filesystems support per-file labels.
    CgroupSeclabel,
    /// Object manager: no_new_privs and nosuid transitions check process2 permissions instead
    /// of requiring a bounded type.
    NnpNosuidTransition,
    /// Object manager: symlinks on genfs filesystems get genfs labels too; the security
    /// server's genfs lookup is unchanged (hooks.c decides which objects it asks about).
    GenfsSeclabelSymlinks,
    /// Object manager: FIOCLEX / FIONCLEX and the like skip the ioctl check.
    IoctlSkipCloexec,
    /// Object manager: processes started before the policy loads keep the `init` initial SID.
    /// Security server (policydb_load_isids): without it, the `init` initial SID takes the
    /// `kernel` initial SID's context; seaccess's SID table does not apply this yet.
    UserspaceInitialContext,
    /// Object manager: netlink messages are checked with nlmsg extended permissions.
    NetlinkXperm,
    /// Security server: netifcon names are wildcard patterns (`*`, `?`).
    NetifWildcard,
    /// Security server: genfscon paths are wildcard patterns (`*`, `?`), still matching as
    /// prefixes.
    GenfsSeclabelWildcard,
    /// Object manager: functionfs supports per-file labels.
    FunctionfsSeclabel,
    /// Object manager: memfd files get the memfd_file class.
    MemfdClass,
}

impl PolicyCap {
    /// Every capability, in the kernel's order (policycap.h).
    pub const ALL: [PolicyCap; 14] = [
        PolicyCap::NetworkPeerControls,
        PolicyCap::OpenPerms,
        PolicyCap::ExtendedSocketClass,
        PolicyCap::AlwaysCheckNetwork,
        PolicyCap::CgroupSeclabel,
        PolicyCap::NnpNosuidTransition,
        PolicyCap::GenfsSeclabelSymlinks,
        PolicyCap::IoctlSkipCloexec,
        PolicyCap::UserspaceInitialContext,
        PolicyCap::NetlinkXperm,
        PolicyCap::NetifWildcard,
        PolicyCap::GenfsSeclabelWildcard,
        PolicyCap::FunctionfsSeclabel,
        PolicyCap::MemfdClass,
    ];

    /// The bit in the policy's capability bitmap.
    pub fn bit(self) -> u32 {
        self as u32
    }

    pub fn from_bit(bit: u32) -> Option<PolicyCap> {
        PolicyCap::ALL.get(usize::try_from(bit).ok()?).copied()
    }

    /// The name policies declare it by and selinuxfs publishes it under
    /// (policycap_names.h).
    pub fn name(self) -> &'static str {
        match self {
            PolicyCap::NetworkPeerControls => "network_peer_controls",
            PolicyCap::OpenPerms => "open_perms",
            PolicyCap::ExtendedSocketClass => "extended_socket_class",
            PolicyCap::AlwaysCheckNetwork => "always_check_network",
            PolicyCap::CgroupSeclabel => "cgroup_seclabel",
            PolicyCap::NnpNosuidTransition => "nnp_nosuid_transition",
            PolicyCap::GenfsSeclabelSymlinks => "genfs_seclabel_symlinks",
            PolicyCap::IoctlSkipCloexec => "ioctl_skip_cloexec",
            PolicyCap::UserspaceInitialContext => "userspace_initial_context",
            PolicyCap::NetlinkXperm => "netlink_xperm",
            PolicyCap::NetifWildcard => "netif_wildcard",
            PolicyCap::GenfsSeclabelWildcard => "genfs_seclabel_wildcard",
            PolicyCap::FunctionfsSeclabel => "functionfs_seclabel",
            PolicyCap::MemfdClass => "memfd_class",
        }
    }

    pub fn from_name(name: &str) -> Option<PolicyCap> {
        PolicyCap::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// The capabilities a policy declares. Bits this kernel list does not name are dropped, as
/// the kernel ignores capabilities it does not know.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PolicyCaps(u32);

impl PolicyCaps {
    pub const NONE: PolicyCaps = PolicyCaps(0);

    /// The named capabilities among the bitmap's bits.
    pub fn from_bits(bits: impl IntoIterator<Item = u32>) -> PolicyCaps {
        bits.into_iter().filter_map(PolicyCap::from_bit).collect()
    }

    pub fn contains(self, cap: PolicyCap) -> bool {
        self.0 & (1 << cap.bit()) != 0
    }

    /// The set as one word (bit = [`PolicyCap::bit`]), to keep in an atomic.
    pub fn to_word(self) -> u32 {
        self.0
    }

    /// The set [`PolicyCaps::to_word`] gave `w` for.
    #[inline(always)]
    pub fn from_word(w: u32) -> PolicyCaps {
        PolicyCaps(w)
    }

    pub fn insert(&mut self, cap: PolicyCap) {
        self.0 |= 1 << cap.bit();
    }

    /// The declared capabilities, in the kernel's order.
    pub fn iter(self) -> impl Iterator<Item = PolicyCap> {
        PolicyCap::ALL
            .into_iter()
            .filter(move |c| self.contains(*c))
    }
}

impl FromIterator<PolicyCap> for PolicyCaps {
    fn from_iter<I: IntoIterator<Item = PolicyCap>>(iter: I) -> PolicyCaps {
        let mut caps = PolicyCaps::NONE;
        for c in iter {
            caps.insert(c);
        }
        caps
    }
}
