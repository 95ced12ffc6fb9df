//! What the security server precomputes once per policy load, so that a decision costs a few
//! lookups instead of the kernel's walk over every (source attribute, target attribute) pair.

use rustc_hash::{FxHashMap, FxHashSet};
use seaccess_policy::{avtab, AvtabEntry, Ebitmap, Policy, Range, Xperms};

/// Marks a rule as unconditional; otherwise a rule belongs to branch `b` of the generation's
/// enabled-branch table (node * 2 for the true list, node * 2 + 1 for the false list).
pub(crate) const ALWAYS: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub(crate) struct AvRule {
    pub target: u16,
    pub specified: u16,
    pub branch: u32,
    pub data: u32,
    pub xperms: Option<Box<Xperms>>,
}

#[derive(Clone, Debug)]
pub(crate) struct TypeRule {
    pub branch: u32,
    pub new_type: u32,
}

pub(crate) struct Compiled {
    pub policy: Policy,
    /// (source type or attribute << 16 | class) -> its access-vector and xperm rules.
    pub av: FxHashMap<u32, Box<[AvRule]>>,
    /// For each type (index value - 1): the sorted types and attributes it stands for.
    pub attrs: Vec<Box<[u16]>>,
    /// (source, target, class, specified) -> type rules, unconditional first.
    pub type_rules: FxHashMap<(u16, u16, u16, u16), Vec<TypeRule>>,
    pub role_allow: FxHashSet<(u32, u32)>,
    pub role_trans: FxHashMap<(u32, u32, u32), u32>,
    /// Target types that have filename transitions, to skip the name lookup for the rest.
    pub ftrans_ttypes: Ebitmap,
    /// (target type, class, name) -> (source types, new type), in file order.
    pub ftrans: FxHashMap<(u32, u32, Box<str>), Vec<(Ebitmap, u32)>>,
    pub range_trans: FxHashMap<(u32, u32, u32), Range>,
    pub process_class: u32,
    /// The process class's transition and dyntransition bits.
    pub process_trans_perms: u32,
    /// Classes (index value - 1) the kernel treats as sockets when labelling new objects.
    pub socket_class: Vec<bool>,
}

fn rule(e: &AvtabEntry, branch: u32) -> AvRule {
    AvRule { target: e.target_type, specified: e.specified, branch, data: e.data, xperms: e.xperms.clone() }
}

impl Compiled {
    pub fn new(policy: Policy) -> Compiled {
        let mut av: FxHashMap<u32, Vec<AvRule>> = FxHashMap::default();
        let mut type_rules: FxHashMap<(u16, u16, u16, u16), Vec<TypeRule>> = FxHashMap::default();
        let branches = policy
            .conds
            .iter()
            .enumerate()
            .flat_map(|(i, c)| [(2 * i as u32, &c.true_list), (2 * i as u32 + 1, &c.false_list)]);
        let all = std::iter::once((ALWAYS, &policy.avtab)).chain(branches);
        for (branch, list) in all {
            for e in list.iter() {
                if e.specified & avtab::TYPE != 0 {
                    type_rules
                        .entry((e.source_type, e.target_type, e.class, e.specified))
                        .or_default()
                        .push(TypeRule { branch, new_type: e.data });
                } else {
                    av.entry(u32::from(e.source_type) << 16 | u32::from(e.class)).or_default().push(rule(e, branch));
                }
            }
        }
        let av = av.into_iter().map(|(k, v)| (k, v.into_boxed_slice())).collect();
        let attrs = policy
            .type_attr_map
            .iter()
            .map(|m| m.iter().map(|b| (b + 1) as u16).collect::<Box<[u16]>>())
            .collect();
        let role_allow = policy.role_allows.iter().map(|r| (r.role, r.new_role)).collect();
        let role_trans = policy.role_trans.iter().map(|r| ((r.role, r.ty, r.class), r.new_role)).collect();
        let mut ftrans: FxHashMap<(u32, u32, Box<str>), Vec<(Ebitmap, u32)>> = FxHashMap::default();
        let mut ftrans_ttypes = Ebitmap::new();
        for f in &policy.filename_trans {
            ftrans_ttypes.set(f.ttype);
            ftrans.entry((f.ttype, f.class, f.name.clone())).or_default().push((f.stypes.clone(), f.otype));
        }
        let range_trans =
            policy.range_trans.iter().map(|r| ((r.source_type, r.target_type, r.class), r.range.clone())).collect();
        let process_class = policy.class_value("process").unwrap_or(0);
        let bit = |n: &str| policy.perm_bit(process_class, n).map_or(0, |b| 1u32 << b);
        let process_trans_perms = bit("transition") | bit("dyntransition");
        let socket_class = policy.classes.iter().map(|c| is_socket_class(&c.name)).collect();
        Compiled {
            av,
            attrs,
            type_rules,
            role_allow,
            role_trans,
            ftrans_ttypes,
            ftrans,
            range_trans,
            process_class,
            process_trans_perms,
            socket_class,
            policy,
        }
    }

    pub fn is_socket(&self, class: u32) -> bool {
        self.socket_class.get((class as usize).wrapping_sub(1)).copied().unwrap_or(false)
    }
}

/// The kernel decides "is this a socket class" from its own class table, in which every socket
/// class, and only those, is named `socket` or `*_socket`.
fn is_socket_class(name: &str) -> bool {
    name == "socket" || name.ends_with("_socket")
}
