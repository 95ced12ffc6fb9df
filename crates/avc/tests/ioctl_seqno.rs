//! An ioctl check answers from one policy generation: its base decision, its driver map and its
//! driver decision all of one seqno, even when the security server moves to a new policy
//! between them before announcing it (issue 8, item 12).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::Arc;

use seaccess_avc::{Avc, AvcError};
use seaccess_types::*;

mod common;

const IOCTL: AccessVector = AccessVector(1);
const CMD: u16 = 0x5401;

/// Policy 1 allows the ioctl permission and has rules for driver 0x54 allowing no command;
/// policy 2 denies the ioctl permission and its driver 0x54 rules allow every command. Either
/// policy denies `CMD`; only a check mixing policy 1's base decision with policy 2's driver
/// decision would allow it.
struct TwoPolicies {
    seqno: AtomicU32,
}

fn drivers() -> [u32; 8] {
    let mut d = [0u32; 8];
    d[0x54 >> 5] |= 1 << (0x54 & 31);
    d
}

impl AccessServer for TwoPolicies {
    fn compute_av(&self, _: Sid, _: Sid, _: ClassId) -> Result<AvDecision, ServerError> {
        let s = self.seqno.load(SeqCst);
        let allowed = if s == 1 { IOCTL } else { AccessVector::NONE };
        Ok(AvDecision {
            allowed,
            ..AvDecision::deny_all(Seqno(s))
        })
    }
    fn xperm_drivers(
        &self,
        _: Sid,
        _: Sid,
        _: ClassId,
    ) -> Result<(Option<[u32; 8]>, Seqno), ServerError> {
        Ok((Some(drivers()), Seqno(self.seqno.load(SeqCst))))
    }
    fn compute_xperms(
        &self,
        _: Sid,
        _: Sid,
        _: ClassId,
        driver: u8,
    ) -> Result<(XpermsDecision, Seqno), ServerError> {
        let s = self.seqno.load(SeqCst);
        let allowed = if s == 1 { [0; 8] } else { [u32::MAX; 8] };
        Ok((
            XpermsDecision {
                driver,
                allowed,
                ..Default::default()
            },
            Seqno(s),
        ))
    }
    fn seqno(&self) -> Seqno {
        Seqno(self.seqno.load(SeqCst))
    }
    fn names(&self) -> Arc<dyn PolicyNames> {
        common::names(self.seqno(), "chr_file", Some("ioctl"))
    }
}

#[test]
fn base_decision_and_driver_decision_come_from_one_policy() {
    let server = Arc::new(TwoPolicies {
        seqno: AtomicU32::new(1),
    });
    let dynserver: Arc<dyn AccessServer> = server.clone();
    let avc = Avc::new(dynserver, 64);
    let (s, t, c) = (Sid(1), Sid(2), ClassId(1));
    // Policy 1's base decision is cached; then policy 2 is in place, not yet announced.
    assert_eq!(avc.decide(s, t, c).unwrap().seqno, Seqno(1));
    server.seqno.store(2, SeqCst);
    assert_eq!(
        avc.has_ioctl(s, t, c, IOCTL, CMD, None),
        Err(AvcError::Denied { denied: IOCTL })
    );
    // And once announced, policy 2 answers alone.
    avc.policy_changed(Seqno(2));
    assert_eq!(
        avc.has_ioctl(s, t, c, IOCTL, CMD, None),
        Err(AvcError::Denied { denied: IOCTL })
    );
}
