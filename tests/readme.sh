#!/usr/bin/env bash
# README.md's commands, run as written (issue 36: "every command in README runs as written").
#
# The convention README.md follows:
#   - every fenced block names its language; a bare ``` is an error here;
#   - ```sh blocks are run, each as its own `bash -e -o pipefail` script from the repository's
#     root, with the build under test first on PATH, on the policy the block names (Debian's
#     default policy, installed by scripts/install-deps.sh, or target/policies from
#     `make policies`); a block fails when any command in it fails;
#   - a command expected to exit non-zero ends with `# exits N` (the test checks it exits N);
#   - a ```text block that directly follows a ```sh block (blank lines only between) is that
#     block's expected output, standard output and error together, compared exactly; a
#     ```text block after prose is an illustration and is not compared;
#   - `<!-- readme-test: skip: REASON -->` on the line before a block leaves it out, printing
#     `SKIP: README.md:LINE: REASON`;
#   - ```python blocks run with target/venv/bin/python (`make python`); the first ```rust block
#     must be crates/engine/examples/embed.rs byte for byte, and the ```text block after it is
#     what that example (built by `cargo test`, under $SEACCESS_BUILD/examples) prints; other
#     ```rust blocks are not run; the ```c block must be tests/capi/example.c byte for byte
#     (tests/capi/run.sh builds and runs that file).
# Besides the blocks: README opens with exactly `make demo` and `make test`; its Install list
# names exactly the packages scripts/install-deps.sh installs; no run block names the lab's
# binary; every relative link in README.md and docs/*.md leads to a file that exists, and every
# README anchor to one of its headings.
#
# Blocks that need root, /dev/fuse, the C library's drop-in (target/libselinux, `make capi`) or
# the Python venv print SKIP where those are missing, unless SEACCESS_README_REQUIRE=1 (make
# test), which makes every such SKIP a failure. Each block runs under a deadline.
#
# SEACCESS_README_INSTALLED=1: SEACCESS_BUILD is where an installed seaccess is (/usr/bin, from
# the package): its `seaccess run` finds its own drop-in; the Rust example (a program of the
# build's) and the Python blocks (the wheel's) are left out (SKIP).
#
# Usage: SEACCESS_BUILD=target/ci bash tests/readme.sh [README]
set -uo pipefail
cd "$(dirname "$0")/.."
export SEACCESS_BUILD=${SEACCESS_BUILD:-target/release}
export README_FILE=${1:-README.md}
export SEACCESS_README_REQUIRE=${SEACCESS_README_REQUIRE:-0}
export SEACCESS_README_INSTALLED=${SEACCESS_README_INSTALLED:-0}
if [ ! -x "$SEACCESS_BUILD/seaccess" ]; then
  echo "FAIL: no seaccess binary at $SEACCESS_BUILD/seaccess (cargo build -p seaccess-cli)"
  exit 1
fi
exec python3 - <<'PY'
import os, re, subprocess, sys, tempfile, shutil

readme = os.environ["README_FILE"]
build = os.path.abspath(os.environ["SEACCESS_BUILD"])
require = os.environ["SEACCESS_README_REQUIRE"] == "1"
installed = os.environ["SEACCESS_README_INSTALLED"] == "1"
root = os.getcwd()
failures = 0
passes = 0

def ok(msg):
    global passes
    passes += 1
    print(f"ok: {msg}")

def bad(msg, detail=None):
    global failures
    failures += 1
    print(f"FAIL: {msg}")
    if detail:
        for line in detail.rstrip("\n").split("\n")[-40:]:
            print(f"    {line}")

def skip(line, reason):
    # A skip forced by the environment is a failure where everything is required.
    if require:
        bad(f"{readme}:{line}: cannot run: {reason} (SEACCESS_README_REQUIRE=1)")
    else:
        print(f"SKIP: {readme}:{line}: {reason}")

text = open(readme, encoding="utf-8").read()
lines = text.split("\n")

# --- The blocks: language, first line of content, content, skip reason, expected output.
blocks = []
i = 0
while i < len(lines):
    m = re.match(r"^```(.*)$", lines[i])
    if not m:
        i += 1
        continue
    lang = m.group(1).strip()
    fence = i + 1  # 1-based line of the opening fence
    j = i + 1
    while j < len(lines) and lines[j] != "```":
        j += 1
    if j == len(lines):
        bad(f"{readme}:{fence}: a block that never closes")
        break
    k = i - 1
    while k >= 0 and lines[k].strip() == "":
        k -= 1
    marker = re.match(r"^<!-- readme-test: skip: (.*) -->$", lines[k]) if k >= 0 else None
    blocks.append({"lang": lang, "line": fence, "body": "\n".join(lines[i + 1:j]) + "\n",
                   "skip": marker.group(1) if marker else None, "start": i, "end": j})
    i = j + 1

