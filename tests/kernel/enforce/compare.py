#!/usr/bin/env python3
"""The kernel-enforce comparison's host side: the same workload (tests/kernel/workload.sh) run on
the real SELinux kernel (the oracle suite's results) and under `seaccess enforce` on a kernel
with the BPF LSM alone (this suite's), set side by side.

    compare.py KERNEL_RESULTS ENFORCE_RESULTS DOCUMENTED

An operation is the probe's `R <context> <op> <path> <outcome>` line, matched across the two
runs by (domain context, op, path with %t already resolved by the probe) and, for an
operation a chain repeats (kernel_t's, init_t's and initrc_t's run once per daemon), by its
occurrence; a signal's or ptrace's target pid is replaced by the target's place among the T
lines. For the operations whose hooks `seaccess enforce` mediates the outcomes (ok, or
the errno) are compared; an operation found in one run only is a difference too (a task that
reached another domain, a chain cut short). The targets' domains (`T` lines, in order) and the
tree's labels (`L` lines: the daemon's labelling against setfiles', then the labels of what
the workload created) are compared as well. The families it does not mediate yet are listed
with their counts, never dropped silently; so are the operations it mediates in part (PARTIAL,
none at present) where only the kernel's further checks refused.

A difference is accepted only when DOCUMENTED lists it, one a line:
    <context> <op> <path>: <reason>
(each field a shell pattern). Prints each difference, the families not compared, and last
    kernel-enforce: N compared, D differ (E documented)
Exits 1 on an undocumented difference, or when either run has no operation.
"""

import fnmatch
import sys
from collections import Counter, defaultdict

# Operation -> family, for the operations whose hooks seaccess enforce mediates
# (crates/enforce/bpf/). Every one also meets inode_permission: the path walk's
# dir {search}, and may_create's / may_delete's dir {write search} on the parent.
COMPARED = {
    "read": "files",  # file_open, file_permission
    "write": "files",
    "exec": "exec",  # bprm_creds_for_exec, bprm_committed_creds
    "create": "create",  # inode_create, inode_init_security
    "mkdir": "create",  # inode_mkdir, inode_init_security
    "stat": "getattr",  # inode_getattr
    "symlink": "names",  # inode_symlink, inode_init_security
    "link": "names",  # inode_link
    "unlink": "names",  # inode_unlink
    "rmdir": "names",  # inode_rmdir
    "rename": "names",  # inode_rename
    "kill": "signals",  # task_kill
    "ptrace": "signals",  # ptrace_access_check (and capable: sys_ptrace)
    "socket": "sockets",  # socket_create, socket_post_create
    "bind": "sockets",  # socket_bind: bind, name_bind, node_bind
    "connect": "sockets",  # socket_connect: connect, name_connect
    "shm": "ipc",  # shm_alloc_security, shm_shmctl
    "sem": "ipc",  # sem_alloc_security, sem_semctl
    "msg": "ipc",  # msg_queue_alloc_security, msg_queue_msgctl
}

# Operations seaccess enforce mediates in part: op -> (family, what it does not ask). Where
# only the unasked checks can refuse, the SELinux kernel may deny what enforce allows, never
# the reverse: a kernel denial with an enforce success is counted as not compared (those
# checks), every other pair is compared. Empty since bind's name_bind and node_bind came.
PARTIAL = {}

# Operation -> (family, the hooks.c functions seaccess enforce has no program on yet).
NOT_COMPARED = {}


def by_target(op, path, pids):
    """A signal's or ptrace's path with the target's pid (which differs between runs) replaced
    by the target's place among the T lines (T1, T2, ...; compared in order)."""
    if op not in ("kill", "ptrace"):
        return path
    pid, sep, rest = path.partition(",")
    return pids.get(pid, f"pid-{pid}") + sep + rest


def parse(path):
    """The run's operations ({(ctx, op, path): [outcome, ...]} in order), its targets'
    contexts in order, its first labels and its last ({path: (kind, context)})."""
    ops = defaultdict(list)
    targets = []
    pids = {}  # a target's pid -> T<n>, its place among the T lines
    first, last = {}, {}
    labels = first
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "R" and len(w) == 5:
                if w[2] == "label":
                    labels[w[3]] = ("?", w[4])
                else:
                    ops[(w[1], w[2], by_target(w[2], w[3], pids))].append(w[4])
            elif w[0] == "T" and len(w) == 3:
                targets.append(w[2])
                pids[w[1]] = f"T{len(targets)}"
            elif w[0] == "L" and len(w) == 4:
                labels[w[1]] = (w[2], w[3])
            elif w[0] == "C":
                # Everything from the first operation on is the workload's; the next labels
                # are those it left.
                labels = last
    return ops, targets, first, last


