//! `seaccess search`: the policy's rules as sesearch finds them, with sesearch's options and
//! lines, and whether each conditional rule is in effect. The query itself is
//! `seaccess_tools::search`; this file reads the options and prints.

use std::path::{Path, PathBuf};

use clap::{ArgAction, Args};
use seaccess_tools::search::{search, Query, RuleType};

use crate::output::{CliError, Out};

const AFTER_HELP: &str = "\
Examples:
  seaccess search -A -s sshd_t                       allow rules for sshd_t and its attributes
  seaccess search --allow -s sshd_t -t shadow_t -c file -p read,write
  seaccess search -A -ds -s domain                   rules written for the attribute domain itself
  seaccess search -T -s sshd_t -D sshd_tmp_t         type transitions to sshd_tmp_t
  seaccess search -A -b httpd_enable_cgi --state     conditional rules, each marked # enabled / # disabled
  seaccess search -A -b httpd_enable_cgi=1 --enabled the rules in effect with the boolean on
  seaccess search --role_allow --role_trans -s sysadm_r POLICY
  seaccess search --range_trans --json /etc/selinux/mls/policy/policy.33

Output: one line per rule, as sesearch 4.4 prints it (TE rules, then role rules, then range rules,
each part sorted), so the lines can be diffed against sesearch's. A conditional rule ends with its
condition and branch, `[ expr ]:True`. --state appends ` # enabled` or ` # disabled` to each
conditional rule: whether it is in effect under the policy's boolean values (its defaults, the
values written in the policy file) and those given as -b NAME=VALUE. --json prints
{\"rules\": [...]}, one object per rule with ruletype, source, target, class, perms, xperm_type,
xperms (runs [first, last]), default, filename, conditional, branch, enabled and line.

Exit status: 0 when the search ran (whether or not it found rules), 2 on an error (an unknown
type, attribute, class, permission, boolean or role names the nearest ones the policy has).";

/// The policy's rules as sesearch finds them.
#[derive(Args)]
#[command(
    long_about = "The policy's rules as sesearch (setools 4.4) finds them: allow, auditallow, dontaudit, \
extended-permission, type, role and range transition rules, searched by source, target, class, \
permissions, default and booleans, attributes expanded as sesearch expands them; and whether each \
conditional rule is in effect under the booleans' values, which setools 4 no longer says.",
    after_help = AFTER_HELP
)]
pub(crate) struct SearchArgs {
    /// The compiled policy to search, as sesearch takes it (same as --policy); default: the
    /// installed policy.
    #[arg(value_name = "POLICY")]
    policy_file: Option<PathBuf>,
    /// The compiled policy to search (kernel binary format, e.g. /etc/selinux/default/policy/policy.33).
    /// Long form only: -p is sesearch's permission list here.
    #[arg(long = "policy", value_name = "FILE")]
    policy: Option<PathBuf>,

    /// allow and allowxperm rules.
    #[arg(short = 'A', help_heading = "Rule types")]
    all_allow: bool,
    /// allow rules.
    #[arg(long, help_heading = "Rule types")]
    allow: bool,
    /// allowxperm rules.
    #[arg(long, help_heading = "Rule types")]
    allowxperm: bool,
    /// auditallow rules.
    #[arg(long, help_heading = "Rule types")]
    auditallow: bool,
    /// auditallowxperm rules.
    #[arg(long, help_heading = "Rule types")]
    auditallowxperm: bool,
    /// dontaudit rules.
    #[arg(long, help_heading = "Rule types")]
    dontaudit: bool,
    /// dontauditxperm rules.
    #[arg(long, help_heading = "Rule types")]
    dontauditxperm: bool,
    /// neverallow rules (a compiled policy keeps none: always empty, as with sesearch).
    #[arg(long, help_heading = "Rule types")]
    neverallow: bool,
    /// neverallowxperm rules (always empty on a compiled policy).
    #[arg(long, help_heading = "Rule types")]
    neverallowxperm: bool,
    /// type_transition rules, filename transitions included.
    #[arg(short = 'T', long = "type_trans", help_heading = "Rule types")]
    type_trans: bool,
    /// type_change rules.
    #[arg(long = "type_change", help_heading = "Rule types")]
    type_change: bool,
    /// type_member rules.
    #[arg(long = "type_member", help_heading = "Rule types")]
    type_member: bool,
    /// Role allow rules.
    #[arg(long = "role_allow", help_heading = "Rule types")]
    role_allow: bool,
    /// role_transition rules.
    #[arg(long = "role_trans", help_heading = "Rule types")]
    role_trans: bool,
    /// range_transition rules.
    #[arg(long = "range_trans", help_heading = "Rule types")]
    range_trans: bool,

