//! A security server that parks one check inside compute_av, for the tests that change the
//! world under a check (relabel_during_check.rs, socket_grant.rs).

use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use seaccess_avc::Avc;
use seaccess_security::SecurityServer;
use seaccess_types::{
    AccessServer, AvDecision, ClassId, PolicyNames, Seqno, ServerError, Sid, XpermsDecision,
};

use super::Env;

/// No step of a run may take longer: a check that never parks or never comes back fails the
/// test instead of hanging it.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// The security server, with one trap: the first compute_av for the armed (source, target)
/// tells the test it is parked, then waits until the test lets it go.
pub struct Parking {
    inner: Arc<SecurityServer>,
    pub trap: Mutex<Option<Trap>>,
}

pub struct Trap {
    pub ssid: Sid,
    pub tsid: Sid,
    pub parked: Sender<()>,
    pub go: Receiver<()>,
}

impl AccessServer for Parking {
    fn compute_av(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<AvDecision, ServerError> {
        let trap = {
            let mut t = self.trap.lock().unwrap();
            if t.as_ref().is_some_and(|t| t.ssid == ssid && t.tsid == tsid) {
                t.take()
            } else {
                None
            }
        };
        if let Some(t) = trap {
            t.parked.send(()).unwrap();
            // On a timeout the check goes on; the test has failed already.
            let _ = t.go.recv_timeout(DEADLINE);
        }
        AccessServer::compute_av(&*self.inner, ssid, tsid, class)
    }
    fn xperm_drivers(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
    ) -> Result<(Option<[u32; 8]>, Seqno), ServerError> {
        AccessServer::xperm_drivers(&*self.inner, ssid, tsid, class)
    }
    fn compute_xperms(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        driver: u8,
    ) -> Result<(XpermsDecision, Seqno), ServerError> {
        AccessServer::compute_xperms(&*self.inner, ssid, tsid, class, driver)
    }
    fn seqno(&self) -> Seqno {
        AccessServer::seqno(&*self.inner)
    }
    fn names(&self) -> Arc<dyn PolicyNames> {
        AccessServer::names(&*self.inner)
    }
}

/// An object manager over the policy at `path` whose cache asks the parking server.
pub fn parking_env(path: &std::path::Path) -> (Env, Arc<Parking>) {
    let server = Arc::new(seaccess_testkit::load(path));
    let parking = Arc::new(Parking {
        inner: server.clone(),
        trap: Mutex::new(None),
    });
    let avc = Arc::new(Avc::new(parking.clone(), 512));
    avc.follow(&*server).keep();
    (Env::over(server, avc), parking)
}