def load_documented(path):
    entries = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                key, reason = line.split(": ", 1)
                ctx, op, p = key.split(" ")
            except ValueError:
                sys.exit(f"{path}:{n}: want '<context> <op> <path>: <reason>', got {line!r}")
            if not reason.strip():
                sys.exit(f"{path}:{n}: a documented difference needs its reason")
            entries.append(((ctx, op, p), reason.strip(), n))
    return entries


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: compare.py KERNEL_RESULTS ENFORCE_RESULTS DOCUMENTED")
    kops, ktargets, kfirst, klast = parse(sys.argv[1])
    eops, etargets, efirst, elast = parse(sys.argv[2])
    documented = load_documented(sys.argv[3])
    if not kops or not eops:
        print("kernel-enforce: a run has no operations (kernel %d, enforce %d)" % (len(kops), len(eops)))
        return 1

    diffs = []  # (key, what)
    compared = Counter()  # family -> operations compared
    outcomes = defaultdict(Counter)  # family -> {allowed, denied}
    skipped = Counter()  # family -> operations not compared

    for key in sorted(set(kops) | set(eops)):
        ctx, op, p = key
        k, e = kops.get(key, []), eops.get(key, [])
        if op in NOT_COMPARED:
            # Counted as the kernel ran them.
            skipped[NOT_COMPARED[op][0]] += len(k)
            continue
        if op in PARTIAL:
            family = PARTIAL[op][0]
            for i in range(max(len(k), len(e))):
                ko = k[i] if i < len(k) else None
                eo = e[i] if i < len(e) else None
                if ko not in (None, "ok") and eo == "ok":
                    skipped[f"{family}: {op} denied by the kernel alone"] += 1
                    continue
                compared[family] += 1
                outcomes[family]["allowed" if ko == "ok" else "denied"] += ko is not None
                if ko != eo:
                    nth = f" (#{i + 1})" if max(len(k), len(e)) > 1 else ""
                    diffs.append(
                        (key, f"kernel: {ko or 'not run'}; enforce: {eo or 'not run'}{nth}")
                    )
            continue
        family = COMPARED.get(op)
        if family is None:
            diffs.append((key, f"an operation the comparator does not know ({op})"))
            continue
        for i in range(max(len(k), len(e))):
            ko = k[i] if i < len(k) else None
            eo = e[i] if i < len(e) else None
            compared[family] += 1
            if ko is not None:
                outcomes[family]["allowed" if ko == "ok" else "denied"] += 1
            if ko != eo:
                nth = f" (#{i + 1})" if max(len(k), len(e)) > 1 else ""
                diffs.append(
                    (key, f"kernel: {ko or 'not run'}; enforce: {eo or 'not run'}{nth}")
                )

    # The targets' domains, reached by exec transitions.
    for i in range(max(len(ktargets), len(etargets))):
        kt = ktargets[i] if i < len(ktargets) else None
        et = etargets[i] if i < len(etargets) else None
        compared["targets"] += 1
        if kt != et:
            diffs.append((("-", "target", str(i + 1)), f"kernel: {kt}; enforce: {et}"))

    # The tree's labels: the daemon's against setfiles', then what the workload left.
    for name, kl, el in (("labels", kfirst, efirst), ("new-labels", klast, elast)):
        for p in sorted(set(kl) | set(el)):
            if name == "new-labels" and p in kfirst:
                continue
            # A path in one run only is a difference too: every operation that makes, moves
            # or removes a name is mediated, so both kernels should leave the same tree.
            compared[name] += 1
            if kl.get(p) != el.get(p):
                diffs.append(((name, "label", p), f"kernel: {kl.get(p)}; enforce: {el.get(p)}"))

    seen = Counter()
    undocumented = 0
    for key, what in diffs:
        doc = next(
            (d for d in documented if all(fnmatch.fnmatchcase(a, b) for a, b in zip(key, d[0]))),
            None,
        )
        if doc:
            seen[doc[2]] += 1
            print(f"DOCUMENTED: {' '.join(key)}: {what} ({doc[1]})")
        else:
            undocumented += 1
            print(f"DIFFERS: {' '.join(key)}: {what}")
    for _, reason, n in documented:
        if not seen[n]:
            print(f"note: documented difference at line {n} not seen ({reason})")

    hooks = defaultdict(list)
    for op, (family, hook) in NOT_COMPARED.items():
        hooks[family].append(f"{op}: {hook}")
    for family in hooks:
        hooks[family] = ["no program on " + "; ".join(hooks[family])]
    for op, (family, what) in PARTIAL.items():
        hooks[f"{family}: {op} denied by the kernel alone"] = [f"not asked: {what}"]
    for family in sorted(skipped):
        why = "; ".join(hooks.get(family, []))
        print(f"not compared: {family} {skipped[family]}" + (f" ({why})" if why else ""))
    print(
        "coverage: "
        + ", ".join(
            f"{f} {n}"
            + (
                f" ({outcomes[f]['allowed']} allowed, {outcomes[f]['denied']} denied)"
                if f in outcomes
                else ""
            )
            for f, n in sorted(compared.items())
        )
    )
    n = sum(compared.values())
    print(f"kernel-enforce: {n} compared, {len(diffs)} differ ({len(diffs) - undocumented} documented)")
    return 1 if undocumented else 0


if __name__ == "__main__":
    sys.exit(main())