    /// Source type or attribute (a role for role rules); matches rules naming it or any
    /// attribute holding one of its types, unless -ds.
    #[arg(short = 's', long, value_name = "NAME", help_heading = "Criteria")]
    source: Option<String>,
    /// Target type or attribute (a role for role allow rules); attributes as for -s, unless -dt.
    #[arg(short = 't', long, value_name = "NAME", help_heading = "Criteria")]
    target: Option<String>,
    /// Object classes, comma-separated.
    #[arg(
        short = 'c',
        long = "class",
        value_name = "CLASS[,CLASS]",
        help_heading = "Criteria"
    )]
    class: Option<String>,
    /// Permissions, comma-separated: rules with any of them (all, with -Sp; exactly, with -ep).
    #[arg(
        short = 'p',
        long = "perms",
        value_name = "PERM[,PERM]",
        help_heading = "Criteria"
    )]
    perms: Option<String>,
    /// Ioctl numbers and ranges for extended-permission rules, hexadecimal: 0x8900-0x8905,0x5401.
    #[arg(
        short = 'x',
        long = "xperms",
        value_name = "XPERMS",
        help_heading = "Criteria"
    )]
    xperms: Option<String>,
    /// The new type (type rules), role (role_transition) or range (range_transition, e.g. "s0 - s0:c0.c1023").
    #[arg(
        short = 'D',
        long = "default",
        value_name = "NAME",
        help_heading = "Criteria"
    )]
    default: Option<String>,
    /// Booleans, comma-separated: conditional rules whose condition names any of them (all, with
    /// -eb). NAME=VALUE (1/0, true/false, on/off; repeatable, comma-separated) instead sets a
    /// boolean's value for --state and --enabled without filtering.
    #[arg(short = 'b', long = "bool", value_name = "BOOL[,BOOL] | NAME=VALUE", action = ArgAction::Append, help_heading = "Criteria")]
    bools: Vec<String>,

    /// -ds / -dt: match the source / target as named, not by the types an attribute stands for.
    #[arg(short = 'd', value_name = "s|t", value_parser = ["s", "t"], action = ArgAction::Append, help_heading = "Search options")]
    direct: Vec<String>,
    /// -eb / -ep / -ex: booleans / permissions / ioctls equal the list instead of meeting it.
    #[arg(short = 'e', value_name = "b|p|x", value_parser = ["b", "p", "x"], action = ArgAction::Append, help_heading = "Search options")]
    equal: Vec<String>,
    /// -Sp: the permission list is a subset of the rule's permissions.
    #[arg(short = 'S', value_name = "p", value_parser = ["p"], help_heading = "Search options")]
    subset: Option<String>,
    /// -rs / -rt / -rc / -rd / -rb: source / target / class / default / booleans are regular
    /// expressions, matched anywhere in a name (as Python's re.search).
    #[arg(short = 'r', value_name = "s|t|c|d|b", value_parser = ["s", "t", "c", "d", "b"], action = ArgAction::Append, help_heading = "Search options")]
    regex: Vec<String>,

    /// Mark each conditional rule `# enabled` or `# disabled` (in effect or not under the
    /// booleans' values) after sesearch's line.
    #[arg(long, help_heading = "Output")]
    state: bool,
    /// Only the rules in effect: unconditional rules and conditional ones whose branch the
    /// booleans' values select.
    #[arg(long, help_heading = "Output")]
    enabled: bool,
    /// JSON: {"rules": [...]}, one object per rule (see below).
    #[arg(long, help_heading = "Output")]
    json: bool,
}

fn bool_value(b: &str, v: &str) -> Result<bool, String> {
    match v {
        "1" | "true" | "on" => Ok(true),
        "0" | "false" | "off" => Ok(false),
        _ => Err(format!("-b {b}: value must be 1/0, true/false or on/off")),
    }
}

