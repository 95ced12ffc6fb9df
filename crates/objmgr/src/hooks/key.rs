//! Key hooks: the kernel's keyrings (hooks.c, selinux_key_*), with the key's blob. A userspace
//! kernel keeping keyrings for its tasks (keyctl, add_key, request_key) labels and checks its
//! keys with these.

use seaccess_types::Sid;

use crate::audit::AuditData;
use crate::classes::{key, Class};
use crate::counters::Hook;
use crate::cred::{Cred, Task};
use crate::error::{ObjmgrError, Result};
use crate::ObjectManager;

/// A key's blob (key_security_struct).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeySec {
    pub sid: Sid,
}

/// What a key operation needs (the kernel's enum key_need_perm, in its order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyNeed {
    Unspecified,
    View,
    Read,
    Write,
    Search,
    Link,
    Setattr,
    Unlink,
    /// An override by CAP_SYS_ADMIN, checked by the capability hook instead.
    SysadminOverride,
    /// An override by possession of an authorisation token.
    AuthtokenOverride,
    /// A check deferred to the operation.
    DeferPermCheck,
}

impl KeyNeed {
    /// The kernel's value (KEY_NEED_UNSPECIFIED is 0), or None for a number it does not have.
    pub fn from_raw(n: u32) -> Option<KeyNeed> {
        use KeyNeed::*;
        [
            Unspecified,
            View,
            Read,
            Write,
            Search,
            Link,
            Setattr,
            Unlink,
            SysadminOverride,
            AuthtokenOverride,
            DeferPermCheck,
        ]
        .get(usize::try_from(n).ok()?)
        .copied()
    }
}

impl ObjectManager {
    /// A new key made with credential `cred` (selinux_key_alloc): its keycreate SID
    /// (setkeycreatecon) if it has one, else its SID. No check. The keycreate SID is a
    /// parameter while [`Cred`] does not carry it.
    pub fn key_alloc(&self, cred: &Cred, keycreate_sid: Option<Sid>) -> KeySec {
        KeySec {
            sid: keycreate_sid
                .filter(|s| *s != Sid::NULL)
                .unwrap_or(cred.sid()),
        }
    }

    /// An operation needing `need` on `k`, with credential `cred` (selinux_key_permission;
    /// `cred` is usually the task's own): `key {view}`, `{read}`, `{write}`, `{search}`, `{link}` or
    /// `{setattr}` from the credential's SID, with no audit data. Unlink and the three
    /// overrides ask nothing (the keyring's write and the capability hook decide them); an
    /// unspecified need is refused with EPERM, as the kernel's WARN does.
    pub fn key_permission(
        &self,
        task: &Task,
        cred: &Cred,
        k: &KeySec,
        need: KeyNeed,
    ) -> Result<()> {
        let perm = match need {
            KeyNeed::View => key::VIEW,
            KeyNeed::Read => key::READ,
            KeyNeed::Write => key::WRITE,
            KeyNeed::Search => key::SEARCH,
            KeyNeed::Link => key::LINK,
            KeyNeed::Setattr => key::SETATTR,
            KeyNeed::Unlink
            | KeyNeed::SysadminOverride
            | KeyNeed::AuthtokenOverride
            | KeyNeed::DeferPermCheck => return Ok(()),
            KeyNeed::Unspecified => {
                return Err(ObjmgrError::NotPermitted(
                    "a key permission with no need given".into(),
                ))
            }
        };
        self.check_sid(
            Hook::KeyPermission,
            task,
            cred.sid(),
            k.sid,
            Class::KEY,
            perm,
            &AuditData::None,
        )
        .map(|_| ())
    }

    /// keyctl(KEYCTL_GET_SECURITY) (selinux_key_getsecurity): the key's context text. No check.
    pub fn key_getsecurity(&self, k: &KeySec) -> Result<String> {
        self.context_of(k.sid)
    }

    /// keyctl(KEYCTL_WATCH_KEY) (selinux_watch_key): `key {view}` from the task's SID.
    pub fn watch_key(&self, task: &Task, k: &KeySec) -> Result<()> {
        self.check(
            Hook::WatchKey,
            task,
            k.sid,
            Class::KEY,
            key::VIEW,
            &AuditData::None,
        )
        .map(|_| ())
    }
}
