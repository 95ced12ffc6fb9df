//! What the file-side hook tests share: an object manager over a test policy, tasks by
//! context, and the audit records split into class and permissions.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod parking;

use std::sync::{Arc, Mutex};

use seaccess_avc::Avc;
use seaccess_objmgr::{Cred, ObjectManager, Task};
use seaccess_security::SecurityServer;
use seaccess_types::Sid;

pub struct Env {
    pub server: Arc<SecurityServer>,
    pub avc: Arc<Avc>,
    pub om: ObjectManager,
    pub log: Arc<Mutex<Vec<String>>>,
}

/// The project's file-hook test policy (testdata/policies/objmgr-files.cil), version 33.
pub fn files_policy() -> std::path::PathBuf {
    seaccess_testkit::compile("objmgr-files", 33)
}

pub fn env_at(path: &std::path::Path) -> Env {
    let (server, avc) = seaccess_testkit::server_with_avc(path, 512);
    Env::over(server, avc)
}

pub fn env() -> Env {
    env_at(&files_policy())
}

impl Env {
    /// An object manager over `server` and `avc` (which may ask another server: a wrapped
    /// one), with the cache's records kept.
    pub fn over(server: Arc<SecurityServer>, avc: Arc<Avc>) -> Env {
        let om = ObjectManager::new(server.clone(), &*server, avc.clone());
        let log = seaccess_testkit::audit_recorder(&avc);
        Env {
            server,
            avc,
            om,
            log,
        }
    }

    pub fn sid(&self, ctx: &str) -> Sid {
        self.server
            .context_to_sid(ctx)
            .unwrap_or_else(|e| panic!("{ctx}: {e}"))
    }

    pub fn ctx(&self, sid: Sid) -> String {
        self.server.sid_to_context(sid).unwrap()
    }

    /// A task (pid 42, comm "svc") acting as `ctx`.
    pub fn task(&self, ctx: &str) -> Task {
        Task::new(42, "svc", Cred::new(self.sid(ctx)))
    }

    /// The records written since the last call.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }

    /// The records written since the last call, each as "tclass {perms}" with its verdict.
    pub fn asked(&self) -> Vec<String> {
        self.take().iter().map(|r| summary(r)).collect()
    }
}

/// "granted dir {search add_name}" from an AVC record; other records as they are.
pub fn summary(rec: &str) -> String {
    let verdict = if rec.starts_with("avc:  granted") {
        "granted"
    } else if rec.starts_with("avc:  denied") {
        "denied"
    } else {
        return rec.to_string();
    };
    let perms = rec
        .split_once("{ ")
        .and_then(|(_, r)| r.split_once(" }"))
        .map(|(p, _)| p)
        .unwrap_or("?");
    let class = rec
        .split(' ')
        .find_map(|f| f.strip_prefix("tclass="))
        .unwrap_or("?");
    format!("{verdict} {class} {{{perms}}}")
}

pub const DIR: u32 = 0o040755;
pub const REG: u32 = 0o100644;
pub const LNK: u32 = 0o120777;
