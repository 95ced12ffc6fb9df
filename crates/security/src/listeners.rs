//! Who is told of policy changes, and how: registrations that end when their handle is dropped,
//! and change notifications delivered outside every server lock, in publication order, each
//! seqno once, by one thread at a time (a change made by a listener is queued and delivered
//! after the one being delivered). Listeners of one notification run in registration order.
//!
//! Across a fork (`SecurityServer::fork_guard`): a notification another thread was delivering
//! at the fork is delivered again, in full, in the child, at its next change; so a listener in
//! a child may be told of one seqno twice, never of none.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};

use seaccess_types::lock::wait;
use seaccess_types::{lock, AccessServer, Registration, Seqno};

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
    /// The seqno being delivered while `busy`.
    current: Option<Seqno>,
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
            q = wait(&self.idle, q);
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
                let Some(s) = q.seqnos.pop_front() else {
                    return;
                };
                q.busy = true;
                q.current = Some(s);
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

/// Every lock of the listeners, held across a fork (see `SecurityServer::fork_guard`), in the
/// order they nest: the prepare list before the change list (as `count` takes them), then the
/// queue.
pub(crate) struct Held<'a> {
    _prepare: MutexGuard<'a, Vec<(u64, Prepare)>>,
    _change: MutexGuard<'a, Vec<(u64, Change)>>,
    queue: MutexGuard<'a, Queue>,
}

impl Listeners {
    pub(crate) fn hold(&self) -> Held<'_> {
        Held {
            _prepare: lock(&self.prepare),
            _change: lock(&self.change),
            queue: lock(&self.queue),
        }
    }
}

impl Held<'_> {
    /// In the child of a fork: a delivery another thread of the parent was making is marked
    /// over (no thread of the child will end it, and `wait_idle` would wait for it forever) and
    /// its seqno queued again, first, so that the child delivers it in full at its next change.
    /// A delivery made by this very thread (a listener that forked) is left to its loop, which
    /// the child continues.
    pub(crate) fn child(mut self) {
        if self.queue.busy && !delivering() {
            self.queue.busy = false;
            if let Some(s) = self.queue.current.take() {
                self.queue.seqnos.push_front(s);
            }
        }
    }
}

/// Marks a delivery running on this thread; ends it (even if a listener panics) when dropped.
struct Busy<'a>(&'a Listeners);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        DELIVERING.with(|d| d.set(false));
        let mut q = lock(&self.0.queue);
        q.busy = false;
        q.current = None;
        drop(q);
        self.0.idle.notify_all();
    }
}

fn remove<T>(weak: &Weak<Listeners>, list: impl Fn(&Listeners) -> &Mutex<Vec<(u64, T)>>, id: u64) {
    if let Some(l) = weak.upgrade() {
        lock(list(&l)).retain(|(i, _)| *i != id);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::mpsc;
    use std::time::Duration;

    // A fork while another thread delivers a notification: in the child that thread does not
    // exist, so nothing would end its delivery and the child's next change would wait for it
    // forever. Here the delivering thread stays blocked (as if gone); after the child's repair,
    // the notification is delivered again by the waiting thread itself, within a deadline.
    #[test]
    fn a_delivery_in_flight_at_a_fork_is_made_again_in_the_child() {
        let l = Arc::new(Listeners::default());
        let calls = Arc::new(AtomicUsize::new(0));
        let (entered_tx, entered) = mpsc::channel();
        let (release, release_rx) = mpsc::channel::<()>();
        let release_rx = Mutex::new(release_rx);
        let c = calls.clone();
        let _r = l.add_change(Arc::new(move |s: Seqno| {
            assert_eq!(s, Seqno(2));
            if c.fetch_add(1, Ordering::SeqCst) == 0 {
                let _ = entered_tx.send(());
                // The first delivery never ends until the test is over.
                let _ = lock(&release_rx).recv();
            }
        }));
        l.queue(Seqno(2));
        let l2 = l.clone();
        let stuck = std::thread::spawn(move || l2.deliver());
        entered.recv_timeout(Duration::from_secs(10)).unwrap();

        // The fork: the forking thread (not delivering) holds every lock, then repairs.
        l.hold().child();
        assert!(!l.is_idle(), "the notification in flight is queued again");
        let (done_tx, done) = mpsc::channel();
        let l3 = l.clone();
        std::thread::spawn(move || {
            l3.wait_idle();
            let _ = done_tx.send(());
        });
        let delivered = done.recv_timeout(Duration::from_secs(5)).is_ok();
        let _ = release.send(());
        let _ = stuck.join();
        assert!(
            delivered,
            "the child waited forever for a delivery made by a thread it does not have"
        );
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }
}
