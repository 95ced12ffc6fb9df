//! What the benchmark asks: (source, target, class) triples over real contexts of the policy,
//! as a fixed working set or as a skewed stream.

use seaccess_security::SecurityServer;
use seaccess_types::{ClassId, Sid};

/// One query: (source SID, target SID, class).
pub type Triple = (Sid, Sid, ClassId);

/// Marsaglia's xorshift64: seeded, and the same stream on every machine, so that a seed names a
/// workload and two runs measure the same queries.
pub struct XorShift(u64);

impl XorShift {
    /// The state must never be 0 (it would stay 0): the low bit is forced.
    pub fn new(seed: u64) -> Self {
        XorShift(seed | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (which must not be 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// A working set of triples over contexts of the policy: the first valid context of up to 64
/// types of every role of every user, at the user's low level. Empty when the policy has no
/// valid user context.
pub fn working_set(server: &SecurityServer, count: usize, seed: u64) -> Vec<Triple> {
    let g = server.snapshot();
    let p = g.policy();
    let mut sids = Vec::new();
    for u in &p.users {
        let level = if p.mls {
            let low = seaccess_policy::Range {
                low: u.range.low.clone(),
                high: u.range.low.clone(),
            };
            format!(":{}", seaccess_security::range_to_string(p, &low))
        } else {
            String::new()
        };
        for r in u.roles.iter() {
            let Some(role) = p.roles.get(r as usize) else {
                continue;
            };
            for t in role.types.iter().take(64) {
                let ctx = format!(
                    "{}:{}:{}{level}",
                    u.name,
                    role.name,
                    p.type_names.name(t + 1).unwrap_or("?")
                );
                if let Ok(s) = g.context_to_sid(&ctx) {
                    sids.push(s);
                }
            }
        }
    }
    let nclass = p.classes.len().max(1);
    let mut rng = XorShift::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    // A hint only: a count too large to hold fails as it grows, not up front.
    let mut out = Vec::with_capacity(count.min(1 << 16));
    while !sids.is_empty() && out.len() < count {
        let s = sids[rng.below(sids.len())];
        let t = sids[rng.below(sids.len())];
        let c = ClassId(rng.below(nclass) as u16 + 1);
        out.push((s, t, c));
    }
    out
}

/// `len` queries over `distinct` triples of the policy, triple `i` drawn with probability
/// proportional to 1 / (i + 1) (Zipf, s = 1): a few triples are asked all the time, most rarely,
/// as an object manager's checks are.
pub fn zipf_stream(server: &SecurityServer, distinct: usize, len: usize, seed: u64) -> Vec<Triple> {
    let triples = working_set(server, distinct, seed);
    let Some(&last) = triples.last() else {
        return Vec::new();
    };
    let mut cdf = Vec::with_capacity(triples.len());
    let mut total = 0.0;
    for i in 0..triples.len() {
        total += 1.0 / (i as f64 + 1.0);
        cdf.push(total);
    }
    let mut rng = XorShift::new(seed.wrapping_mul(0x2545_f491_4f6c_dd1d));
    (0..len)
        .map(|_| {
            let x = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * total;
            triples
                .get(cdf.partition_point(|&c| c < x))
                .copied()
                .unwrap_or(last)
        })
        .collect()
}
