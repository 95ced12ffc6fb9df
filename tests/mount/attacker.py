"""The attacker's side of tests/mount/attacks.sh: what an unprivileged user runs against a
`seaccess mount` (issue 34). Each step prints one line, `STEP: OK [value]` or `STEP: ERRNO`,
so the script asserts on what happened without trusting this helper's judgement.

Run as nobody with /usr/bin/python3 (the standard library only)."""

import errno
import fcntl
import os
import resource
import signal
import sys
import threading
import time


def err(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def step(name, f):
    """Runs f, prints its outcome; returns its value (None on an error)."""
    try:
        v = f()
    except OSError as e:
        print(f"{name}: {err(e)}", flush=True)
        return None
    print(f"{name}: OK" + ("" if v is None else f" {v!r}"), flush=True)
    return v


def stale(pub, tag, target, content=b"victim bytes\n"):
    """A descriptor of pub/TAG/victim whose node the server last saw at that path, after the
    file is unlinked, TAG removed and replaced by a symbolic link to `target`."""
    d = os.path.join(pub, tag)
    os.mkdir(d)
    fd = os.open(os.path.join(d, "victim"), os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    os.write(fd, content)
    os.unlink(os.path.join(d, "victim"))
    os.rmdir(d)
    os.symlink(target, d)
    return fd


def escape(pub, outside):
    """Item 1: the stale path of an unlinked file, its directory swapped for a link out of the
    backing tree; then chmod, truncate, attributes and a reopen through the descriptor."""
    fd = step("setup", lambda: stale(pub, "d", outside))
    if fd is None:
        return
    step("fchmod", lambda: os.fchmod(fd, 0o666))
    step("ftruncate", lambda: os.ftruncate(fd, 3))
    step("fsetxattr", lambda: os.setxattr(fd, "user.pwned", b"1"))
    step("fgetxattr", lambda: os.getxattr(fd, "user.secret").decode(errors="replace"))

    def reopen():
        g = os.open(f"/proc/self/fd/{fd}", os.O_RDWR)
        try:
            data = os.pread(g, 4096, 0)
            os.pwrite(g, b"PWNED", 0)
            return data.decode(errors="replace")
        finally:
            os.close(g)

    step("reopen", reopen)


def peek(pub, outside):
    """Item 1 without a chmod: what a stat through /proc/self/fd and a listxattr say."""
    fd = step("setup", lambda: stale(pub, "p", outside))
    if fd is None:
        return
    step("stat", lambda: "uid=%d mode=%o size=%d" % (lambda s: (s.st_uid, s.st_mode & 0o7777, s.st_size))(os.stat(f"/proc/self/fd/{fd}")))
    step("flistxattr", lambda: " ".join(sorted(os.listxattr(fd))))


def hang(pub, target, n, seconds):
    """Item 2: n stale descriptors whose directories point back into the mount, hammered from
    n threads (chmod and a user attribute, each making the server resolve the old path)."""
    fds = []
    for i in range(n):
        fds.append(stale(pub, f"h{i}", target))
    print("setup: OK", flush=True)
    end = time.monotonic() + seconds
    calls = [0] * n

    def run(i):
        while time.monotonic() < end:
            for f in (lambda: os.fchmod(fds[i], 0o600), lambda: os.getxattr(fds[i], "user.x"), lambda: os.listxattr(fds[i])):
                try:
                    f()
                except OSError:
                    pass
                calls[i] += 1

    ts = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(f"done: OK {sum(calls)}", flush=True)


def threads(path, n):
    """Item 6a: n threads, each making one request (a stat) and staying alive until standard
    input closes."""
    threading.stack_size(64 * 1024)
    release = threading.Event()
    lock = threading.Lock()
    seen = {"ok": 0, "err": 0}

    def run():
        try:
            os.stat(path)
            k = "ok"
        except OSError:
            k = "err"
        with lock:
            seen[k] += 1
        release.wait()

    ts = []
    for _ in range(n):
        t = threading.Thread(target=run, daemon=True)
        try:
            t.start()
        except RuntimeError:
            break
        ts.append(t)
    deadline = time.monotonic() + 60
    while seen["ok"] + seen["err"] < len(ts) and time.monotonic() < deadline:
        time.sleep(0.05)
    print(f"ready: OK started={len(ts)} stat_ok={seen['ok']} stat_err={seen['err']}", flush=True)
    sys.stdin.read()
    release.set()


def hold(path):
    """Holds an exclusive lock on path until standard input closes."""
    fd = os.open(path, os.O_RDWR)
    fcntl.lockf(fd, fcntl.LOCK_EX)
    print("held: OK", flush=True)
    sys.stdin.read()


def waiting(pid):
    """Whether process pid sleeps (S or D): a lock waiter that has not been answered."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("S", "D")
    except OSError:
        return False


def waiters(path, n):
    """Items 6b: n processes each waiting for a shared lock on path (held elsewhere). On the
    line `kill`: SIGKILL them all, report how many are reaped within 5 seconds and the states
    of the others; on the next line, reap the rest (within 15 seconds)."""
    pids = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            try:
                fd = os.open(path, os.O_RDONLY)
                fcntl.lockf(fd, fcntl.LOCK_SH)
                os._exit(0)
            except OSError:
                os._exit(1)
        pids.append(pid)
    time.sleep(1.5)
    print(f"waiting: OK {sum(waiting(p) for p in pids)}", flush=True)
    left = set(pids)

    def reap(seconds):
        end = time.monotonic() + seconds
        while left and time.monotonic() < end:
            for p in list(left):
                if os.waitpid(p, os.WNOHANG)[0] == p:
                    left.discard(p)
            time.sleep(0.02)

    sys.stdin.readline()
    t0 = time.monotonic()
    for p in pids:
        os.kill(p, signal.SIGKILL)
    reap(5)
    states = {}
    for p in left:
        try:
            with open(f"/proc/{p}/stat") as f:
                s = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            s = "?"
        states[s] = states.get(s, 0) + 1
    print(f"reaped: OK {n - len(left)} in {time.monotonic() - t0:.1f}s, left {' '.join(f'{k}={v}' for k, v in sorted(states.items())) or 'none'}", flush=True)
    sys.stdin.readline()
    reap(15)
    print(f"final: OK {n - len(left)}", flush=True)


def lockers(path, n):
    """Item 6c: n threads of one process, each opening path and waiting for a shared lock on
    it, then staying alive (refused or granted) as an attacker keeps up the pressure. Prints
    how many wait; on the line `end` (the holder gone), lets them go and prints how many got
    the lock and how many are still waiting."""
    threading.stack_size(64 * 1024)
    got = {"lock": 0, "err": 0}
    lock = threading.Lock()
    done = threading.Event()

    def run():
        try:
            fd = os.open(path, os.O_RDONLY)
            fcntl.lockf(fd, fcntl.LOCK_SH)
            k = "lock"
        except OSError:
            k = "err"
        with lock:
            got[k] += 1
        done.wait()

    ts = []
    for _ in range(n):
        t = threading.Thread(target=run, daemon=True)
        try:
            t.start()
        except RuntimeError:
            break
        ts.append(t)
    time.sleep(2)
    print(f"waiting: OK started={len(ts)} refused={got['err']} granted={got['lock']}", flush=True)
    sys.stdin.readline()
    done.set()
    end = time.monotonic() + 15
    for t in ts:
        t.join(max(0.0, end - time.monotonic()))
    print(f"final: OK granted={got['lock']} refused={got['err']} alive={sum(t.is_alive() for t in ts)}", flush=True)
    os._exit(0)


if __name__ == "__main__":
    # As many descriptors as the hard limit allows: the attacker's own limit is not the test.
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    op, args = sys.argv[1], sys.argv[2:]
    {
        "escape": lambda: escape(*args),
        "peek": lambda: peek(*args),
        "hang": lambda: hang(args[0], args[1], int(args[2]), float(args[3])),
        "threads": lambda: threads(args[0], int(args[1])),
        "hold": lambda: hold(args[0]),
        "waiters": lambda: waiters(args[0], int(args[1])),
        "lockers": lambda: lockers(args[0], int(args[1])),
    }[op]()
