//! SIDs for things the policy labels by name or number: filesystems, ports, network
//! interfaces, nodes and initial SIDs (the kernel's security_fs_use, security_genfs_sid,
//! security_port_sid, security_netif_sid and security_node_sid).

use seaccess_policy::{fsuse, Context};
use seaccess_types::{ClassId, Sid};

use crate::generation::Generation;

impl Generation {
    fn ctx_sid(&self, c: &Context) -> Sid {
        self.intern(c.clone())
    }

    /// The SID of initial SID number `n` as the policy defines it.
    pub fn initial_sid(&self, n: u32) -> Option<Sid> {
        self.c.policy.ocontexts.initial_sids.iter().find(|s| s.sid == n).map(|s| Sid(s.sid))
    }

    fn initial_or_null(&self, n: u32) -> Sid {
        self.initial_sid(n).unwrap_or(Sid::NULL)
    }

    /// How a filesystem type is labelled: its fs_use behaviour and SID, or None.
    pub fn fs_use(&self, fstype: &str) -> Option<(FsUseBehavior, Sid)> {
        let f = self.c.policy.ocontexts.fs_use.iter().find(|f| &*f.fstype == fstype)?;
        let b = match f.behavior {
            fsuse::XATTR => FsUseBehavior::Xattr,
            fsuse::TRANS => FsUseBehavior::Trans,
            _ => FsUseBehavior::Task,
        };
        Some((b, self.ctx_sid(&f.context)))
    }

    /// The kernel's security_genfs_sid: the entry with the longest path that prefixes `path`
    /// (and matches the class, or is for every class).
    pub fn genfs_sid(&self, fstype: &str, path: &str, class: ClassId) -> Option<Sid> {
        // The kernel drops a leading '/' while another follows, so "//sys" is "/sys".
        let mut path = path;
        while let Some(rest) = path.strip_prefix('/').filter(|r| r.starts_with('/')) {
            path = rest;
        }
        let g = self.c.policy.genfs.iter().find(|g| &*g.fstype == fstype)?;
        let e = g
            .entries
            .iter()
            .find(|e| (e.class == 0 || e.class == u32::from(class.0)) && path.starts_with(&*e.path))?;
        Some(self.ctx_sid(&e.context))
    }

    pub fn port_sid(&self, protocol: u8, port: u16) -> Sid {
        let o = &self.c.policy.ocontexts;
        match o.ports.iter().find(|c| c.protocol == u32::from(protocol) && c.low <= u32::from(port) && u32::from(port) <= c.high) {
            Some(c) => self.ctx_sid(&c.context),
            None => self.initial_or_null(9),
        }
    }

    pub fn netif_sid(&self, name: &str) -> Sid {
        match self.c.policy.ocontexts.netifs.iter().find(|c| &*c.name == name) {
            Some(c) => self.ctx_sid(&c.context),
            None => self.initial_or_null(10),
        }
    }

    pub fn node_sid(&self, addr: std::net::IpAddr) -> Sid {
        let o = &self.c.policy.ocontexts;
        let hit = match addr {
            std::net::IpAddr::V4(a) => {
                let a = a.octets();
                o.nodes.iter().find(|n| (0..4).all(|i| a[i] & n.mask[i] == n.addr[i])).map(|n| &n.context)
            }
            std::net::IpAddr::V6(a) => {
                let a = a.octets();
                o.nodes6.iter().find(|n| (0..16).all(|i| a[i] & n.mask[i] == n.addr[i])).map(|n| &n.context)
            }
        };
        match hit {
            Some(c) => self.ctx_sid(c),
            None => self.initial_or_null(12),
        }
    }
}

/// How a filesystem's objects get their labels (fs_use_xattr, fs_use_trans, fs_use_task).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FsUseBehavior {
    Xattr,
    Trans,
    Task,
}
