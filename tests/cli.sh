#!/usr/bin/env bash
# End-to-end tests of the seaccess command as a user runs it. Needs `make build oracle policies`.
set -uo pipefail
cd "$(dirname "$0")/.."
# The build under test: target/release, or the directory SEACCESS_BUILD names (`make test` sets
# target/ci, its profile without LTO).
BUILD=${SEACCESS_BUILD:-target/release}
BIN=./$BUILD/seaccess
# The lab and the benchmarks, a program of their own.
LAB=./$BUILD/seaccess-lab
ORACLE=./target/oracle/sepol-oracle
POL=/etc/selinux/default/policy/policy.33
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok: $1"; }
bad() { fail=$((fail + 1)); echo "FAIL: $1"; }
# Under `make test` (SEACCESS_REQUIRE_ORACLE=1) a missing input fails the run instead of
# narrowing it.
REQUIRED=${SEACCESS_REQUIRE_ORACLE:-0}
if [ ! -e "$POL" ]; then
  [ "$REQUIRED" = 1 ] && bad "Debian's policy $POL is required but missing (make deps)"
  POL=target/policies/example.33
fi
expect() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

[ -x "$BIN" ] || cargo build --profile "${BUILD##*/}" -q -p seaccess-cli
[ -x "$LAB" ] || cargo build --profile "${BUILD##*/}" -q -p seaccess-lab-cli

# compute-av answers as libsepol does, line for line, in the selinuxfs access format.
if [ -x "$ORACLE" ]; then
  $ORACLE gen "$POL" 11 5000 > "$T/q"
  $ORACLE av "$POL" < "$T/q" | awk '{print $1, $3, $4}' > "$T/o"
  $BIN compute-av --policy "$POL" < "$T/q" > "$T/s"; rc=$?
  expect "compute-av exits 0 on valid queries" '[ $rc -eq 0 ]'
  expect "compute-av prints one line per query" '[ $(wc -l < "$T/s") -eq 5000 ]'
  awk '{print $1, $3, $4}' "$T/s" > "$T/s3"
  expect "compute-av agrees with libsepol on 5000 queries" 'cmp -s "$T/o" "$T/s3"'
  expect "compute-av prints DECIDED ffffffff and a decimal seqno" 'awk "\$2 != \"ffffffff\" || \$5 !~ /^[0-9]+$/ {exit 1}" "$T/s"'
elif [ "$REQUIRED" = 1 ]; then
  bad "the sepol oracle is required but $ORACLE is missing (make oracle)"
else
  echo "note: no oracle; skipping the CLI comparison with libsepol"
fi

# Lines that cannot be answered print `error` in place and are explained with their line number.
S=$(head -1 "$T/q" 2>/dev/null | cut -d' ' -f1); [ -n "$S" ] || S=system_u:system_r:httpd_t:s0
printf '%s %s file\nnot-a-context %s file\n%s %s no_such_class\njust-one-field\n%s %s file\n' \
  "$S" "$S" "$S" "$S" "$S" "$S" "$S" > "$T/mixed"
$BIN compute-av --policy "$POL" < "$T/mixed" > "$T/mo" 2> "$T/me"; rc=$?
expect "bad lines make the run exit non-zero" '[ $rc -ne 0 ]'
expect "output lines match input lines" '[ $(wc -l < "$T/mo") -eq 5 ]'
expect "bad lines print error in place" '[ "$(sed -n 2p "$T/mo")" = error ] && [ "$(sed -n 3p "$T/mo")" = error ] && [ "$(sed -n 4p "$T/mo")" = error ]'
expect "good lines around them are answered" '[ "$(sed -n 1p "$T/mo")" != error ] && [ "$(sed -n 5p "$T/mo")" = "$(sed -n 1p "$T/mo")" ]'
expect "stderr names the line and the problem" 'grep -q "line 2: invalid context" "$T/me" && grep -q "line 3: unknown class" "$T/me" && grep -q "line 4:" "$T/me"'

# compute-create with and without an object name.
$BIN compute-create --policy "$POL" < "$T/mixed" > "$T/co" 2>/dev/null
expect "compute-create keeps lines aligned" '[ $(wc -l < "$T/co") -eq 5 ] && [ "$(sed -n 2p "$T/co")" = error ]'

