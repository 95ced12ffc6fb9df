#!/usr/bin/env bash
# Labels and contexts programs ask for under `seaccess run`, off the mount: Debian's own
# programs as a user runs them (chcon, cp --preserve=context, cp -a, cp -Z, install -Z,
# mkdir -Z, mkdir --context=, sed -i, runcon, a type transition on exec). Every expected label,
# context and refusal is derived from the policy (seaccess check, compute-create, label),
# never written here. Needs root (the user_t caller is `runuser -u nobody`), Debian's policy and
# file_contexts, attr (getfattr, setfattr) and `make capi` (libselinux.so.1 and the interposer).
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${SEACCESS_BUILD:-target/release}
case $BUILD in /*) BIN=$BUILD/seaccess ;; *) BIN=$PWD/$BUILD/seaccess ;; esac
POL=/etc/selinux/default/policy/policy.33
FC=/etc/selinux/default/contexts/files/file_contexts
U=unconfined_u:unconfined_r:unconfined_t:s0   # the caller's context without a subjects file
UT=user_u:user_r:user_t:s0                     # what the subjects file gives nobody
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok: $1"; }
bad() { fail=$((fail + 1)); echo "FAIL: $1"; }
summary() { echo "run labels: $pass passed, $fail failed"; exit $((fail > 0)); }
skip() { echo "SKIP: $1"; summary; }
[ "$(id -u)" = 0 ] || skip "not root"
for f in "$POL" "$FC"; do [ -r "$f" ] || skip "no $f (make deps)"; done
for need in getfattr setfattr runuser runcon chcon seinfo; do command -v $need >/dev/null || skip "no $need (make deps)"; done
[ -x "$BIN" ] || cargo build --profile "${BUILD##*/}" -q -p seaccess-cli
for f in libselinux.so.1 libseaccess-preload.so; do [ -e target/libselinux/$f ] || skip "no target/libselinux/$f (make capi)"; done

T=$(mktemp -d)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM HUP

# Helpers. --------------------------------------------------------------------------------
label() { getfattr -h --absolute-names --only-values -n "${2:-security.selinux}" -- "$1" 2>/dev/null | tr -d '\0'; }
run() { timeout 20 "$BIN" run -p "$POL" -- "$@"; }
# --no-session: a session's selinuxfs view needs /dev/fuse, which only root may open here; the
# labels interposer is the same with or without a session.
asuser() { timeout 20 runuser -u nobody -- "$BIN" run --no-session -p "$POL" --subjects "$T/subjects" -- "$@"; }
allowed() { "$BIN" check -p "$POL" "$@" > /dev/null 2>&1; }
valid() { "$BIN" check -p "$POL" "$1" "$1" file read > /dev/null 2>&1; [ $? -ne 2 ]; }
create_of() { echo "$1 $2 $3 $4" | "$BIN" compute-create -p "$POL" 2>/dev/null; }
# Whether SCON may create a CLASS labelled NEW in DIR (labelled DCTX): may_create's checks.
may_create() {
  allowed "$1" "$2" dir write search add_name && allowed "$1" "$3" "$4" create \
    && allowed "$3" "$(fs_ctx)" filesystem associate
}
# Whether SCON may relabel a CLASS from OLD to NEW (selinux_inode_setxattr).
may_relabel() { allowed "$1" "$2" "$4" relabelfrom && allowed "$1" "$3" "$4" relabelto && allowed "$3" "$(fs_ctx)" filesystem associate; }
printf 'uid=65534 %s\n' "$UT" > "$T/subjects"
# The filesystem context the checks use: what the policy's fs_use gives the filesystem $T is on.
FSTYPE=$(stat -f -c %T "$T")
case $FSTYPE in ext2/ext3) FSTYPE=ext4 ;; esac
# (setools' seinfo, from make deps: the policy's own statement, read apart from seaccess.)
FSCTX=$(seinfo --fs_use "$FSTYPE" -x "$POL" 2>/dev/null | awk -v t="$FSTYPE" '$2 == t {print $3; exit}' | tr -d ';')
[ -n "$FSCTX" ] || skip "the policy has no fs_use statement for $FSTYPE, where $T is"
fs_ctx() { echo "$FSCTX"; }

