#!/usr/bin/python3
"""seaccess search against setools' answers (search_oracle.py's OUT.json), for t-search.sh.

Usage: search_compare.py SEACCESS POLICY ANSWERS.json [--real N]

Runs `seaccess search` once per query with the same arguments as sesearch (plus, for a query
with boolean values, `-b NAME=VALUE` for each and --state) and compares the rule lines as
multisets, ignoring order; then, with --real N, runs N of the queries (every len/N-th without
boolean values) through the real /usr/bin/sesearch too and compares its output with seaccess's
byte for byte, order included. Prints the counts; exits 1 on any difference, showing the query
and a diff.
"""
import collections
import concurrent.futures
import difflib
import json
import subprocess
import sys
import time


def seaccess_args(q):
    args = list(q["args"])
    if q.get("values") is not None:
        for name, v in sorted(q["values"].items()):
            args += ["-b", "{}={}".format(name, v)]
        args.append("--state")
    return args


def run(cmd):
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    run.times.append((time.perf_counter() - t, cmd))
    return r.returncode, r.stdout, r.stderr


run.times = []


def show(what, q, want, got):
    print("FAIL: {}: sesearch {}{}".format(what, " ".join(q["args"]), " values {}".format(q["values"]) if q.get("values") else ""))
    diff = list(difflib.unified_diff(sorted(want), sorted(got), "setools", "seaccess", lineterm="", n=0))
    for line in diff[:20]:
        print("   " + line)
    if len(diff) > 20:
        print("   ... {} more diff lines".format(len(diff) - 20))


def main():
    seaccess, policy, answers = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
    real = int(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "--real" else 0
    cmds = [[seaccess, "search"] + seaccess_args(q) + [policy] for q in answers]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        results = list(ex.map(run, cmds))
    bad = 0
    rules = 0
    nonempty = 0
    conditional = 0
    for q, (rc, out, err) in zip(answers, results):
        if q["error"]:
            if rc != 2:
                bad += 1
                print("FAIL: setools refused sesearch {} ({}) but seaccess exited {}".format(" ".join(q["args"]), q["error"], rc))
            continue
        got = out.splitlines()
        if rc != 0 or collections.Counter(got) != collections.Counter(q["lines"]):
            bad += 1
            if rc != 0:
                print("   seaccess exited {}: {}".format(rc, err.strip()))
            show("different rules", q, q["lines"], got)
            continue
        rules += len(got)
        nonempty += bool(got)
        conditional += sum(1 for line in got if line.endswith(("# enabled", "# disabled")))
    print("search: {} queries, {} finding rules, {} rule lines equal to setools' ({} conditional ones judged enabled or not as setools' rule.enabled() does), {} different".format(
        len(answers), nonempty, rules, conditional, bad))
    mine = sorted(run.times, key=lambda x: x[0])
    if mine:
        print("search: seaccess's wall time per query (2 at a time): median {:.0f} ms, slowest {:.0f} ms ({})".format(
            1000 * mine[len(mine) // 2][0], 1000 * mine[-1][0], " ".join(mine[-1][1][2:-1])))
    if real:
        run.times = []
        plain = [q for q in answers if q.get("values") is None and not q["error"]]
        picks = plain[:: max(1, len(plain) // real)][:real]
        same = 0
        for q in picks:
            rc1, want, err1 = run(["sesearch"] + q["args"] + [policy])
            rc2, got, err2 = run([seaccess, "search"] + q["args"] + [policy])
            if rc1 == 0 and rc2 == 0 and want == got:
                same += 1
            else:
                bad += 1
                print("   sesearch exited {} {}, seaccess {} {}".format(rc1, err1.strip(), rc2, err2.strip()))
                show("not byte for byte what sesearch prints", q, want.splitlines(), got.splitlines())
        print("search: {} of {} queries printed byte for byte as the real sesearch prints them".format(same, len(picks)))
        ses = sorted(t for t, cmd in run.times if cmd[0] == "sesearch")
        if ses and mine:
            print("search: the real sesearch took {:.0f} to {:.0f} ms a query; the slowest seaccess query is {:.0f}x faster than the fastest sesearch run".format(
                1000 * ses[0], 1000 * ses[-1], ses[0] / max(mine[-1][0], 1e-6)))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