for n, b in enumerate(blocks):
    if b["lang"] == "":
        bad(f"{readme}:{b['line']}: a block without a language (sh, text, rust, c, python)")
    elif b["lang"] not in ("sh", "text", "rust", "c", "python"):
        bad(f"{readme}:{b['line']}: a block in `{b['lang']}`, which this test does not know")
    b["expect"] = None
    if b["lang"] in ("sh", "rust") and n + 1 < len(blocks):
        nxt = blocks[n + 1]
        between = lines[b["end"] + 1:nxt["start"]]
        if nxt["lang"] == "text" and all(l.strip() == "" for l in between):
            b["expect"] = nxt["body"]

# --- README opens with the two commands a fresh Debian machine needs.
first = blocks[0] if blocks else None
before = [l for l in lines[:first["start"]] if l.strip()] if first else []
cmds = [re.sub(r"\s*#.*$", "", l).strip() for l in (first["body"].split("\n") if first else [])]
cmds = [c for c in cmds if c]
if first and first["lang"] == "sh" and cmds == ["make demo", "make test"] \
        and all(l.startswith("# ") or l.startswith("<!--") for l in before):
    ok("README opens with exactly `make demo` and `make test`")
else:
    bad("README's first block is not exactly `make demo` and `make test`", first["body"] if first else "")

# --- The Install list is the install script's.
script = open("scripts/install-deps.sh").read()
m = re.search(r"^pkgs=\((.*?)\)", script, re.S | re.M)
want = set(m.group(1).split()) if m else set()
m = re.search(r"<!-- packages: scripts/install-deps.sh -->(.*?)<!-- end of packages -->", text, re.S)
# Inside the markers every backquoted word is a package (commands are written without quotes).
have = set(re.findall(r"`([^`]*)`", m.group(1))) if m else set()
if not m or not want:
    bad("README's Install section has no package list between its markers, or install-deps.sh no pkgs=(...)")
elif have != want:
    bad("README's Install list differs from scripts/install-deps.sh",
        f"not in README: {' '.join(sorted(want - have)) or '-'}\nnot installed by the script: {' '.join(sorted(have - want)) or '-'}")
else:
    ok(f"README's Install list names the {len(want)} packages scripts/install-deps.sh installs")

# --- The C example is the file tests/capi/run.sh builds.
cblocks = [b for b in blocks if b["lang"] == "c"]
example = open("tests/capi/example.c").read()
if len(cblocks) == 1 and cblocks[0]["body"] == example:
    ok("README's C example is tests/capi/example.c, byte for byte")
else:
    bad(f"README's C block is not tests/capi/example.c ({len(cblocks)} c blocks)")

# --- The Rust example is the engine's example program, and prints what README shows.
rblocks = [b for b in blocks if b["lang"] == "rust"]
embed = open("crates/engine/examples/embed.rs").read()
if not rblocks or rblocks[0]["body"] != embed:
    bad("README's first Rust block is not crates/engine/examples/embed.rs, byte for byte")
else:
    ok("README's first Rust block is crates/engine/examples/embed.rs, byte for byte")
    exe = os.path.join(build, "examples", "embed")
    if installed:
        print(f"SKIP: {readme}:{rblocks[0]['line']}: the Rust example is the build's program, not the installed package's")
    elif not os.path.exists(exe):
        skip(rblocks[0]["line"], f"no {exe} (cargo test --profile PROFILE -p seaccess-engine builds it)")
    else:
        r = subprocess.run([exe], capture_output=True, text=True, timeout=120)
        got = r.stdout + r.stderr
        if r.returncode != 0 or rblocks[0]["expect"] is None or got.rstrip("\n") != rblocks[0]["expect"].rstrip("\n"):
            bad(f"{readme}:{rblocks[0]['line']}: the Rust example (exit {r.returncode}) does not print what README shows after it", got)
        else:
            ok(f"{readme}:{rblocks[0]['line']}: the Rust example prints what README shows")

# --- No run block calls the lab's binary or the benchmarks: they belong in docs/.
lab = [b["line"] for b in blocks if b["lang"] == "sh" and re.search(r"seaccess-lab|seaccess (bench|lab)\b", b["body"])]
if lab:
    bad("README's run blocks call the lab or the benchmarks (they belong in docs/)", " ".join(map(str, lab)))
else:
    ok("no README run block calls seaccess-lab")

# --- Links: relative links lead to files; README's own anchors to its headings.
def anchor(h):
    h = h.strip().lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")

def check_links(path):
    body = open(path, encoding="utf-8").read()
    # Links inside fenced blocks are code, not links.
    body = re.sub(r"^```.*?^```", "", body, flags=re.S | re.M)
    heads = {anchor(h) for h in re.findall(r"^#+ (.*)$", body, re.M)}
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", body):
        if re.match(r"^[a-z]+:", target):
            continue
        file, _, frag = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        if not os.path.exists(dest):
            broken.append(target)
        elif frag and dest.endswith(".md"):
            dh = {anchor(h) for h in re.findall(r"^#+ (.*)$", re.sub(r"^```.*?^```", "", open(dest, encoding="utf-8").read(), flags=re.S | re.M), re.M)}
            if frag not in dh:
                broken.append(target)
    return broken

