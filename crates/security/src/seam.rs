//! The server behind the seams in `seaccess-types` that the access vector cache calls: its
//! questions (the kernel's avc.c calling security_compute_av and
//! security_compute_xperms_decision) and how it follows policy changes (avc_ss_reset).

use std::sync::Arc;

use seaccess_types::{AvDecision, ClassId, PolicyNames, Seqno, Sid, XpermsDecision};

use crate::error::SecurityError;
use crate::generation::Generation;
use crate::server::SecurityServer;
use crate::xperms::XpermKind;

fn server_error(e: SecurityError) -> seaccess_types::ServerError {
    match e {
        SecurityError::InvalidSid(s) => seaccess_types::ServerError::InvalidSid(s),
        SecurityError::InvalidClass(c) => {
            seaccess_types::ServerError::InvalidClass(ClassId(c as u16))
        }
        other => seaccess_types::ServerError::Other(other.to_string()),
    }
}

/// One policy generation answers through the cache's seam too: what a change's prepare
/// listeners are given (see [`SecurityServer::on_policy_prepare`]).
impl seaccess_types::AccessServer for Generation {
    fn compute_av(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
    ) -> std::result::Result<AvDecision, seaccess_types::ServerError> {
        Generation::compute_av(self, ssid, tsid, class).map_err(server_error)
    }

    fn xperm_drivers(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
    ) -> std::result::Result<(Option<[u32; 8]>, Seqno), seaccess_types::ServerError> {
        let d = self
            .ioctl_drivers(ssid, tsid, class)
            .map_err(server_error)?;
        Ok((d, self.seqno))
    }

    fn compute_xperms(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        driver: u8,
    ) -> std::result::Result<(XpermsDecision, Seqno), seaccess_types::ServerError> {
        let x = Generation::compute_xperms(self, ssid, tsid, class, XpermKind::Ioctl, driver)
            .map_err(server_error)?;
        Ok((x, self.seqno))
    }

    fn nlmsg_drivers(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
    ) -> std::result::Result<(Option<[u32; 8]>, Seqno), seaccess_types::ServerError> {
        let d = self
            .nlmsg_drivers(ssid, tsid, class)
            .map_err(server_error)?;
        Ok((d, self.seqno))
    }

    fn compute_nlmsg_xperms(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        driver: u8,
    ) -> std::result::Result<(XpermsDecision, Seqno), seaccess_types::ServerError> {
        let x = Generation::compute_xperms(self, ssid, tsid, class, XpermKind::Nlmsg, driver)
            .map_err(server_error)?;
        Ok((x, self.seqno))
    }

    fn seqno(&self) -> Seqno {
        self.seqno
    }

    fn names(&self) -> Arc<dyn PolicyNames> {
        Arc::new(self.share())
    }
}

/// A generation's names are its own: every number and name it gives is of its seqno.
impl PolicyNames for Generation {
    fn seqno(&self) -> Seqno {
        self.seqno
    }

    fn class_id(&self, name: &str) -> Option<ClassId> {
        Generation::class(self, name).ok()
    }

    fn perm_bit(&self, class: ClassId, name: &str) -> Option<u32> {
        Generation::perms(self, class, &[name])
            .ok()
            .and_then(|v| v.bits().next())
    }

    fn class_name(&self, class: ClassId) -> Option<String> {
        Generation::class_name(self, class).ok().map(String::from)
    }

    fn perm_name(&self, class: ClassId, bit: u32) -> Option<String> {
        Generation::perm_name(self, class, bit).map(String::from)
    }

    fn sid_to_context(&self, sid: Sid) -> Option<String> {
        Generation::sid_to_context(self, sid).ok()
    }

    fn sid_to_context_inval(&self, sid: Sid) -> Option<String> {
        Generation::sid_to_context_inval(self, sid)
    }

    fn policy_caps(&self) -> seaccess_types::PolicyCaps {
        Generation::policy_caps(self)
    }

    fn handle_unknown(&self) -> seaccess_types::HandleUnknown {
        Generation::handle_unknown(self)
    }
}

/// What object managers ask of one generation besides decisions.
impl seaccess_types::LabelServer for Generation {
    fn context_to_sid(
        &self,
        context: &str,
    ) -> std::result::Result<Sid, seaccess_types::ServerError> {
        Generation::context_to_sid(self, context).map_err(server_error)
    }

    fn context_to_sid_force(
        &self,
        context: &str,
    ) -> std::result::Result<Sid, seaccess_types::ServerError> {
        Generation::context_to_sid_force(self, context).map_err(server_error)
    }

    fn initial_sid(&self, n: u32) -> Option<Sid> {
        Generation::initial_sid(self, n)
    }

    fn transition_sid(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        name: Option<&str>,
    ) -> std::result::Result<Sid, seaccess_types::ServerError> {
        self.compute_create(ssid, tsid, class, name)
            .map_err(server_error)
    }

    fn member_sid(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
    ) -> std::result::Result<Sid, seaccess_types::ServerError> {
        self.compute_member(ssid, tsid, class).map_err(server_error)
    }

    fn validate_transition(
        &self,
        old: Sid,
        new: Sid,
        task: Sid,
        class: ClassId,
    ) -> std::result::Result<bool, seaccess_types::ServerError> {
        match Generation::validate_transition(self, old, new, task, class) {
            Ok(()) => Ok(true),
            Err(SecurityError::TransitionDenied { .. }) => Ok(false),
            Err(e) => Err(server_error(e)),
        }
    }

    fn bounded_transition(
        &self,
        old: Sid,
        new: Sid,
    ) -> std::result::Result<bool, seaccess_types::ServerError> {
        Generation::bounded_transition(self, old, new).map_err(server_error)
    }

