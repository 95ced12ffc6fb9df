//! The server behind the seams in `seaccess-types` that the access vector cache calls: its
//! questions (the kernel's avc.c calling security_compute_av and
//! security_compute_xperms_decision) and how it follows policy changes (avc_ss_reset).

use seaccess_types::{AvDecision, ClassId, Seqno, Sid, XpermsDecision};

use crate::error::SecurityError;
use crate::generation::Generation;
use crate::server::SecurityServer;
use crate::xperms::XpermKind;

fn server_error(e: SecurityError) -> seaccess_types::ServerError {
    match e {
        SecurityError::InvalidSid(s) => seaccess_types::ServerError::InvalidSid(s),
        SecurityError::InvalidClass(c) => seaccess_types::ServerError::InvalidClass(ClassId(c as u16)),
        other => seaccess_types::ServerError::Other(other.to_string()),
    }
}

/// One policy generation answers through the cache's seam too: what a change's prepare
/// listeners are given (see [`SecurityServer::on_policy_prepare`]).
impl seaccess_types::AccessServer for Generation {
    fn compute_av(&self, ssid: Sid, tsid: Sid, class: ClassId) -> std::result::Result<AvDecision, seaccess_types::ServerError> {
        Generation::compute_av(self, ssid, tsid, class).map_err(server_error)
    }

    fn xperm_drivers(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
    ) -> std::result::Result<(Option<[u32; 8]>, Seqno), seaccess_types::ServerError> {
        let d = self.ioctl_drivers(ssid, tsid, class).map_err(server_error)?;
        Ok((d, self.seqno))
    }

    fn compute_xperms(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        driver: u8,
    ) -> std::result::Result<(XpermsDecision, Seqno), seaccess_types::ServerError> {
        let x = Generation::compute_xperms(self, ssid, tsid, class, XpermKind::Ioctl, driver).map_err(server_error)?;
        Ok((x, self.seqno))
    }

    fn seqno(&self) -> Seqno {
        self.seqno
    }

    fn sid_to_context(&self, sid: Sid) -> Option<String> {
        Generation::sid_to_context(self, sid).ok()
    }

    fn class_name(&self, class: ClassId) -> Option<String> {
        Generation::class_name(self, class).ok().map(String::from)
    }

    fn perm_name(&self, class: ClassId, bit: u32) -> Option<String> {
        Generation::perm_name(self, class, bit).map(String::from)
    }

    fn policy_caps(&self) -> seaccess_types::PolicyCaps {
        Generation::policy_caps(self)
    }
}

/// How a cache follows the server's changes ([`SecurityServer::on_policy_prepare`] and
/// [`SecurityServer::on_policy_change`]).
impl seaccess_types::PolicyEvents for SecurityServer {
    fn on_policy_prepare(&self, f: seaccess_types::PrepareFn) -> seaccess_types::Registration {
        SecurityServer::on_policy_prepare(self, f)
    }

    fn on_policy_change(&self, f: seaccess_types::ChangeFn) -> seaccess_types::Registration {
        SecurityServer::on_policy_change(self, f)
    }
}

/// The seam the access vector cache calls through: the current generation's answers.
impl seaccess_types::AccessServer for SecurityServer {
    fn compute_av(&self, ssid: Sid, tsid: Sid, class: ClassId) -> std::result::Result<AvDecision, seaccess_types::ServerError> {
        seaccess_types::AccessServer::compute_av(&**self.current.load(), ssid, tsid, class)
    }

    fn xperm_drivers(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
    ) -> std::result::Result<(Option<[u32; 8]>, Seqno), seaccess_types::ServerError> {
        seaccess_types::AccessServer::xperm_drivers(&**self.current.load(), ssid, tsid, class)
    }

    fn compute_xperms(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        driver: u8,
    ) -> std::result::Result<(XpermsDecision, Seqno), seaccess_types::ServerError> {
        seaccess_types::AccessServer::compute_xperms(&**self.current.load(), ssid, tsid, class, driver)
    }

    fn seqno(&self) -> Seqno {
        self.current.load().seqno
    }

    fn sid_to_context(&self, sid: Sid) -> Option<String> {
        seaccess_types::AccessServer::sid_to_context(&**self.current.load(), sid)
    }

    fn class_name(&self, class: ClassId) -> Option<String> {
        seaccess_types::AccessServer::class_name(&**self.current.load(), class)
    }

    fn perm_name(&self, class: ClassId, bit: u32) -> Option<String> {
        seaccess_types::AccessServer::perm_name(&**self.current.load(), class, bit)
    }

    fn policy_caps(&self) -> seaccess_types::PolicyCaps {
        self.current.load().policy_caps()
    }
}
