#!/usr/bin/env bash
# Labels programs ask for take effect on `seaccess mount` (issue 35, item 1 on the mount; item 2's
# relabel checks through it): Debian's mkdir, cp, install and sed on libseaccess (as
# libselinux.so.1) set their fscreate context, the library publishes it to the mount, and each
# create is checked and labelled with it as the kernel's may_create and inode_init_security do.
# Expected labels come from the policy (seaccess check / compute-create / label), never written
# here. The channel is attacked as nobody. Called by run.sh; the same prerequisites, and skips
# (exit 0) where FUSE is missing unless SEACCESS_REQUIRE_FUSE=1.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${SEACCESS_BUILD:-target/release}
case $BUILD in /*) BIN=$BUILD/seaccess ;; *) BIN=$PWD/$BUILD/seaccess ;; esac
FC=/etc/selinux/default/contexts/files/file_contexts
POL=/etc/selinux/default/policy/policy.33
U=unconfined_u:unconfined_r:unconfined_t:s0   # the default rule's
H=system_u:system_r:httpd_t:s0                 # the copied mkdir's exe= rule
NAME=system.seaccess.fscreate                  # what libseaccess sets on each mount's root
SUITE="mount fscreate"
source tests/mount/lib.sh
[ "$(id -u)" = 0 ] || skip "not root"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v fusermount3 >/dev/null || skip "no fusermount3"
for f in "$POL" "$FC"; do [ -r "$f" ] || skip "no $f (make deps)"; done
for need in getfattr setfattr runuser gcc install sed cp mkdir; do command -v $need >/dev/null || skip "no $need"; done
for p in mkdir cp install sed chcon; do [[ $(ldd "$(command -v $p)" 2>/dev/null) == *libselinux.so.1* ]] || skip "$p is not linked with libselinux"; done
[ -x "$BIN" ] || cargo build --profile "${BUILD##*/}" -q -p seaccess-cli
PY=/usr/bin/python3
[ -x "$PY" ] || skip "no /usr/bin/python3"