# A labelled tree: the working directory and a file in it, as restorecon leaves a home.
W=$T/w
mkdir "$W"
DIRCTX=system_u:object_r:user_home_dir_t:s0
SRCCTX=system_u:object_r:etc_t:s0
run chcon "$DIRCTX" "$W"
echo a > "$W/src"
run chcon "$SRCCTX" "$W/src"
[ "$(label "$W")" = "$DIRCTX" ] && [ "$(label "$W/src")" = "$SRCCTX" ] || skip "cannot label the scratch tree (security.selinux refused on $FSTYPE?)"
# The -Z tests below take the policy's create label only where file_contexts has none for the
# path (coreutils' -Z asks selabel_lookup first).
fcnone() { [ "$("$BIN" label -f "$FC" --type "${2:-file}" "$1" | cut -f2)" = "<<none>>" ]; }

# 2. setfilecon is selinux_inode_setxattr. ------------------------------------------------
echo b > "$W/f"
run chcon "$SRCCTX" "$W/f"
if valid system_u:object_r:no_such_t:s0; then bad "no_such_t is a type of the policy: cannot test an invalid context"; else
  out=$(run chcon -t no_such_t "$W/f" 2>&1); rc=$?
  if [ $rc -ne 0 ] && grep -q "Invalid argument" <<< "$out" && grep -q 'invalid_context="system_u:object_r:no_such_t:s0"' <<< "$out" && [ "$(label "$W/f")" = "$SRCCTX" ]; then
    ok "chcon -t no_such_t: EINVAL with the SELINUX_ERR record, label unchanged"
  else bad "chcon -t no_such_t: rc=$rc label=$(label "$W/f") out: $out"; fi
fi
NEW=system_u:object_r:user_home_t:s0
out=$(run chcon "$NEW" "$W/f" 2>&1); rc=$?
if may_relabel "$U" "$SRCCTX" "$NEW" file; then want=0; else want=1; fi
got=$([ $rc -eq 0 ] && [ "$(label "$W/f")" = "$NEW" ] && echo 0 || echo 1)
[ "$got" = "$want" ] && ok "chcon $NEW as unconfined: $([ $want = 0 ] && echo applied || echo refused), as the policy says" || bad "chcon as unconfined: rc=$rc label=$(label "$W/f") want=$want: $out"

# A user_t process (nobody) on its own file, labelled in user.selinux (where nobody writes).
mkdir "$T/home"
chown nobody "$T/home"
setfattr -n user.selinux -v "$DIRCTX" "$T/home"
OWN=user_u:object_r:user_home_t:s0
runuser -u nobody -- sh -c "echo x > '$T/home/mine'"
setfattr -n user.selinux -v "$OWN" "$T/home/mine"
SH=user_u:object_r:shadow_t:s0
out=$(cd "$T/home" && asuser chcon -t shadow_t mine 2>&1); rc=$?
if may_relabel "$UT" "$OWN" "$SH" file; then
  [ $rc -eq 0 ] && [ "$(label "$T/home/mine" user.selinux)" = "$SH" ] && ok "chcon -t shadow_t as user_t: allowed by the policy, applied" || bad "chcon -t shadow_t as user_t: rc=$rc: $out"
else
  denied=relabelto; allowed "$UT" "$OWN" file relabelfrom || denied=relabelfrom
  if [ $rc -ne 0 ] && grep -q "Permission denied" <<< "$out" && grep -q "avc:  denied  { $denied } for .*scontext=$UT" <<< "$out" && [ "$(label "$T/home/mine" user.selinux)" = "$OWN" ]; then
    ok "chcon -t shadow_t as user_t: EACCES with the { $denied } record, label unchanged"
  else bad "chcon -t shadow_t as user_t: rc=$rc label=$(label "$T/home/mine" user.selinux): $out"; fi
