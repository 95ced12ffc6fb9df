//! What the socket and process hook tests add to fs_support's set-up: variants of
//! testdata/policies/objmgr-net.cil, tasks by pid, comm and context, and the kernel-format
//! audit records split into the fields the tables compare.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_objmgr::{Cred, Task};

pub use crate::fs_support::{env_at, Env};

/// objmgr-net.cil compiled with only the lines `keep` keeps, under `label` (one compiled
/// file per variant).
pub fn net_variant(label: &str, keep: fn(&str) -> Option<String>) -> std::path::PathBuf {
    seaccess_testkit::compile_variant("objmgr-net", label, 33, move |s| {
        s.lines().filter_map(keep).collect::<Vec<_>>().join("\n")
    })
}

/// The socket and process tables' view of the shared test set-up.
pub trait NetEnv {
    /// A task `pid` named `comm` acting as `ctx`.
    fn task_as(&self, pid: u32, comm: &str, ctx: &str) -> Task;
    /// The records written since the last call, split.
    fn records(&self) -> Vec<Rec>;
}

impl NetEnv for Env {
    fn task_as(&self, pid: u32, comm: &str, ctx: &str) -> Task {
        Task::new(pid, comm, Cred::new(self.sid(ctx)))
    }
    fn records(&self) -> Vec<Rec> {
        self.take().iter().map(|r| parse(r)).collect()
    }
}

#[derive(Debug, PartialEq, Eq)]
pub struct Rec {
    pub verdict: String,
    pub class: String,
    pub perms: String,
    pub scontext: String,
    pub tcontext: String,
    pub fields: String,
}

/// Splits a kernel-format record: `avc:  V  { perms } for  pid=N comm="c"[ fields] scontext=S
/// tcontext=T tclass=C[ permissive=P]`.
pub fn parse(r: &str) -> Rec {
    let verdict = r.split_whitespace().nth(1).unwrap().to_string();
    let perms = r[r.find("{ ").unwrap() + 2..r.find(" }").unwrap()].to_string();
    let after_comm = &r[r.find(" comm=").unwrap() + 6..];
    let after_comm = &after_comm[after_comm.find(' ').unwrap()..];
    let sc = after_comm.find(" scontext=").unwrap();
    let fields = after_comm[..sc].trim().to_string();
    let mut it = after_comm[sc..].split_whitespace();
    let val = |s: Option<&str>, k: &str| s.unwrap().strip_prefix(k).unwrap().to_string();
    let scontext = val(it.next(), "scontext=");
    let tcontext = val(it.next(), "tcontext=");
    let class = val(it.next(), "tclass=");
    Rec {
        verdict,
        class,
        perms,
        scontext,
        tcontext,
        fields,
    }
}

/// The record of a grant of `perms` (auditallow'ed, as the test policy does everything).
pub fn rec(class: &str, perms: &str, s: &str, t: &str, fields: &str) -> Rec {
    Rec {
        verdict: "granted".into(),
        class: class.into(),
        perms: perms.into(),
        scontext: s.into(),
        tcontext: t.into(),
        fields: fields.into(),
    }
}
