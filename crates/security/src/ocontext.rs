//! SIDs for things the policy labels by name or number: filesystems, ports, network
//! interfaces, nodes and initial SIDs (the kernel's security_fs_use, security_genfs_sid,
//! security_port_sid, security_netif_sid and security_node_sid).

use seaccess_policy::{Context, FsUseBehavior, MAX_INITIAL_SID};
use seaccess_types::{ClassId, PolicyCap, Sid};

use crate::generation::Generation;

impl Generation {
    fn ctx_sid(&self, c: &Context) -> Sid {
        self.intern(c.clone())
    }

    /// The SID of initial SID number `n`, if it has a context under this policy: one the
    /// policy gives it, or (for `init`, without userspace_initial_context) the kernel SID's.
    pub fn initial_sid(&self, n: u32) -> Option<Sid> {
        let sid = Sid(n);
        (1..=MAX_INITIAL_SID)
            .contains(&n)
            .then_some(sid)
            .filter(|&s| self.ctx.get(s).is_some())
    }

    fn initial_or_null(&self, n: u32) -> Sid {
        self.initial_sid(n).unwrap_or(Sid::NULL)
    }

    /// How a filesystem type is labelled: its fs_use behaviour and SID, or None.
    pub fn fs_use(&self, fstype: &str) -> Option<(FsUseBehavior, Sid)> {
        let f = self
            .c
            .policy
            .ocontexts
            .fs_use
            .iter()
            .find(|f| &*f.fstype == fstype)?;
        Some((f.behavior, self.ctx_sid(&f.context)))
    }

    /// The file system types the policy labels: those of its fs_use statements, then those
    /// of its genfscon statements, each once, in policy order.
    pub fn fs_types(&self) -> Vec<&str> {
        let p = &self.c.policy;
        let mut out: Vec<&str> = Vec::new();
        let names = p.ocontexts.fs_use.iter().map(|f| &*f.fstype);
        for name in names.chain(p.genfs.iter().map(|g| &*g.fstype)) {
            if !out.contains(&name) {
                out.push(name);
            }
        }
        out
    }

    /// How many genfscon entries the policy has for `fstype` (0: none).
    pub fn genfs_entries(&self, fstype: &str) -> usize {
        let g = self.c.policy.genfs.iter().find(|g| &*g.fstype == fstype);
        g.map_or(0, |g| g.entries.len())
    }

    /// The kernel's security_genfs_sid: the entry with the longest path that prefixes `path`
    /// (and matches the class, or is for every class). Under the genfs_seclabel_wildcard
    /// capability an entry's path is a wildcard pattern with a '*' appended (the kernel appends
    /// it when it reads the policy), so it still matches as a prefix.
    pub fn genfs_sid(&self, fstype: &str, path: &str, class: ClassId) -> Option<Sid> {
        // The kernel drops a leading '/' while another follows, so "//sys" is "/sys".
        let mut path = path;
        while let Some(rest) = path.strip_prefix('/').filter(|r| r.starts_with('/')) {
            path = rest;
        }
        let g = self.c.policy.genfs.iter().find(|g| &*g.fstype == fstype)?;
        let wildcard = self
            .policy_caps()
            .contains(PolicyCap::GenfsSeclabelWildcard);
        let matches = |pattern: &str| {
            if wildcard {
                let mut p = pattern.as_bytes().to_vec();
                p.push(b'*');
                match_wildcard(&p, path.as_bytes())
            } else {
                path.starts_with(pattern)
            }
        };
        let e = g
            .entries
            .iter()
            .find(|e| (e.class == 0 || e.class == u32::from(class.0)) && matches(&e.path))?;
        Some(self.ctx_sid(&e.context))
    }

    /// Every port's SID for `protocol`, indexed by port: what [`Generation::port_sid`] answers
    /// for each, computed in one pass over the portcon entries (the last first, so that the
    /// first entry to match a port is the one it keeps).
    pub fn port_sids(&self, protocol: u8) -> Vec<Sid> {
        let mut out = vec![self.initial_or_null(9); 1 << 16];
        let o = &self.c.policy.ocontexts;
        for c in o.ports.iter().rev() {
            if c.protocol != u32::from(protocol) || c.low > c.high || c.low > 0xffff {
                continue;
            }
            let sid = self.ctx_sid(&c.context);
            let high = c.high.min(0xffff) as usize;
            for s in &mut out[c.low as usize..=high] {
                *s = sid;
            }
        }
        out
    }

