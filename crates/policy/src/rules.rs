//! The rule tables of a policy: access vector rules (allow, auditallow, dontaudit, type rules,
//! extended permissions) and the conditional rules with their boolean expressions.

use crate::model::PolicyTables;

/// What an access vector table rule is: its `AVTAB_*` specifier, of which a rule has exactly one.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum RuleKind {
    Av(AvKind),
    Type(TypeRuleKind),
    Xperms(XpermsRuleKind),
}

/// allow, auditallow and dontaudit rules (a dontaudit rule's data is the audit-deny mask, the
/// complement of what it does not audit, as the file stores it).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum AvKind {
    Allowed,
    AuditAllow,
    AuditDeny,
}

/// type_transition, type_member and type_change rules.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TypeRuleKind {
    Transition,
    Member,
    Change,
}

/// allowx, auditallowx and dontauditx rules (a dontauditx rule lists what is not audited).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum XpermsRuleKind {
    Allowed,
    AuditAllow,
    DontAudit,
}

impl RuleKind {
    /// The kind of a specifier with exactly one of the kernel's `AVTAB_*` kind bits.
    pub fn from_specified(specified: u16) -> Option<RuleKind> {
        Some(match specified {
            0x0001 => RuleKind::Av(AvKind::Allowed),
            0x0002 => RuleKind::Av(AvKind::AuditAllow),
            0x0004 => RuleKind::Av(AvKind::AuditDeny),
            0x0010 => RuleKind::Type(TypeRuleKind::Transition),
            0x0020 => RuleKind::Type(TypeRuleKind::Member),
            0x0040 => RuleKind::Type(TypeRuleKind::Change),
            0x0100 => RuleKind::Xperms(XpermsRuleKind::Allowed),
            0x0200 => RuleKind::Xperms(XpermsRuleKind::AuditAllow),
            0x0400 => RuleKind::Xperms(XpermsRuleKind::DontAudit),
            _ => return None,
        })
    }

    /// The kernel's `AVTAB_*` specifier bit of this kind.
    pub fn specified(self) -> u16 {
        match self {
            RuleKind::Av(AvKind::Allowed) => 0x0001,
            RuleKind::Av(AvKind::AuditAllow) => 0x0002,
            RuleKind::Av(AvKind::AuditDeny) => 0x0004,
            RuleKind::Type(TypeRuleKind::Transition) => 0x0010,
            RuleKind::Type(TypeRuleKind::Member) => 0x0020,
            RuleKind::Type(TypeRuleKind::Change) => 0x0040,
            RuleKind::Xperms(XpermsRuleKind::Allowed) => 0x0100,
            RuleKind::Xperms(XpermsRuleKind::AuditAllow) => 0x0200,
            RuleKind::Xperms(XpermsRuleKind::DontAudit) => 0x0400,
        }
    }
}

/// What an extended-permission rule's payload lists.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum XpermsKind {
    /// Functions (low bytes) of one ioctl driver.
    IoctlFunction,
    /// Whole ioctl drivers (high bytes).
    IoctlDriver,
    /// Netlink message types (low bytes) of one high byte.
    Nlmsg,
    /// A kind this kernel does not know. Linux loads it and, since 6.13, ignores it in
    /// decisions, so that policies with newer kinds load on older kernels.
    Unknown(u8),
}

impl XpermsKind {
    /// The kind of the file's `AVTAB_XPERMS_*` byte.
    pub fn from_raw(raw: u8) -> XpermsKind {
        match raw {
            1 => XpermsKind::IoctlFunction,
            2 => XpermsKind::IoctlDriver,
            3 => XpermsKind::Nlmsg,
            other => XpermsKind::Unknown(other),
        }
    }
}

/// An extended-permission rule's payload: for `IoctlDriver`, `perms` holds driver numbers; for
/// `IoctlFunction` and `Nlmsg`, function numbers of `driver`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Xperms {
    pub kind: XpermsKind,
    pub driver: u8,
    pub perms: [u32; 8],
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AvtabEntry {
    pub source_type: u16,
    pub target_type: u16,
    pub class: u16,
    pub kind: RuleKind,
    /// A permission vector, an audit-deny vector, a new type, or (for extended-permission
    /// rules) an index into [`RuleTables::xperms`], as `kind` says.
    pub data: u32,
}

