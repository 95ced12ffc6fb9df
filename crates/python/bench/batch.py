"""The Python batch benchmark (issue 11): 1,000,000 checks from Python against the same queries
through the Rust batch command, `seaccess compute-av`, medians of rounds, ratios printed.

libselinux's own Python bindings (python3-selinux) are the first choice of peer, but without a
kernel running SELinux they cannot answer (no selinuxfs to ask): the script shows that, then
compares with the Rust command as the issue says. Not a test: run it by hand, see README.

    target/venv/bin/python crates/python/bench/batch.py [--policy P] [--count N] [--rounds R]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import seaccess

ROOT = Path(__file__).resolve().parents[3]


def libselinux_answers(q: tuple[str, str, str]) -> str:
    """What python3-selinux (Debian's interpreter) says to one query, or why it cannot."""
    code = (
        "import selinux, sys\n"
        "s, t, c = sys.argv[1:4]\n"
        "cls = selinux.string_to_security_class(c)\n"
        "try:\n"
        "    selinux.security_compute_av(s, t, cls, 0, selinux.av_decision())\n"
        "    print('answers')\n"
        "except OSError as e:\n"
        "    print(f'cannot answer: security_compute_av: {e}; string_to_security_class({c!r}) = {cls};'\n"
        "          f' is_selinux_enabled() = {selinux.is_selinux_enabled()}')\n"
    )
    r = subprocess.run(["/usr/bin/python3", "-c", code, *q], capture_output=True, text=True)
    return (r.stdout or r.stderr).strip().splitlines()[-1] if (r.stdout or r.stderr) else f"exit {r.returncode}"


def timed(f) -> float:
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--policy", default="/etc/selinux/default/policy/policy.33")
    ap.add_argument("--count", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    oracle = ROOT / "target" / "oracle" / "sepol-oracle"
    cli = ROOT / "target" / "release" / "seaccess"
    for need, how in ((oracle, "make oracle"), (cli, "cargo build --release -p seaccess-cli")):
        if not need.is_file():
            print(f"{need} is missing: {how}", file=sys.stderr)
            return 2

    with tempfile.TemporaryDirectory() as tmp:
        qfile = Path(tmp) / "queries"
        with open(qfile, "w") as f:
            subprocess.run([str(oracle), "gen", a.policy, str(a.seed), str(a.count)], stdout=f, check=True)
        q3 = [tuple(line.split()) for line in qfile.read_text().splitlines()]
        assert len(q3) == a.count
        # One permission per query, the class's lowest, as a check asks for.
        first = {}
        for line in subprocess.run([str(oracle), "perms", a.policy], capture_output=True, text=True, check=True).stdout.splitlines():
            cls, bit, name = line.split()
            if cls not in first or int(bit) < first[cls][0]:
                first[cls] = (int(bit), name)
        q4 = [(s, t, c, first[c][1]) for s, t, c in q3]

        print(f"python3-selinux: {libselinux_answers(q3[0])}")
        print(f"{a.count} queries from `sepol-oracle gen {a.policy} {a.seed} {a.count}`, {a.rounds} rounds, medians")

        def rust():
            with open(qfile) as i, open(os.devnull, "w") as o:
                subprocess.run([str(cli), "compute-av", "-p", a.policy], stdin=i, stdout=o, check=True)

        policy = seaccess.Policy.load(a.policy)
        runs = {
            "rust `seaccess compute-av` (load, parse, answer, print)": rust,
            "python Policy.compute_av_many": lambda: policy.compute_av_many(q3),
            "python Policy.check_many": lambda: policy.check_many(q4),
            "python Avc.has_perm_many": lambda: seaccess.Avc(policy).has_perm_many(q4),
        }
        times = {k: [] for k in runs}
        for _ in range(a.rounds):
            for k, f in runs.items():
                times[k].append(timed(f))
        # A loop of single calls, one round: the per-call cost of crossing into Rust.
        n = min(a.count, 200_000)
        loop = timed(lambda: [policy.check(*q) for q in q4[:n]]) * a.count / n
        base = statistics.median(times[next(iter(runs))])
        for k, ts in times.items():
            m = statistics.median(ts)
            print(f"{k:58s} {m:8.3f} s  {m / base:5.2f}x rust")
        print(f"{'python loop of Policy.check (scaled from ' + str(n) + ')':58s} {loop:8.3f} s  {loop / base:5.2f}x rust")
    return 0


if __name__ == "__main__":
    sys.exit(main())