    fn fs_use(&self, fstype: &str) -> Option<(seaccess_types::FsUse, Sid)> {
        let (b, sid) = Generation::fs_use(self, fstype)?;
        let b = match b {
            crate::FsUseBehavior::Xattr => seaccess_types::FsUse::Xattr,
            crate::FsUseBehavior::Trans => seaccess_types::FsUse::Trans,
            crate::FsUseBehavior::Task => seaccess_types::FsUse::Task,
            crate::FsUseBehavior::Native => seaccess_types::FsUse::Native,
            crate::FsUseBehavior::Genfs
            | crate::FsUseBehavior::None
            | crate::FsUseBehavior::Unspecified => seaccess_types::FsUse::Other,
        };
        Some((b, sid))
    }

    fn genfs_sid(&self, fstype: &str, path: &str, class: ClassId) -> Option<Sid> {
        Generation::genfs_sid(self, fstype, path, class)
    }

    fn port_sid(&self, protocol: u8, port: u16) -> Sid {
        Generation::port_sid(self, protocol, port)
    }

    fn node_sid(&self, addr: std::net::IpAddr) -> Sid {
        Generation::node_sid(self, addr)
    }

    fn netif_sid(&self, name: &str) -> Sid {
        Generation::netif_sid(self, name)
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

/// The seam the access vector cache calls through: the current generation's answers, each
/// with its seqno, and the current generation itself as the names (one load: its numbers and
/// names are all of one seqno).
impl seaccess_types::AccessServer for SecurityServer {
    fn compute_av(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
    ) -> std::result::Result<AvDecision, seaccess_types::ServerError> {
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
        seaccess_types::AccessServer::compute_xperms(
            &**self.current.load(),
            ssid,
            tsid,
            class,
            driver,
        )
    }

    fn nlmsg_drivers(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
    ) -> std::result::Result<(Option<[u32; 8]>, Seqno), seaccess_types::ServerError> {
        seaccess_types::AccessServer::nlmsg_drivers(&**self.current.load(), ssid, tsid, class)
    }

    fn compute_nlmsg_xperms(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        driver: u8,
    ) -> std::result::Result<(XpermsDecision, Seqno), seaccess_types::ServerError> {
        seaccess_types::AccessServer::compute_nlmsg_xperms(
            &**self.current.load(),
            ssid,
            tsid,
            class,
            driver,
        )
    }

    fn seqno(&self) -> Seqno {
        self.current.load().seqno
    }

    fn names(&self) -> Arc<dyn PolicyNames> {
        self.current.load_full()
    }
}

/// What object managers ask of the current generation besides decisions.
impl seaccess_types::LabelServer for SecurityServer {
    fn context_to_sid(
        &self,
        context: &str,
    ) -> std::result::Result<Sid, seaccess_types::ServerError> {
        seaccess_types::LabelServer::context_to_sid(&**self.current.load(), context)
    }

    fn context_to_sid_force(
        &self,
        context: &str,
    ) -> std::result::Result<Sid, seaccess_types::ServerError> {
        seaccess_types::LabelServer::context_to_sid_force(&**self.current.load(), context)
    }

    fn initial_sid(&self, n: u32) -> Option<Sid> {
        seaccess_types::LabelServer::initial_sid(&**self.current.load(), n)
    }

    /// Initial SID `n` is always `Sid(n)` here (ocontext.rs: dynamic SIDs start past the
    /// initial ones), so any other SID is answered without loading the generation.
    fn is_initial_sid(&self, sid: Sid, n: u32) -> bool {
        sid.0 == n
            && seaccess_types::LabelServer::initial_sid(&**self.current.load(), n) == Some(sid)
    }

    fn initial_sids_numbered(&self) -> bool {
        true
    }

    fn transition_sid(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        name: Option<&str>,
    ) -> std::result::Result<Sid, seaccess_types::ServerError> {
        seaccess_types::LabelServer::transition_sid(&**self.current.load(), ssid, tsid, class, name)
    }

    fn member_sid(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
    ) -> std::result::Result<Sid, seaccess_types::ServerError> {
        seaccess_types::LabelServer::member_sid(&**self.current.load(), ssid, tsid, class)
    }

    fn validate_transition(
        &self,
        old: Sid,
        new: Sid,
        task: Sid,
        class: ClassId,
    ) -> std::result::Result<bool, seaccess_types::ServerError> {
        seaccess_types::LabelServer::validate_transition(
            &**self.current.load(),
            old,
            new,
            task,
            class,
        )
    }

    fn bounded_transition(
        &self,
        old: Sid,
        new: Sid,
    ) -> std::result::Result<bool, seaccess_types::ServerError> {
        seaccess_types::LabelServer::bounded_transition(&**self.current.load(), old, new)
    }

    fn fs_use(&self, fstype: &str) -> Option<(seaccess_types::FsUse, Sid)> {
        seaccess_types::LabelServer::fs_use(&**self.current.load(), fstype)
    }

    fn genfs_sid(&self, fstype: &str, path: &str, class: ClassId) -> Option<Sid> {
        seaccess_types::LabelServer::genfs_sid(&**self.current.load(), fstype, path, class)
    }

    fn port_sid(&self, protocol: u8, port: u16) -> Sid {
        seaccess_types::LabelServer::port_sid(&**self.current.load(), protocol, port)
    }

    fn node_sid(&self, addr: std::net::IpAddr) -> Sid {
        seaccess_types::LabelServer::node_sid(&**self.current.load(), addr)
    }

    fn netif_sid(&self, name: &str) -> Sid {
        seaccess_types::LabelServer::netif_sid(&**self.current.load(), name)
    }
}
