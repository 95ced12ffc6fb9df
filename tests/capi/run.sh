#!/usr/bin/env bash
# libseaccess's C tests (make capi-test): the programs in tests/capi, written only against
# libselinux's headers, compiled once and linked against target/release/libseaccess.so (or $SEACCESS_BUILD's) (never
# libselinux), then run plain, under AddressSanitizer and under valgrind:
#   answer   vs libsepol (sepol-oracle) on random queries, Debian's default and MLS policies:
#            security_compute_av, selinux_check_access and avc_has_perm per permission, and
#            security_compute_create/relabel/member;
#   errors   errno conventions without a policy and for NULL or invalid arguments;
#   threads  many threads at once answer as one;
#   failclosed  a named policy that cannot be loaded (missing, corrupt) denies everything;
#   callbacks   a reload's callbacks see the new policy and may call back in (reload, log);
#   epipe    the default logger ignores a broken standard error;
#   fork     children forked while threads intern, audit, reset and reload, or compile and free
#            file_contexts expressions (PCRE2's JIT), never hang;
#   permissive     empty requests, undefined class numbers and unknown names, enforcing and
#                  permissive, as libselinux 3.4 answers them;
#   stale_context  a context the reloaded policy no longer defines is EINVAL, seen before or not;
#   reload_storm   checks racing reloads that renumber classes: no wrong answer;
#   front    avc_has_perm's per-thread front: a grant it holds is not used after avc_reset, a
#            reload, avc_destroy or selinux_set_mapping, nor torn by a signal handler checking;
#            more threads than fronts, and short-lived ones, answer as the server;
#   mapping_race   selinux_check_access and avc_has_perm while another thread switches
#                  selinux_set_mapping between two maps: each call reads the map once, and a
#                  switch never leaves a moment without one (3 s here; for a longer run:
#                  SEACCESS_POLICY=target/policies/unknown.33 target/capi/mapping_race
#                  u:r:dom_t:s0 u:object_r:obj_t:s0 60);
#   example  README's example, built with pkg-config;
#   dropin   target/libselinux/libselinux.so.1 (tests/capi/dropin.sh): its exports carry
#            libselinux 3.4's versions, and dropin_paths.c, built against Debian's libselinux,
#            prints the same on it as on libselinux itself; Debian's selinux-utils programs and
#            Python's `import selinux`, unmodified, load it and answer as libselinux (labels)
#            or as the seaccess command (policy answers);
#   secure_env  (tests/capi/secure_env.sh) a set-user-ID root program on the drop-in, run by
#            nobody, ignores SEACCESS_POLICY and SEACCESS_SUBJECTS; not set-user-ID it honours them.
# A missing library, oracle or Debian policy FAILS the run; nothing is skipped.
set -uo pipefail
cd "$(dirname "$0")/../.."
# The build under test: target/release, or the directory SEACCESS_BUILD names (`make test` sets
# target/ci, its profile without LTO).
BUILD=${SEACCESS_BUILD:-target/release}
LIB=$BUILD/libseaccess.so
ORACLE=target/oracle/sepol-oracle
POLICIES=(/etc/selinux/default/policy/policy.33 /etc/selinux/mls/policy/policy.33)
# Test policies from testdata/policies (make policies); A and B differ in one rule
# (callbacks_*.cil).
TP=target/policies
A=$TP/callbacks_a.33 B=$TP/callbacks_b.33
OWN=("$A" "$B" "$TP/secure_env.33" "$TP/renumber_a.33" "$TP/renumber_b.33" "$TP/unknown.33" "$TP/unknown_deny.33" "$TP/unknown_reject.33" "$TP/example.33")
COUNT=${CAPI_QUERIES:-3000}
OUT=target/capi
mkdir -p "$OUT"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok: $1"; }
bad() { fail=$((fail + 1)); echo "FAIL: $1"; }
finish() { echo "capi: $pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }

for need in "$LIB" "$ORACLE" "${POLICIES[@]}" "${OWN[@]}" crates/capi/include/seaccess.h; do
  [ -e "$need" ] || bad "$need is missing (make capi oracle deps policies)"
done
for tool in gcc valgrind; do command -v $tool >/dev/null || bad "$tool is not installed (make deps)"; done
[ "$fail" -eq 0 ] || finish

# Compiled once, plain and with AddressSanitizer; the Rust library is used as it is.
CFLAGS=(-Wall -Wextra -Werror -Wno-unused-parameter -Icrates/capi/include -pthread)
LINK=(-L"$PWD/$BUILD" -lseaccess -Wl,-rpath,"$PWD/$BUILD")
for p in answer errors threads failclosed callbacks epipe fork permissive stale_context reload_storm front mapping mapping_race thread_attrs; do
  gcc -O2 -g "${CFLAGS[@]}" -o "$OUT/$p" "tests/capi/$p.c" "${LINK[@]}" || bad "compile $p"
  gcc -O1 -g -fsanitize=address -fno-omit-frame-pointer "${CFLAGS[@]}" -o "$OUT/$p-asan" "tests/capi/$p.c" "${LINK[@]}" \
    || bad "compile $p with -fsanitize=address"
done
[ "$fail" -eq 0 ] || finish
if ldd "$OUT/answer" | grep -q libselinux; then bad "the test programs must not link libselinux"; else ok "linked against libseaccess, not libselinux"; fi

unset SEACCESS_POLICY
for pol in "${POLICIES[@]}"; do
  name=$(basename "$(dirname "$(dirname "$pol")")")
  $ORACLE gen "$pol" 20261123 "$COUNT" > "$T/q.$name"
  $ORACLE av "$pol" < "$T/q.$name" > "$T/o.$name"
  SEACCESS_POLICY=$pol "$OUT/answer" av < "$T/q.$name" > "$T/s.$name" 2>/dev/null
  # Oracle: ALLOWED DECIDED AUDITALLOW AUDITDENY SEQNO FLAGS. Ours: ALLOWED AUDITALLOW AUDITDENY
  # FLAGS CHECK AVC NOAUDIT MASK. A check is allowed where libsepol allows, on every named
  # permission of the class; in a permissive domain (libsepol has no permissive flag) on all.
  r=$(paste -d' ' "$T/o.$name" "$T/s.$name" | awk '
    function h(x) { return strtonum("0x" x) }
    $1 == "error" { skipped++; next }
    NF != 14 { bad++; if (shown++ < 3) print "  malformed: " $0 > "/dev/stderr"; next }
    {
      n++; al = h($1); aa = h($3); ad = h($4); flags = h($10); mask = h($14)
      want = and(flags, 1) ? mask : and(al, mask)
      if (h($7) != al || h($8) != aa || h($9) != ad) { av++; if (shown++ < 3) print "  compute_av: " $0 > "/dev/stderr" }
      if (h($11) != want) { ck++; if (shown++ < 3) print "  selinux_check_access: " $0 > "/dev/stderr" }
      if (h($12) != want) { hp++; if (shown++ < 3) print "  avc_has_perm: " $0 > "/dev/stderr" }
    }
    END { printf "%d %d %d %d %d %d\n", n, av, ck, hp, bad, skipped }')
  read -r n av ck hp malformed skipped <<< "$r"
  [ "$n" -ge $((COUNT * 9 / 10)) ] && [ "$malformed" -eq 0 ] \
    && ok "$name: $n queries answered ($skipped refused by libsepol)" || bad "$name: only $n of $COUNT queries compared, $malformed malformed"
  [ "$av" -eq 0 ] && ok "$name: security_compute_av_flags equals libsepol" || bad "$name: security_compute_av_flags differs from libsepol on $av queries"
  [ "$ck" -eq 0 ] && ok "$name: selinux_check_access equals libsepol" || bad "$name: selinux_check_access differs from libsepol on $ck queries"
  [ "$hp" -eq 0 ] && ok "$name: avc_has_perm equals libsepol" || bad "$name: avc_has_perm differs from libsepol on $hp queries"

  # New contexts. libsepol labels sockets like files where the kernel gives them their
  # creator's label (see crates/testkit/tests/kernel_semantics.rs), so sockets are left out.
  awk '$3 !~ /socket$/' "$T/q.$name" > "$T/qn.$name"
  for mode in create relabel member; do
    $ORACLE $mode "$pol" < "$T/qn.$name" > "$T/oc"
    SEACCESS_POLICY=$pol "$OUT/answer" $mode < "$T/qn.$name" > "$T/sc" 2>/dev/null
    d=$(paste -d' ' "$T/oc" "$T/sc" | awk '$1 != "error" && $1 != $2 { d++ } END { print d + 0 }')
    total=$(grep -vc '^error' "$T/oc")
    [ "$d" -eq 0 ] && [ "$total" -gt 0 ] && [ "$(wc -l < "$T/sc")" -eq "$(wc -l < "$T/oc")" ] \
      && ok "$name: security_compute_$mode equals libsepol on $total queries" \
      || bad "$name: security_compute_$mode differs from libsepol on $d of $total queries"
  done
done

pol=${POLICIES[0]}
# README's example, built the way README says (pkg-config on the build tree's seaccess.pc).
if [ -e target/pkgconfig/seaccess.pc ] && gcc -Wall -Werror -o "$OUT/example" tests/capi/example.c \
     $(PKG_CONFIG_PATH=target/pkgconfig pkg-config --cflags --libs seaccess); then
  SEACCESS_POLICY=$pol "$OUT/example" > "$T/x" 2>&1 && [ "$(grep -cE '^(read|write|read shadow):' "$T/x")" -eq 3 ] \
    && ok "README's example builds with pkg-config and runs" || { bad "README's example"; cat "$T/x"; }
else
  bad "README's example does not build with pkg-config (make capi writes target/pkgconfig/seaccess.pc)"
fi
"$OUT/errors" "$pol" > "$T/e" 2>&1 && ok "errors: errno conventions" || { bad "errors: errno conventions"; cat "$T/e"; }
head -n 1000 "$T/q.default" > "$T/q1k"
SEACCESS_POLICY=$pol "$OUT/threads" 8 3 < "$T/q1k" > "$T/t" 2>&1 && ok "threads: $(cat "$T/t")" || { bad "threads"; cat "$T/t"; }

# Fail closed: a mistyped path (the issue's: Debian's policy33) and a corrupt file (the test then
# writes a good policy over the bad file, which must change nothing, and loads A).
# failclosed MODE ERRNO: the errno every call needing a policy fails with (ENOENT 2, EINVAL 22,
# EFBIG 27). A policy is a regular file read up to a bound: a FIFO (whose open would wait for a
# writer), /dev/zero (endless) and a directory are EINVAL and a sparse file past the bound
# EFBIG, each at once (timeout: a hang fails), the process closed.
failclosed() { # SUFFIX
  mkdir -p "$T/m$1" "$T/dir$1" && rm -f "$T/m$1/policy33" "$T/fifo$1" && head -c 1000 "$A" > "$T/corrupt$1" \
    && mkfifo "$T/fifo$1" && truncate -s $((256 * 1024 * 1024 + 1)) "$T/huge$1" || return 1
  SEACCESS_POLICY=/etc/selinux/default/policy/policy33 "$OUT/failclosed$1" repro 2 > "$T/f" 2>&1 \
    && SEACCESS_POLICY=$T/m$1/policy33 "$OUT/failclosed$1" recover 2 "$A" >> "$T/f" 2>&1 \
    && SEACCESS_POLICY=$T/corrupt$1 "$OUT/failclosed$1" recover 22 "$A" >> "$T/f" 2>&1 \
    && SEACCESS_POLICY=$T/fifo$1 timeout 30 "$OUT/failclosed$1" repro 22 >> "$T/f" 2>&1 \
    && SEACCESS_POLICY=/dev/zero timeout 30 "$OUT/failclosed$1" repro 22 >> "$T/f" 2>&1 \
    && SEACCESS_POLICY=$T/dir$1 timeout 30 "$OUT/failclosed$1" repro 22 >> "$T/f" 2>&1 \
    && SEACCESS_POLICY=$T/huge$1 timeout 30 "$OUT/failclosed$1" recover 27 "$A" >> "$T/f" 2>&1
}
failclosed "" && ok "failclosed: a policy named and not loadable (missing, corrupt, a FIFO, /dev/zero, a directory, past the size bound) denies everything" || { bad "failclosed"; cat "$T/f"; }
"$OUT/callbacks" "$A" "$B" > "$T/c" 2>&1 && ok "callbacks: reload callbacks see the new policy, no deadlock" || { bad "callbacks"; cat "$T/c"; }
"$OUT/epipe" "$A" "$B" > "$T/p" 2>&1 && ok "epipe: a broken standard error changes no answer" || { bad "epipe"; cat "$T/p"; }
"$OUT/fork" "$A" "$B" 300 > "$T/k" 2>/dev/null && ok "$(tail -n 1 "$T/k")" || { bad "fork"; tail -20 "$T/k"; }
"$OUT/fork" tables "$A" "$B" 120 > "$T/k" 2>/dev/null && ok "$(tail -n 1 "$T/k") (the library's own tables, a fresh labeling handle each pass)" || { bad "fork tables"; tail -20 "$T/k"; }
# Expressions compiled and freed by two threads (PCRE2's JIT holds one process-wide mutex then)
# while children are forked, each compiling too: /srv/none is tried against the 40 last lines,
# each compiled, before the first matches it.
{ echo '/srv(/.*)?	system_u:object_r:etc_t:s0'
  for i in $(seq 40); do echo "/srv/[^/]*q$i	system_u:object_r:etc_t:s0"; done; } > "$T/jit_fc"
"$OUT/fork" jit "$T/jit_fc" 300 > "$T/k" 2>/dev/null && ok "$(tail -n 1 "$T/k")" || { bad "fork jit"; tail -20 "$T/k"; }
SEACCESS_POLICY=$pol "$OUT/fork" load 50 > "$T/k" 2>/dev/null && ok "$(tail -n 1 "$T/k") (during the lazy load)" || { bad "fork during the lazy load"; tail -20 "$T/k"; }
"$OUT/permissive" "$TP/renumber_a.33" "$TP/unknown.33" > "$T/p" 2>&1 && ok "permissive: empty and unknown requests" || { bad "permissive: empty and unknown requests"; grep -v '^avc: \|^Unknown' "$T/p"; }
"$OUT/stale_context" "$TP/renumber_a.33" "$TP/example.33" > "$T/p" 2>&1 && ok "stale_context: EINVAL for a context the reload made invalid" || { bad "stale_context"; grep -v '^avc: ' "$T/p"; }
"$OUT/reload_storm" "$TP/renumber_a.33" "$TP/renumber_b.33" 3 > "$T/p" 2>&1 && ok "$(grep '^reload_storm:' "$T/p")" || { bad "reload_storm"; grep -v '^avc: ' "$T/p" | head -20; }
"$OUT/front" "$TP/front_a.33" "$TP/front_b.33" > "$T/p" 2>&1 && ok "front: avc_reset, a renumbering reload, avc_destroy, a signal handler checking inside a check ($(sed -n 's/^front: signals: //p' "$T/p")), many threads ($(sed -n 's/^front: threads: //p' "$T/p")), selinux_set_mapping: each answered as the server answers, never from a remembered grant" || { bad "front"; cat "$T/p"; }
MAPPING=("$TP/unknown.33" "$TP/unknown_deny.33" "$TP/unknown_reject.33" "$TP/renumber_a.33" "$TP/renumber_b.33")
"$OUT/mapping" "${MAPPING[@]}" > "$T/p" 2>&1 \
  && ok "mapping: selinux_set_mapping's numbering in names, compute_av, the AVC, selinux_check_access, compute_create and records; handle_unknown allow, deny, reject; a renumbering reload" \
  || { bad "mapping"; cat "$T/p"; }

# The permissions mapping_race picks from the library's answers, confirmed by the seaccess
# command: D denied and G allowed, so that any grant of D during the race is a wrong one.
race() { # PROGRAM SECONDS
  SEACCESS_POLICY=$TP/unknown.33 timeout 120 "$1" u:r:dom_t:s0 u:object_r:obj_t:s0 "$2" > "$T/r" 2>&1 || return 1
  read -r _ _ d _ _ g _ < "$T/r"; d=${d%,} g=${g%;}
  ./$BUILD/seaccess check -p "$TP/unknown.33" u:r:dom_t:s0 u:object_r:obj_t:s0 file "$d" > /dev/null 2>&1; [ $? = 1 ] || { echo "seaccess check allows $d" >> "$T/r"; return 1; }
  ./$BUILD/seaccess check -p "$TP/unknown.33" u:r:dom_t:s0 u:object_r:obj_t:s0 file "$g" > /dev/null 2>&1 || { echo "seaccess check denies $g" >> "$T/r"; return 1; }
}
race "$OUT/mapping_race" 3 && ok "$(grep '^mapping_race:' "$T/r")" || { bad "mapping_race: a check mixed two maps or saw none"; cat "$T/r"; }
out=$(SEACCESS_POLICY=$pol timeout 60 "$OUT/thread_attrs" system_u:object_r:etc_t:s0 system_u:system_r:httpd_t:s0 2>&1) \
  && ok "$out" || { bad "thread_attrs: a thread's attributes are not its own"; echo "$out"; }

# The same programs under AddressSanitizer and valgrind, on fewer queries.
head -n 300 "$T/q.default" > "$T/q300"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=1
SEACCESS_POLICY=$pol "$OUT/answer-asan" av < "$T/q300" > /dev/null 2> "$T/a" && ok "answer under ASan" || { bad "answer under ASan"; tail -30 "$T/a"; }
"$OUT/errors-asan" "$pol" > "$T/a" 2>&1 && ok "errors under ASan" || { bad "errors under ASan"; tail -30 "$T/a"; }
SEACCESS_POLICY=$pol "$OUT/threads-asan" 4 1 < "$T/q300" > "$T/a" 2>&1 && ok "threads under ASan" || { bad "threads under ASan"; tail -30 "$T/a"; }
failclosed -asan && ok "failclosed under ASan" || { bad "failclosed under ASan"; tail -30 "$T/f"; }
"$OUT/callbacks-asan" "$A" "$B" > "$T/a" 2>&1 && ok "callbacks under ASan" || { bad "callbacks under ASan"; tail -30 "$T/a"; }
"$OUT/epipe-asan" "$A" "$B" > "$T/a" 2>&1 && ok "epipe under ASan" || { bad "epipe under ASan"; tail -30 "$T/a"; }
"$OUT/fork-asan" "$A" "$B" 40 > "$T/a" 2>&1 && ok "fork under ASan" || { bad "fork under ASan"; tail -30 "$T/a"; }
SEACCESS_POLICY=$pol "$OUT/fork-asan" load 20 > "$T/a" 2>&1 && ok "fork during the lazy load under ASan" || { bad "fork during the lazy load under ASan"; tail -30 "$T/a"; }
"$OUT/permissive-asan" "$TP/renumber_a.33" "$TP/unknown.33" > "$T/a" 2>&1 && ok "permissive under ASan" || { bad "permissive under ASan"; tail -30 "$T/a"; }
"$OUT/stale_context-asan" "$TP/renumber_a.33" "$TP/example.33" > "$T/a" 2>&1 && ok "stale_context under ASan" || { bad "stale_context under ASan"; tail -30 "$T/a"; }
"$OUT/reload_storm-asan" "$TP/renumber_a.33" "$TP/renumber_b.33" 2 > "$T/a" 2>&1 && ok "reload_storm under ASan" || { bad "reload_storm under ASan"; grep -v '^avc: ' "$T/a" | tail -30; }
"$OUT/front-asan" "$TP/front_a.33" "$TP/front_b.33" > "$T/a" 2>&1 && ok "front under ASan" || { bad "front under ASan"; tail -30 "$T/a"; }
"$OUT/mapping-asan" "${MAPPING[@]}" > "$T/a" 2>&1 && ok "mapping under ASan" || { bad "mapping under ASan"; tail -30 "$T/a"; }
race "$OUT/mapping_race-asan" 1 && ok "mapping_race under ASan" || { bad "mapping_race under ASan"; tail -30 "$T/r"; }
unset ASAN_OPTIONS
VG=(valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite)
head -n 100 "$T/q.default" > "$T/q100"
SEACCESS_POLICY=$pol "${VG[@]}" "$OUT/answer" av < "$T/q100" > /dev/null 2> "$T/v" && ok "answer under valgrind" || { bad "answer under valgrind"; tail -30 "$T/v"; }
"${VG[@]}" "$OUT/errors" "$pol" > "$T/v" 2>&1 && ok "errors under valgrind" || { bad "errors under valgrind"; tail -30 "$T/v"; }
SEACCESS_POLICY=$pol "${VG[@]}" "$OUT/threads" 2 1 < "$T/q100" > "$T/v" 2>&1 && ok "threads under valgrind" || { bad "threads under valgrind"; tail -30 "$T/v"; }
"${VG[@]}" "$OUT/callbacks" "$A" "$B" > "$T/v" 2>&1 && ok "callbacks under valgrind" || { bad "callbacks under valgrind"; tail -30 "$T/v"; }
"${VG[@]}" "$OUT/epipe" "$A" "$B" > "$T/v" 2>&1 && ok "epipe under valgrind" || { bad "epipe under valgrind"; tail -30 "$T/v"; }
# libseaccess in place of libselinux.so.1: every symbol it exports is one of libselinux 3.4's,
# with that symbol's version; a program built against libselinux answers the same on both.
SYS=$(ldconfig -p | awk '/libselinux\.so\.1 / {print $NF; exit}')
if bash tests/capi/dropin.sh 2> "$T/d"; then
  # Less the interposer's entry points, under their own version (crates/capi/src/interpose.rs).
  nm -D --defined-only target/libselinux/libselinux.so.1 | awk '$3 ~ /@/ && $3 !~ /^seaccess_run_[a-z]+@@SEACCESS_RUN_1$/ {print $3}' | sort > "$T/ours"
  nm -D --defined-only "$SYS" | awk '$3 ~ /@/ {print $3}' | sort > "$T/theirs"
  extra=$(comm -23 "$T/ours" "$T/theirs")
  [ -z "$extra" ] && ok "dropin: $(wc -l < "$T/ours") exports, each one of libselinux 3.4's with its version ($(comm -13 "$T/ours" "$T/theirs" | wc -l) of its $(wc -l < "$T/theirs") still missing)" || bad "dropin exports what libselinux does not, or with another version: $extra"
  if gcc -O2 -Wall -Werror -Wno-deprecated-declarations -o "$OUT/dropin_paths" tests/capi/dropin_paths.c -lselinux 2> "$T/d"; then
    mkdir -p "$T/files"
    # Standard output only: libselinux also writes diagnostics (a path realpath cannot resolve)
    # to standard error, which seaccess does not.
    "$OUT/dropin_paths" "$T/files" > "$T/sys.out" 2> /dev/null
    LD_LIBRARY_PATH=$PWD/target/libselinux "$OUT/dropin_paths" "$T/files" > "$T/sea.out" 2> /dev/null
    ldd_ok=$(LD_LIBRARY_PATH=$PWD/target/libselinux ldd "$OUT/dropin_paths" | grep -c "target/libselinux/libselinux.so.1")
    if [ "$ldd_ok" = 1 ] && cmp -s "$T/sys.out" "$T/sea.out"; then
      ok "dropin: paths, config, context_t helpers, file labels, matchpathcon and selabel (file, media, X, database) answer as libselinux ($(wc -l < "$T/sys.out") lines)"
    else
      bad "dropin: paths, config and context_t helpers differ from libselinux (loaded: $ldd_ok)"; diff "$T/sys.out" "$T/sea.out" | head -20
    fi
  else
    bad "compile dropin_paths"; cat "$T/d"
  fi
  # What needs a policy, against what the seaccess command derives from the same policy.
  if gcc -O2 -Wall -Werror -o "$OUT/dropin_policy" tests/capi/dropin_policy.c -lselinux 2> "$T/d"; then
    SEA=./$BUILD/seaccess
    U=unconfined_u:unconfined_r:unconfined_t:s0 H=system_u:system_r:httpd_t:s0
    # With the interposer `seaccess run` preloads: without it setexeccon and setfscreatecon refuse.
    run_policy() { LD_LIBRARY_PATH=$PWD/target/libselinux LD_PRELOAD=$PWD/target/libselinux/libseaccess-preload.so SEACCESS_POLICY=$pol "$@" "$OUT/dropin_policy" "$H" 2>&1; }
    run_policy env -u SEACCESS_SUBJECTS > "$T/p0"
    printf 'exe=%s %s\ndefault %s\n' "$(readlink -f "$OUT/dropin_policy")" "$H" "$U" > "$T/subjects"
    run_policy env SEACCESS_SUBJECTS="$T/subjects" > "$T/p1"
    [ -x "$SEA" ] || cargo build --profile "${BUILD##*/}" -q -p seaccess-cli
    allowed() { "$SEA" check -p "$pol" "$@" > /dev/null 2>&1; }
    want_setcon=-1; allowed "$U" "$U" process setcurrent && allowed "$U" "$H" process dyntransition && want_setcon=0
    mls=$("$SEA" info -p "$pol" | awk '/^mls / {print ($2 == "true")}')
    rej=$("$SEA" info -p "$pol" | awk '/^handle_unknown / {print ($2 == "Reject")}')
    line() { grep -q -x -F -- "$2" "$1" || { echo "  $1: no line: $2"; grep -F -- "${2%%=*}" "$1" | head -2; return 1; }; }
    if line "$T/p0" "getcon=0 $U" && line "$T/p0" "getpidcon_self=0 $U" && line "$T/p0" "getpeercon=0 $U" \
      && line "$T/p1" "getcon=0 $H" && line "$T/p1" "getpidcon_self=0 $H" && line "$T/p1" "getpidcon_parent=0 $U" \
      && line "$T/p1" "getprevcon=0 $H" && line "$T/p1" "getpeercon=0 $H" \
      && line "$T/p0" "getexeccon_unset=0 (null)" && line "$T/p0" "setexeccon_invalid=-1" && line "$T/p0" "setexeccon=0" \
      && line "$T/p0" "getexeccon=0 $H" && line "$T/p0" "getexeccon_cleared=0 (null)" \
      && line "$T/p0" "getfscreatecon=0 system_u:object_r:etc_t:s0" \
      && line "$T/p0" "setcon=$want_setcon" && line "$T/p0" "getcon_after_setcon=0 $([ "$want_setcon" = 0 ] && echo "$H" || echo "$U")" \
      && line "$T/p0" "is_selinux_mls_enabled=$mls" && line "$T/p0" "security_reject_unknown=$rej" \
      && line "$T/p0" "security_get_checkreqprot=0" \
      && line "$T/p0" "mode_to_security_class(reg)==file 1" && line "$T/p0" "mode_to_security_class(dir)==dir 1" \
      && line "$T/p0" "print_access_vector: { read write } null" \
      && line "$T/p0" "raw_to_trans=0 system_u:object_r:etc_t:s0" \
      && line "$T/p0" "status_open=0 updated=0 getenforce=1 after_setenforce0: updated=1 getenforce=0 updated_again=0" \
      && line "$T/p0" "netlink: before=0 after_setenforce=1 after_check=0 set_boolean_list=0 active=0 readable=1" \
      && line "$T/p0" "avc_compute_create=0 same_as_security_compute_create=1" \
      && line "$T/p0" "default log formats 42" && line "$T/p0" "default_validate good=0 bad=-1" \
      && line "$T/p0" "default_setenforce=0 default_policyload=0 audit_set=1"; then
      ok "dropin: process contexts (subjects rules), exec/fscreate attributes, setcon (setcurrent, dyntransition), MLS, handle_unknown, print_access_vector, status page, netlink descriptor, boolean lists, avc_compute_create, default callbacks as the policy says"
    else
      bad "dropin: policy answers"; cat "$T/p0" "$T/p1" | head -40
    fi
    # seaccess run sets the same up.
    # --no-session: the environment alone (a session shares the mode and booleans, tests/run/session.sh).
    "$SEA" run --no-session -p "$pol" --subjects "$T/subjects" -- "$OUT/dropin_policy" "$H" > "$T/p2" 2>&1
    cmp -s "$T/p1" "$T/p2" && ok "dropin: seaccess run --no-session --subjects gives the program the same library, policy and subjects" || { bad "dropin: seaccess run"; diff "$T/p1" "$T/p2" | head; }
  else
    bad "compile dropin_policy"; cat "$T/d"
  fi
else
  bad "build target/libselinux/libselinux.so.1"; cat "$T/d"
fi
# A set-user-ID program on the drop-in ignores its caller's SEACCESS_* variables (AT_SECURE).
if [ -e target/libselinux/libselinux.so.1 ]; then
  SEACCESS_BUILD=$BUILD bash tests/capi/secure_env.sh > "$T/se" 2>&1; rc=$?
  if grep -q '^SKIP' "$T/se"; then cat "$T/se"
  elif [ $rc = 0 ]; then ok "secure_env: a set-user-ID program ignores SEACCESS_POLICY, SEACCESS_SUBJECTS and SEACCESS_AUDIT set by nobody (system policy, default subject, closed without one); not set-user-ID it honours them ($(tail -n 1 "$T/se"))"
  else bad "secure_env (tests/capi/secure_env.sh)"; grep -v '^ok: ' "$T/se" | head -30; fi
fi
# Debian's own programs (selinux-utils) and Python module, unmodified, on the drop-in.
if [ -e target/libselinux/libselinux.so.1 ] && command -v matchpathcon > /dev/null; then
  SEA=./$BUILD/seaccess
  on() { LD_LIBRARY_PATH=$PWD/target/libselinux SEACCESS_POLICY=$pol "$@"; }
  loaderr=0 progs=0
  for p in $(dpkg -L selinux-utils | grep '/sbin/'); do
    progs=$((progs + 1))
    on "$p" < /dev/null > /dev/null 2> "$T/e"
    if grep -qiE "version information|symbol lookup error|undefined symbol|cannot open shared" "$T/e"; then loaderr=$((loaderr + 1)); echo "  $p: $(head -1 "$T/e")"; fi
  done
  [ "$loaderr" = 0 ] && ok "dropin: all $progs selinux-utils programs load it with no loader complaint" || bad "dropin: $loaderr programs cannot load it"
  same=1
  for args in "matchpathcon /etc/passwd /usr/bin/ls /var/www/html /home/u/.ssh /nonexistent" "matchpathcon -m dir /etc/passwd" \
      "selabel_lookup -b file -k /etc/shadow" "selabel_lookup -b x -k WM_NAME -t property" "selabel_lookup -b db -k postgres.public -t db_schema" \
      "selabel_lookup_best_match -p /bin/ls" "selabel_partial_match -p /var/www" "selabel_partial_match -p /nonexistent" \
      "selinux_check_securetty_context system_u:object_r:etc_t:s0" \
      "selabel_digest -b file" "selabel_digest -b file -B" "selabel_digest -b media" "selabel_digest -b x" "selabel_digest -b db"; do
    set -- $args
    a=$("$@" 2>&1); b=$(on "$@" 2>&1)
    [ "$a" = "$b" ] || { same=0; echo "  $args: libselinux: $a / seaccess: $b"; }
  done
  [ "$same" = 1 ] && ok "dropin: Debian's matchpathcon, selabel_lookup (file, X, database), best and partial match, selabel_digest (every backend) print what they print on libselinux" || bad "dropin: labeling programs differ from libselinux"
  U=unconfined_u:unconfined_r:unconfined_t:s0
  agree=1
  while read -r s t c; do
    for m in create member relabel; do
      want=$(echo "$s $t $c" | "$SEA" compute-$m -p "$pol")
      got=$(on compute_$m "$s" "$t" "$c" 2>&1)
      [ "$want" = "$got" ] || { agree=0; echo "  compute_$m $s $t $c: $got, seaccess: $want"; }
    done
    for perm in read write getattr; do
      "$SEA" check -p "$pol" "$s" "$t" "$c" "$perm" > /dev/null 2>&1; want=$?
      on selinux_check_access "$s" "$t" "$c" "$perm" > /dev/null 2>&1; got=$?
      { [ "$want" = 0 ] && [ "$got" = 0 ]; } || { [ "$want" = 1 ] && [ "$got" != 0 ]; } || { agree=0; echo "  selinux_check_access $s $t $c $perm: $got, seaccess check: $want"; }
    done
  done <<EOT
$U system_u:object_r:tmp_t:s0 file
$U system_u:object_r:etc_t:s0 dir
system_u:system_r:httpd_t:s0 system_u:object_r:shadow_t:s0 file
system_u:system_r:httpd_t:s0 system_u:object_r:httpd_sys_content_t:s0 file
system_u:system_r:sshd_t:s0-s0:c0.c1023 system_u:object_r:var_run_t:s0 sock_file
EOT
  on getsebool httpd_enable_cgi > "$T/g1" 2>&1
  on togglesebool httpd_enable_cgi > /dev/null 2>&1
  [ "$agree" = 1 ] && grep -qx "httpd_enable_cgi --> off" "$T/g1" \
    && ok "dropin: Debian's compute_create/member/relabel and selinux_check_access answer as seaccess; getsebool reads the policy's boolean" || bad "dropin: Debian's policy programs"
  # A login's contexts: getconlist lists, for a starting context, what the per-user file and
  # then default_contexts list for its role:type (each with the user and the starting range),
  # those the policy accepts; derived here from the same files and seaccess check.
  CTXD=/etc/selinux/default/contexts
  lst=1
  for pair in "staff_u system_u:system_r:local_login_t:s0" "user_u system_u:system_r:sshd_t:s0" "unconfined_u system_u:system_r:crond_t:s0"; do
    set -- $pair
    user=$1 from=$2 rt=$(echo "$2" | cut -d: -f2,3) range=$(echo "$2" | cut -d: -f4-)
    want=$(for f in "$CTXD/users/$user" "$CTXD/default_contexts"; do
        [ -r "$f" ] && awk -v rt="$rt" '{ split($1, a, ":"); if (a[1] ":" a[2] == rt && NF > 1) { for (i = 2; i <= NF; i++) print $i; exit } }' "$f"
      done | while read -r p; do
        c="$user:$(echo "$p" | cut -d: -f1,2):$range"
        "$SEA" check -p "$pol" "$c" "$c" process getattr > /dev/null 2>&1; [ $? -ne 2 ] && echo "$c"
      done | awk '!seen[$0]++')
    got=$(on getconlist "$user" "$from" 2>&1)
    [ -n "$want" ] && [ "$want" = "$got" ] || { lst=0; echo "  getconlist $user $from: $got / derived: $want"; }
  done
  users=$(on /usr/bin/python3 -c "import selinux; print('\n'.join(selinux.security_compute_user('system_u:system_r:sshd_t:s0-s0:c0.c1023', 'staff_u')[1]))" 2>&1)
  n=0 okc=1
  for c in $users; do
    n=$((n + 1))
    "$SEA" check -p "$pol" system_u:system_r:sshd_t:s0-s0:c0.c1023 "$c" process transition > /dev/null 2>&1 || { okc=0; echo "  security_compute_user gave $c, which sshd_t may not transition to"; }
  done
  [ "$lst" = 1 ] && [ "$okc" = 1 ] && [ "$n" -gt 0 ] && ok "dropin: Debian's getconlist lists what the configuration and policy give; security_compute_user's $n contexts are each reachable" || bad "dropin: user contexts"
  # The rest of selinux-utils (and sestatus), each answer derived from the policy, its files or
  # the real libselinux: tests/capi/dropin_utils.sh.
  if bash tests/capi/dropin_utils.sh "$pol" "$SEA" > "$T/u" 2>&1; then
    ok "dropin: Debian's compute_av, validatetrans, getsebool -a, togglesebool, getfilecon, setfilecon, getpidcon, selinuxexeccon, getenforce, setenforce, selinuxenabled, policyvers, getseuser, getdefaultcon, selinux_check_securetty_context, avcstat and sestatus answer as derived ($(tail -n 1 "$T/u"))"
  else
    bad "dropin: selinux-utils programs (tests/capi/dropin_utils.sh)"; grep -v '^ok: ' "$T/u" | head -30
  fi
  # restorecon and setfiles (policycoreutils) on a scratch tree outside /tmp (whose paths
  # file_contexts leaves unlabelled): the changes seaccess label --apply lists.
  if command -v restorecon > /dev/null && command -v setfiles > /dev/null; then
    R=$(mktemp -d /srv/seaccess-capi.XXXXXX)
    mkdir -p "$R/www/html" "$R/etc" && echo hi > "$R/www/html/index.html" && echo x > "$R/etc/f"
    setfattr -n security.selinux -v system_u:object_r:etc_t:s0 "$R/etc/f"
    "$SEA" label --apply -n -v "$R" > "$T/want" 2>&1
    on restorecon -Rnv "$R" > "$T/rc" 2>&1
    on setfiles -n -v "$CTXD/files/file_contexts" "$R" > "$T/sf" 2>&1
    on restorecon -R "$R" > /dev/null 2>&1
    "$SEA" label --check "$R" > "$T/chk" 2>&1; chk=$?
    n=$(grep -c "^Would relabel" "$T/want")
    if [ "$n" -ge 5 ] && cmp -s "$T/want" "$T/rc" && cmp -s "$T/want" "$T/sf" && [ "$chk" = 0 ]; then
      ok "dropin: Debian's restorecon -Rnv and setfiles -n -v list the $n changes seaccess label --apply -n lists; restorecon -R makes them"
    else
      bad "dropin: restorecon/setfiles"; diff "$T/want" "$T/rc" | head; diff "$T/want" "$T/sf" | head; cat "$T/chk" | head -3
    fi
    rm -rf "$R"
  else
    bad "dropin: restorecon or setfiles missing (make deps)"
  fi
  # The same walk while nobody swaps a directory it owns in the tree for a link to a directory
  # outside (issue 34): nothing outside relabelled.
  bash tests/capi/restorecon_race.sh "$pol" > "$T/race" 2>&1; rc=$?
  if [ $rc = 0 ] && grep -q '^ok: ' "$T/race"; then ok "dropin: $(sed -n 's/^ok: //p' "$T/race")"
  elif [ $rc = 0 ] && grep -q '^SKIP' "$T/race"; then cat "$T/race"
  else bad "dropin: $(cat "$T/race")"; fi
  # The partial-match digests restorecon keeps in security.sehash: selabel_hash_all_partial_matches
  # and selabel_get_digests_all_partial_matches print on libseaccess what they print on Debian's
  # libselinux; restorecon_xattr (which refuses to run on libselinux without an SELinux kernel)
  # lists, on libseaccess, a directory whose kept digest is the one libselinux computes as
  # matching and another as not, and -d removes only the latter.
  if gcc -O2 -Wall -Werror -o "$OUT/dropin_digest" tests/capi/dropin_digest.c -lselinux 2> "$T/d" && command -v restorecon_xattr > /dev/null; then
    R=$(mktemp -d /srv/seaccess-digest.XXXXXX)
    mkdir -p "$R/www/html" "$R/etc"
    keys="/etc /var/www /usr/share /home /nonexistent/x /var /run/user/1000 /"
    "$OUT/dropin_digest" "$R/www" $keys > "$T/dg.sys" 2>&1
    on "$OUT/dropin_digest" "$R/www" $keys > "$T/dg.sea" 2>&1
    calc=$(sed -n 's/^digests .* calc=\([0-9a-f]*\)$/\1/p' "$T/dg.sys")
    wrong=0102030405060708090a0b0c0d0e0f1011121314
    setfattr -n security.sehash -v "0x$calc" "$R/www" && setfattr -n security.sehash -v "0x$wrong" "$R/etc"
    "$OUT/dropin_digest" "$R/www" > "$T/dk.sys" 2>&1
    on "$OUT/dropin_digest" "$R/www" > "$T/dk.sea" 2>&1
    on restorecon_xattr -r "$R" > "$T/rx" 2>&1
    on restorecon_xattr -r -d "$R" > /dev/null 2>&1
    kept_www=$(getfattr --only-values -n security.sehash "$R/www" 2>/dev/null | od -An -tx1 | tr -d ' \n')
    kept_etc=$(getfattr --only-values -n security.sehash "$R/etc" 2>/dev/null | wc -c)
    if [ -n "$calc" ] && cmp -s "$T/dg.sys" "$T/dg.sea" && cmp -s "$T/dk.sys" "$T/dk.sea" && grep -q "match=1" "$T/dk.sys" \
      && grep -qx "$R/www Digest: $calc Match" "$T/rx" && grep -qx "$R/etc Digest: $wrong No Match" "$T/rx" && [ "$(wc -l < "$T/rx")" = 2 ] \
      && [ "$kept_www" = "$calc" ] && [ "$kept_etc" = 0 ]; then
      ok "dropin: partial-match digests as libselinux computes them ($(grep -c '^hash' "$T/dg.sys") paths); restorecon_xattr -r lists the matching and the stale one, -d removes only the stale one"
    else
      bad "dropin: partial-match digests"; diff "$T/dg.sys" "$T/dg.sea" | head; diff "$T/dk.sys" "$T/dk.sea" | head; cat "$T/rx"; echo "kept: $kept_www $kept_etc"
    fi
    rm -rf "$R"
  else
    bad "dropin: dropin_digest does not build, or restorecon_xattr is missing (make deps)"; cat "$T/d"
  fi
  if on /usr/bin/python3 -c "
import selinux, sys
U='$U'
assert selinux.is_selinux_enabled() == 1
assert selinux.matchpathcon('/etc/shadow', 0)[1] == '$(./$BUILD/seaccess label /etc/shadow | cut -f2)'
assert selinux.security_compute_create(U, 'system_u:object_r:tmp_t:s0', selinux.string_to_security_class('file'))[1] == '$(echo "$U system_u:object_r:tmp_t:s0 file" | "$SEA" compute-create -p "$pol")'
assert selinux.getcon()[1] == U
assert selinux.context_type_get(selinux.context_new('u:r:t:s0')) == 't'
assert selinux.selinux_check_access(U, 'system_u:object_r:etc_t:s0', 'file', 'read') == 0
try:
    selinux.selinux_check_access('system_u:system_r:httpd_t:s0', 'system_u:object_r:shadow_t:s0', 'file', 'read')
    sys.exit('httpd_t read shadow_t allowed')
except OSError as e:
    assert e.errno == 13
" > "$T/py" 2>&1; then ok "dropin: Python's import selinux works on it: labels, computes, contexts and checks as seaccess answers"; else bad "dropin: import selinux"; tail -5 "$T/py"; fi
else
  bad "dropin: target/libselinux/libselinux.so.1 or selinux-utils missing (make capi deps)"
fi
finish