impl AvtabEntry {
    /// The order the reader keeps the table in: source type, class, target type (then file
    /// order).
    pub fn sort_key(&self) -> (u16, u16, u16) {
        (self.source_type, self.class, self.target_type)
    }
}

/// One node of a boolean expression, in postfix order.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CondExpr {
    /// Push boolean `value` (1-based).
    Bool(u32),
    Not,
    Or,
    And,
    Xor,
    Eq,
    Neq,
}

impl CondExpr {
    /// The deepest stack a boolean expression may build (the kernel's COND_EXPR_MAXDEPTH).
    pub const MAX_DEPTH: usize = 10;
}

#[derive(Clone, Debug)]
pub struct CondNode {
    pub expr: Vec<CondExpr>,
    pub true_list: Vec<AvtabEntry>,
    pub false_list: Vec<AvtabEntry>,
}

/// The access vector table, the extended-permission payloads and the conditionals: the part
/// of a policy the security server moves into its indexes. Read-only outside this crate.
#[derive(Clone, Debug, Default)]
pub struct RuleTables {
    /// Unconditional rules, sorted by [`AvtabEntry::sort_key`].
    pub(crate) avtab: Vec<AvtabEntry>,
    /// The payloads of extended-permission rules, unconditional and conditional.
    pub(crate) xperms: Vec<Xperms>,
    pub(crate) conds: Vec<CondNode>,
}

impl RuleTables {
    /// Unconditional rules, sorted by [`AvtabEntry::sort_key`].
    pub fn avtab(&self) -> &[AvtabEntry] {
        &self.avtab
    }

    /// The payloads of extended-permission rules, unconditional and conditional, indexed by
    /// their rules' `data`.
    pub fn xperms(&self) -> &[Xperms] {
        &self.xperms
    }

    /// The conditionals in file order, each with its rules.
    pub fn conds(&self) -> &[CondNode] {
        &self.conds
    }

    /// The tables by value, for an index built from them.
    pub fn into_parts(self) -> (Vec<AvtabEntry>, Vec<Xperms>, Vec<CondNode>) {
        (self.avtab, self.xperms, self.conds)
    }
}

/// A compiled policy as the kernel would hold it after `policydb_read`: its tables (reached
/// through `Deref`, read-only) and its rule tables. Changed only through the few methods
/// below, which tests use to write what today's compilers cannot.
#[derive(Clone, Debug)]
pub struct Policy {
    pub(crate) tables: PolicyTables,
    pub(crate) rules: RuleTables,
}

impl std::ops::Deref for Policy {
    type Target = PolicyTables;
    fn deref(&self) -> &PolicyTables {
        &self.tables
    }
}

impl Policy {
    pub fn rules(&self) -> &RuleTables {
        &self.rules
    }

    /// The tables and the rule tables apart, by value.
    pub fn into_parts(self) -> (PolicyTables, RuleTables) {
        (self.tables, self.rules)
    }

    /// Declares policy capability `bit` (a `POLICYDB_CAP_*` number), as a compiler that knows
    /// it would: for capabilities older compilers cannot write.
    pub fn add_policy_cap(&mut self, bit: u32) {
        self.tables.policycaps.set(bit);
    }

    /// Changes the kind of every extended-permission payload `select` picks to `kind` (for
    /// kinds older compilers cannot write, such as netlink-message rules before secilc 3.8);
    /// returns how many it changed.
    pub fn change_xperms_kind(
        &mut self,
        select: impl Fn(&Xperms) -> bool,
        kind: XpermsKind,
    ) -> usize {
        let mut n = 0;
        for x in self.rules.xperms.iter_mut().filter(|x| select(x)) {
            x.kind = kind;
            n += 1;
        }
        n
    }
}
