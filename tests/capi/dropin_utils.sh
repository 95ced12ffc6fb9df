#!/usr/bin/env bash
# Debian's selinux-utils programs that tests/capi/run.sh does not run (and policycoreutils'
# sestatus), UNMODIFIED, on the drop-in target/libselinux/libselinux.so.1 (make capi), each
# answer checked against what is derived independently of the library:
#   - the policy, through the seaccess command (SEACCESS_BIN: check, compute-av, compute-create,
#     info, label), Debian's checkpolicy (the policy as text: booleans, permissions in bit
#     order) and libsepol (tests/capi/dropin_sepol.c: validatetrans, which seaccess has no
#     command for);
#   - the policy's configuration files (/etc/selinux/TYPE: seusers, contexts/);
#   - the real libselinux (the system's libselinux.so.1), where a program answers the same on
#     both without a kernel (no SELinux here): the two outputs are compared directly;
#   - docs/run.md's kernel-only table and the library's documented model (one in-process kernel
#     per process), for what only a kernel could answer.
# What a program leaves inside its own process (a boolean toggled, setenforce's mode) is read
# by tests/capi/dropin_watch.c, preloaded: at exit it asks the same library and writes it down.
# Usage: bash tests/capi/dropin_utils.sh [POLICY] [SEACCESS_BIN] (from the repository root;
# POLICY defaults to /etc/selinux/default/policy/policy.33, SEACCESS_BIN to target/ci/seaccess).
# Needs selinux-utils, policycoreutils (sestatus), attr, checkpolicy, libsepol-dev, gcc and
# util-linux's setpriv; run as root (security.* attributes, a process of another uid).
set -uo pipefail
cd "$(dirname "$0")/../.."
POL=${1:-/etc/selinux/default/policy/policy.33}
SEA=${2:-target/ci/seaccess}
MLS=/etc/selinux/mls/policy/policy.33
LIBDIR=$PWD/target/libselinux
unset SEACCESS_POLICY SEACCESS_SUBJECTS LD_LIBRARY_PATH LD_PRELOAD
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok: $1"; }
bad() { fail=$((fail + 1)); echo "FAIL: $1"; }
finish() { echo "dropin_utils: $pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }

for need in "$LIBDIR/libselinux.so.1" "$SEA" "$POL" "$MLS" /etc/selinux/config; do
  [ -e "$need" ] || bad "$need is missing (make capi deps)"
done
for tool in compute_av getsebool togglesebool getfilecon setfilecon getpidcon selinuxexeccon getenforce setenforce \
    selinuxenabled policyvers getdefaultcon getseuser selinux_check_securetty_context avcstat validatetrans sestatus \
    setfattr getfattr checkpolicy gcc setpriv; do
  command -v $tool > /dev/null || bad "$tool is not installed (make deps)"
done
[ -e /usr/include/sepol/sepol.h ] || bad "libsepol-dev is not installed (make deps)"
[ "$(id -u)" = 0 ] || bad "run as root (security.selinux attributes, a process of another uid)"
[ "$fail" -eq 0 ] || finish
SEA=$(readlink -f "$SEA") POL=$(readlink -f "$POL")
TYPE=$(awk -F= '$1 == "SELINUXTYPE" { print $2 }' /etc/selinux/config)
ROOT=/etc/selinux/$TYPE CTXD=/etc/selinux/$TYPE/contexts
# Scratch space outside /tmp (file_contexts leaves /tmp's paths unlabelled), readable by the
# uid the fallback test runs as.
R=$(mktemp -d /var/tmp/seaccess-dropin-utils.XXXXXX) && chmod 755 "$R"
T=$R/t && mkdir "$T"
KIDS=()
cleanup() { [ ${#KIDS[@]} -eq 0 ] || kill "${KIDS[@]}" 2> /dev/null; wait 2> /dev/null; rm -rf "$R"; }
trap cleanup EXIT

# How programs run: on the drop-in with the policy (no subjects rules: every process is
# unconfined_t), with the subjects rules, with no policy named, and on the real libselinux.
on() { env -u SEACCESS_SUBJECTS LD_LIBRARY_PATH="$LIBDIR" SEACCESS_POLICY="$POL" "$@"; }
subj() { env LD_LIBRARY_PATH="$LIBDIR" SEACCESS_POLICY="$POL" SEACCESS_SUBJECTS="$R/subjects" "$@"; }
nopol() { env LD_LIBRARY_PATH="$LIBDIR" "$@"; }
sys() { "$@"; }
# A run as one text: standard output, then standard error (separately: a program's stdout is
# buffered, its stderr not), then the exit status. expect builds the same from its parts.
res() { "$@" > "$T/out" 2> "$T/err"; local rc=$?; cat "$T/out"; [ -s "$T/err" ] && { echo "stderr:"; cat "$T/err"; }; echo "exit $rc"; }
expect() { [ -n "$1" ] && printf '%s\n' "$1"; [ -n "$2" ] && printf 'stderr:\n%s\n' "$2"; echo "exit $3"; }
# same NAME WANT GOT: records a difference (shown) and returns 1.
same() { [ "$2" = "$3" ] && return 0; echo "  $1: want:"; printf '%s\n' "$2" | sed 's/^/    /' | head -12; echo "  got:"; printf '%s\n' "$3" | sed 's/^/    /' | head -12; return 1; }

# The helpers: libsepol's validatetrans answer, and the exit witness.
gcc -O2 -Wall -Wextra -Werror -o "$T/sepol" tests/capi/dropin_sepol.c -lsepol 2> "$T/cc" || { bad "compile tests/capi/dropin_sepol.c"; cat "$T/cc"; finish; }
gcc -O2 -Wall -Wextra -Werror -shared -fPIC -o "$T/watch.so" tests/capi/dropin_watch.c -lselinux 2> "$T/cc" || { bad "compile tests/capi/dropin_watch.c"; cat "$T/cc"; finish; }
# witness FILE BOOLS PROGRAM...: runs PROGRAM with the witness, which writes FILE at its exit.
witness() { local f=$1 b=$2; shift 2; rm -f "$f"; DROPIN_WATCH=$f DROPIN_WATCH_BOOLS=$b LD_PRELOAD=$T/watch.so "$@"; }

# The policy as the seaccess command and Debian's checkpolicy read it.
"$SEA" info -p "$POL" > "$T/info" || { bad "seaccess info -p $POL"; finish; }
info() { awk -v k="$1" '$1 == k { print $2 }' "$T/info"; }
mflag=(); [ "$(info mls)" = true ] && mflag=(-M)
checkpolicy "${mflag[@]}" -b -F -o "$T/policy.conf" "$POL" > /dev/null 2>&1 || { bad "checkpolicy cannot read $POL as text"; finish; }
# Every class with its permissions in bit order (its common's, then its own): "CLASS P1 P2 ...".
awk '
  function body(s) { if (!index(s, "{")) return ""; sub(/^[^{]*\{ */, "", s); sub(/ *\}.*$/, "", s); return s }
  $1 == "common" && NF > 2 { common[$2] = body($0); next }
  $1 == "class" && NF > 2 { p = ($3 == "inherits") ? common[$4] : ""; b = body($0); print $2, p (p != "" && b != "" ? " " : "") b }
' "$T/policy.conf" > "$T/perms"
# valid: the contexts on standard input that the policy defines (seaccess answers "error" for
# a line naming any other).
valid() {
  local in; in=$(cat); [ -n "$in" ] || return 0
  paste -d' ' <(printf '%s\n' "$in") <(printf '%s\n' "$in" | awk '{ print $1, $1, "process" }' | "$SEA" compute-av -p "${1:-$POL}" 2> /dev/null) \
    | awk '$2 != "error" { print $1 }'
}
isvalid() { [ -n "$(echo "$1" | valid "${2:-$POL}")" ]; }

# ---------------------------------------------------------------------------------------------
# compute_av: security_compute_av's vectors, printed by libselinux's print_access_vector (bits
# in order, names from the class, the first unnamed bit ends the names and the rest is printed
# in hex), against seaccess compute-av's vectors and the policy's permission names; the names
# also agree with seaccess check's per-permission answers.
pav() { # CLASS HEXVECTOR: print_access_vector's text (libselinux 3.4, stringrep.c)
  awk -v c="$1" -v m="$2" '$1 == c { for (i = 2; i <= NF; i++) name[i - 2] = $i; exit }
    END { av = strtonum("0x" m); if (av == 0) { printf " null"; exit }
      s = " {"; for (bit = 0; av && bit < 32; bit++) { b = 2 ^ bit; if (and(av, b)) { if (!(bit in name)) break; s = s " " name[bit]; av -= b } }
      if (av) s = s sprintf(" 0x%x", av); printf "%s }", s }' "$T/perms"
}
U=unconfined_u:unconfined_r:unconfined_t:s0
UR=unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023
H=system_u:system_r:httpd_t:s0
cat > "$T/avq" <<EOF
$H system_u:object_r:httpd_sys_content_t:s0 file
$H system_u:object_r:httpd_sys_content_t:s0 dir
$H system_u:object_r:shadow_t:s0 file
$H system_u:object_r:console_device_t:s0 chr_file
staff_u:sysadm_r:sysadm_t:s0 system_u:object_r:security_t:s0 security
$UR $UR process
system_u:system_r:svirt_t:s0:c1 system_u:object_r:svirt_image_t:s0:c2 file
system_u:system_r:sshd_t:s0-s0:c0.c1023 system_u:object_r:var_run_t:s0 sock_file
system_u:system_r:nosuch_t:s0 system_u:object_r:etc_t:s0 file
$H system_u:object_r:nosuch_t:s0 file
$H system_u:object_r:etc_t:s0 nosuch_class
EOF
"$SEA" compute-av -p "$POL" < "$T/avq" > "$T/ava" 2> /dev/null
agree=1 n=0 cov_aa=0 cov_ad=0 cov_none=0 cov_err=0
while read -r s t c <&3 && read -r al de aa ad _ <&4; do
  n=$((n + 1))
  if [ "$al" = error ]; then
    cov_err=$((cov_err + 1))
    if ! isvalid "$s"; then want=$(expect "" "compute_av:  invalid source context '$s'" 4)
    elif ! isvalid "$t"; then want=$(expect "" "compute_av:  invalid target context '$t'" 5)
    elif ! grep -q "^$c[ ]" "$T/perms" && ! grep -qx "$c" "$T/perms"; then want=$(expect "" "compute_av:  invalid class '$c'" 2)
    else want="seaccess compute-av refused a valid query"; fi
  else
    w="allowed=$(pav "$c" "$al")"
    [ "$de" != ffffffff ] && w+=$'\n'"decided=$(pav "$c" "$de")"
    [ "$aa" != 0 ] && { w+=$'\n'"auditallow=$(pav "$c" "$aa")"; cov_aa=$((cov_aa + 1)); }
    [ "$ad" != ffffffff ] && { w+=$'\n'"auditdeny$(pav "$c" "$ad")"; cov_ad=$((cov_ad + 1)); }
    [ "$al" = 0 ] && cov_none=$((cov_none + 1))
    want=$(expect "$w" "" 0)
    # The names the vector allows are those seaccess check allows, one by one.
    read -r -a all <<< "$(awk -v c="$c" '$1 == c { $1 = ""; print; exit }' "$T/perms")"
    byname=$("$SEA" check -p "$POL" "$s" "$t" "$c" "${all[@]}" 2> /dev/null | awk -F': ' '$2 ~ /^allowed/ { printf " %s", $1 }')
    byvec=$(pav "$c" "$al" | sed 's/^ null$//; s/^ {//; s/ }$//; s/ 0x[0-9a-f]*$//')
    same "seaccess check vs compute-av, $s $t $c" "$byvec" "$byname" || agree=0
  fi
  same "compute_av $s $t $c" "$want" "$(res on compute_av "$s" "$t" "$c")" || agree=0
done 3< "$T/avq" 4< "$T/ava"
[ "$agree" = 1 ] && [ "$n" -eq 11 ] && [ "$cov_err" -eq 3 ] \
  && ok "compute_av: $n queries print the vectors seaccess compute-av gives, named as the policy names the bits ($cov_aa with auditallow, $cov_ad with dontaudit, $cov_none allowing nothing; invalid source, target and class exit 4, 5, 2)" \
  || bad "compute_av differs from seaccess compute-av / the policy's names (auditallow $cov_aa, dontaudit $cov_ad, none $cov_none, errors $cov_err)"

# ---------------------------------------------------------------------------------------------
# validatetrans (selinuxfs's order: old, new, class, task), against libsepol on this policy and
# on the MLS policy, whose mlsvalidatetrans rules refuse changes of level.
vt_check() { # POLICY QUERIES-FILE: prints "allowed denied errors" counts, or "differ"
  local pol=$1 d=0 na=0 nd=0 ne=0 w
  "$T/sepol" "$pol" < "$2" > "$2.sepol" || { echo differ; return; }
  while read -r o nw c tk <&3 && read -r a <&4; do
    case $a in
      allowed) na=$((na + 1)); w="security_validatetrans returned 0 errno: Success|exit 0" ;;
      denied) nd=$((nd + 1)); w="security_validatetrans returned -1 errno: Operation not permitted|exit 255" ;;
      *) ne=$((ne + 1))
        if ! isvalid "$o" "$pol"; then w="stderr:|validatetrans:  invalid source context '$o'|exit 4"
        elif ! isvalid "$nw" "$pol"; then w="stderr:|validatetrans:  invalid target context '$nw'|exit 5"
        elif ! isvalid "$tk" "$pol"; then w="stderr:|validatetrans:  invalid new context '$tk'|exit 6"
        else w="stderr:|validatetrans:  invalid class '$c'|exit 2"; fi ;;
    esac
    # errno after a success is whatever it was: libselinux's call leaves it alone.
    got=$(res env -u SEACCESS_SUBJECTS LD_LIBRARY_PATH="$LIBDIR" SEACCESS_POLICY="$pol" validatetrans "$o" "$nw" "$c" "$tk" \
      | tr '\n' '|' | sed 's/|$//; s/returned 0 errno: [^|]*/returned 0 errno: Success/')
    same "validatetrans ($pol) $o $nw $c $tk" "$w" "$got" >&2 || d=$((d + 1))
  done 3< "$2" 4< "$2.sepol"
  [ "$d" = 0 ] && echo "$na $nd $ne" || echo differ
}
S2=system_u:object_r:etc_t
cat > "$T/vq" <<EOF
$S2:s0 system_u:object_r:tmp_t:s0 file $U
$S2:s0 $S2:s0:c1 file $U
$S2:s0 $S2:s0 dir system_u:system_r:httpd_t:s0
$S2:s0 $S2:s0 file system_u:system_r:nosuch_t:s0
EOF
cat > "$T/vqm" <<EOF
$S2:s0 system_u:object_r:tmp_t:s0 file user_u:user_r:user_t:s0
$S2:s0 $S2:s1 file user_u:user_r:user_t:s0
$S2:s0 $S2:s1 file system_u:system_r:dpkg_t:s0-s15:c0.c1023
$S2:s2 $S2:s1 file user_u:user_r:user_t:s0
$S2:s2 $S2:s1 file system_u:system_r:dpkg_t:s0-s15:c0.c1023
$S2:s0-s2 $S2:s0-s1 dir user_u:user_r:user_t:s0
$S2:s0 $S2:s1 lnk_file system_u:system_r:init_t:s0-s15:c0.c1023
nosuch $S2:s1 file user_u:user_r:user_t:s0
$S2:s0 nosuch file user_u:user_r:user_t:s0
$S2:s0 $S2:s1 nosuch_class user_u:user_r:user_t:s0
EOF
vp=$(vt_check "$POL" "$T/vq") vm=$(vt_check "$MLS" "$T/vqm")
read -r ma md me <<< "$vm"
[ "$vp" != differ ] && [ "$vm" != differ ] && [ "${ma:-0}" -gt 0 ] && [ "${md:-0}" -gt 0 ] && [ "${me:-0}" -eq 3 ] \
  && ok "validatetrans: answers as libsepol on this policy (allowed/denied/invalid: $vp) and on the MLS policy's mlsvalidatetrans rules ($vm; denied is -1 EPERM, exit 255)" \
  || bad "validatetrans differs from libsepol (this policy: $vp, MLS: $vm)"

# ---------------------------------------------------------------------------------------------
# getsebool: every boolean with its value, as the policy has them (checkpolicy's text), in
# selinuxfs's order (alphasort); named ones; an unknown name.
awk '$1 == "bool" { v = $3; sub(/;$/, "", v); print $2, v }' "$T/policy.conf" | LC_ALL=C sort > "$T/bools"
nb=$(wc -l < "$T/bools")
want=$(awk '{ print $1 " --> " ($2 == "true" ? "on" : "off") }' "$T/bools")
BON=$(awk '$2 == "true" { print $1; exit }' "$T/bools") BOFF=$(awk '$2 == "false" { print $1; exit }' "$T/bools")
g1=1
same "getsebool -a" "$(expect "$want" "" 0)" "$(res on getsebool -a)" || g1=0
same "getsebool $BOFF $BON" "$(expect "$BOFF --> off"$'\n'"$BON --> on" "" 0)" "$(res on getsebool "$BOFF" "$BON")" || g1=0
same "getsebool nosuch_bool" "$(expect "" "Error getting active value for nosuch_bool" 255)" "$(res on getsebool nosuch_bool)" || g1=0
[ "$g1" = 1 ] && [ "$nb" -gt 0 ] && [ "$nb" = "$(info booleans)" ] && [ -n "$BON" ] && [ -n "$BOFF" ] \
  && ok "getsebool: -a lists the policy's $nb booleans (seaccess info: $(info booleans)) with its values ($(grep -c ' true$' "$T/bools") on); named ones; an unknown one is an error" \
  || bad "getsebool differs from the policy's booleans ($nb in the policy, seaccess info $(info booleans))"

# ---------------------------------------------------------------------------------------------
# togglesebool: prints the new value of each, set pending and committed at the end, so a
# boolean named twice reads its active (old) value both times; the witness sees the values
# flipped and committed in that process; the next process starts from the policy's values; an
# unknown name rolls every change back (pending = active again) and exits 1.
t1=1
same "togglesebool $BOFF $BON $BOFF" "$(expect "$BOFF: active"$'\n'"$BON: inactive"$'\n'"$BOFF: active" "" 0)" \
  "$(res witness "$T/w" "$BOFF,$BON" on togglesebool "$BOFF" "$BON" "$BOFF")" || t1=0
same "togglesebool: in its process at exit" "enforce=1"$'\n'"$BOFF active=1 pending=1"$'\n'"$BON active=0 pending=0" "$(cat "$T/w" 2>&1)" || t1=0
same "getsebool after togglesebool (another process)" "$(expect "$BOFF --> off"$'\n'"$BON --> on" "" 0)" "$(res on getsebool "$BOFF" "$BON")" || t1=0
same "togglesebool $BOFF nosuch_bool" "$(expect "$BOFF: active"$'\n'"nosuch_bool: Boolean does not exist - rolling back all changes." "" 1)" \
  "$(res witness "$T/w" "$BOFF" on togglesebool "$BOFF" nosuch_bool)" || t1=0
same "togglesebool rolled back: in its process at exit" "enforce=1"$'\n'"$BOFF active=0 pending=0" "$(cat "$T/w" 2>&1)" || t1=0
[ "$t1" = 1 ] && ok "togglesebool: prints active for $BOFF (off in the policy) and inactive for $BON (on), and in its process they are flipped and committed; another process still has the policy's; an unknown name rolls back and exits 1" \
  || bad "togglesebool"

# ---------------------------------------------------------------------------------------------
# getfilecon / setfilecon on scratch files (security.selinux, and user.selinux, the documented
# fallback): what getfattr reads and setfattr wrote; where libselinux reads or writes the same
# attribute, both libraries print the same.
F=$R/files && mkdir -p "$F" && chmod 755 "$F"
for f in sec user both none set1 set2; do echo x > "$F/$f"; done
setfattr -n security.selinux -v system_u:object_r:etc_t:s0 "$F/sec"
setfattr -n user.selinux -v system_u:object_r:tmp_t:s0 "$F/user"
setfattr -n security.selinux -v system_u:object_r:httpd_sys_content_t:s0 "$F/both" && setfattr -n user.selinux -v system_u:object_r:tmp_t:s0 "$F/both"
attr() { getfattr --only-values -n "$1" "$2" 2> /dev/null | tr -d '\0'; }
hexattr() { getfattr -e hex -n "$1" "$2" 2> /dev/null | awk -F= 'NF == 2 { print $2 }'; }
f1=1
same "getfilecon (security.selinux)" "$(expect "$F/sec	$(attr security.selinux "$F/sec")" "" 0)" "$(res on getfilecon "$F/sec")" || f1=0
same "getfilecon: as libselinux" "$(res sys getfilecon "$F/sec" "$F/both")" "$(res on getfilecon "$F/sec" "$F/both")" || f1=0
same "getfilecon (user.selinux only)" "$(expect "$F/user	$(attr user.selinux "$F/user")" "" 0)" "$(res on getfilecon "$F/user")" || f1=0
same "getfilecon (both: security.selinux first)" "$(expect "$F/both	$(attr security.selinux "$F/both")" "" 0)" "$(res on getfilecon "$F/both")" || f1=0
same "getfilecon (no label): as libselinux" "$(res sys getfilecon "$F/none")" "$(res on getfilecon "$F/none")" || f1=0
same "getfilecon (no file): as libselinux" "$(res sys getfilecon "$F/missing")" "$(res on getfilecon "$F/missing")" || f1=0
[ "$f1" = 1 ] && [ "$(attr security.selinux "$F/sec")" = system_u:object_r:etc_t:s0 ] \
  && ok "getfilecon: prints security.selinux (as libselinux), else user.selinux (the documented fallback); an unlabelled or missing file fails as on libselinux (exit 2)" \
  || bad "getfilecon"
NEWC=system_u:object_r:httpd_sys_content_t:s0
f2=1
same "setfilecon (drop-in)" "$(expect "" "" 0)" "$(res on setfilecon "$NEWC" "$F/set1")" || f2=0
same "setfilecon (libselinux)" "$(expect "" "" 0)" "$(res sys setfilecon "$NEWC" "$F/set2")" || f2=0
same "security.selinux written" "0x$(printf '%s\0' "$NEWC" | od -An -tx1 | tr -d ' \n')" "$(hexattr security.selinux "$F/set1")" || f2=0
same "security.selinux as libselinux writes it" "$(hexattr security.selinux "$F/set2")" "$(hexattr security.selinux "$F/set1")" || f2=0
same "getfilecon reads setfilecon's" "$(expect "$F/set1	$NEWC" "" 0)" "$(res on getfilecon "$F/set1")" || f2=0
same "setfilecon (no file): as libselinux" "$(res sys setfilecon "$NEWC" "$F/missing")" "$(res on setfilecon "$NEWC" "$F/missing")" || f2=0
# A process that may not write security.selinux (here: another uid's file it may write) gets
# user.selinux written instead by the drop-in; libselinux fails.
mkdir "$F/nobody" && echo x > "$F/nobody/f" && chmod 666 "$F/nobody/f"
NOB=(setpriv --reuid=65534 --regid=65534 --clear-groups)
same "setfilecon as uid 65534" "$(expect "" "" 0)" "$(res "${NOB[@]}" env LD_LIBRARY_PATH="$LIBDIR" SEACCESS_POLICY="$POL" setfilecon "$NEWC" "$F/nobody/f")" || f2=0
same "user.selinux written as uid 65534" "0x$(printf '%s\0' "$NEWC" | od -An -tx1 | tr -d ' \n')|" "$(hexattr user.selinux "$F/nobody/f")|$(hexattr security.selinux "$F/nobody/f")" || f2=0
same "libselinux as uid 65534 is refused" "exit 2" "$(res "${NOB[@]}" setfilecon "$NEWC" "$F/nobody/f" | tail -1)" || f2=0
same "getfilecon reads it back" "$(expect "$F/nobody/f	$NEWC" "" 0)" "$(res on getfilecon "$F/nobody/f")" || f2=0
[ "$f2" = 1 ] && ok "setfilecon: writes security.selinux byte for byte as libselinux does (context and NUL); unprivileged (refused there), user.selinux, which getfilecon reads back; a missing file fails as on libselinux" \
  || bad "setfilecon"

# ---------------------------------------------------------------------------------------------
# getpidcon: without subjects rules every process is unconfined_t (documented); with them, the
# first matching rule (exe=, uid=, transition: what executing the process's file_contexts
# label gives); pid 0 and a pid no process has fail as libselinux's getpidcon fails.
isvalid "$U" || bad "the policy has no $U (the context the drop-in documents for every process)"
cp /usr/bin/sleep "$R/sleepy"
SLEEPY=$(readlink -f "$R/sleepy")
GDC_FROM=system_u:system_r:sshd_t:s0-s0:c0.c1023 EXEC_FROM=system_u:system_r:init_t:s0
TR_CTX=system_u:system_r:initrc_t:s0
cat > "$R/subjects" <<EOF
exe=$(readlink -f "$(command -v selinuxexeccon)") $EXEC_FROM
exe=$(readlink -f "$(command -v getdefaultcon)") $GDC_FROM
exe=$SLEEPY $H
uid=65534 user_u:user_r:user_t:s0
transition $TR_CTX
EOF
"$SLEEPY" 60 & PA=$!; KIDS+=("$PA")
"${NOB[@]}" /usr/bin/sleep 60 & PB=$!; KIDS+=("$PB")
/usr/bin/sleep 60 & PC=$!; KIDS+=("$PC")
for i in $(seq 100); do   # until each has executed its program
  [ "$(readlink /proc/$PA/exe)" = "$SLEEPY" ] && [ "$(readlink /proc/$PB/exe)" = /usr/bin/sleep ] && [ "$(readlink /proc/$PC/exe)" = /usr/bin/sleep ] && break
  sleep 0.02
done
GONE=$(sh -c 'echo $$')
SLEEP_FC=$("$SEA" label /usr/bin/sleep | cut -f2)
want_c=$(echo "$TR_CTX $SLEEP_FC process" | "$SEA" compute-create -p "$POL")
p1=1
same "getpidcon (no rules)" "$(expect "$U" "" 0)" "$(res on getpidcon "$PA")" || p1=0
same "getpidcon (exe=)" "$(expect "$H" "" 0)" "$(res subj getpidcon "$PA")" || p1=0
same "getpidcon (uid=)" "$(expect "user_u:user_r:user_t:s0" "" 0)" "$(res subj getpidcon "$PB")" || p1=0
same "getpidcon (transition)" "$(expect "$want_c" "" 0)" "$(res subj getpidcon "$PC")" || p1=0
[ "$p1" = 1 ] && [ -n "$SLEEP_FC" ] && [ -n "$want_c" ] \
  && ok "getpidcon: $U without subjects rules; with them exe= ($H), uid= (user_t) and transition ($want_c: $TR_CTX executing $SLEEP_FC, as seaccess compute-create gives)" \
  || bad "getpidcon with and without subjects rules"
p2=1
same "getpidcon 0 (no rules): as libselinux (procattr.c: pid <= 0 is EINVAL)" "$(res sys getpidcon 0)" "$(res on getpidcon 0)" || p2=0
same "getpidcon 0 (rules): as libselinux" "$(res sys getpidcon 0)" "$(res subj getpidcon 0)" || p2=0
same "getpidcon $GONE (no such process, no rules): as libselinux (open /proc/PID/attr/current: ENOENT)" "$(res sys getpidcon "$GONE")" "$(res on getpidcon "$GONE")" || p2=0
same "getpidcon $GONE (no such process, rules): as libselinux" "$(res sys getpidcon "$GONE")" "$(res subj getpidcon "$GONE")" || p2=0
[ "$p2" = 1 ] && ok "getpidcon: pid 0 (EINVAL) and a pid no process has (ENOENT) fail as on libselinux, exit 3" \
  || bad "getpidcon: pid 0 or a pid no process has does not fail as libselinux's getpidcon does"

# ---------------------------------------------------------------------------------------------
# selinuxexeccon: the context a process (FROMCON, else getcon's) gets by executing a file,
# security_compute_create(from, the file's label, process), against seaccess compute-create.
cp /bin/true "$R/sshd" && setfattr -n security.selinux -v system_u:object_r:sshd_exec_t:s0 "$R/sshd" && cp /bin/true "$R/unlabelled"
cc_of() { echo "$1 system_u:object_r:sshd_exec_t:s0 process" | "$SEA" compute-create -p "$POL"; }
e1=1
same "selinuxexeccon FILE $EXEC_FROM" "$(expect "$(cc_of "$EXEC_FROM")" "" 0)" "$(res on selinuxexeccon "$R/sshd" "$EXEC_FROM")" || e1=0
same "selinuxexeccon FILE $UR" "$(expect "$(cc_of "$UR")" "" 0)" "$(res on selinuxexeccon "$R/sshd" "$UR")" || e1=0
same "selinuxexeccon FILE (getcon: no rules)" "$(expect "$(cc_of "$U")" "" 0)" "$(res on selinuxexeccon "$R/sshd")" || e1=0
same "selinuxexeccon FILE (getcon: exe= rule)" "$(expect "$(cc_of "$EXEC_FROM")" "" 0)" "$(res subj selinuxexeccon "$R/sshd")" || e1=0
same "selinuxexeccon FILE bogus" "$(expect "" "selinuxexeccon:  invalid from context 'bogus'" 255)" "$(res on selinuxexeccon "$R/sshd" bogus)" || e1=0
same "selinuxexeccon UNLABELLED" "$(expect "" "selinuxexeccon: No data available" 255)" "$(res on selinuxexeccon "$R/unlabelled" "$EXEC_FROM")" || e1=0
[ "$e1" = 1 ] && [ "$(cc_of "$EXEC_FROM")" != "$(cc_of "$U")" ] \
  && ok "selinuxexeccon: executing an sshd_exec_t file gives $(cc_of "$EXEC_FROM" | cut -d: -f3) from init_t (named, or getcon's by the subjects rule) and $(cc_of "$U" | cut -d: -f3) from unconfined_t (named, or getcon's without rules), as seaccess compute-create; an invalid FROMCON or an unlabelled file fails (exit 255)" \
  || bad "selinuxexeccon"

# ---------------------------------------------------------------------------------------------
# getenforce / setenforce / selinuxenabled / policyvers. The drop-in documents: the mode starts
# enforcing, setenforce switches the process's own in-process kernel only (docs/run.md); with no
# policy named every call answers as libselinux on a kernel without SELinux (compared directly);
# a policy named but not loadable fails closed (is_selinux_enabled 1, the load's errno).
m1=1
same "getenforce" "$(expect Enforcing "" 0)" "$(res on getenforce)" || m1=0
for a in 0 1 Permissive enforcing; do
  want=$([ "$a" = 0 ] || [ "$a" = Permissive ] && echo 0 || echo 1)
  same "setenforce $a" "$(expect "" "" 0)" "$(res witness "$T/w" "" on setenforce "$a")" || m1=0
  same "setenforce $a: in its process at exit" "enforce=$want" "$(cat "$T/w" 2>&1)" || m1=0
done
same "getenforce after setenforce 0 (another process)" "$(expect Enforcing "" 0)" "$(res on getenforce)" || m1=0
same "setenforce bogus" "$(expect "" "usage:  setenforce [ Enforcing | Permissive | 1 | 0 ]" 1)" "$(res on setenforce bogus)" || m1=0
[ "$m1" = 1 ] && ok "getenforce/setenforce: Enforcing at start (documented); setenforce 0/1/Permissive/enforcing switch that process's own kernel (seen at its exit) and no other process's" \
  || bad "getenforce/setenforce"
m2=1
same "selinuxenabled" "exit 0" "$(res on selinuxenabled)" || m2=0
V=$(on policyvers 2> /dev/null)
cp "$POL" "$T/pv" && cp "$POL" "$T/pv1"
hdr() { printf "$(printf '\\x%02x' $(($2 & 255)) $((($2 >> 8) & 255)))" | dd of="$1" bs=1 seek=16 conv=notrunc status=none; }
if [[ "$V" =~ ^[0-9]+$ ]] && hdr "$T/pv" "$V" && hdr "$T/pv1" $((V + 1)); then
  [ "$V" -ge "$(info version)" ] || { m2=0; echo "  policyvers $V is below the policy's version $(info version)"; }
  "$SEA" info -p "$T/pv" > /dev/null 2>&1 || { m2=0; echo "  seaccess cannot load the policy as version $V"; }
  "$SEA" info -p "$T/pv1" > /dev/null 2>&1 && { m2=0; echo "  seaccess loads version $((V + 1)): policyvers should say so"; }
  same "policyvers on that policy" "$(expect "$V" "" 0)" "$(SEACCESS_POLICY=$T/pv LD_LIBRARY_PATH=$LIBDIR res policyvers)" || m2=0
else
  m2=0; echo "  policyvers printed '$V'"
fi
[ "$m2" = 1 ] && ok "selinuxenabled exits 0; policyvers prints $V: the policy's version is $(info version), and $V is the highest seaccess loads (its header patched to $V loads, to $((V + 1)) does not)" \
  || bad "selinuxenabled/policyvers"
m3=1
for args in selinuxenabled getenforce policyvers "getsebool -a" "getsebool $BON" "togglesebool $BON" "setenforce 0" "compute_av $H $H process" \
    "getseuser root $U" "getdefaultcon root $U" "selinuxexeccon $R/sshd $U" "sestatus" "avcstat" "getpidcon $GONE"; do
  set -- $args
  same "$args with no policy named: as libselinux without SELinux" "$(res sys "$@")" "$(res nopol "$@")" || m3=0
done
[ "$m3" = 1 ] && ok "no policy named: selinuxenabled, getenforce, policyvers, getsebool, togglesebool, setenforce, compute_av, getseuser, getdefaultcon, selinuxexeccon, sestatus, avcstat, getpidcon print and exit as on libselinux without SELinux" \
  || bad "no policy named: programs differ from libselinux without SELinux"
m4=1
head -c 4096 "$POL" > "$T/corrupt"
for case in "$R/missing:No such file or directory" "$T/corrupt:Invalid argument"; do
  p=${case%%:*} why=${case#*:}
  fc() { env -u SEACCESS_SUBJECTS LD_LIBRARY_PATH="$LIBDIR" SEACCESS_POLICY="$p" "$@"; }
  same "selinuxenabled ($p)" "exit 0" "$(res fc selinuxenabled | grep -v '^seaccess: cannot load\|^stderr:$')" || m4=0
  same "getenforce ($p)" "getenforce:  security_getenforce() failed:  $why|exit 2" "$(res fc getenforce | grep -v '^seaccess: cannot load\|^stderr:$' | tr '\n' '|' | sed 's/|$//')" || m4=0
  same "getsebool -a ($p)" "getsebool:  Unable to get boolean names:  $why|exit 1" "$(res fc getsebool -a | grep -v '^seaccess: cannot load\|^stderr:$' | tr '\n' '|' | sed 's/|$//')" || m4=0
  grep -q "^seaccess: cannot load policy $p" "$T/err" || { m4=0; echo "  no 'cannot load policy' message for $p"; }
done
[ "$m4" = 1 ] && ok "fail closed (docs/capi.md): a missing or corrupt policy file: selinuxenabled 0, getenforce and getsebool -a fail with the load's errno (ENOENT, EINVAL), the failure logged" \
  || bad "fail closed"

# ---------------------------------------------------------------------------------------------
# getseuser / getdefaultcon: the SELinux user and level from seusers (the login's line, else a
# %group of it, else __default__), then libselinux 3.4's get_ordered_context_list_with_level
# (get_context_list.c): FROMCON's range becomes the level; contexts/users/SEUSER, then
# default_contexts, each its first line for FROMCON's role:type; each entry SEUSER:role:type
# with that range, those the policy defines (security_check_context), without repeats; none:
# the failsafe context (SEUSER:failsafe_context, kept only if defined; else EINVAL).
seuser_of() {
  awk -F: -v u="$1" -v groups=" $(id -Gn "$1" 2> /dev/null) " '
    /^[ \t]*(#|$)/ { next }
    { lv = substr($0, length($1 ":" $2 ":") + 1); su = $2 " " lv }   # the level keeps its own colons
    $1 == u { print su; found = 1; exit }
    substr($1, 1, 1) == "%" && g == "" && index(groups, " " substr($1, 2) " ") { g = su }
    $1 == "__default__" && d == "" { d = su }
    END { if (!found) print (g != "" ? g : d) }' "$ROOT/seusers"
}
ordered() { # SEUSER RANGE FROMCON
  local user=$1 range=$2 rt l
  rt=$(echo "$3" | cut -d: -f2,3)
  l=$(for f in "$CTXD/users/$user" "$CTXD/default_contexts"; do
      [ -r "$f" ] && awk -v rt="$rt" '{ split($1, a, ":"); if (a[1] ":" a[2] == rt && NF > 1) { for (i = 2; i <= NF; i++) print $i; exit } }' "$f"
    done | while read -r p; do echo "$user:$(echo "$p" | cut -d: -f1,2):$range"; done | awk '!seen[$0]++' | valid)
  [ -n "$l" ] && { echo "$l"; return; }
  echo "$user:$(head -n 1 "$CTXD/failsafe_context")" | valid
}
getseuser_want() { # LOGIN FROMCON
  local su lv l
  read -r su lv <<< "$(seuser_of "$1")"
  if ! isvalid "$2"; then expect "seuser:  $su, level $lv" "context '$2' is invalid" 5; return; fi
  l=$(ordered "$su" "$lv" "$2")
  if [ -n "$l" ]; then expect "seuser:  $su, level $lv"$'\n'"$(echo "$l" | awk '{ printf "Context %d\t%s\n", NR - 1, $0 }')" "" 0
  else expect "seuser:  $su, level $lv" "get_ordered_context_list_with_level failed:  Invalid argument" 3; fi
}
getdefaultcon_want() { # LOGIN FROMCON [LEVEL [ROLE]]: getdefaultcon exits 1 on success, 0 on failure (its `return ret >= 0`)
  local su lv l c
  read -r su lv <<< "$(seuser_of "$1")"
  [ -n "${3:-}" ] && lv=$3
  if ! isvalid "$2"; then expect "" "getdefaultcon:  invalid from context '$2'" 3; return; fi
  l=$(ordered "$su" "$lv" "$2")
  if [ -n "${4:-}" ]; then c=$(echo "$l" | awk -F: -v r="$4" '$2 == r { print; exit }'); else c=$(echo "$l" | head -n 1); fi
  if [ -n "$c" ]; then expect "$c" "" 1; else expect "" "getdefaultcon: Invalid argument" 0; fi
}
LL=system_u:system_r:local_login_t:s0-s0:c0.c1023 CR=system_u:system_r:crond_t:s0
u1=1 nlist=0 nfail=0
for q in "root $GDC_FROM" "root $CR" "nobody $LL" "nosuchuser $GDC_FROM" "sddm $GDC_FROM" "root bogus"; do
  set -- $q
  w=$(getseuser_want "$1" "$2")
  case $w in *"exit 0") nlist=$((nlist + 1)) ;; *) nfail=$((nfail + 1)) ;; esac
  same "getseuser $q" "$w" "$(res on getseuser "$1" "$2")" || u1=0
done
[ "$u1" = 1 ] && [ "$nlist" -ge 3 ] && [ "$nfail" -ge 2 ] \
  && ok "getseuser: the seusers mapping and the ordered context lists $ROOT/seusers and contexts/ give, filtered by the policy ($nlist lists; $nfail failures: no valid context, invalid FROMCON)" \
  || bad "getseuser ($nlist lists, $nfail failures)"
u2=1 nok=0
for q in "root $GDC_FROM" "root $CR" "nobody $LL" "sddm $GDC_FROM" "root bogus" "root $GDC_FROM s0" "root $GDC_FROM - unconfined_r" "root $GDC_FROM - system_r"; do
  set -- $q
  lvl=${3:-} role=${4:-}; [ "$lvl" = - ] && lvl=
  opts=(); [ -n "$lvl" ] && opts+=(-l "$lvl"); [ -n "$role" ] && opts+=(-r "$role")
  w=$(getdefaultcon_want "$1" "$2" "$lvl" "$role")
  case $w in *"exit 1") nok=$((nok + 1)) ;; esac
  same "getdefaultcon ${opts[*]} $1 $2" "$w" "$(res on getdefaultcon "${opts[@]}" "$1" "$2")" || u2=0
done
# Without FROMCON: getcon's context (unconfined_t, or the subjects rule for getdefaultcon).
same "getdefaultcon root (getcon, no rules)" "$(getdefaultcon_want root "$U")" "$(res on getdefaultcon root)" || u2=0
same "getdefaultcon root (getcon, exe= rule)" "$(getdefaultcon_want root "$GDC_FROM")" "$(res subj getdefaultcon root)" || u2=0
read -r su lv <<< "$(seuser_of root)"
same "getdefaultcon -v -s sshd root" "$(expect "getdefaultcon: root from $GDC_FROM $su (null) $lv -> $(ordered "$su" "$lv" "$GDC_FROM" | head -n 1)" "" 1)" \
  "$(res on getdefaultcon -v -s sshd root "$GDC_FROM")" || u2=0
[ "$u2" = 1 ] && [ "$nok" -ge 4 ] \
  && ok "getdefaultcon: the first of those lists (or of those with -r ROLE; -l LEVEL for the range), FROMCON named or getcon's (no rules, and the subjects rule), -v; $nok found (exit 1, the program's success), the rest fail as derived (exit 0)" \
  || bad "getdefaultcon"

# ---------------------------------------------------------------------------------------------
# selinux_check_securetty_context: securetty exactly for the types contexts/securetty_types
# lists; libselinux (no kernel needed) prints the same.
mapfile -t stt < <(awk 'NF { print $1 }' "$CTXD/securetty_types")
args=() w=""
for t in "${stt[@]}" tty_device_t etc_t; do args+=("system_u:object_r:$t:s0"); done
for a in "${args[@]}"; do
  t=$(echo "$a" | cut -d: -f3)
  if printf '%s\n' "${stt[@]}" | grep -qx "$t"; then w+="$a securetty."$'\n'; else w+="$a not securetty."$'\n'; fi
done
w+="bogus not securetty."
s1=1
same "selinux_check_securetty_context" "$(expect "$w" "" 0)" "$(res on selinux_check_securetty_context "${args[@]}" bogus)" || s1=0
same "selinux_check_securetty_context: as libselinux" "$(res sys selinux_check_securetty_context "${args[@]}" bogus)" "$(res on selinux_check_securetty_context "${args[@]}" bogus)" || s1=0
[ "$s1" = 1 ] && [ "${#stt[@]}" -gt 0 ] && ok "selinux_check_securetty_context: securetty for the ${#stt[@]} type(s) in securetty_types (${stt[*]}), not for others or a non-context, as libselinux" \
  || bad "selinux_check_securetty_context"

# ---------------------------------------------------------------------------------------------
# avcstat: docs/run.md's kernel-only table: no /sys/fs/selinux/avc/cache_stats (selinux_mnt is NULL);
# the program reports the missing file and exits 1, as on libselinux without SELinux, not by a
# signal. With -f, a statistics file in selinuxfs's format is read and summed the same on both.
a1=1
w=$(res sys avcstat)
same "avcstat: as libselinux" "$w" "$(res on avcstat)" || a1=0
case $w in *"ERROR: open: '(null)/avc/cache_stats': No such file or directory"*"exit 1") ;; *) a1=0; echo "  avcstat: $w" ;; esac
printf 'lookups hits misses allocations reclaims frees\n1 2 3 4 5 6\n10 20 30 40 50 60\n' > "$T/cache_stats"
same "avcstat -f FILE: as libselinux" "$(res sys avcstat -c -f "$T/cache_stats")" "$(res on avcstat -c -f "$T/cache_stats")" || a1=0
grep -qE '^ +11 +22 +33 +44 +55 +66$' <<< "$(res on avcstat -c -f "$T/cache_stats")" || { a1=0; echo "  avcstat -c -f: no sums"; }
[ "$a1" = 1 ] && ok "avcstat: reports the missing (null)/avc/cache_stats and exits 1, as libselinux without selinuxfs (docs/run.md: kernel-only); -c -f FILE sums a statistics file as libselinux" \
  || bad "avcstat"

# ---------------------------------------------------------------------------------------------
# sestatus (policycoreutils): is_selinux_enabled is 1 with a policy; selinux_mnt is NULL (docs/run.md:
# no selinuxfs), so sestatus stops after "SELinuxfs mount: not mounted" (exit 255) before it
# prints the policy's name and mode.
st=$(res on sestatus)
w=$(expect "$(printf '%-32s%s\n%-32s%s\n\n%s' "SELinux status:" enabled "SELinuxfs mount:" "not mounted" "Please mount selinuxfs for proper results.")" "" 255)
if same "sestatus" "$w" "$st" && same "sestatus -b" "$w" "$(res on sestatus -b)"; then
  ok "sestatus: SELinux status enabled (selinuxenabled agrees), SELinuxfs not mounted (docs/run.md: selinux_mnt NULL), so it stops with exit 255 before the policy name and mode lines"
else
  bad "sestatus"
fi
finish
