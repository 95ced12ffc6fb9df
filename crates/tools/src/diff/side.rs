//! One side of a diff: a policy with the boolean values it is judged under, its security server
//! for decisions, its rules as sesearch lines, and the name-keyed indexes the diff needs (what each
//! type or attribute stands for, which allow rules a type meets). Everything is keyed by name,
//! since two policies number their types, classes and permissions differently.

use std::collections::{BTreeSet, HashMap};

use seaccess_policy::{ConstraintExpr, NameField, Policy, PolicyTables, Range};
use seaccess_security::{range_to_string, Generation, SecurityServer};
use seaccess_types::{ClassId, Sid};

use crate::search::{search, Found, Query, RuleType};
use crate::suggest::did_you_mean;
use crate::ToolsError;

/// Every rule kind a compiled policy holds (neverallow rules it does not).
pub const RULE_TYPES: [RuleType; 12] = [
    RuleType::Allow,
    RuleType::AuditAllow,
    RuleType::DontAudit,
    RuleType::AllowXperm,
    RuleType::AuditAllowXperm,
    RuleType::DontAuditXperm,
    RuleType::TypeTransition,
    RuleType::TypeChange,
    RuleType::TypeMember,
    RuleType::RoleAllow,
    RuleType::RoleTransition,
    RuleType::RangeTransition,
];

/// The access vector rule kinds, which sediff compares with attributes expanded.
pub const AV_KINDS: [RuleType; 3] = [RuleType::Allow, RuleType::AuditAllow, RuleType::DontAudit];

/// A rule as a diff keeps it: a [`Found`]'s parts by name, owned, since a side keeps its rules
/// beside the policy they were read from.
#[derive(Clone, Debug)]
pub struct Rule {
    pub ruletype: &'static str,
    pub source: String,
    pub target: String,
    pub class: Option<String>,
    /// An access vector rule's permissions, sorted.
    pub perms: Vec<String>,
    /// The condition, as sesearch prints it, and the branch the rule is in.
    pub conditional: Option<String>,
    pub branch: Option<bool>,
    /// In effect under the side's booleans.
    pub enabled: bool,
    /// The line sesearch prints for it.
    pub line: String,
}

impl From<Found<'_>> for Rule {
    fn from(f: Found<'_>) -> Rule {
        Rule {
            ruletype: f.ruletype,
            source: f.source.to_string(),
            target: f.target.to_string(),
            class: f.class.map(str::to_string),
            perms: f.perms.into_iter().map(str::to_string).collect(),
            conditional: f.conditional,
            branch: f.branch,
            enabled: f.enabled,
            line: f.line,
        }
    }
}

