//! The loaded policy: every section of the binary format, indexed by symbol value.
//!
//! Values in the file are 1-based; vectors here are indexed by `value - 1`, so `types[t - 1]` is
//! type `t`. Every index stored here has been checked against its symbol count by the reader.
//!
//! A value the file declares but gives no entry (a hole: checkpolicy's role attributes and
//! sensitivity and category aliases) has a placeholder entry with no name: [`Names::name`]
//! returns `None` for it, no name maps to it, and no context naming it is valid.

use rustc_hash::FxHashMap;

use crate::ebitmap::Ebitmap;

/// What the kernel does with classes and permissions the policy does not define.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HandleUnknown {
    Deny,
    Reject,
    Allow,
}

/// A symbol table's names: the name of each value, and every name (aliases included) to its value.
#[derive(Clone, Debug, Default)]
pub struct Names {
    pub by_value: Vec<Box<str>>,
    pub by_name: FxHashMap<Box<str>, u32>,
}

impl Names {
    pub fn value(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }
    /// The name of a 1-based value; `None` for a value outside the table or a hole.
    pub fn name(&self, value: u32) -> Option<&str> {
        self.by_value
            .get((value as usize).checked_sub(1)?)
            .map(|s| &**s)
            .filter(|s| !s.is_empty())
    }
    /// Whether 1-based `value` has an entry of its own (is in the table and not a hole).
    pub fn is_defined(&self, value: u32) -> bool {
        self.name(value).is_some()
    }
    /// The number of values the table declares, holes included (the kernel's `nprim`).
    pub fn len(&self) -> usize {
        self.by_value.len()
    }
    pub fn is_empty(&self) -> bool {
        self.by_value.is_empty()
    }
    /// "; did you mean NAME?" naming the table's names nearest to `name`, or nothing (see
    /// [`crate::suggest`]): the tail of every error about a name the table does not have.
    pub fn did_you_mean(&self, name: &str) -> String {
        crate::suggest::did_you_mean(
            name,
            self.by_value.iter().map(|n| &**n).filter(|n| !n.is_empty()),
        )
    }
}

#[derive(Clone, Debug)]
pub struct Common {
    pub name: Box<str>,
    pub perms: Names,
}

impl Common {
    pub(crate) fn hole() -> Self {
        Common {
            name: Box::from(""),
            perms: Names::default(),
        }
    }
}

/// One node of a constraint expression, in postfix order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConstraintExpr {
    Not,
    And,
    Or,
    /// Compare a field of the two contexts (`u1 == u2`, `r1 dom r2`, `l1 domby h2`...).
    Compare(Comparison),
    /// Test a user, role or type of one context against a set of values (bit = value - 1).
    Names {
        of: ConstraintOperand,
        field: NameField,
        op: EqOp,
        names: Ebitmap,
    },
}

impl ConstraintExpr {
    /// The deepest stack a constraint expression may build (the kernel's CEXPR_MAXDEPTH).
    pub const MAX_DEPTH: usize = 5;
}

/// What a constraint compares between the source (1) and target (2) contexts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Comparison {
    User(EqOp),
    Type(EqOp),
    /// Roles compare by value, or by the dominance the policy declares.
    Role(RelOp),
    Levels(LevelPair, RelOp),
}

/// `==` or `!=`: the only operators users, types and name sets take.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EqOp {
    Eq,
    Neq,
}

/// The operators roles and levels take.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RelOp {
    Eq,
    Neq,
    Dom,
    DomBy,
    Incomp,
}

/// Which two levels a comparison takes: low (l) or high (h) of the source (1) or target (2).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LevelPair {
    L1L2,
    L1H2,
    H1L2,
    H1H2,
    L1H1,
    L2H2,
}

/// Whose context a name test reads: the source (1), the target (2), or, in validatetrans only,
/// the task's (3).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ConstraintOperand {
    Source,
    Target,
    Task,
}

/// Which field of a context a name test reads.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NameField {
    User,
    Role,
    Type,
}

#[derive(Clone, Debug)]
pub struct Constraint {
    pub perms: u32,
    pub expr: Vec<ConstraintExpr>,
}

/// `default_user`, `default_role` and `default_type`: which context a new object's field comes
/// from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DefaultSide {
    Source,
    Target,
}

/// `default_range`: which part of which context a new object's range comes from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DefaultRange {
    SourceLow,
    SourceHigh,
    SourceLowHigh,
    TargetLow,
    TargetHigh,
    TargetLowHigh,
    /// The greatest lower bound of the two low levels to the least upper bound of the highs.
    Glblub,
}

