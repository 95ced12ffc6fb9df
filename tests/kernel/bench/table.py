#!/usr/bin/env python3
"""The seed experiments' table (tests/kernel/bench/run.sh): reads the boots' results logs, whose
lines are "MODE B NAME OPERATIONS INSTRUCTIONS" and "MODE O PATH OUTCOME" (bench.c), checks that
each mode ran every experiment and that httpd_t was confined where it should be (its open of
shadow refused under SELinux and seaccess enforce, allowed unenforced and unconfined), and prints a Markdown
table of guest instructions per operation with the ratios. Exits 1 on anything missing."""
import sys

MODES = ("none", "selinux", "enforce", "unconfined")
EXPERIMENTS = (
    ("tree", "tree walk: getdents64, fstatat, open and close (per file)"),
    ("rw", "1-byte pwrite and pread on an open file (per pair)"),
    ("walk", "path walk: stat of a 14-component path (per stat)"),
)


def main(paths):
    counts, opens, errors = {}, {}, []
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                w = line.split()
                if len(w) == 5 and w[0] in MODES and w[1] == "B":
                    counts[(w[0], w[2])] = (int(w[3]), int(w[4]))
                elif len(w) >= 4 and w[0] in MODES and w[1] == "O":
                    opens[(w[0], w[2])] = " ".join(w[3:])
    for mode in MODES:
        for name, _ in EXPERIMENTS:
            if (mode, name) not in counts:
                errors.append(f"{mode}: no {name} result")
        shadow = [v for (m, p), v in opens.items() if m == mode and p.endswith("/etc/shadow")]
        want_ok = mode in ("none", "unconfined")
        if not shadow:
            errors.append(f"{mode}: no open of shadow reported")
        elif (shadow[0] == "ok") != want_ok:
            errors.append(f"{mode}: httpd_t's open of shadow: {shadow[0]} "
                          f"(wanted {'ok' if want_ok else 'refused'})")
    if errors:
        for e in errors:
            print(f"kernel-bench: {e}", file=sys.stderr)
        return 1
    per = {k: v[1] / v[0] for k, v in counts.items()}
    print("| experiment | unenforced | kernel SELinux | seaccess enforce "
          "| SELinux / unenforced | enforce / unenforced | enforce / SELinux "
          "| unconfined task under enforce / unenforced |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, what in EXPERIMENTS:
        n, s, e = per[("none", name)], per[("selinux", name)], per[("enforce", name)]
        u = per[("unconfined", name)]
        print(f"| {what} | {n:,.0f} | {s:,.0f} | {e:,.0f} | {s / n:.3f}x | {e / n:.3f}x "
              f"| {e / s:.3f}x | {u / n:.3f}x |")
    ops = ", ".join(f"{name} {counts[('none', name)][0]:,}" for name, _ in EXPERIMENTS)
    print(f"\nGuest instructions per operation (QEMU -icount shift=0), the least of 5 runs; "
          f"operations per run: {ops}.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