    pub fn port_sid(&self, protocol: u8, port: u16) -> Sid {
        let o = &self.c.policy.ocontexts;
        match o.ports.iter().find(|c| {
            c.protocol == u32::from(protocol)
                && c.low <= u32::from(port)
                && u32::from(port) <= c.high
        }) {
            Some(c) => self.ctx_sid(&c.context),
            None => self.initial_or_null(9),
        }
    }

    /// The kernel's security_netif_sid: the first netifcon entry naming the interface, where
    /// under the netif_wildcard capability names are wildcard patterns.
    pub fn netif_sid(&self, name: &str) -> Sid {
        let wildcard = self.policy_caps().contains(PolicyCap::NetifWildcard);
        let matches = |c: &str| {
            if wildcard {
                match_wildcard(c.as_bytes(), name.as_bytes())
            } else {
                c == name
            }
        };
        match self
            .c
            .policy
            .ocontexts
            .netifs
            .iter()
            .find(|c| matches(&c.name))
        {
            Some(c) => self.ctx_sid(&c.context),
            None => self.initial_or_null(10),
        }
    }

    /// The nodecon entries in the order [`Generation::node_sid`] tries them, IPv4 first: (is
    /// it IPv6, address, mask, SID), an IPv4 address and mask in the first 4 bytes.
    pub fn node_entries(&self) -> Vec<(bool, [u8; 16], [u8; 16], Sid)> {
        let o = &self.c.policy.ocontexts;
        let mut out = Vec::new();
        for n in &o.nodes {
            let (mut addr, mut mask) = ([0u8; 16], [0u8; 16]);
            addr[..4].copy_from_slice(&n.addr);
            mask[..4].copy_from_slice(&n.mask);
            out.push((false, addr, mask, self.ctx_sid(&n.context)));
        }
        for n in &o.nodes6 {
            out.push((true, n.addr, n.mask, self.ctx_sid(&n.context)));
        }
        out
    }

    pub fn node_sid(&self, addr: std::net::IpAddr) -> Sid {
        let o = &self.c.policy.ocontexts;
        let hit = match addr {
            std::net::IpAddr::V4(a) => {
                let a = a.octets();
                o.nodes
                    .iter()
                    .find(|n| (0..4).all(|i| a[i] & n.mask[i] == n.addr[i]))
                    .map(|n| &n.context)
            }
            std::net::IpAddr::V6(a) => {
                let a = a.octets();
                o.nodes6
                    .iter()
                    .find(|n| (0..16).all(|i| a[i] & n.mask[i] == n.addr[i]))
                    .map(|n| &n.context)
            }
        };
        match hit {
            Some(c) => self.ctx_sid(c),
            None => self.initial_or_null(12),
        }
    }
}

/// The kernel's match_wildcard (lib/parser.c): '*' matches any run of bytes, '?' any one byte,
/// anything else itself, over the whole of `text`. On a mismatch it retries from the most
/// recent '*' one byte further on, and at the end of `text` it lets one '*', not several, match
/// nothing: "a**" does not match "a" there, so neither does it here.
fn match_wildcard(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    // After a '*': where the pattern resumes, and where in the text the star's run ends.
    let mut star: Option<(usize, usize)> = None;
    while let Some(&ch) = text.get(t) {
        match pattern.get(p) {
            Some(b'?') => {
                p += 1;
                t += 1;
            }
            Some(b'*') => {
                p += 1;
                if p == pattern.len() {
                    return true;
                }
                star = Some((p, t));
            }
            Some(&c) if c == ch => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    star = Some((sp, st + 1));
                    p = sp;
                    t = st + 1;
                }
                None => return false,
            },
        }
    }
    if pattern.get(p) == Some(&b'*') {
        p += 1;
    }
    p == pattern.len()
}

#[cfg(test)]
mod tests {
    use super::match_wildcard;

    /// Cases worked through the kernel's loop by hand.
    #[test]
    fn wildcard_matching_as_the_kernel_does() {
        for (pattern, text, want) in [
            ("eth*", "eth0", true),
            ("eth*", "eth", true),
            ("eth*", "et", false),
            ("eth?", "eth", false),
            ("eth?", "eth12", false),
            ("e*h?", "ethh1", true),
            ("*b", "aab", true),
            ("*b", "aba", false),
            ("a*b*c", "axbybc", true),
            ("a**", "a", false),
            ("a*", "a", true),
            ("", "", true),
            ("", "x", false),
            ("/devices/*/power*", "/devices/pci0/power/state", true),
            ("/devices/*/power*", "/devices/pci0/other", false),
        ] {
            assert_eq!(
                match_wildcard(pattern.as_bytes(), text.as_bytes()),
                want,
                "{pattern} on {text}"
            );
        }
    }
}