#[derive(Clone, Debug)]
pub struct Class {
    pub name: Box<str>,
    /// The common this class inherits from (1-based value), if any.
    pub common: Option<u32>,
    /// Every permission of the class, the common's first: value = bit + 1.
    pub perms: Names,
    pub constraints: Vec<Constraint>,
    pub validatetrans: Vec<Constraint>,
    /// None: no default rule (the kernel's 0, and any value it does not name).
    pub default_user: Option<DefaultSide>,
    pub default_role: Option<DefaultSide>,
    pub default_range: Option<DefaultRange>,
    pub default_type: Option<DefaultSide>,
}

#[derive(Clone, Debug)]
pub struct Role {
    pub name: Box<str>,
    pub bounds: u32,
    pub dominates: Ebitmap,
    /// Types (bit = value - 1) this role may hold.
    pub types: Ebitmap,
}

impl Role {
    /// A hole: no name, no types, so no context can hold it.
    pub(crate) fn hole() -> Self {
        Role {
            name: Box::from(""),
            bounds: 0,
            dominates: Ebitmap::new(),
            types: Ebitmap::new(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Type {
    /// None for a hole: a value the file gives no primary entry.
    pub name: Option<Box<str>>,
    pub attribute: bool,
    pub bounds: u32,
}

impl Type {
    pub(crate) fn hole() -> Self {
        Type {
            name: None,
            attribute: false,
            bounds: 0,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Level {
    /// 1-based sensitivity value.
    pub sens: u32,
    /// Categories, bit = value - 1.
    pub cats: Ebitmap,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Range {
    pub low: Level,
    pub high: Level,
}

#[derive(Clone, Debug)]
pub struct User {
    pub name: Box<str>,
    pub bounds: u32,
    /// Roles, bit = value - 1.
    pub roles: Ebitmap,
    pub range: Range,
    pub default_level: Level,
}

impl User {
    /// A hole: no name, no roles; its range is never consulted, as no valid context names it.
    pub(crate) fn hole() -> Self {
        let level = Level {
            sens: 0,
            cats: Ebitmap::new(),
        };
        User {
            name: Box::from(""),
            bounds: 0,
            roles: Ebitmap::new(),
            range: Range {
                low: level.clone(),
                high: level.clone(),
            },
            default_level: level,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Bool {
    pub name: Box<str>,
    pub state: bool,
}

#[derive(Clone, Debug)]
pub struct Sensitivity {
    pub name: Box<str>,
    /// The categories that may go with this sensitivity.
    pub cats: Ebitmap,
}

impl Sensitivity {
    pub(crate) fn hole() -> Self {
        Sensitivity {
            name: Box::from(""),
            cats: Ebitmap::new(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoleTrans {
    pub role: u32,
    pub ty: u32,
    pub new_role: u32,
    pub class: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoleAllow {
    pub role: u32,
    pub new_role: u32,
}

#[derive(Clone, Debug)]
pub struct FilenameTrans {
    pub name: Box<str>,
    /// Source types, bit = value - 1.
    pub stypes: Ebitmap,
    pub ttype: u32,
    pub class: u32,
    pub otype: u32,
}

/// A context as stored in the policy (object contexts, initial SIDs).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Context {
    pub user: u32,
    pub role: u32,
    pub ty: u32,
    /// Present when the policy is MLS.
    pub range: Option<Range>,
}

#[derive(Clone, Debug)]
pub struct InitialSid {
    pub sid: u32,
    pub context: Context,
}

#[derive(Clone, Debug)]
pub struct NamedContext {
    pub name: Box<str>,
    pub context: Context,
    /// The second context of fs and netif entries (default file / message context).
    pub context2: Option<Context>,
}

#[derive(Clone, Debug)]
pub struct PortContext {
    pub protocol: u32,
    pub low: u32,
    pub high: u32,
    pub context: Context,
}

#[derive(Clone, Debug)]
pub struct NodeContext {
    /// Address and mask as in the file: network byte order.
    pub addr: [u8; 4],
    pub mask: [u8; 4],
    pub context: Context,
}

#[derive(Clone, Debug)]
pub struct Node6Context {
    pub addr: [u8; 16],
    pub mask: [u8; 16],
    pub context: Context,
}

/// How a filesystem's objects get their labels: the kernel's `SECURITY_FS_USE_*` values that
/// a policy may hold (all but MNTPOINT, which the kernel decides at mount time).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FsUseBehavior {
    /// fs_use_xattr: from extended attributes.
    Xattr,
    /// fs_use_trans: from type transitions on the creating task and the filesystem.
    Trans,
    /// fs_use_task: the creating task's context.
    Task,
    /// genfscon labelling.
    Genfs,
    /// No labelling support.
    None,
    /// The filesystem labels natively.
    Native,
    /// 0, which no SECURITY_FS_USE_* names and no compiler writes: the kernel loads it, and
    /// its inode labelling then falls to the default case (the superblock's SID).
    Unspecified,
}

#[derive(Clone, Debug)]
pub struct FsUse {
    pub behavior: FsUseBehavior,
    pub fstype: Box<str>,
    pub context: Context,
}

#[derive(Clone, Debug)]
pub struct IbPkeyContext {
    pub subnet_prefix: u64,
    pub low: u16,
    pub high: u16,
    pub context: Context,
}

#[derive(Clone, Debug)]
pub struct IbEndportContext {
    pub device: Box<str>,
    pub port: u8,
    pub context: Context,
}

#[derive(Clone, Debug, Default)]
pub struct ObjectContexts {
    pub initial_sids: Vec<InitialSid>,
    pub fs: Vec<NamedContext>,
    pub ports: Vec<PortContext>,
    pub netifs: Vec<NamedContext>,
    pub nodes: Vec<NodeContext>,
    pub fs_use: Vec<FsUse>,
    pub nodes6: Vec<Node6Context>,
    pub ibpkeys: Vec<IbPkeyContext>,
    pub ibendports: Vec<IbEndportContext>,
}

#[derive(Clone, Debug)]
pub struct GenfsEntry {
    pub path: Box<str>,
    /// 0 for every class.
    pub class: u32,
    pub context: Context,
}

#[derive(Clone, Debug)]
pub struct Genfs {
    pub fstype: Box<str>,
    pub entries: Vec<GenfsEntry>,
}

#[derive(Clone, Debug)]
pub struct RangeTrans {
    pub source_type: u32,
    pub target_type: u32,
    pub class: u32,
    pub range: Range,
}

/// Every table of a compiled policy but its access vector and conditional rule tables (in
/// [`RuleTables`]): symbols, constraints, role and range transitions, filename transitions,
/// object contexts. What the security server keeps as it is read; the rule tables it takes
/// apart into its own indexes.
#[derive(Clone, Debug)]
pub struct PolicyTables {
    pub version: u32,
    pub mls: bool,
    pub handle_unknown: HandleUnknown,
    /// The capabilities the policy declares (bit = `POLICYDB_CAP_*` number).
    pub policycaps: Ebitmap,
    /// Permissive types, bit = type value (not value - 1, as in the kernel).
    pub permissive: Ebitmap,
    pub commons: Vec<Common>,
    pub common_names: Names,
    pub classes: Vec<Class>,
    pub class_names: Names,
    pub roles: Vec<Role>,
    pub role_names: Names,
    pub types: Vec<Type>,
    pub type_names: Names,
    pub users: Vec<User>,
    pub user_names: Names,
    pub bools: Vec<Bool>,
    pub bool_names: Names,
    pub sens: Vec<Sensitivity>,
    pub sens_names: Names,
    pub cat_names: Names,
    pub role_trans: Vec<RoleTrans>,
    pub role_allows: Vec<RoleAllow>,
    pub filename_trans: Vec<FilenameTrans>,
    pub ocontexts: ObjectContexts,
    pub genfs: Vec<Genfs>,
    pub range_trans: Vec<RangeTrans>,
    /// For each type (index = value - 1), the types and attributes it stands for (bit = value - 1),
    /// itself included.
    pub type_attr_map: Vec<Ebitmap>,
}

impl PolicyTables {
    /// The 1-based value of class `name`.
    pub fn class_value(&self, name: &str) -> Option<u32> {
        self.class_names.value(name)
    }

    /// The bit (0-based) of permission `perm` in class `class` (1-based), commons included.
    pub fn perm_bit(&self, class: u32, perm: &str) -> Option<u32> {
        let c = self.classes.get((class as usize).checked_sub(1)?)?;
        c.perms.value(perm)?.checked_sub(1)
    }

    /// The name of permission bit `bit` (0-based) of class `class` (1-based).
    pub fn perm_name(&self, class: u32, bit: u32) -> Option<&str> {
        let c = self.classes.get((class as usize).checked_sub(1)?)?;
        // Checked: a caller's bit may be any u32 (u32::MAX names no permission).
        c.perms.name(bit.checked_add(1)?)
    }
}