docs = [readme] + sorted(os.path.join("docs", f) for f in os.listdir("docs") if f.endswith(".md"))
broken = {p: check_links(p) for p in docs}
broken = {p: b for p, b in broken.items() if b}
if broken:
    bad("links that lead nowhere", "\n".join(f"{p}: {' '.join(b)}" for p, b in broken.items()))
else:
    ok(f"every relative link of README.md and docs/*.md leads somewhere ({len(docs)} files)")

# --- The blocks, run.
def needs(body):
    why = []
    if re.search(r"\brunuser\b|seaccess mount|--xattr trusted|fusermount3", body) and os.geteuid() != 0:
        why.append("needs root")
    if re.search(r"seaccess mount|/tmp/seaccess-demo/mnt", body) and not os.path.exists("/dev/fuse"):
        why.append("needs /dev/fuse")
    if re.search(r"\bseaccess run\b", body) and not installed and not os.path.exists(os.path.join(build, "..", "libselinux", "libselinux.so.1")):
        why.append(f"needs {os.path.normpath(os.path.join(build, '..', 'libselinux'))} (make capi)")
    return why

def prepare(body, line):
    # Join continued lines, so `# exits N` on the last line speaks for the whole command.
    out, cur = [], ""
    for l in body.split("\n"):
        if l.endswith("\\"):
            cur += l[:-1] + " "
            continue
        l = cur + l
        cur = ""
        m = re.match(r"^(.*?)\s+#\s*exits (\d+)\b.*$", l)
        if m:
            cmd, code = m.group(1), m.group(2)
            l = (f"__rc=0; {cmd} || __rc=$?; if [ \"$__rc\" != {code} ]; then "
                 f"echo \"{readme}:{line}: exited $__rc where README says {code}: {cmd.strip()[:60]}\" >&2; exit 1; fi")
        out.append(l)
    return "\n".join(out) + "\n"

env = dict(os.environ)
env["PATH"] = build + ":" + env["PATH"]
env["LC_ALL"] = "C.UTF-8"
env.pop("SEACCESS_POLICY", None)
demo = "/tmp/seaccess-demo"

def cleanup():
    mnt = os.path.join(demo, "mnt")
    if os.path.ismount(mnt):
        subprocess.run(["fusermount3", "-u", mnt], stderr=subprocess.DEVNULL)
    shutil.rmtree(demo, ignore_errors=True)

cleanup()
tmp = tempfile.mkdtemp(prefix="readme-test.")
try:
    for b in blocks:
        if b["lang"] not in ("sh", "python"):
            continue
        where = f"{readme}:{b['line']}"
        if b["skip"]:
            print(f"SKIP: {where}: {b['skip']}")
            continue
        if b["lang"] == "python" and installed:
            print(f"SKIP: {where}: the Python bindings are the wheel's, not the package's")
            continue
        if b["lang"] == "python":
            py = os.path.join(root, "target", "venv", "bin", "python")
            if not os.path.exists(py) or subprocess.run([py, "-c", "import seaccess"], capture_output=True).returncode != 0:
                skip(b["line"], "needs the bindings in target/venv (make python)")
                continue
            argv = [py, "-"]
            src = b["body"]
        else:
            why = needs(b["body"])
            if why:
                skip(b["line"], ", ".join(why))
                continue
            argv = ["bash", "-e", "-o", "pipefail", "-s"]
            src = prepare(b["body"], b["line"])
        # Output to a file of the block's own, not a pipe: a command that starts a daemon
        # (seaccess mount) leaves it holding the descriptors it inherited, so a pipe would never
        # reach its end, and a shared file would get the daemon's last words in a later block's
        # output.
        out_path = os.path.join(tmp, f"out.{b['line']}")
        with open(out_path, "w") as out:
            try:
                rc = subprocess.run(argv, input=src.encode(), stdout=out, stderr=subprocess.STDOUT,
                                    env=env, cwd=root, timeout=180).returncode
            except subprocess.TimeoutExpired:
                rc = "timeout (180 s)"
        got = open(out_path, encoding="utf-8", errors="replace").read()
        first_cmd = next((l for l in b["body"].split("\n") if l.strip() and not l.startswith("#")), "")
        if rc != 0:
            bad(f"{where}: the block fails ({rc}): {first_cmd[:70]}", got)
        elif b["expect"] is not None and got.rstrip("\n") != b["expect"].rstrip("\n"):
            import difflib
            d = "\n".join(difflib.unified_diff(b["expect"].rstrip("\n").split("\n"), got.rstrip("\n").split("\n"),
                                               "README", "output", lineterm=""))
            bad(f"{where}: the output is not the one README shows after it", d)
        else:
            ok(f"{where}: {first_cmd[:70]}" + (" (output as shown)" if b["expect"] is not None else ""))
finally:
    cleanup()
    shutil.rmtree(tmp, ignore_errors=True)

print(f"readme: {passes} passed, {failures} failed")
sys.exit(1 if failures else 0)
PY
