//! The enforcing-switch check every decision cache must pass (issue 9): a permission the policy
//! denies, granted in the cache while the system was permissive, is denied again, and audited
//! again, once the system is enforcing. One helper, so that the production cache, the lab's
//! comparison designs and any later fast path are held to the same sequence.

use std::sync::{Arc, Mutex};

use seaccess_types::{AccessVector, ClassId, Sid};

/// A decision cache with a global enforcing switch, as the helper drives it. Each check answers
/// whether access was allowed; audit records go to [`ModeSwitching::audit_records`].
pub trait ModeSwitching {
    fn set_enforcing(&self, enforcing: bool);
    fn has_perm(&self, s: Sid, t: Sid, c: ClassId, requested: AccessVector) -> bool;
    fn has_perm_noaudit(&self, s: Sid, t: Sid, c: ClassId, requested: AccessVector) -> bool;
    /// `requested` is the class's ioctl permission, `cmd` the command.
    fn has_ioctl(&self, s: Sid, t: Sid, c: ClassId, requested: AccessVector, cmd: u16) -> bool;
    /// Every audit record so far, oldest first.
    fn audit_records(&self) -> Vec<String>;
}

/// The production cache with its audit records collected.
pub struct RecordedAvc {
    pub avc: Arc<seaccess_avc::Avc>,
    log: Arc<Mutex<Vec<String>>>,
}

impl RecordedAvc {
    /// Takes over `avc`'s audit callback.
    pub fn new(avc: Arc<seaccess_avc::Avc>) -> RecordedAvc {
        let log = Arc::new(Mutex::new(Vec::new()));
        let l = log.clone();
        avc.set_audit_callback(move |rec| l.lock().unwrap().push(rec.to_string()));
        RecordedAvc { avc, log }
    }
}

impl ModeSwitching for RecordedAvc {
    fn set_enforcing(&self, enforcing: bool) {
        self.avc.set_enforcing(enforcing);
    }
    fn has_perm(&self, s: Sid, t: Sid, c: ClassId, requested: AccessVector) -> bool {
        self.avc.has_perm(s, t, c, requested, None).is_ok()
    }
    fn has_perm_noaudit(&self, s: Sid, t: Sid, c: ClassId, requested: AccessVector) -> bool {
        self.avc.has_perm_noaudit(s, t, c, requested).is_ok()
    }
    fn has_ioctl(&self, s: Sid, t: Sid, c: ClassId, requested: AccessVector, cmd: u16) -> bool {
        self.avc.has_ioctl(s, t, c, requested, cmd, None).is_ok()
    }
    fn audit_records(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

/// Which check path the sequence goes through.
#[derive(Copy, Clone, Debug)]
pub enum Check {
    Perm(AccessVector),
    /// Granted through has_perm_noaudit; has_perm of the same permission then shows whether
    /// the grant is held (a held grant is silent).
    NoAudit(AccessVector),
    /// The ioctl permission and a command.
    Ioctl(AccessVector, u16),
}

/// Runs, on a triple whose `check` the policy denies to a domain that is not permissive:
/// enforcing, denied; permissive, allowed (reported once, `permissive=1`, then granted in the
/// cache and silent); enforcing again, denied and reported again (`permissive=0`).
/// `audited` says whether the policy audits the denial (derived by the caller from the
/// security server: auditdeny, dontauditx).
pub fn assert_switch_revokes_permissive_grants(
    cache: &dyn ModeSwitching,
    (s, t, c): (Sid, Sid, ClassId),
    check: Check,
    audited: bool,
) {
    let run = |audit: bool| -> (bool, Vec<String>) {
        let before = cache.audit_records().len();
        let ok = match check {
            Check::Perm(p) => cache.has_perm(s, t, c, p),
            Check::NoAudit(p) if audit => cache.has_perm(s, t, c, p),
            Check::NoAudit(p) => cache.has_perm_noaudit(s, t, c, p),
            Check::Ioctl(p, cmd) => cache.has_ioctl(s, t, c, p, cmd),
        };
        (ok, cache.audit_records().split_off(before))
    };
    let audits = !matches!(check, Check::NoAudit(_));
    let expect_record = |recs: &[String], permissive: u8, step: &str| {
        if audited {
            assert_eq!(
                recs.len(),
                1,
                "{check:?} {step}: one audit record expected, got {recs:?}"
            );
            let r = &recs[0];
            assert!(r.starts_with("avc:  denied  {"), "{check:?} {step}: {r}");
            assert!(
                r.ends_with(&format!("permissive={permissive}")),
                "{check:?} {step}: {r}"
            );
            if let Check::Ioctl(_, cmd) = check {
                assert!(
                    r.contains(&format!("ioctlcmd={cmd:#x}")),
                    "{check:?} {step}: {r}"
                );
            }
        } else {
            assert!(
                recs.is_empty(),
                "{check:?} {step}: a dontaudit'ed denial was logged: {recs:?}"
            );
        }
    };

    cache.set_enforcing(true);
    let (ok, recs) = run(audits);
    assert!(
        !ok,
        "{check:?}: allowed while enforcing, before any permissive grant"
    );
    if audits {
        expect_record(&recs, 0, "enforcing");
    }

    cache.set_enforcing(false);
    let (ok, recs) = run(false);
    assert!(ok, "{check:?}: denied in permissive mode");
    if audits {
        expect_record(&recs, 1, "permissive");
    } else {
        assert!(
            recs.is_empty(),
            "{check:?}: has_perm_noaudit logged {recs:?}"
        );
    }
    // The grant is held: the same check is now silent (the denial is reported once).
    let (ok, recs) = run(true);
    assert!(ok, "{check:?}: denied in permissive mode, second time");
    assert!(
        recs.is_empty(),
        "{check:?}: the permissive grant was not recorded in the cache: {recs:?}"
    );

    cache.set_enforcing(true);
    let (ok, recs) = run(false);
    assert!(
        !ok,
        "{check:?}: a grant made in permissive mode survived the switch to enforcing"
    );
    if audits {
        expect_record(&recs, 0, "enforcing again");
    }
    let (ok, recs) = run(true);
    assert!(
        !ok,
        "{check:?}: allowed in enforcing mode after the switch back"
    );
    expect_record(&recs, 0, "enforcing again, audited");
}