T=$(mktemp -d)
chmod 755 "$T"
# A mount point under a path file_contexts labels (for -Z), else under $T.
SRV=/srv/seaccess-fscreate.$$
cleanup() {
  for mp in "${MPS[@]}"; do is_mounted "$mp" && fusermount3 -uz "$mp" 2>/dev/null; done
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  rmdir "$SRV" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# libselinux.so.1 of this build (libseaccess's archive, linked as tests/capi/dropin.sh does),
# private to this run.
cargo build --profile "${BUILD##*/}" -q -p seaccess-capi || skip "libseaccess does not build"
mkdir -p "$T/lib"
gcc -shared -o "$T/lib/libselinux.so.1" -Wl,-soname,libselinux.so.1 -Wl,--version-script=crates/capi/libselinux.map \
  -Wl,--whole-archive "$BUILD/libseaccess.a" -Wl,--no-whole-archive -lpcre2-8 -lpthread -ldl -lm -lgcc_s || skip "cannot link libselinux.so.1"
# The interposer `seaccess run` preloads: without it setfscreatecon refuses (ENOTSUP), since
# creations off the mount could not honour it.
gcc -shared -fPIC -O2 -Wall -Werror -o "$T/lib/libseaccess-preload.so" crates/capi/preload/preload.c \
  "$T/lib/libselinux.so.1" -ldl || skip "cannot build the interposer"
# sel CMD...: CMD on libseaccess as `seaccess run --no-session` runs it, with the subjects the
# mount uses (so both agree on its context).
sel() { timeout 10 env LD_LIBRARY_PATH="$T/lib" LD_PRELOAD="$T/lib/libseaccess-preload.so" SEACCESS_POLICY="$POL" SEACCESS_SUBJECTS="$T/subjects" "$@"; }

# The tree, labelled from file_contexts as if it were "/", in trusted.selinux.
S=$T/src
mkdir -p "$S/tmp" "$S/etc" "$S/pub"
chmod 1777 "$S/pub"
echo 'a=1' > "$S/etc/app.conf"; echo 'hello' > "$S/tmp/note"
"$BIN" label --apply --xattr trusted.selinux --root "$S" -f "$FC" "$S" > /dev/null 2>&1
C_ETC=$(fclabel /etc/app.conf) L_TMP=$(fclabel /tmp dir)
setfattr -h -n trusted.selinux -v "$C_ETC" "$S/tmp/note"   # a file whose label a copy keeps
mkdir -p "$T/bin"; cp /bin/mkdir "$T/bin/webmkdir"; cp "$PY" "$T/bin/webpy"
cat > "$T/subjects" <<EOF
exe=$T/bin/webmkdir $H
exe=$T/bin/webpy $H
default $U
EOF
if mkdir "$SRV" 2>/dev/null; then M=$SRV; else M=$T/mnt; fi
LOG=$T/audit.log
start main "$S" "$M" --policy "$POL" -f "$FC" --path-prefix / --subjects "$T/subjects" --audit-log "$LOG" || { cat "$T/main.err"; skip "the mount does not start"; }
MAIN=$MPID
# The label the policy gives a CLASS named NAME created by SCON in PARENT (on the mount).
default_of() { create_ctx "$1 $(mlabel "$M/$2") $3 ${4:-x}"; }
D_DIR=$(default_of "$U" tmp dir) D_FILE=$(default_of "$U" tmp file)
expect "the policy's label for a new tmp dir and file ($D_DIR, $D_FILE) is not $C_ETC, which unconfined_t may create and relabel" \
  '[ -n "$D_DIR" ] && [ "$D_DIR" != "$C_ETC" ] && [ "$D_FILE" != "$C_ETC" ] && allowed "$U" "$C_ETC" dir create && allowed "$U" "$C_ETC" file create relabelto && allowed "$U" "$U" process setfscreate'
# both PATH WANT: the label on the mount and on the backing file.
both() { [ -n "$2" ] && [ "$(mlabel "$M/$1")" = "$2" ] && [ "$(label_of "$S/$1" trusted.selinux)" = "$2" ]; }

# 1. Debian's programs, as the user runs them. ---------------------------------------------
mark
sel mkdir --context="$C_ETC" "$M/tmp/d1"; rc=$?
expect "mkdir --context=$C_ETC on the mount: the directory is $C_ETC (not $D_DIR), no record" '[ $rc -eq 0 ] && both tmp/d1 "$C_ETC" && no_avc'
sel cp --preserve=context "$M/tmp/note" "$M/tmp/c1"; rc=$?
expect "cp --preserve=context keeps $C_ETC on the copy" '[ $rc -eq 0 ] && both tmp/c1 "$C_ETC" && [ "$(cat "$S/tmp/c1")" = hello ]'
sel cp -a "$M/tmp/note" "$M/tmp/c2"; rc=$?
expect "cp -a keeps $C_ETC on the copy" '[ $rc -eq 0 ] && both tmp/c2 "$C_ETC"'
sel sed -i s/hello/bye/ "$M/tmp/note"; rc=$?
expect "sed -i edits the file and keeps its label $C_ETC" '[ $rc -eq 0 ] && [ "$(cat "$S/tmp/note")" = bye ] && both tmp/note "$C_ETC"'
mkdir "$M/tmp/d0"
expect "a plain mkdir after them (a new process) gets the policy's $D_DIR: nothing outlives the processes that asked" 'both tmp/d0 "$D_DIR"'
if [ "$M" = "$SRV" ]; then
  # -Z: the type file_contexts gives the path (coreutils keeps the process's user and role).
  for c in "mkdir -Z $M/tmp/z1:tmp/z1:dir" "install -Z /etc/hostname $M/tmp/z2:tmp/z2:file" "cp -Z /etc/hostname $M/tmp/z3:tmp/z3:file"; do
    IFS=: read -r cmd rel class <<< "$c"
    want=$(fclabel "$M/$rel" $class | cut -d: -f3) dflt=$(default_of "$U" tmp $class | cut -d: -f3)
    sel $cmd; rc=$?
    got=$(mlabel "$M/$rel")
    expect "${cmd%% $M*} ... on the mount: type ${got:+$(cut -d: -f3 <<< "$got")} is file_contexts' $want for $M/$rel (the policy's would be $dflt)" \
      '[ $rc -eq 0 ] && [ -n "$want" ] && [ "$want" != "<<none>>" ] && [ "$want" != "$dflt" ] && [ "$(cut -d: -f3 <<< "$got")" = "$want" ] && both "$rel" "$got"'
  done
else
  echo "SKIP: -Z: $SRV cannot be made, so no mount point file_contexts labels"
fi

# 2. Refusals: nothing created, the kernel's errno and record. ----------------------------
expect "seaccess check: unconfined_t may not create a dir labelled $H" 'denied "$U" "$H" dir create'
mark
out=$(sel mkdir --context="$H" "$M/tmp/r1" 2>&1); rc=$?
expect "mkdir --context=$H: EACCES, a { create } record for $H dir, nothing created" \
  '[ $rc -ne 0 ] && [[ $out == *"Permission denied"* ]] && avc "$U" "$H" dir 0 r1 && since | grep -q "{ create }" && [ ! -e "$S/tmp/r1" ]'
# A type unconfined_t may create directories of that may not be associated with the file system.
for ty in configfs_t bdev_t cpusetfs_t kvmfs_t; do
  CA=system_u:object_r:$ty:s0
  allowed "$U" "$CA" dir create && break
  CA=
done
mark
out=$(sel mkdir --context="$CA" "$M/tmp/r2" 2>&1); rc=$?
fs=$(since | sed -n "s/.* scontext=$CA tcontext=\([^ ]*\) tclass=filesystem .*/\1/p" | head -n 1)
expect "mkdir --context=$CA (unconfined_t may create it): EACCES, an { associate } record $CA -> ${fs:-?} filesystem that seaccess check agrees with, nothing created" \
  '[ -n "$CA" ] && [ $rc -ne 0 ] && [[ $out == *"Permission denied"* ]] && [ -n "$fs" ] && avc "$CA" "$fs" filesystem 0 && since | grep -q "{ associate }" && [ ! -e "$S/tmp/r2" ]'
expect "seaccess check: $H may not set its fscreate context" 'denied "$H" "$H" process setfscreate'
# Denied, and dontaudit'ed in Debian's policy (then no record, as on a kernel).
[[ $("$BIN" check -p "$POL" "$H" "$H" process setfscreate 2>&1) == *"not audited"* ]]; quiet=$?
mark
out=$(timeout 10 "$T/bin/webpy" -c 'import os, sys; os.setxattr(sys.argv[1], sys.argv[2], sys.argv[3].encode())' "$M" $NAME "$C_ETC" 2>&1); rc=$?
expect "httpd_t (a copied python) publishing a context to the mount: EACCES$([ $quiet = 0 ] && echo ', no record (dontaudit)' || echo ', a { setfscreate } record')" \
  '[ $rc -ne 0 ] && [[ $out == *PermissionError* ]] && if [ $quiet = 0 ]; then no_avc; else avc "$H" "$H" process 0 && since | grep -q "{ setfscreate }"; fi'
out=$(sel "$T/bin/webmkdir" --context="$C_ETC" "$M/tmp/r3" 2>&1); rc=$?
expect "the copied mkdir as httpd_t: setfscreatecon fails (the mount's EACCES), mkdir exits non-zero, nothing created" \
  '[ $rc -ne 0 ] && [[ $out == *"failed to set default file creation context"*"Permission denied"* ]] && [ ! -e "$S/tmp/r3" ]'
BOGUS=system_u:object_r:no_such_type_t:s0
mark
timeout 10 setfattr -n $NAME -v "$BOGUS" "$M" 2> "$T/e"; rc=$?
expect "an invalid fscreate context: EINVAL and the kernel's op=fscreate SELINUX_ERR record" \
  '[ $rc -ne 0 ] && grep -q "Invalid argument" "$T/e" && since | grep -q "^type=SELINUX_ERR .*op=fscreate invalid_context=\"$BOGUS\""'

# 3. Per thread, copied at fork, cleared at exec (the kernel's credential rules). ---------
cat > "$T/fc.py" <<'EOF'
import errno, os, sys, threading
m, name, op, ctx, a = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
pub = lambda v: os.setxattr(m, name, v.encode())
def mk(p):
    try:
        os.mkdir(p)
        return "OK"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
out = []
if op == "exec":      # set, create, exec mkdir
    pub(ctx); print(mk(a[0]), flush=True)
    os.execv("/bin/mkdir", ["mkdir", a[1]])
elif op == "fork":    # set, the child creates; the parent clears, then creates
    pub(ctx); pid = os.fork()
    if pid == 0:
        print(mk(a[0]), flush=True); os._exit(0)
    os.waitpid(pid, 0); pub(""); out.append(mk(a[1]))
elif op == "own":     # a thread sets its own and creates; the main thread's creates are its own
    t = threading.Thread(target=lambda: (pub(ctx), out.append(mk(a[0])))); t.start(); t.join()
    out.append(mk(a[1]))
elif op == "newthread":  # the main thread sets, then a new thread creates, clears, creates
    pub(ctx)
    t = threading.Thread(target=lambda: (out.append(mk(a[0])), pub(""), out.append(mk(a[1])))); t.start(); t.join()
    out.append(mk(a[2]))
print(" ".join(out))
EOF
fc() { timeout 10 "$PY" "$T/fc.py" "$M" $NAME "$@" 2>&1 | tr '\n' ' ' | sed 's/ *$//'; }
out=$(fc exec "$C_ETC" "$M/tmp/e1" "$M/tmp/e2")
expect "set, then create: $C_ETC; after exec the new program creates with the policy's $D_DIR (the kernel clears fscreate at exec)" \
  '[ "$out" = OK ] && both tmp/e1 "$C_ETC" && both tmp/e2 "$D_DIR"'
out=$(fc fork "$C_ETC" "$M/tmp/f1" "$M/tmp/f2")
expect "a forked child creates with its parent's $C_ETC; the parent, cleared, with $D_DIR" '[ "$out" = "OK OK" ] && both tmp/f1 "$C_ETC" && both tmp/f2 "$D_DIR"'
out=$(fc own "$C_ETC" "$M/tmp/t1" "$M/tmp/t2")
expect "a thread's context is its own: the thread creates $C_ETC, the main thread $D_DIR" '[ "$out" = "OK OK" ] && both tmp/t1 "$C_ETC" && both tmp/t2 "$D_DIR"'
out=$(fc newthread "$C_ETC" "$M/tmp/n1" "$M/tmp/n2" "$M/tmp/n3")
expect "a thread made while its process has a context, whose creator the kernel does not name: its create fails (EIO, logged), nothing made; once it clears its own, it creates $D_DIR; the main thread $C_ETC" \
  '[ "$out" = "EIO OK OK" ] && [ ! -e "$S/tmp/n1" ] && both tmp/n2 "$D_DIR" && both tmp/n3 "$C_ETC" && grep -q "fscreate context is not known" "$T/main.err"'

# 4. The channel cannot be forged: nobody sets only its own thread's context. ------------
# A victim (root, started first) waits; nobody publishes, naming the victim every way it can
# think of, through every node it reaches, and stays alive with what it published while the
# victim creates; then nobody creates.
timeout 30 "$PY" -c 'import os, sys, time
print(os.getpid(), flush=True)
while not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
os.mkdir(sys.argv[1]); print("OK", flush=True)' "$M/pub/v1" "$T/victim.go" > "$T/victim.out" 2>&1 &
VPID=$!
for _ in $(seq 100); do [ -s "$T/victim.out" ] && break; sleep 0.1; done
vpid=$(head -n 1 "$T/victim.out")
cat > "$T/forge.py" <<'EOF'
import os, sys
m, name, ctx, victim = sys.argv[1:]
took = []
for node in (m, m + "/pub", m + "/tmp"):
    for v in (f"{victim} {ctx}", f"pid={victim}\n{ctx}", f"{ctx}\0{victim}", ctx):
        try:
            os.setxattr(node, name, v.encode())
            took.append(repr(v))
        except OSError:
            pass
print("published", len(took), flush=True)
sys.stdin.readline()
os.mkdir(m + "/pub/mine")
print("OK", flush=True)
EOF
coproc FORGER { exec timeout 30 runuser -u nobody -- "$PY" "$T/forge.py" "$M" $NAME "$C_ETC" "$vpid" 2>&1; }
read -r -t 10 -u "${FORGER[0]}" fpub
touch "$T/victim.go"; wait "$VPID"; vres=$(sed -n 2p "$T/victim.out")
echo go >&"${FORGER[1]}"; read -r -t 10 -u "${FORGER[0]}" fres
wait "$FORGER_PID" 2>/dev/null
D_PUB=$(default_of "$U" pub dir v1)
expect "nobody's attempts to name the victim (pid $vpid) set its own thread's context only ($fpub): nobody's own mkdir is $C_ETC" \
  '[ -n "$vpid" ] && [[ $fpub == "published "[1-9]* ]] && [ "$fres" = OK ] && both pub/mine "$C_ETC"'
expect "... and the victim, creating while nobody holds its context, gets the policy's $D_PUB" '[ "$vres" = OK ] && both pub/v1 "$D_PUB" && [ "$D_PUB" != "$C_ETC" ]'

# 5. The label through setxattr (item 2): relabelto and associate refused as the kernel does. -
expect "seaccess check: unconfined_t may relabel tmp files from $D_FILE, not to $H; $CA may not be associated" \
  'allowed "$U" "$D_FILE" file relabelfrom && denied "$U" "$H" file relabelto && allowed "$U" "$CA" file relabelto'
echo x > "$M/tmp/x1"
mark
out=$(sel chcon "$H" "$M/tmp/x1" 2>&1); rc=$?
expect "chcon $H: EACCES, a { relabelto } record, the label stays $D_FILE" \
  '[ $rc -ne 0 ] && avc "$U" "$H" file 0 x1 && since | grep -q "{ relabelto }" && both tmp/x1 "$D_FILE"'
mark
out=$(sel chcon "$CA" "$M/tmp/x1" 2>&1); rc=$?
expect "chcon $CA: EACCES, an { associate } record, the label stays" \
  '[ $rc -ne 0 ] && avc "$CA" "$fs" filesystem 0 && since | grep -q "{ associate }" && both tmp/x1 "$D_FILE"'
mark
out=$(sel chcon -t no_such_type_t "$M/tmp/x1" 2>&1); rc=$?
expect "chcon -t no_such_type_t: EINVAL (Invalid argument), the SELINUX_ERR record, the label stays" \
  '[ $rc -ne 0 ] && [[ $out == *"Invalid argument"* ]] && since | grep -q "^type=SELINUX_ERR .*op=setxattr invalid_context=" && both tmp/x1 "$D_FILE"'

stop_mount "$M" "$MAIN"
expect "the mount is gone" '! is_mounted "$M"'
summary
