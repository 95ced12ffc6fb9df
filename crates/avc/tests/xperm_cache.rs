//! The ioctl decision cache (issue 8, item 13): bounded without wholesale clears, its entries
//! answering only for the policy that made them, its grants held per policy.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use seaccess_avc::Avc;
use seaccess_types::*;

mod common;

const IOCTL: AccessVector = AccessVector(1);

/// Every triple allows the ioctl permission and has rules for driver 0x54 only, allowing
/// command 0x5401 only; counts the driver decisions it computes.
#[derive(Default)]
struct Rules {
    seqno: AtomicU32,
    xperm_calls: AtomicUsize,
}

impl AccessServer for Rules {
    fn compute_av(&self, _: Sid, _: Sid, _: ClassId) -> Result<AvDecision, ServerError> {
        Ok(AvDecision {
            allowed: IOCTL,
            ..AvDecision::deny_all(self.seqno())
        })
    }
    fn xperm_drivers(
        &self,
        _: Sid,
        _: Sid,
        _: ClassId,
    ) -> Result<(Option<[u32; 8]>, Seqno), ServerError> {
        let mut d = [0u32; 8];
        d[0x54 >> 5] |= 1 << (0x54 & 31);
        Ok((Some(d), self.seqno()))
    }
    fn compute_xperms(
        &self,
        _: Sid,
        _: Sid,
        _: ClassId,
        driver: u8,
    ) -> Result<(XpermsDecision, Seqno), ServerError> {
        self.xperm_calls.fetch_add(1, SeqCst);
        let mut allowed = [0u32; 8];
        allowed[0] = 1 << 1;
        Ok((
            XpermsDecision {
                driver,
                allowed,
                ..Default::default()
            },
            self.seqno(),
        ))
    }
    fn seqno(&self) -> Seqno {
        Seqno(self.seqno.load(SeqCst))
    }
    fn names(&self) -> Arc<dyn PolicyNames> {
        common::names(self.seqno(), "chr_file", Some("ioctl"))
    }
}

fn setup(capacity: usize) -> (Arc<Rules>, Avc) {
    let server = Arc::new(Rules::default());
    server.seqno.store(1, SeqCst);
    let dynserver: Arc<dyn AccessServer> = server.clone();
    (server, Avc::new(dynserver, capacity))
}

fn triple(i: u32) -> (Sid, Sid, ClassId) {
    (Sid(10 + i), Sid(5000 + 3 * i), ClassId(1 + (i % 3) as u16))
}

/// One miss more than the capacity does not empty the cache: it costs one entry, not all.
#[test]
fn bounded_without_wholesale_clears() {
    let (_server, avc) = setup(256);
    let (maps, decisions) = avc.xperm_capacity();
    assert!(maps > 0 && decisions > 0);
    let n = maps.max(decisions) as u32;
    for i in 0..=n {
        let (s, t, c) = triple(i);
        assert!(avc.has_ioctl(s, t, c, IOCTL, 0x5401, None).is_ok());
        assert!(avc.has_ioctl(s, t, c, IOCTL, 0x5402, None).is_err());
        let (m, d) = avc.xperm_entries();
        assert!(
            m <= maps && d <= decisions,
            "past the bound: {m}/{maps} maps, {d}/{decisions} decisions"
        );
    }
    let (m, d) = avc.xperm_entries();
    assert!(
        m >= maps / 2 && d >= decisions / 2,
        "the cache was emptied on a miss: {m}/{maps} maps, {d}/{decisions} decisions"
    );
    // Many more keys: still bounded.
    for i in 0..10 * n {
        let (s, t, c) = triple(i);
        assert!(avc.has_ioctl(s, t, c, IOCTL, 0x5401, None).is_ok());
    }
    let (m, d) = avc.xperm_entries();
    assert!(m <= maps && d <= decisions);
}

/// After a policy change no entry of the older policy answers (each driver decision is asked
/// again), and a permissive grant made under the older policy is not held by the newer one.
#[test]
fn older_entries_and_their_grants_never_answer() {
    let (server, avc) = setup(64);
    let (s, t, c) = triple(1);
    assert!(avc.has_ioctl(s, t, c, IOCTL, 0x5401, None).is_ok());
    assert!(avc.has_ioctl(s, t, c, IOCTL, 0x5401, None).is_ok());
    assert_eq!(
        server.xperm_calls.load(SeqCst),
        1,
        "the driver decision was not cached"
    );
    // A permissive grant of 0x5402, reported once.
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let l = log.clone();
    avc.set_audit_callback(move |r| l.lock().unwrap().push(r.to_string()));
    avc.set_enforcing(false);
    for _ in 0..2 {
        assert!(avc.has_ioctl(s, t, c, IOCTL, 0x5402, None).is_ok());
    }
    assert_eq!(log.lock().unwrap().len(), 1, "the grant was not held");
    // Policy 2: the entries of policy 1 are dead, the grant with them.
    server.seqno.store(2, SeqCst);
    avc.policy_changed(Seqno(2));
    assert_eq!(avc.xperm_entries(), (0, 0));
    assert!(avc.has_ioctl(s, t, c, IOCTL, 0x5402, None).is_ok());
    assert_eq!(
        log.lock().unwrap().len(),
        2,
        "a grant of policy 1 answered under policy 2"
    );
    assert_eq!(
        server.xperm_calls.load(SeqCst),
        2,
        "a driver decision of policy 1 answered under policy 2"
    );
    avc.set_enforcing(true);
    assert!(avc.has_ioctl(s, t, c, IOCTL, 0x5402, None).is_err());
    assert!(avc.has_ioctl(s, t, c, IOCTL, 0x5401, None).is_ok());
}
