# What an administrator's peer tools make of seaccess's audit records, sourced by the suites
# that send them where those tools read (tests/mount/syslog.sh: journald; tests/kernel/run.sh:
# auditd's USER_AVC records). Each function takes a file of records, one a line, and a
# compiled policy, and prints what the tool said.

# peer_explains RECORDS POLICY: audit2why explains the records as a missing allow rule.
peer_explains() {
  local why
  why=$(audit2why -p "$2" < "$1" 2>&1)
  echo "$why"
  [ -s "$1" ] && [[ $why == *"Missing type enforcement (TE) allow rule"* ]]
}

# peer_allows RECORDS POLICY: audit2allow writes a file rule on the first record's own source
# and target types.
peer_allows() {
  local rules st tt
  rules=$(audit2allow -p "$2" < "$1" 2>&1)
  st=$(sed -n 's/.* scontext=[^:]*:[^:]*:\([^: ]*\).*/\1/p' "$1" | head -n 1)
  tt=$(sed -n 's/.* tcontext=[^:]*:[^:]*:\([^: ]*\).*/\1/p' "$1" | head -n 1)
  echo "$rules" | grep '^allow'
  [ -n "$st" ] && [[ $rules == *"allow $st $tt:file "* ]]
}
