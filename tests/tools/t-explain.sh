#!/usr/bin/env bash
# `seaccess explain` and `seaccess allow` as a user runs them: both log formats, malformed and
# unknown records reported by line while the run goes on, --json, -M, --boolean-hints, the
# installed policy by default. (Their verdicts and rules against audit2why and audit2allow
# themselves: crates/cli/tests/explain_peers.rs, in `cargo test`.)
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=./${SEACCESS_BUILD:-target/release}/seaccess
POL=/etc/selinux/default/policy/policy.33
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
source tests/tools/lib.sh
if [ ! -e "$POL" ]; then
  echo "FAIL: Debian's default policy $POL is missing (make deps)"; exit 1
fi

S=system_u:system_r:httpd_t:s0
cat > "$T/log" <<LOG
Nov 26 10:00:00 host kernel: [  12.345678] audit: type=1400 audit(1700000000.100:10): avc:  denied  { read } for  pid=1 comm="httpd" name="shadow" dev="vda1" ino=5 scontext=$S tcontext=system_u:object_r:shadow_t:s0 tclass=file permissive=0
type=SYSCALL msg=audit(1700000000.100:10): arch=c000003e syscall=2 success=no exit=-13
type=AVC msg=audit(1700000000.200:11): avc:  denied  { name_connect } for  pid=1 comm="httpd" dest=3128 scontext=$S tcontext=system_u:object_r:http_cache_port_t:s0 tclass=tcp_socket permissive=0
type=AVC msg=audit(1700000000.300:12): avc:  denied  { read scontext=$S tclass=file
type=AVC msg=audit(1700000000.400:13): avc:  granted  { read } for  pid=1 comm="httpd" scontext=$S tcontext=system_u:object_r:etc_t:s0 tclass=file
type=USER_AVC msg=audit(1700000000.500:14): pid=1 uid=0 auid=4294967295 ses=4294967295 subj=system_u:system_r:init_t:s0 msg='avc:  denied  { status } for auid=n/a uid=0 gid=0 cmdline="systemctl" scontext=$S tcontext=system_u:system_r:init_t:s0 tclass=system exe="/usr/lib/systemd/systemd" sauid=0 hostname=? addr=? terminal=?'
type=AVC msg=audit(1700000000.600:15): avc:  denied  { reed } for  pid=1 comm="httpd" scontext=$S tcontext=system_u:object_r:shadow_t:s0 tclass=file permissive=0
type=AVC msg=audit(1700000000.700:16): avc:  denied  { read } for  pid=1 comm="httpd" scontext=$S tcontext=system_u:object_r:shadow_t:s0 tclass=fiel permissive=0
LOG

$BIN explain -p "$POL" "$T/log" > "$T/out" 2> "$T/err"; rc=$?
expect "explain: exit 1 when a record cannot be read or explained" '[ $rc -eq 1 ]'
expect "explain: the kernel log's record is explained (TE), naming the rule that would allow it" 'grep -q "^$T/log: line 1: .*tclass=file" "$T/out" && grep -q "Missing type enforcement (TE) allow rule" "$T/out" && grep -q "allow httpd_t shadow_t:file read;" "$T/out"'
expect "explain: a boolean verdict names each boolean and the value it needs" 'grep -q "# setsebool -P httpd_can_network_connect 1" "$T/out" && grep -q "# setsebool -P httpd_can_network_relay 1" "$T/out"'
expect "explain: a USER_AVC record is read from inside msg=" 'grep -q "^$T/log: line 6: " "$T/out"'
expect "explain: the malformed record is reported with its line" 'grep -q "line 4: " "$T/err"'
expect "explain: an unknown permission is reported with its line and the nearest name" 'grep -q "line 7: class file has no permission .reed.; did you mean read?" "$T/err"'
expect "explain: an unknown class is reported with its line and the nearest name" 'grep -q "line 8: unknown class .fiel.; did you mean file?" "$T/err"'
expect "explain: granted records and other record types are skipped" '! grep -q "line [25]:" "$T/out" "$T/err"'

$BIN explain -p "$POL" --json < "$T/log" > "$T/json" 2>/dev/null
expect "explain --json: one object per denial read, in input order" '[ "$(python3 -c "import json,sys; print(\" \".join(str(json.loads(l)[\"line\"]) for l in open(sys.argv[1])))" "$T/json")" = "1 3 6" ]'
expect "explain --json: verdicts te, boolean (with values), and the fields the issue lists" 'python3 - "$T/json" <<PY
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
assert list(r[0])[:6] == ["line", "scontext", "tcontext", "tclass", "perms", "verdict"], list(r[0])
assert r[0]["verdict"] == "te" and r[0]["perms"] == ["read"] and r[0]["rule"] == "allow httpd_t shadow_t:file read;"
assert r[1]["verdict"] == "boolean" and {"name": "httpd_can_network_connect", "value": True} in r[1]["booleans"]
assert r[1]["reasons"][0]["kind"] == "boolean_off"
PY'

# The installed policy when --policy is not given, named on standard error.
printf '%s\n' "$(sed -n 3p "$T/log")" | $BIN explain > "$T/o2" 2> "$T/e2"
expect "explain: the installed policy by default, said on standard error" 'grep -q "using the installed policy /etc/selinux/" "$T/e2" && grep -q "setsebool" "$T/o2"'

$BIN allow -p "$POL" "$T/log" > "$T/mod" 2>/dev/null
expect "allow: rules grouped under their source type, with audit2allow's boolean note" 'grep -q "^#============= httpd_t ==============" "$T/mod" && grep -q "^allow httpd_t shadow_t:file read;" "$T/mod" && grep -q "^#!!!! This avc can be allowed using one of the these booleans:" "$T/mod"'
$BIN allow -p "$POL" --boolean-hints "$T/log" > "$T/hints" 2>/dev/null
expect "allow --boolean-hints: the setsebool instead of the rule" 'grep -q "^# setsebool -P httpd_can_network_connect 1" "$T/hints" && grep -q "^# allow httpd_t http_cache_port_t:tcp_socket name_connect;" "$T/hints" && ! grep -q "^allow httpd_t http_cache_port_t" "$T/hints"'
(cd "$T" && "$OLDPWD/$BIN" allow -p "$POL" -M local_fix log > out.M 2>/dev/null)
expect "allow -M: local_fix.te written and compiled to local_fix.pp" 'grep -q "^module local_fix 1.0;" "$T/local_fix.te" && [ -s "$T/local_fix.pp" ] && [ ! -e "$T/local_fix.mod" ] && grep -q "semodule -i local_fix.pp" "$T/out.M"'
$BIN allow -p "$POL" -m "bad name" "$T/log" > /dev/null 2> "$T/e3"; rc=$?
expect "allow: a module name that is not a name is refused (exit 2)" '[ $rc -eq 2 ] && grep -q "module name" "$T/e3"'
$BIN explain --help > "$T/help"
expect "explain --help shows examples and the verdicts" 'grep -q "Examples:" "$T/help" && grep -q "dontaudit, te, boolean" "$T/help"'

summary explain/allow
