//! Who is told of policy changes, and how: registrations that end when their handle is dropped,
//! and change notifications delivered outside every server lock, in publication order, each
//! seqno once, by one thread at a time (a change made by a listener is queued and delivered
//! after the one being delivered).

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};

use seaccess_types::{AccessServer, Registration, Seqno};

use crate::server::lock;

type Prepare = Arc<dyn Fn(&dyn AccessServer) + Send + Sync>;
type Change = Arc<dyn Fn(Seqno) + Send + Sync>;

thread_local! {
    /// This thread is running change listeners: a change it makes is delivered by the loop
    /// already running below it on the stack, after the current notification.
    static DELIVERING: Cell<bool> = const { Cell::new(false) };
}

/// Whether the calling thread is inside a change listener.
pub(crate) fn delivering() -> bool {
    DELIVERING.with(Cell::get)
}

#[derive(Default)]
struct Queue {
    seqnos: VecDeque<Seqno>,
    /// A thread is delivering a notification now.
    busy: bool,
}

#[derive(Default)]
pub(crate) struct Listeners {
    next_id: AtomicU64,
    prepare: Mutex<Vec<(u64, Prepare)>>,
    change: Mutex<Vec<(u64, Change)>>,
    queue: Mutex<Queue>,
    /// Signalled when a delivery ends.
    idle: Condvar,
}

impl Listeners {
    fn id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn add_prepare(self: &Arc<Self>, f: Prepare) -> Registration {
        let id = self.id();
        lock(&self.prepare).push((id, f));
        let weak = Arc::downgrade(self);
        Registration::new(move || remove(&weak, |l| &l.prepare, id))
    }

    pub(crate) fn add_change(self: &Arc<Self>, f: Change) -> Registration {
        let id = self.id();
        lock(&self.change).push((id, f));
        let weak = Arc::downgrade(self);
        Registration::new(move || remove(&weak, |l| &l.change, id))
    }

    /// How many listeners are registered: (prepare, change).
    pub(crate) fn count(&self) -> (usize, usize) {
        (lock(&self.prepare).len(), lock(&self.change).len())
    }

    /// Runs the prepare listeners registered now. Called with the server's change lock held, so
    /// that every generation a listener prepares is the one published with that seqno.
    pub(crate) fn prepare(&self, next: &dyn AccessServer) {
        let fs: Vec<Prepare> = lock(&self.prepare).iter().map(|(_, f)| f.clone()).collect();
        for f in fs {
            f(next);
        }
    }

    /// Queues the notification of a published seqno. Called in publication order.
    pub(crate) fn queue(&self, seqno: Seqno) {
        lock(&self.queue).seqnos.push_back(seqno);
    }

    /// Whether no notification is queued or being delivered.
    pub(crate) fn is_idle(&self) -> bool {
        let q = lock(&self.queue);
        !q.busy && q.seqnos.is_empty()
    }

    /// Returns once every queued notification has been delivered, delivering them itself if
    /// no other thread is.
    pub(crate) fn wait_idle(&self) {
        let mut q = lock(&self.queue);
        while q.busy || !q.seqnos.is_empty() {
            if !q.busy {
                // Nobody is delivering what is queued: deliver it here.
                drop(q);
                self.deliver();
                q = lock(&self.queue);
                continue;
            }
            q = match self.idle.wait(q) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
        }
    }

    /// Delivers queued notifications until none is left, unless another thread is delivering
    /// (it will deliver them) or this thread is (its loop further down the stack will).
    pub(crate) fn deliver(&self) {
        if delivering() {
            return;
        }
        loop {
            let seqno = {
                let mut q = lock(&self.queue);
                if q.busy {
                    return;
                }
                let Some(s) = q.seqnos.pop_front() else { return };
                q.busy = true;
                s
            };
            DELIVERING.with(|d| d.set(true));
            let _busy = Busy(self);
            let fs: Vec<Change> = lock(&self.change).iter().map(|(_, f)| f.clone()).collect();
            for f in fs {
                f(seqno);
            }
        }
    }
}

/// Marks a delivery running on this thread; ends it (even if a listener panics) when dropped.
struct Busy<'a>(&'a Listeners);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        DELIVERING.with(|d| d.set(false));
        lock(&self.0.queue).busy = false;
        self.0.idle.notify_all();
    }
}

fn remove<T>(weak: &Weak<Listeners>, list: impl Fn(&Listeners) -> &Mutex<Vec<(u64, T)>>, id: u64) {
    if let Some(l) = weak.upgrade() {
        lock(list(&l)).retain(|(i, _)| *i != id);
    }
}
