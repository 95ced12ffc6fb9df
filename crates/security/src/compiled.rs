//! What the security server precomputes once per policy load, so that a decision costs a few
//! lookups instead of the kernel's walk over every (source attribute, target attribute) pair.

use rustc_hash::{FxHashMap, FxHashSet};
use seaccess_policy::{
    sort_by_source_class_target, AvtabEntry, CondExpr, Ebitmap, Policy, PolicyTables, Range,
    RuleKind, Xperms,
};

use crate::sockets::is_kernel_socket_class;

/// Marks a rule as unconditional; otherwise a rule belongs to branch `b` of the generation's
/// enabled-branch table (node * 2 for the true list, node * 2 + 1 for the false list).
pub(crate) const ALWAYS: u32 = u32::MAX;

#[derive(Copy, Clone, Debug)]
pub(crate) struct Rule {
    pub target: u16,
    pub class: u16,
    pub kind: RuleKind,
    pub branch: u32,
    /// Permissions, audit-deny mask, new type, or index into the policy's xperms.
    pub data: u32,
}

/// Rules grouped by source type (or attribute), each group sorted by (class, target): a query finds its (source, class) run with one offset read and one binary search.
#[derive(Default)]
pub(crate) struct RuleIndex {
    rules: Vec<Rule>,
    /// rules[start[t]..start[t + 1]] have source type t.
    start: Vec<u32>,
}

impl RuleIndex {
    /// Builds from `nsorted` unconditional rules already sorted (as the reader keeps them) and
    /// conditional rules in any order. The table is allocated once at its final size, and the
    /// conditional rules are sorted between two buffers: what a load holds at its peak.
    fn build(
        ntypes: usize,
        nclasses: usize,
        nsorted: usize,
        sorted: impl Iterator<Item = (u16, Rule)>,
        mut cond: Vec<(u16, Rule)>,
    ) -> RuleIndex {
        let key = |(s, r): &(u16, Rule)| (*s, r.class, r.target);
        sort_by_source_class_target(&mut cond, ntypes, nclasses, key);
        let mut start = vec![0u32; ntypes + 2];
        let mut rules = Vec::with_capacity(nsorted + cond.len());
        let mut a = sorted.peekable();
        let mut b = cond.into_iter().peekable();
        loop {
            let take_a = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) => key(x) <= key(y),
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let next = if take_a { a.next() } else { b.next() };
            if let Some((s, r)) = next {
                start[usize::from(s) + 1] += 1;
                rules.push(r);
            }
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        // A no-op unless `nsorted` overcounted.
        rules.shrink_to_fit();
        RuleIndex { rules, start }
    }

    /// The rules with this source type and class, sorted by target.
    #[inline]
    pub fn run(&self, stype: u16, class: u16) -> &[Rule] {
        let s = usize::from(stype);
        let (Some(&a), Some(&b)) = (self.start.get(s), self.start.get(s + 1)) else {
            return &[];
        };
        let all = &self.rules[a as usize..b as usize];
        let lo = all.partition_point(|r| r.class < class);
        let hi = lo + all[lo..].partition_point(|r| r.class == class);
        &all[lo..hi]
    }
}

/// Filename transitions by (target type, class, name): each (source types, new type), in file
/// order.
pub(crate) type FilenameRules = FxHashMap<(u32, u32, Box<str>), Vec<(Ebitmap, u32)>>;

pub(crate) struct Compiled {
    /// The policy's tables; its rule tables live in the indexes below.
    pub policy: PolicyTables,
    /// The payloads of extended-permission rules, indexed by their rules' `data`.
    pub xperms: Vec<Xperms>,
    /// Each conditional's boolean expression, in file order: its rules are in the indexes,
    /// under branches 2i (true) and 2i + 1 (false).
    pub cond_exprs: Vec<Box<[CondExpr]>>,
    /// Access-vector and extended-permission rules.
    pub av: RuleIndex,
    /// Type transition, member and change rules.
    pub types: RuleIndex,
    /// For each type (index value - 1): the sorted types and attributes it stands for.
    pub attrs: Vec<Box<[u16]>>,
    pub role_allow: FxHashSet<(u32, u32)>,
    pub role_trans: FxHashMap<(u32, u32, u32), u32>,
    /// Target types that have filename transitions, to skip the name lookup for the rest.
    pub ftrans_ttypes: Ebitmap,
    pub ftrans: FilenameRules,
    pub range_trans: FxHashMap<(u32, u32, u32), Range>,
    pub process_class: u32,
    /// The process class's transition and dyntransition bits.
    pub process_trans_perms: u32,
    /// Classes (index value - 1) the kernel treats as sockets when labelling new objects.
    pub socket_class: Vec<bool>,
    /// How many rules the policy had: unconditional, conditional.
    pub rule_counts: (usize, usize),
}