/// A policy as one side of a diff sees it.
pub struct Side {
    /// `OLD` or `NEW`, for reasons and messages.
    pub label: &'static str,
    pub policy: Policy,
    pub server: SecurityServer,
    /// Every rule, as `search` finds them (conditional ones judged under this side's booleans).
    pub rules: Vec<Rule>,
    /// For each type or attribute name, the type names it stands for.
    pub members: HashMap<String, BTreeSet<String>>,
    /// For each type name, the names that stand for it: itself and its attributes.
    pub covers: HashMap<String, Vec<String>>,
    /// Allow rules (indexes into `rules`) by (source name, class name).
    pub allow_by_source: HashMap<(String, String), Vec<usize>>,
    /// Access vector rules (allow, auditallow, dontaudit) by (kind, source name), and by (kind,
    /// target name), whatever their class.
    pub av_from: HashMap<(&'static str, String), Vec<usize>>,
    pub av_to: HashMap<(&'static str, String), Vec<usize>>,
    /// Every boolean's value on this side, by name.
    pub bools: HashMap<String, bool>,
    /// The context each type is judged in (see [`Side::context_for`]) and its SID, where valid.
    sids: HashMap<String, Sid>,
}

impl Side {
    /// The side for `policy` with `overrides` set over its booleans' defaults. An unknown boolean
    /// is an error naming it, with the nearest names the policy has.
    pub fn new(
        label: &'static str,
        policy: Policy,
        overrides: &[(String, bool)],
    ) -> Result<Side, ToolsError> {
        let server = SecurityServer::new(policy.clone());
        for (name, value) in overrides {
            server
                .set_boolean(name, *value)
                .map_err(|_| ToolsError::Unknown {
                    what: "boolean",
                    name: format!("{name} (in {label})"),
                    hint: did_you_mean(name, policy.bools.iter().map(|b| &*b.name)),
                })?;
        }
        if !overrides.is_empty() {
            server.commit_booleans();
        }
        let q = Query {
            ruletypes: RULE_TYPES.to_vec(),
            values: overrides.to_vec(),
            ..Query::default()
        };
        let rules: Vec<Rule> = search(&policy, &q)?.into_iter().map(Rule::from).collect();
        let p: &PolicyTables = &policy;
        let (members, covers) = expansions(p);
        let mut allow_by_source: HashMap<(String, String), Vec<usize>> = HashMap::new();
        let mut av_from: HashMap<(&'static str, String), Vec<usize>> = HashMap::new();
        let mut av_to: HashMap<(&'static str, String), Vec<usize>> = HashMap::new();
        for (i, f) in rules.iter().enumerate() {
            if f.ruletype == RuleType::Allow.name() {
                allow_by_source
                    .entry((f.source.clone(), f.class.clone().unwrap_or_default()))
                    .or_default()
                    .push(i);
            }
            if AV_KINDS.iter().any(|k| k.name() == f.ruletype) {
                av_from
                    .entry((f.ruletype, f.source.clone()))
                    .or_default()
                    .push(i);
                av_to
                    .entry((f.ruletype, f.target.clone()))
                    .or_default()
                    .push(i);
            }
        }
        let bools = server.snapshot().booleans().into_iter().collect();
        let mut side = Side {
            label,
            policy,
            server,
            rules,
            members,
            covers,
            allow_by_source,
            av_from,
            av_to,
            bools,
            sids: HashMap::new(),
        };
        side.sids = side.type_sids();
        Ok(side)
    }

    /// The policy's tables.
    pub fn tables(&self) -> &PolicyTables {
        &self.policy
    }

    /// The types of the policy, by name.
    pub fn type_names(&self) -> impl Iterator<Item = &str> {
        self.covers.keys().map(String::as_str)
    }

    /// The classes of the policy, by name.
    pub fn class_names(&self) -> impl Iterator<Item = &str> {
        let p = self.tables();
        (1..=p.classes.len() as u32).filter_map(move |v| p.class_names.name(v))
    }

    /// The SID of the context type `ty` is judged in, if the type exists and that context is valid.
    pub fn sid(&self, ty: &str) -> Option<Sid> {
        self.sids.get(ty).copied()
    }

    pub fn class(&self, name: &str) -> Option<ClassId> {
        self.tables().class_value(name).map(|v| ClassId(v as u16))
    }

    /// Allow rules in effect (under this side's booleans) for source type `s`, target type `t`
    /// and class `c` that grant `perm`: the lines of the rules responsible for a grant.
    pub fn granting(&self, s: &str, t: &str, c: &str, perm: &str) -> Vec<String> {
        let empty = Vec::new();
        let tcov = self.covers.get(t).unwrap_or(&empty);
        let mut out = Vec::new();
        for a in self.covers.get(s).unwrap_or(&empty) {
            for &i in self
                .allow_by_source
                .get(&(a.clone(), c.to_string()))
                .map(Vec::as_slice)
                .unwrap_or(&[])
            {
                let Some(f) = self.rules.get(i) else { continue };
                if f.enabled && tcov.contains(&f.target) && f.perms.iter().any(|p| p == perm) {
                    out.push(f.line.clone());
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// The context type `ty` is judged in: a process's when some role other than object_r may
    /// have the type and some user that role (system_r first, then the others by name; system_u
    /// first, then the others by name), an object's (object_r, system_u first) otherwise, at the
    /// user's default level. Decisions that depend on user, role or level through constraints
    /// are therefore those of these contexts only.
    pub fn context_for(&self, ty: &str) -> Option<String> {
        let p = self.tables();
        let t = p.type_names.value(ty)?;
        let object_r = p.role_names.value("object_r");
        let mut roles: Vec<(u32, &str)> = (1..=p.roles.len() as u32)
            .filter_map(|r| Some((r, p.role_names.name(r)?)))
            .filter(|(r, name)| {
                *name != "object_r"
                    && p.roles
                        .get(*r as usize - 1)
                        .is_some_and(|x| x.types.get(t - 1))
            })
            .collect();
        roles.sort_by_key(|(_, n)| (*n != "system_r", n.to_string()));
        let mut users: Vec<(u32, &str)> = (1..=p.users.len() as u32)
            .filter_map(|u| Some((u, p.user_names.name(u)?)))
            .filter(|(_, n)| !n.is_empty())
            .collect();
        users.sort_by_key(|(_, n)| (*n != "system_u", n.to_string()));
        for role in roles.iter().map(|(r, _)| *r).chain(object_r) {
            let has = |u: u32| {
                Some(role) == object_r
                    || p.users
                        .get(u as usize - 1)
                        .is_some_and(|x| x.roles.get(role - 1))
            };
            let Some(&(u, user)) = users.iter().find(|(u, _)| has(*u)) else {
                continue;
            };
            let mut ctx = format!("{user}:{}:{ty}", p.role_names.name(role)?);
            if p.mls {
                let level = p.users.get(u as usize - 1).map(|x| {
                    range_to_string(
                        p,
                        &Range {
                            low: x.default_level.clone(),
                            high: x.default_level.clone(),
                        },
                    )
                })?;
                ctx.push(':');
                ctx.push_str(&level);
            }
            return Some(ctx);
        }
        None
    }

    fn type_sids(&self) -> HashMap<String, Sid> {
        let g = self.server.snapshot();
        let mut out = HashMap::new();
        for ty in self.covers.keys() {
            if let Some(sid) = self.context_for(ty).and_then(|c| g.context_to_sid(&c).ok()) {
                out.insert(ty.clone(), sid);
            }
        }
        out
    }

    pub fn generation(&self) -> std::sync::Arc<Generation> {
        self.server.snapshot()
    }

    /// Each class's constraints in names (perms, then the expression), to compare across policies.
    pub fn constraint_texts(&self, class: &str) -> Vec<String> {
        let p = self.tables();
        let Some(c) = p
            .class_value(class)
            .and_then(|v| p.classes.get(v as usize - 1))
        else {
            return Vec::new();
        };
        let cv = p.class_value(class).unwrap_or(0);
        c.constraints
            .iter()
            .map(|k| {
                let mut perms: Vec<&str> = (0..32)
                    .filter(|b| k.perms & (1 << b) != 0)
                    .filter_map(|b| p.perm_name(cv, b))
                    .collect();
                perms.sort_unstable();
                let expr: Vec<String> = k.expr.iter().map(|e| expr_text(p, e)).collect();
                format!("{{ {} }} {}", perms.join(" "), expr.join(" "))
            })
            .collect()
    }

    /// The bound of type `ty`, by name.
    pub fn bound(&self, ty: &str) -> Option<&str> {
        let p = self.tables();
        let t = p.type_names.value(ty)?;
        let b = p.types.get(t as usize - 1)?.bounds;
        (b != 0).then(|| p.type_names.name(b)).flatten()
    }

    pub fn permissive(&self, ty: &str) -> bool {
        let p = self.tables();
        p.type_names.value(ty).is_some_and(|t| p.permissive.get(t))
    }

    /// Role allow rules, by name.
    pub fn role_allows(&self) -> BTreeSet<(String, String)> {
        let p = self.tables();
        let name = |r: u32| p.role_names.name(r).unwrap_or("?").to_string();
        p.role_allows
            .iter()
            .map(|ra| (name(ra.role), name(ra.new_role)))
            .collect()
    }
}

/// One node of a constraint expression in names (postfix, as the binary keeps it).
fn expr_text(p: &PolicyTables, e: &ConstraintExpr) -> String {
    match e {
        ConstraintExpr::Names {
            of,
            field,
            op,
            names,
        } => {
            let table = match field {
                NameField::User => &p.user_names,
                NameField::Role => &p.role_names,
                NameField::Type => &p.type_names,
            };
            let mut v: Vec<&str> = names.iter().filter_map(|b| table.name(b + 1)).collect();
            v.sort_unstable();
            format!("{of:?}.{field:?} {op:?} {{{}}}", v.join(" "))
        }
        other => format!("{other:?}"),
    }
}

type Expansions = (
    HashMap<String, BTreeSet<String>>,
    HashMap<String, Vec<String>>,
);

/// What each type or attribute stands for, and what stands for each type, by name.
fn expansions(p: &PolicyTables) -> Expansions {
    let mut members: HashMap<String, BTreeSet<String>> = HashMap::new();
    let mut covers: HashMap<String, Vec<String>> = HashMap::new();
    for (i, ty) in p.types.iter().enumerate() {
        let Some(name) = ty.name.as_deref() else {
            continue;
        };
        members.entry(name.to_string()).or_default();
        if ty.attribute {
            continue;
        }
        let mut cov = vec![name.to_string()];
        members
            .entry(name.to_string())
            .or_default()
            .insert(name.to_string());
        for bit in p
            .type_attr_map
            .get(i)
            .map(|m| m.iter().collect::<Vec<_>>())
            .unwrap_or_default()
        {
            let a = bit as usize;
            if a == i || !p.types.get(a).is_some_and(|x| x.attribute) {
                continue;
            }
            if let Some(an) = p.types.get(a).and_then(|x| x.name.as_deref()) {
                members
                    .entry(an.to_string())
                    .or_default()
                    .insert(name.to_string());
                cov.push(an.to_string());
            }
        }
        covers.insert(name.to_string(), cov);
    }
    (members, covers)
}
