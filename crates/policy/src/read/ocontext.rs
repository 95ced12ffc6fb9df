//! Object contexts (initial SIDs, filesystems, ports, interfaces, nodes, fs_use, infiniband)
//! and genfs contexts.

use super::mls::range;
use super::{class_ok, ocon_num, MAX_INITIAL_SID};
use crate::error::{Result, Section};
use crate::model::*;
use crate::reader::Reader;

pub(super) fn context(r: &mut Reader<'_>, p: &PolicyTables) -> Result<Context> {
    let at = r.offset();
    let user = r.u32()?;
    let role = r.u32()?;
    let ty = r.u32()?;
    let range = range(r)?;
    let c = Context {
        user,
        role,
        ty,
        range: p.mls.then_some(range),
    };
    if !p.context_is_valid(&c) {
        return Err(r.invalid_at(at, "invalid context"));
    }
    Ok(c)
}

pub(super) fn object_contexts(r: &mut Reader<'_>, p: &mut PolicyTables) -> Result<()> {
    r.enter(Section::ObjectContexts);
    let mut o = ObjectContexts::default();
    for kind in 0..ocon_num(p.version) {
        let n = r.count("object context", 16)?;
        for _ in 0..n {
            let at = r.offset();
            match kind {
                0 => {
                    let sid = r.u32()?;
                    // The kernel knows 27 initial SIDs; a few hundred leaves room for any
                    // future ones and keeps SID tables indexed by number small.
                    if sid == 0
                        || sid > MAX_INITIAL_SID
                        || o.initial_sids.iter().any(|s| s.sid == sid)
                    {
                        return Err(r.invalid_at(at, format!("initial SID {sid} is zero, above {MAX_INITIAL_SID} or defined twice")));
                    }
                    let context = context(r, p)?;
                    o.initial_sids.push(InitialSid { sid, context });
                }
                1 | 3 => {
                    let name = r.len_name(if kind == 1 {
                        "filesystem"
                    } else {
                        "network interface"
                    })?;
                    let context = context(r, p)?;
                    let c2 = context_second(r, p)?;
                    let e = NamedContext {
                        name,
                        context,
                        context2: Some(c2),
                    };
                    if kind == 1 {
                        o.fs.push(e)
                    } else {
                        o.netifs.push(e)
                    }
                }
                2 => {
                    let protocol = r.u32()?;
                    let low = r.u32()?;
                    let high = r.u32()?;
                    if protocol > 255 || low > 0xffff || high > 0xffff || low > high {
                        return Err(r.invalid_at(
                            at,
                            format!("port context {protocol}:{low}-{high} out of range"),
                        ));
                    }
                    let context = context(r, p)?;
                    o.ports.push(PortContext {
                        protocol,
                        low,
                        high,
                        context,
                    });
                }
                4 => {
                    let addr: [u8; 4] = four(r.bytes(4)?);
                    let mask: [u8; 4] = four(r.bytes(4)?);
                    let context = context(r, p)?;
                    o.nodes.push(NodeContext {
                        addr,
                        mask,
                        context,
                    });
                }
                5 => {
                    let raw = r.u32()?;
                    let fstype = r.len_name("filesystem")?;
                    // The kernel's ocontext_read refuses MNTPOINT (6), decided at mount time,
                    // and anything above NATIVE (7); 0 it loads though nothing names it.
                    let behavior = match raw {
                        0 => FsUseBehavior::Unspecified,
                        1 => FsUseBehavior::Xattr,
                        2 => FsUseBehavior::Trans,
                        3 => FsUseBehavior::Task,
                        4 => FsUseBehavior::Genfs,
                        5 => FsUseBehavior::None,
                        7 => FsUseBehavior::Native,
                        _ => {
                            return Err(r.invalid_at(
                                at,
                                format!(
                                "fs_use for {fstype}: behaviour {raw} is not one a policy may give"
                            ),
                            ))
                        }
                    };
                    let context = context(r, p)?;
                    o.fs_use.push(FsUse {
                        behavior,
                        fstype,
                        context,
                    });
                }
                6 => {
                    let mut addr = [0u8; 16];
                    addr.copy_from_slice(r.bytes(16)?);
                    let mut mask = [0u8; 16];
                    mask.copy_from_slice(r.bytes(16)?);
                    let context = context(r, p)?;
                    o.nodes6.push(Node6Context {
                        addr,
                        mask,
                        context,
                    });
                }
                7 => {
                    let subnet_prefix = r.u64()?;
                    let low = r.u32()?;
                    let high = r.u32()?;
                    if low > 0xffff || high > 0xffff || low > high {
                        return Err(r.invalid_at(
                            at,
                            format!("infiniband pkey range {low}-{high} out of range"),
                        ));
                    }
                    let context = context(r, p)?;
                    o.ibpkeys.push(IbPkeyContext {
                        subnet_prefix,
                        low: low as u16,
                        high: high as u16,
                        context,
                    });
                }
                _ => {
                    let len = r.u32()?;
                    let port = r.u32()?;
                    let device = r.name(len, "infiniband device")?;
                    if port == 0 || port > 255 {
                        return Err(
                            r.invalid_at(at, format!("infiniband end port {port} out of range"))
                        );
                    }
                    let context = context(r, p)?;
                    o.ibendports.push(IbEndportContext {
                        device,
                        port: port as u8,
                        context,
                    });
                }
            }
        }
    }
    p.ocontexts = o;
    Ok(())
}

pub(super) fn context_second(r: &mut Reader<'_>, p: &PolicyTables) -> Result<Context> {
    context(r, p)
}

pub(super) fn four(b: &[u8]) -> [u8; 4] {
    [b[0], b[1], b[2], b[3]]
}

pub(super) fn genfs(r: &mut Reader<'_>, p: &mut PolicyTables) -> Result<()> {
    r.enter(Section::Genfs);
    let n = r.count("genfs filesystem", 8)?;
    for _ in 0..n {
        let at = r.offset();
        let fstype = r.len_name("filesystem")?;
        if p.genfs.iter().any(|g| g.fstype == fstype) {
            return Err(r.invalid_at(at, format!("genfs entries for {fstype} given twice")));
        }
        let ne = r.count("genfs entry", 12)?;
        let mut entries: Vec<GenfsEntry> = Vec::with_capacity(ne);
        for _ in 0..ne {
            let eat = r.offset();
            let path = r.len_name("genfs path")?;
            let class = r.u32()?;
            if class != 0 && !class_ok(p, class) {
                return Err(r.invalid_at(
                    eat,
                    format!("genfs {fstype} {path}: class {class} not in the policy"),
                ));
            }
            let context = context(r, p)?;
            // Kept longest path first (ties in file order), so the first prefix match is the
            // longest, as the kernel's insertion order makes it.
            let mut pos = entries.len();
            for (i, c) in entries.iter().enumerate() {
                if c.path == path && (c.class == 0 || class == 0 || c.class == class) {
                    return Err(r.invalid_at(eat, format!("genfs {fstype} {path} given twice")));
                }
                if path.len() > c.path.len() && pos == entries.len() {
                    pos = i;
                }
            }
            entries.insert(
                pos,
                GenfsEntry {
                    path,
                    class,
                    context,
                },
            );
        }
        p.genfs.push(Genfs { fstype, entries });
    }
    Ok(())
}