impl SearchArgs {
    fn ruletypes(&self) -> Vec<RuleType> {
        let mut v = Vec::new();
        let mut add = |on: bool, r: RuleType| {
            if on && !v.contains(&r) {
                v.push(r);
            }
        };
        add(self.all_allow || self.allow, RuleType::Allow);
        add(self.all_allow || self.allowxperm, RuleType::AllowXperm);
        add(self.auditallow, RuleType::AuditAllow);
        add(self.auditallowxperm, RuleType::AuditAllowXperm);
        add(self.dontaudit, RuleType::DontAudit);
        add(self.dontauditxperm, RuleType::DontAuditXperm);
        add(self.neverallow, RuleType::NeverAllow);
        add(self.neverallowxperm, RuleType::NeverAllowXperm);
        add(self.type_trans, RuleType::TypeTransition);
        add(self.type_change, RuleType::TypeChange);
        add(self.type_member, RuleType::TypeMember);
        add(self.role_allow, RuleType::RoleAllow);
        add(self.role_trans, RuleType::RoleTransition);
        add(self.range_trans, RuleType::RangeTransition);
        v
    }

    fn query(&self) -> Result<Query, String> {
        let has = |v: &[String], x: &str| v.iter().any(|s| s == x);
        let mut filter: Vec<&str> = Vec::new();
        let mut values = Vec::new();
        for b in &self.bools {
            if b.contains('=') {
                for item in b.split(',') {
                    let (name, value) = item
                        .split_once('=')
                        .ok_or_else(|| format!("-b {b}: expected NAME=VALUE items"))?;
                    values.push((name.trim().to_string(), bool_value(b, value.trim())?));
                }
            } else {
                filter.push(b);
            }
        }
        let mut q = Query {
            ruletypes: self.ruletypes(),
            source: self.source.clone(),
            target: self.target.clone(),
            source_direct: has(&self.direct, "s"),
            target_direct: has(&self.direct, "t"),
            classes: self.class.clone(),
            perms: self.perms.clone(),
            perms_equal: has(&self.equal, "p"),
            perms_subset: self.subset.is_some(),
            xperms: self.xperms.clone(),
            xperms_equal: has(&self.equal, "x"),
            default: self.default.clone(),
            bools: (!filter.is_empty()).then(|| filter.join(",")),
            bools_equal: has(&self.equal, "b"),
            values,
            ..Query::default()
        };
        q.regex.source = has(&self.regex, "s");
        q.regex.target = has(&self.regex, "t");
        q.regex.class = has(&self.regex, "c");
        q.regex.default = has(&self.regex, "d");
        q.regex.bools = has(&self.regex, "b");
        Ok(q)
    }
}

/// The policy file of a tool that takes it as sesearch does (positional) or as seaccess does
/// (--policy), else the installed one.
pub(crate) fn policy_path(
    positional: Option<&Path>,
    option: Option<&Path>,
) -> Result<PathBuf, String> {
    match (positional, option) {
        (Some(a), Some(b)) if a != b => Err(format!(
            "two policies given: {} and --policy {}",
            a.display(),
            b.display()
        )),
        (a, b) => crate::installed::policy_or_installed(a.or(b)),
    }
}

pub(crate) fn run(out: &mut Out, a: &SearchArgs) -> Result<bool, CliError> {
    let q = a.query()?;
    if q.ruletypes.is_empty() {
        return Err("at least one rule type must be given (-A, --allow, --auditallow, --dontaudit, -T, --type_change, --type_member, --role_allow, --role_trans, --range_trans...; see --help)".into());
    }
    let path = policy_path(a.policy_file.as_deref(), a.policy.as_deref())?;
    let policy = crate::read_policy(&path)?;
    let mut found = search(&policy, &q).map_err(|e| e.to_string())?;
    if a.enabled {
        found.retain(|f| f.enabled);
    }
    if a.json {
        let text = serde_json::to_string(&serde_json::json!({ "rules": found }))
            .map_err(|e| format!("JSON output: {e}"))?;
        writeln!(out, "{text}")?;
        return Ok(true);
    }
    for f in &found {
        match (a.state, f.conditional.is_some()) {
            (true, true) => writeln!(
                out,
                "{} # {}",
                f.line,
                if f.enabled { "enabled" } else { "disabled" }
            )?,
            _ => writeln!(out, "{}", f.line)?,
        }
    }
    Ok(true)
}