fi

# 1. Labels programs ask for take effect. ------------------------------------------------
want_preserve() { may_create "$U" "$DIRCTX" "$SRCCTX" file && echo "$SRCCTX" || echo refused; }
for c in "cp --preserve=context" "cp -a"; do
  n=$(echo "$c" | tr -dc 'a-z')
  out=$(cd "$W" && run $c src "$n" 2>&1); rc=$?
  got=$([ $rc -eq 0 ] && label "$W/$n" || echo refused)
  want=$(want_preserve)
  [ "$got" = "$want" ] && ok "$c: $want" || bad "$c: got $got, want $want: $out"
done
for c in "cp -Z src:file:cpz" "install -Z src:file:instz" "mkdir -Z:dir:mkdirz" "touch:file:touched"; do
  IFS=: read -r cmd class n <<< "$c"
  if ! fcnone "$W/$n" "$class"; then bad "$cmd: file_contexts labels $W/$n: the expected label is not compute-create's"; continue; fi
  out=$(cd "$W" && run $cmd "$n" 2>&1); rc=$?
  want=$(create_of "$U" "$DIRCTX" "$class" "$n")
  may_create "$U" "$DIRCTX" "$want" "$class" || want=refused
  got=$([ $rc -eq 0 ] && label "$W/$n" || echo refused)
  [ -n "$want" ] && [ "$got" = "$want" ] && ok "$cmd: $want (compute-create)" || bad "$cmd: got $got, want $want: $out"
done
CTX=system_u:object_r:tmp_t:s0
out=$(cd "$W" && run mkdir --context=$CTX mkctx 2>&1); rc=$?
want=$(may_create "$U" "$DIRCTX" "$CTX" dir && echo "$CTX" || echo refused)
got=$([ $rc -eq 0 ] && label "$W/mkctx" || echo refused)
[ "$got" = "$want" ] && ok "mkdir --context=$CTX: $want" || bad "mkdir --context: got $got, want $want: $out"
ino=$(stat -c %i "$W/src")
out=$(cd "$W" && run sed -i s/a/b/ src 2>&1); rc=$?
if [ $rc -eq 0 ] && [ "$(stat -c %i "$W/src")" != "$ino" ] && [ "$(cat "$W/src")" = b ] && [ "$(label "$W/src")" = "$SRCCTX" ]; then
  ok "sed -i: a new file, keeping the label $SRCCTX"
else bad "sed -i: rc=$rc label=$(label "$W/src"): $out"; fi

# A creation the policy refuses fails with EACCES and creates nothing.
out=$(cd "$T/home" && asuser mkdir --context=$SH sdir 2>&1); rc=$?
if may_create "$UT" "$DIRCTX" "$SH" dir; then
  [ $rc -eq 0 ] && ok "mkdir --context=shadow_t as user_t: allowed by the policy" || bad "mkdir --context=shadow_t as user_t: rc=$rc: $out"
elif [ $rc -ne 0 ] && grep -q "Permission denied" <<< "$out" && grep -q "avc:  denied" <<< "$out" && [ ! -e "$T/home/sdir" ]; then
  ok "mkdir --context=shadow_t as user_t: EACCES with its record, nothing created"
else bad "mkdir --context=shadow_t as user_t: rc=$rc exists=$([ -e "$T/home/sdir" ] && echo yes || echo no): $out"; fi