# check: one line per permission, reasons for denials, exit status 0/1/2.
if [ "$POL" = /etc/selinux/default/policy/policy.33 ]; then
  $BIN check -p "$POL" system_u:system_r:httpd_t:s0 system_u:object_r:httpd_sys_content_t:s0 file read getattr > "$T/c1"; rc=$?
  expect "check: allowed permissions exit 0" '[ $rc -eq 0 ] && grep -q "^read: allowed" "$T/c1"'
  $BIN check -p "$POL" system_u:system_r:httpd_t:s0 system_u:object_r:shadow_t:s0 file read > "$T/c2"; rc=$?
  expect "check: a denial exits 1 and gives a reason" '[ $rc -eq 1 ] && grep -q "^read: denied: no allow rule" "$T/c2"'
  $BIN check -p "$POL" system_u:system_r:httpd_t:s0 system_u:object_r:user_home_t:s0 file read > "$T/c3"
  expect "check: a boolean-guarded denial names its booleans" 'grep -q "booleans:.*httpd_read_user_content" "$T/c3"'
  $BIN check -p "$POL" --bool httpd_read_user_content=1 system_u:system_r:httpd_t:s0 system_u:object_r:user_home_t:s0 file read > "$T/c4"; rc=$?
  expect "check --bool: setting the boolean allows it" '[ $rc -eq 0 ] && grep -q "^read: allowed" "$T/c4"'
  $BIN check -p "$POL" system_u:system_r:svirt_t:s0:c1 system_u:object_r:svirt_image_t:s0:c2 file getattr read > "$T/c5"
  expect "check: an MCS denial names the mlsconstrain" 'grep -q "^getattr: allowed" "$T/c5" && grep -q "^read: denied: mlsconstrain" "$T/c5"'
  $BIN check -p "$POL" user_u:user_r:user_t:s0 staff_u:object_r:user_home_t:s0 file read > "$T/c8"
  expect "check: a user-based constraint denial names the constrain" 'grep -q "^read: denied: constrain #" "$T/c8"'
  printf 'sysadm_u:sysadm_r:sysadm_t:s0 sysadm_u:object_r:user_home_dir_t:s0 dir .mplayer\nsysadm_u:sysadm_r:sysadm_t:s0 sysadm_u:object_r:user_home_dir_t:s0 dir\n' | $BIN compute-create -p "$POL" > "$T/ft"
  expect "compute-create: a filename transition applies only with its name" '[ "$(sed -n 1p "$T/ft")" = sysadm_u:object_r:mplayer_home_t:s0 ] && [ "$(sed -n 2p "$T/ft")" = sysadm_u:object_r:user_home_t:s0 ]'
fi
$BIN check -p "$POL" "$S" "$S" file no_such_perm > /dev/null 2> "$T/c6"; rc=$?
expect "check: an unknown permission is an error (exit 2)" '[ $rc -eq 2 ] && grep -q "no permission \"no_such_perm\"" "$T/c6"'
$BIN check -p "$POL" bogus:ctx "$S" file read > /dev/null 2> "$T/c7"; rc=$?
expect "check: an invalid context is an error (exit 2)" '[ $rc -eq 2 ] && grep -q "invalid context" "$T/c7"'