fn split(e: &AvtabEntry, branch: u32) -> (u16, Rule) {
    (
        e.source_type,
        Rule {
            target: e.target_type,
            class: e.class,
            kind: e.kind,
            branch,
            data: e.data,
        },
    )
}

impl Compiled {
    pub fn new(policy: Policy) -> Compiled {
        let (policy, rules) = policy.into_parts();
        let (avtab, xperms, conds) = rules.into_parts();
        let is_type = |e: &AvtabEntry| matches!(e.kind, RuleKind::Type(_));
        let nt = policy.types.len();
        // Counted first, so that each table is allocated once at its size.
        let count_types = |list: &[AvtabEntry]| list.iter().filter(|e| is_type(e)).count();
        let (mut ncond, mut ncond_ty) = (0, 0);
        for node in &conds {
            ncond += node.true_list.len() + node.false_list.len();
            ncond_ty += count_types(&node.true_list) + count_types(&node.false_list);
        }
        let mut cond_av = Vec::with_capacity(ncond - ncond_ty);
        let mut cond_ty = Vec::with_capacity(ncond_ty);
        let mut cond_exprs = Vec::with_capacity(conds.len());
        for (i, node) in conds.into_iter().enumerate() {
            cond_exprs.push(node.expr.into_boxed_slice());
            let lists = [
                (2 * i as u32, node.true_list),
                (2 * i as u32 + 1, node.false_list),
            ];
            for (branch, list) in lists {
                for e in &list {
                    if is_type(e) {
                        cond_ty.push(split(e, branch));
                    } else {
                        cond_av.push(split(e, branch));
                    }
                }
            }
        }
        let nc = policy.classes.len();
        let ntype_rules = count_types(&avtab);
        let av = RuleIndex::build(
            nt,
            nc,
            avtab.len() - ntype_rules,
            avtab
                .iter()
                .filter(|e| !is_type(e))
                .map(|e| split(e, ALWAYS)),
            cond_av,
        );
        let types = RuleIndex::build(
            nt,
            nc,
            ntype_rules,
            avtab
                .iter()
                .filter(|e| is_type(e))
                .map(|e| split(e, ALWAYS)),
            cond_ty,
        );
        let rule_counts = (avtab.len(), ncond);
        drop(avtab);
        let attrs = policy
            .type_attr_map
            .iter()
            .map(|m| m.iter().map(|b| (b + 1) as u16).collect::<Box<[u16]>>())
            .collect();
        let role_allow = policy
            .role_allows
            .iter()
            .map(|r| (r.role, r.new_role))
            .collect();
        let role_trans = policy
            .role_trans
            .iter()
            .map(|r| ((r.role, r.ty, r.class), r.new_role))
            .collect();
        let mut ftrans = FilenameRules::default();
        let mut ftrans_ttypes = Ebitmap::new();
        for f in &policy.filename_trans {
            ftrans_ttypes.set(f.ttype);
            ftrans
                .entry((f.ttype, f.class, f.name.clone()))
                .or_default()
                .push((f.stypes.clone(), f.otype));
        }
        let range_trans = policy
            .range_trans
            .iter()
            .map(|r| ((r.source_type, r.target_type, r.class), r.range.clone()))
            .collect();
        let process_class = policy.class_value("process").unwrap_or(0);
        let bit = |n: &str| policy.perm_bit(process_class, n).map_or(0, |b| 1u32 << b);
        let process_trans_perms = bit("transition") | bit("dyntransition");
        let socket_class = policy
            .classes
            .iter()
            .map(|c| is_kernel_socket_class(&c.name))
            .collect();
        Compiled {
            xperms,
            cond_exprs,
            av,
            types,
            attrs,
            role_allow,
            role_trans,
            ftrans_ttypes,
            ftrans,
            range_trans,
            process_class,
            process_trans_perms,
            socket_class,
            rule_counts,
            policy,
        }
    }

    pub fn is_socket(&self, class: u32) -> bool {
        self.socket_class
            .get((class as usize).wrapping_sub(1))
            .copied()
            .unwrap_or(false)
    }
}