# Without the interposer nothing would apply an fscreate context: it is refused, not ignored.
LIB=$PWD/target/libselinux
out=$(cd "$W" && LD_LIBRARY_PATH=$LIB SEACCESS_POLICY=$POL timeout 20 cp --preserve=context src nopre 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "Operation not supported" <<< "$out" && ok "without the interposer: cp --preserve=context fails (ENOTSUP)" || bad "without the interposer: rc=$rc: $out"

# 3. Exec contexts. ------------------------------------------------------------------------
H=system_u:system_r:httpd_t:s0
ID=$(command -v id)
IDCTX=$("$BIN" label -f "$FC" "$(readlink -f "$ID")" | cut -f2)
out=$(run runcon "$H" id -Z 2>&1); rc=$?
if allowed "$U" "$H" process transition && allowed "$H" "$IDCTX" file entrypoint; then
  [ $rc -eq 0 ] && [ "$out" = "$H" ] && ok "runcon httpd_t id -Z: allowed by the policy, runs in $H" || bad "runcon httpd_t: rc=$rc: $out"
elif [ $rc -ne 0 ] && grep -q "Permission denied" <<< "$out" && grep -q "avc:  denied" <<< "$out" && ! grep -qx "$H" <<< "$out"; then
  ok "runcon $H id -Z: refused (EACCES and its record), as the kernel refuses it"
else bad "runcon httpd_t: rc=$rc: $out"; fi

# A program whose label has a type transition from the caller: an allowed runcon and the
# transition on a plain exec (from a shell the run started).
cp "$(readlink -f "$ID")" "$W/myid"
EXE=system_u:object_r:mount_exec_t:s0
run chcon "$EXE" "$W/myid"
TR=$(create_of "$U" "$EXE" process "")
want=$U
if [ "$TR" != "$U" ]; then
  allowed "$U" "$TR" process transition && allowed "$TR" "$EXE" file entrypoint && allowed "$U" "$EXE" file execute && want=$TR || want=refused
else allowed "$U" "$EXE" file execute execute_no_trans || want=refused; fi
out=$(cd "$W" && run sh -c './myid -Z' 2>&1); rc=$?
got=$([ $rc -eq 0 ] && echo "$out" || echo refused)
[ "$got" = "$want" ] && ok "exec of a $EXE program from $U: $want (compute-create, check)" || bad "exec transition: got $got, want $want: $out"
if [ "$TR" != "$U" ] && [ "$want" != refused ]; then
  out=$(cd "$W" && run runcon "$TR" ./myid -Z 2>&1); rc=$?
  [ $rc -eq 0 ] && [ "$out" = "$TR" ] && ok "runcon $TR ./myid -Z: allowed, runs in $TR" || bad "allowed runcon: rc=$rc: $out"
fi

# AT_SECURE: a transition `process {noatsecure}` does not allow runs the program in secure mode
# on a kernel (glibc then drops LD_PRELOAD, LD_LIBRARY_PATH, TMPDIR...); the interposer drops
# them, but for its own LD_PRELOAD and libseaccess's directory. A user_t caller (nobody) runs a
# copy of env labelled passwd_exec_t; the domain, the transition and noatsecure come from the
# policy.
PEXE=system_u:object_r:passwd_exec_t:s0
cp "$(readlink -f "$(command -v env)")" "$T/home/penv"
setfattr -n security.selinux -v "$PEXE" "$T/home/penv"
PTR=$(create_of "$UT" "$PEXE" process "")
if [ -n "$PTR" ] && [ "$PTR" != "$UT" ] && allowed "$UT" "$PTR" process transition && allowed "$PTR" "$PEXE" file entrypoint && allowed "$UT" "$PEXE" file execute; then
  out=$(cd "$T/home" && TMPDIR=/tmp LD_LIBRARY_PATH=/nonexistent asuser sh -c './penv' 2>&1)
  got="$(grep -E '^(SEACCESS_CONTEXT|LD_PRELOAD|LD_LIBRARY_PATH|TMPDIR)=' <<< "$out" | sort | tr '\n' ' ')"
  if allowed "$UT" "$PTR" process noatsecure; then
    want="LD_LIBRARY_PATH=$LIB:/nonexistent LD_PRELOAD=$LIB/libseaccess-preload.so SEACCESS_CONTEXT=$PTR TMPDIR=/tmp "
  else
    want="LD_LIBRARY_PATH=$LIB LD_PRELOAD=$LIB/libseaccess-preload.so SEACCESS_CONTEXT=$PTR "
  fi
  [ "$got" = "$want" ] && ok "exec $UT -> $PTR ($(allowed "$UT" "$PTR" process noatsecure && echo noatsecure allowed: environment kept || echo noatsecure refused: secure mode, the unsecure variables dropped but the session\'s own))" \
    || bad "AT_SECURE scrub: got '$got', want '$want'"
else bad "no transition from $UT on $PEXE in this policy (compute-create gave ${PTR:-nothing})"; fi

# system() and popen() start /bin/sh through the interposer's checked exec (the C library's own
# would run it in the caller's context whatever setexeccon asked). The allowed context: a domain
# that has the shell's label as an entrypoint (seaccess search), that unconfined_t may
# transition to, and that runs id without a transition of its own (check, compute-create).
SHCTX=$("$BIN" label -f "$FC" "$(readlink -f /bin/sh)" | cut -f2)
if command -v gcc > /dev/null; then
  gcc -O2 -Wall -o "$T/shx" tests/capi/shell_exec.c -lselinux
  OKX=
  for x in $("$BIN" search --policy "$POL" --allow -t "$(echo "$SHCTX" | cut -d: -f3)" -c file -p entrypoint 2>/dev/null | awk '{print $2}' | sort -u); do
    for c in "unconfined_u:unconfined_r:$x:s0" "system_u:system_r:$x:s0"; do
      valid "$c" || continue
      if allowed "$U" "$c" process transition && allowed "$c" "$SHCTX" file entrypoint && allowed "$U" "$SHCTX" file execute \
        && allowed "$c" "$IDCTX" file execute execute_no_trans && [ "$(create_of "$c" "$IDCTX" process "")" = "$c" ]; then OKX=$c; break 2; fi
    done
  done
  out=$(run "$T/shx" null system 'exit 3' popen 'echo a; echo b' popenw 'cat > /dev/null; exit 4' nested 'sleep 3' 2>&1)
  [ "$(echo $out)" = "null=1 system=exited 3 popen=a b pclose=exited 0 popenw pclose=exited 4 nested=ok" ] \
    && ok "system(NULL) says a shell runs; system's status is the shell's; popen reads and writes its shell, pclose gives its status; a popen'd stream is closed in a later popen's shell" \
    || bad "system/popen without an exec context: $(echo $out)"
  if [ -n "$OKX" ]; then
    out=$(run "$T/shx" setexeccon "$OKX" system 'id -Z' popen 'id -Z' 2>&1)
    [ "$(echo $out)" = "setexeccon=ok $OKX system=exited 0 popen=$OKX pclose=exited 0" ] \
      && ok "setexeccon $OKX then system(\"id -Z\") and popen(\"id -Z\"): the shell runs in $OKX (allowed by the policy)" \
      || bad "setexeccon $OKX then system/popen: $(echo $out)"
  else bad "no domain with the shell's label ($SHCTX) as an entrypoint that $U may transition to"; fi
  if allowed "$U" "$H" process transition && allowed "$H" "$SHCTX" file entrypoint; then
    bad "the policy lets $U run the shell in $H: no refused context to test system() with"
  else
    out=$(run "$T/shx" setexeccon "$H" system 'id -Z' popen 'id -Z' 2>&1)
    if grep -qx "system=exited 127" <<< "$out" && grep -q "^popen=NULL Permission denied" <<< "$out" \
      && [ "$(grep -c "avc:  denied  { .* } for .*path=\"/bin/sh\".*tcontext=$H" <<< "$out")" = 2 ] && ! grep -qx "$H" <<< "$out"; then
      ok "setexeccon $H then system() and popen(): the shell's exec refused with its record (system: as a shell exiting 127; popen: NULL, EACCES)"
    else bad "setexeccon $H then system/popen: $out"; fi
  fi
else bad "no gcc: the system()/popen() program cannot be built"; fi

summary
