//! Extensible bitmaps, kept sparse as in the file: sorted 64-bit nodes with no empty node.

use crate::error::Result;
use crate::reader::Reader;

const MAPSIZE: u32 = 64;

/// A set of small integers (type, role, user, category or boolean positions).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Ebitmap {
    /// (first bit, 64 bits from there), in increasing order; no map is zero.
    nodes: Vec<(u32, u64)>,
}

impl Ebitmap {
    pub fn new() -> Self {
        Ebitmap::default()
    }

    pub fn from_bits(bits: impl IntoIterator<Item = u32>) -> Self {
        let mut e = Ebitmap::new();
        for b in bits {
            e.set(b);
        }
        e
    }

    pub fn get(&self, bit: u32) -> bool {
        let start = bit - bit % MAPSIZE;
        match self.nodes.binary_search_by_key(&start, |n| n.0) {
            Ok(i) => self.nodes[i].1 & (1u64 << (bit % MAPSIZE)) != 0,
            Err(_) => false,
        }
    }

    pub fn set(&mut self, bit: u32) {
        let start = bit - bit % MAPSIZE;
        match self.nodes.binary_search_by_key(&start, |n| n.0) {
            Ok(i) => self.nodes[i].1 |= 1u64 << (bit % MAPSIZE),
            Err(i) => self.nodes.insert(i, (start, 1u64 << (bit % MAPSIZE))),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The number of bits set.
    pub fn len(&self) -> usize {
        self.nodes.iter().map(|n| n.1.count_ones() as usize).sum()
    }

    /// One past the highest bit set (0 when empty).
    pub fn end(&self) -> u32 {
        match self.nodes.last() {
            Some(&(start, map)) => start + (64 - map.leading_zeros()),
            None => 0,
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.nodes.iter().flat_map(|&(start, map)| {
            let mut m = map;
            std::iter::from_fn(move || {
                if m == 0 {
                    return None;
                }
                let b = m.trailing_zeros();
                m &= m - 1;
                Some(start + b)
            })
        })
    }

    /// Whether every bit of `other` is set here.
    pub fn contains(&self, other: &Ebitmap) -> bool {
        let mut mine = self.nodes.iter().peekable();
        for &(start, map) in &other.nodes {
            while mine.peek().is_some_and(|n| n.0 < start) {
                mine.next();
            }
            match mine.peek() {
                Some(&&(s, m)) if s == start && m & map == map => {}
                _ => return false,
            }
        }
        true
    }

    pub fn nodes(&self) -> &[(u32, u64)] {
        &self.nodes
    }

    /// Reads one bitmap as the kernel's ebitmap_read does, with its checks: a map unit of 64, a
    /// high bit that is a multiple of it, nodes if and only if the high bit is set, nodes aligned, increasing, below the high bit, non-empty.
    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Ebitmap> {
        let at = r.offset();
        let mapunit = r.u32()?;
        let highbit = r.u32()?;
        if mapunit != MAPSIZE {
            return Err(r.invalid_at(at, format!("bitmap map unit {mapunit}, expected {MAPSIZE}")));
        }
        if highbit % MAPSIZE != 0 {
            return Err(r.invalid_at(
                at,
                format!("bitmap high bit {highbit} is not a multiple of 64"),
            ));
        }
        let count = r.count("bitmap node", 12)?;
        if highbit == 0 && count != 0 {
            return Err(r.invalid_at(at, "bitmap with high bit 0 has nodes"));
        }
        if highbit != 0 && count == 0 {
            return Err(r.invalid_at(at, format!("bitmap with high bit {highbit} has no nodes")));
        }
        let mut nodes = Vec::with_capacity(count);
        for _ in 0..count {
            let nat = r.offset();
            let start = r.u32()?;
            let map = r.u64()?;
            if start % MAPSIZE != 0 {
                return Err(r.invalid_at(nat, format!("bitmap node start {start} is not aligned")));
            }
            if u64::from(start) + u64::from(MAPSIZE) > u64::from(highbit) {
                return Err(r.invalid_at(
                    nat,
                    format!("bitmap node start {start} beyond high bit {highbit}"),
                ));
            }
            if let Some(&(prev, _)) = nodes.last() {
                if start <= prev {
                    return Err(r.invalid_at(nat, "bitmap nodes out of order"));
                }
            }
            if map == 0 {
                return Err(r.invalid_at(nat, "bitmap node with no bit set"));
            }
            nodes.push((start, map));
        }
        Ok(Ebitmap { nodes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_iter_contains() {
        let a = Ebitmap::from_bits([0, 5, 64, 200]);
        assert!(a.get(64) && a.get(200) && !a.get(63));
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![0, 5, 64, 200]);
        assert_eq!(a.end(), 201);
        assert_eq!(a.len(), 4);
        assert!(a.contains(&Ebitmap::from_bits([5, 200])));
        assert!(!a.contains(&Ebitmap::from_bits([5, 201])));
        assert!(a.contains(&Ebitmap::new()));
    }

    fn words(w: &[u32]) -> Vec<u8> {
        w.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    // ebitmap_read: "if (e->highbit && !count) goto bad".
    #[test]
    fn a_high_bit_with_no_nodes_is_refused() {
        let empty = words(&[64, 0, 0]);
        assert!(Ebitmap::read(&mut Reader::new(&empty)).is_ok_and(|e| e.is_empty()));
        let bad = words(&[64, 128, 0]);
        let e = Ebitmap::read(&mut Reader::new(&bad))
            .err()
            .map(|e| e.offset());
        assert_eq!(
            e,
            Some(0),
            "a bitmap with high bit 128 and no nodes is refused at its start"
        );
    }
}
