//! Filename type transitions, in the old one-per-source and the compact (version 33) layouts.

use rustc_hash::FxHashMap as HashMap;

use super::{bits_below, class_ok, type_ok, version};
use crate::ebitmap::Ebitmap;
use crate::error::{Result, Section};
use crate::model::*;
use crate::reader::Reader;

pub(super) fn filename_transitions(r: &mut Reader<'_>, p: &mut PolicyTables) -> Result<()> {
    r.enter(Section::FilenameTransitions);
    if p.version < version::FILENAME_TRANS {
        return Ok(());
    }
    let compact = p.version >= version::COMP_FTRANS;
    let n = r.count("filename transition", if compact { 16 } else { 20 })?;
    // (name, ttype, class) -> index of its first entry, to refuse conflicting rules.
    let mut seen: HashMap<(Box<str>, u32, u32), Vec<usize>> = HashMap::default();
    for _ in 0..n {
        let at = r.offset();
        let name = r.len_name("filename transition object")?;
        let mut add = |r: &Reader<'_>,
                       p: &mut PolicyTables,
                       stypes: Ebitmap,
                       ttype: u32,
                       class: u32,
                       otype: u32|
         -> Result<()> {
            if !type_ok(p, ttype)
                || !type_ok(p, otype)
                || !class_ok(p, class)
                || !bits_below(&stypes, p.types.len())
            {
                return Err(r.invalid_at(at, format!("filename transition for \"{name}\" names a type or class not in the policy")));
            }
            let idx = seen.entry((name.clone(), ttype, class)).or_default();
            for &i in idx.iter() {
                let other: &FilenameTrans = &p.filename_trans[i];
                if other.otype != otype && other.stypes.iter().any(|b| stypes.get(b)) {
                    return Err(r.invalid_at(
                        at,
                        format!("conflicting filename transitions for \"{name}\""),
                    ));
                }
            }
            idx.push(p.filename_trans.len());
            p.filename_trans.push(FilenameTrans {
                name: name.clone(),
                stypes,
                ttype,
                class,
                otype,
            });
            Ok(())
        };
        if compact {
            let ttype = r.u32()?;
            let class = r.u32()?;
            let nd = r.count("filename transition datum", 16)?;
            for _ in 0..nd {
                let stypes = Ebitmap::read(r)?;
                let otype = r.u32()?;
                add(r, p, stypes, ttype, class, otype)?;
            }
        } else {
            let stype = r.u32()?;
            let ttype = r.u32()?;
            let class = r.u32()?;
            let otype = r.u32()?;
            if !type_ok(p, stype) {
                return Err(r.invalid_at(
                    at,
                    format!("filename transition source type {stype} not in the policy"),
                ));
            }
            add(r, p, Ebitmap::from_bits([stype - 1]), ttype, class, otype)?;
        }
    }
    Ok(())
}