# Bad policy files and arguments.
head -c 5000 "$POL" > "$T/trunc"
$BIN info --policy "$T/trunc" > /dev/null 2> "$T/e1"; rc=$?
expect "a truncated policy is a clear error" '[ $rc -eq 2 ] && grep -q "byte [0-9]*" "$T/e1"'
$BIN info --policy /nonexistent > /dev/null 2> "$T/e2"; rc=$?
expect "a missing policy file is a clear error" '[ $rc -eq 2 ] && grep -q "/nonexistent" "$T/e2"'
# A policy is a regular file read up to a bound: a FIFO (whose open would wait for a writer),
# /dev/zero (endless), a directory and a sparse file past the bound are each refused at once
# with an error naming the path and the reason, never a hang or a read until memory runs out.
mkfifo "$T/fifo" && truncate -s $((256 * 1024 * 1024 + 1)) "$T/huge" && mkdir -p "$T/adir"
for bad in "$T/fifo:not a regular file but a FIFO" "/dev/zero:not a regular file but a character device" \
    "$T/adir:not a regular file but a directory" "$T/huge:larger than a policy may be"; do
  f=${bad%%:*} why=${bad#*:}
  timeout 20 $BIN check -p "$f" "$S" "$S" file read > /dev/null 2> "$T/e2f"; rc=$?
  expect "check -p $(basename "$f"): refused at once ($why)" '[ $rc -eq 2 ] && grep -qF "$f: " "$T/e2f" && grep -qF "$why" "$T/e2f"'
  [ $rc -eq 2 ] || { echo "  exit $rc"; cat "$T/e2f"; }
done
$BIN compute-av < /dev/null > /dev/null 2> "$T/e2b"; rc=$?
expect "without --policy, the installed policy is used and named on standard error" '[ $rc -eq 0 ] && grep -q "using the installed policy /etc/selinux/" "$T/e2b"'
$BIN check -p "$POL" --bool nosuchbool=1 "$S" "$S" file read > /dev/null 2> "$T/e3"; rc=$?
expect "an unknown boolean is a clear error" '[ $rc -eq 2 ] && grep -q "unknown boolean" "$T/e3"'

# The tour runs.
$BIN tour > "$T/tour" 2>&1; rc=$?
expect "tour runs" '[ $rc -eq 0 ] && grep -q "Loaded" "$T/tour"'

# The AVC benchmark runs end to end (a smoke test with tiny durations: its numbers mean nothing
# here, and nothing is timed); libselinux's AVC is measured beside it when the peer is built.
$LAB bench avc -p target/policies/example.33 --seconds 0.02 --threads 1,2 --keys 64 --no-callgrind --json > "$T/b" 2> "$T/be"; rc=$?
expect "bench avc prints one JSON object" '[ $rc -eq 0 ] && [ $(wc -l < "$T/b") -eq 1 ] && python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$T/b"'
expect "bench avc reports the fields the issue names" 'python3 -c "
import json,sys; j=json.load(open(sys.argv[1]))
assert j[\"hit_ns_1t\"] > 0 and j[\"miss_ns\"] > 0 and j[\"hit_ops_per_s_1t\"] > 0 and j[\"hit_ops_per_s_2t\"] > 0
for d in (\"seaccess\", \"global_mutex\", \"global_rwlock\", \"bucket_mutex\", \"bucket_rwlock\", \"block_mutex\"):
    assert [r[\"threads\"] for r in j[\"designs\"][d]] == [1, 2], d
r=j[\"reload\"]
assert r[\"changes\"] > 0 and r[\"transitions\"] > 0 and r[\"misses\"] > 0
assert r[\"stall_vs_miss_median\"] > 0 and r[\"miss_median_ns\"] > 0 and r[\"commit_us\"] > 0
" "$T/b"'
if [ -x target/peers/libselinux-avc-peer ]; then
  expect "bench avc measures libselinux's AVC on the same answers" 'python3 -c "
import json,sys; j=json.load(open(sys.argv[1]))
assert j[\"libselinux_wrong\"] == 0 and j[\"libselinux_misses\"] == 0 and len(j[\"designs\"][\"libselinux\"]) == 2
" "$T/b"'
fi
$LAB bench avc -p target/policies/example.33 --seconds 0 > /dev/null 2> "$T/be2"; rc=$?
expect "bench avc refuses a zero duration" '[ $rc -eq 2 ] && grep -q "seconds" "$T/be2"'

# The cache's audit records are read by audit2allow and audit2why unchanged (with the audit
# daemon's prefix, as in /var/log/audit/audit.log).
DPOL=/etc/selinux/default/policy/policy.33
if command -v audit2allow > /dev/null && [ -e "$DPOL" ]; then
  OM=./$BUILD/examples/object_manager
  [ -x "$OM" ] || cargo build --profile "${BUILD##*/}" -q -p seaccess-lab --example object_manager
  $OM "$DPOL" system_u:system_r:httpd_t:s0 system_u:object_r:shadow_t:s0 file read getattr > "$T/om"; rc=$?
  sed -n 's/^audit: /type=AVC msg=audit(1700000000.123:42): /p' "$T/om" > "$T/avc.log"
  expect "the example object manager runs" '[ $rc -eq 0 ] && grep -q "^lookups hits misses" "$T/om"'
  expect "one audit record per audited denial" '[ $(wc -l < "$T/avc.log") -eq $(grep -c "denied {" "$T/om") ] && [ $(wc -l < "$T/avc.log") -gt 0 ]'
  audit2allow -p "$DPOL" -i "$T/avc.log" > "$T/a2a" 2>&1
  expect "audit2allow reads the records" 'grep -q "allow httpd_t shadow_t:file { getattr read };" "$T/a2a"'
  audit2why -p "$DPOL" -i "$T/avc.log" > "$T/a2w" 2>&1
  expect "audit2why reads the records" 'grep -q "Was caused by" "$T/a2w"'
elif [ "$REQUIRED" = 1 ]; then
  bad "audit2allow and Debian's policy are required for the audit record round trip (make deps)"
else
  echo "note: audit2allow or Debian's policy missing; skipping the audit record round trip"
fi

# The lab as README runs it: `seaccess-lab lab --quick --out DIR` prints the five experiments'
# tables and writes their results, the plots and index.html.
if [ -e "$DPOL" ]; then
  "$LAB" lab --quick --out "$T/lab" > "$T/lab.out" 2> "$T/lab.err"; rc=$?
  expect "seaccess-lab lab --quick runs every experiment" '[ $rc -eq 0 ]'
  for title in "## chatroom" "## hackbench (2004), sockets" "## hackbench (2004), pipes" "## tree walk" "## read/write" "## path walk"; do
    expect "lab prints its $title table" 'grep -q "^$title" "$T/lab.out"'
  done
  expect "lab writes index.html with every plot" '(for f in chatroom hackbench-sockets hackbench-pipes overheads; do [ -s "$T/lab/$f.svg" ] && [ -s "$T/lab/$f.png" ] && grep -q "src=\"$f.svg\"" "$T/lab/index.html" || exit 1; done)'
  expect "lab writes JSON and CSV for each experiment" 'python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert all(k in r for k in (\"chatroom\",\"hackbench\",\"objmgr\"))" "$T/lab/results.json" && [ -s "$T/lab/chatroom.csv" ] && [ -s "$T/lab/hackbench.csv" ] && [ -s "$T/lab/objmgr.csv" ]'
  if [ -e /dev/fuse ]; then
    expect "lab runs tree walk, read/write and path walk on a FUSE mount too" 'python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert [x[\"name\"] for x in r[\"mount\"][\"rows\"]] == [\"treewalk\",\"readwrite\",\"pathwalk\"]" "$T/lab/results.json" && grep -q "^On a FUSE mount" "$T/lab.out"'
  else
    expect "lab says why the mount variants did not run" 'grep -q "SKIP: seaccess-lab lab: treewalk, readwrite, pathwalk on a FUSE mount: no /dev/fuse" "$T/lab.err"'
  fi
  if [ -x target/peers/libselinux-avc-peer ]; then
    expect "lab runs chatroom with libselinux's AVC (the peer) too" 'python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert all(\"libselinux\" in [n for n, _ in row[\"rates\"]] for row in r[\"chatroom\"][\"rows\"])" "$T/lab/results.json"'
  elif [ "$REQUIRED" = 1 ]; then
    bad "the libselinux AVC peer is required for the lab's chatroom (make peers)"
  else
    echo "SKIP: target/peers/libselinux-avc-peer not built; the lab's chatroom without libselinux's AVC"
  fi
  # --threads: whole rooms of 3 threads a client (10 clients with --quick) and whole groups of
  # 40 threads, at least one; --rounds: the rounds each row ran.
  "$LAB" lab chatroom hackbench --quick --threads 20,60,130 --rounds 2 --json --out "$T/lab-threads" > "$T/lab-threads.json" 2> "$T/lab-threads.err"
  expect "lab --threads sets the rooms and groups, --rounds the rounds" 'python3 -c "
import json,sys
r=json.load(open(sys.argv[1]))
assert [x[\"rooms\"] for x in r[\"chatroom\"][\"rows\"]] == [1,2,4], r[\"chatroom\"][\"rows\"]
assert [(x[\"transport\"],x[\"groups\"]) for x in r[\"hackbench\"][\"rows\"]] == [(\"Sockets\",1),(\"Sockets\",1),(\"Sockets\",3),(\"Pipes\",1),(\"Pipes\",1),(\"Pipes\",3)]
assert all(len(runs) == 2 for row in r[\"chatroom\"][\"rows\"] for _, runs in row[\"runs\"])
" "$T/lab-threads.json"'
  [ $rc -eq 0 ] || cat "$T/lab.err"
elif [ "$REQUIRED" = 1 ]; then
  bad "Debian's policy is required for the lab (make deps)"
else
  echo "SKIP: Debian's default policy is not installed; seaccess-lab lab not run"
fi

# Without Debian's policy the lab runs on the bundled example policy: every experiment finds a
# domain and files there (httpd_t's sockets and pipes, user_t in its home).
if [ -e target/policies/example.33 ]; then
  "$LAB" lab --quick --rounds 2 -p target/policies/example.33 --out "$T/lab-example" > "$T/lab-example.out" 2> "$T/lab-example.err"; rc=$?
  expect "seaccess-lab lab runs every experiment on the bundled example policy" '[ $rc -eq 0 ] && [ "$(grep -c "^## \(chatroom\|hackbench\|tree walk\|read/write\|path walk\)" "$T/lab-example.out")" -eq 6 ] && grep -q "as user_u:user_r:user_t:s0" "$T/lab-example.out"'
  [ $rc -eq 0 ] || cat "$T/lab-example.err"
else
  echo "SKIP: target/policies/example.33 not built (make policies); the lab on the example policy not run"
fi

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
