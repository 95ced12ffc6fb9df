//! fork: a child forked while another thread is inside a reload, a boolean commit or a batch
//! (the calls that release the interpreter) finds no lock of seaccess held, as the C library's
//! child does (crates/capi/src/fork.rs). Without this, a child forked during another thread's
//! reload waited forever at its own first reload (tests/test_fork.py: 5 hung children in 100).
//!
//! `os.register_at_fork` hooks, registered when the module is imported: `before` holds every
//! lock of every live policy's security server and of every live cache (the servers' first, in
//! the order every path nests them); the parent's hook releases them; the child's repairs what
//! a thread of the parent left half done (`seaccess_security::ForkGuard::child`,
//! `seaccess_avc::ForkGuard::child`) and releases them. The hooks run with the interpreter
//! held and no thread holding one of these locks waits for it, so `before` cannot deadlock.

use std::cell::RefCell;
use std::sync::{Arc, Mutex, Weak};

use pyo3::prelude::*;
use pyo3::types::PyDict;
use seaccess_avc::Avc;
use seaccess_engine::Engine;
use seaccess_security::SecurityServer;

/// The servers and caches of the engines made so far (dead ones pruned at each registration).
static LIVE: Mutex<Vec<(Weak<SecurityServer>, Weak<Avc>)>> = Mutex::new(Vec::new());

/// Puts `engine`'s server and cache under the fork hooks.
pub(crate) fn register(engine: &Engine) {
    let mut live = seaccess_types::lock(&LIVE);
    live.retain(|(s, a)| s.strong_count() > 0 || a.strong_count() > 0);
    live.push((
        Arc::downgrade(engine.server()),
        Arc::downgrade(engine.avc()),
    ));
}

/// What `before` holds: the live servers and caches, each once.
struct Owners {
    servers: Vec<Arc<SecurityServer>>,
    avcs: Vec<Arc<Avc>>,
}

/// Their locks. Fields drop in declaration order: the reverse of taking.
struct Guards<'a> {
    /// The statistics stripes' free list: the process's, taken once, after every cache's guard
    /// (each cache's guard taking it would wait on the first).
    _stripes: std::sync::MutexGuard<'static, Vec<usize>>,
    avcs: Vec<seaccess_avc::ForkGuard<'a>>,
    servers: Vec<seaccess_security::ForkGuard<'a>>,
}

self_cell::self_cell!(
    /// The locks with what they lock, from `before` to the parent's or the child's hook.
    struct Held {
        owner: Owners,
        #[not_covariant]
        dependent: Guards,
    }
);

thread_local! {
    /// The hooks of one fork run on the forking thread (the child's only thread is its copy).
    static HELD: RefCell<Option<Held>> = const { RefCell::new(None) };
}

fn owners() -> Owners {
    let live = seaccess_types::lock(&LIVE);
    let mut o = Owners {
        servers: Vec::new(),
        avcs: Vec::new(),
    };
    for (s, a) in live.iter() {
        if let Some(s) = s.upgrade() {
            if !o.servers.iter().any(|x| Arc::ptr_eq(x, &s)) {
                o.servers.push(s);
            }
        }
        if let Some(a) = a.upgrade() {
            if !o.avcs.iter().any(|x| Arc::ptr_eq(x, &a)) {
                o.avcs.push(a);
            }
        }
    }
    o
}

#[pyfunction]
fn _seaccess_fork_before() {
    let held = Held::new(owners(), |o| {
        let servers = o.servers.iter().map(|s| s.fork_guard()).collect();
        let avcs = o.avcs.iter().map(|a| a.fork_guard()).collect();
        Guards {
            _stripes: seaccess_avc::stripe::hold(),
            avcs,
            servers,
        }
    });
    HELD.with(|h| *h.borrow_mut() = Some(held));
}

fn take() -> Option<Held> {
    HELD.with(|h| h.borrow_mut().take())
}

#[pyfunction]
fn _seaccess_fork_parent() {
    drop(take());
}

#[pyfunction]
fn _seaccess_fork_child() {
    if let Some(mut held) = take() {
        held.with_dependent_mut(|_, g| {
            for a in g.avcs.drain(..) {
                a.child();
            }
            for s in g.servers.drain(..) {
                s.child();
            }
        });
    }
}

/// Registers the hooks with `os.register_at_fork`.
pub(crate) fn install(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let hooks = PyDict::new(py);
    hooks.set_item("before", wrap_pyfunction!(_seaccess_fork_before, m)?)?;
    hooks.set_item(
        "after_in_parent",
        wrap_pyfunction!(_seaccess_fork_parent, m)?,
    )?;
    hooks.set_item("after_in_child", wrap_pyfunction!(_seaccess_fork_child, m)?)?;
    py.import("os")?
        .call_method("register_at_fork", (), Some(&hooks))?;
    Ok(())
}
