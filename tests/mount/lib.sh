# Helpers for the shell suites that run `seaccess mount` (sourced; sets nothing up by itself
# but functions and the variables below). The sourcing script is at the repository's root
# and sets T (its scratch directory), BIN (the binary), POL, FC and LOG (the current mount's
# --audit-log) before it uses them.
#
# Every call that touches a mount runs under `timeout`; but a process whose FUSE request the
# server has already read cannot be killed until the server answers (request_wait_answer),
# so a server that never answers is ended by aborting its connection (abort_mount, `within`).

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok: $1"; }
bad() { fail=$((fail + 1)); echo "FAIL: $1"; }
expect() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
summary() { echo "${SUITE:-mount}: $pass passed, $fail failed"; exit $((fail > 0)); }
skip() {
  if [ "${SEACCESS_REQUIRE_FUSE:-0}" = 1 ]; then bad "$1 (SEACCESS_REQUIRE_FUSE=1)"; else echo "SKIP: $1"; fi
  summary
}

label_of() { getfattr -h --absolute-names --only-values -n "${2:-security.selinux}" -- "$1" 2>/dev/null | tr -d '\0'; }
mlabel() { timeout 10 getfattr -h --absolute-names --only-values -n security.selinux -- "$1" 2>/dev/null | tr -d '\0'; }
fclabel() { "$BIN" label -f "${3:-$FC}" --type "${2:-file}" "$1" | cut -f2; }
create_ctx() { echo "$*" | "$BIN" compute-create -p "$POL"; }
is_mounted() { grep -qs " $1 fuse" /proc/mounts; }
# allowed SCON TCON CLASS PERMS...: `seaccess check` allows every permission.
allowed() { "$BIN" check -p "$POL" "$@" > /dev/null 2>&1; }
# denied SCON TCON CLASS PERMS...: `seaccess check` denies one of them (exit 1, not an error).
denied() { "$BIN" check -p "$POL" "$@" > /dev/null 2>&1; [ $? -eq 1 ]; }

# The FUSE connection of mount point $1 (its directory under /sys/fs/fuse/connections: the
# superblock's device number as the kernel encodes it, major << 20 | minor).
conn_of() {
  awk -v mp="$1" '$5 == mp { split($3, d, ":"); print d[1] * 1048576 + d[2]; exit }' /proc/self/mountinfo
}
FUSECTL=/sys/fs/fuse/connections
FUSECTL_MOUNTED=
# The control file system the aborts need (mounted here if it is not, unmounted at the end).
need_fusectl() {
  grep -qs " $FUSECTL fusectl" /proc/mounts && return 0
  mount -t fusectl none "$FUSECTL" 2>/dev/null && FUSECTL_MOUNTED=1
}
# abort_mount MP: abort the connection (every request, read or not, fails with ENOTCONN) and
# detach the mount point. Touches nothing through the mount.
declare -A CONN=()
abort_mount() {
  local c=${CONN[$1]:-}
  [ -n "$c" ] && [ -w "$FUSECTL/$c/abort" ] && echo 1 > "$FUSECTL/$c/abort"
  is_mounted "$1" && timeout 10 fusermount3 -uz "$1" 2>/dev/null
  return 0
}
# within SECS MP CMD...: CMD in the background; if it has not ended after SECS, MP's
# connection is aborted (so a caller stuck in the kernel returns) and 124 is returned.
# HUNG is set to 1 when that happened.
HUNG=0
within() {
  local secs=$1 mp=$2 p i; shift 2
  "$@" & p=$!
  for ((i = 0; i < secs * 10; i++)); do
    kill -0 "$p" 2>/dev/null || { wait "$p"; return $?; }
    sleep 0.1
  done
  HUNG=1
  echo "  (still running after ${secs}s: aborting the FUSE connection of $mp)" >&2
  abort_mount "$mp"
  for ((i = 0; i < 50; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$p" 2>/dev/null
  return 124
}
# wait_line FILE REGEX SECS: FILE has a line matching REGEX within SECS; prints the last one.
wait_line() {
  local i
  for ((i = 0; i < $3 * 10; i++)); do
    grep -qE "$2" "$1" 2>/dev/null && break
    sleep 0.1
  done
  grep -E "$2" "$1" 2>/dev/null | tail -n 1
}

# start NAME SOURCE MOUNTPOINT ARGS...: `seaccess mount` in the background; MPID its pid.
# The mount process's standard error (reloads, refusals) goes to $T/NAME.err.
MPS=() PIDS=()
start() {
  local name=$1 src=$2 mp=$3; shift 3
  mkdir -p "$mp"; MPS+=("$mp"); MPID=
  timeout 30 "$BIN" mount "$@" "$src" "$mp" > "$T/$name.out" 2> "$T/$name.err"; local rc=$?
  MPID=$(sed -n 's/.*(pid \([0-9][0-9]*\)).*/\1/p' "$T/$name.out" | head -n 1)
  [ -n "$MPID" ] && PIDS+=("$MPID")
  if is_mounted "$mp"; then CONN[$mp]=$(conn_of "$mp"); echo "${CONN[$mp]}" >> "$T/conns"; fi
  [ $rc -eq 0 ] && [ -n "$MPID" ] && is_mounted "$mp"
}
# stop_mount MP PID: SIGTERM (the server unmounts); if it does not, abort and detach.
stop_mount() {
  kill -TERM "$2" 2>/dev/null
  for _ in $(seq 30); do kill -0 "$2" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$2" 2>/dev/null || is_mounted "$1"; then
    abort_mount "$1"
    for _ in $(seq 30); do kill -0 "$2" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$2" 2>/dev/null
  fi
  return 0
}

# Audit records written since the last `mark` ($LOG is the current mount's --audit-log).
mark() { MARK=$(cat "$LOG" 2>/dev/null | wc -l); }
since() { tail -n +$((MARK + 1)) "$LOG" 2>/dev/null; }
# avc SCON TCON CLASS PERMISSIVE [TEXT]: a record since the mark denies for exactly these
# contexts and class (and names TEXT), and `seaccess check` agrees its permissions are denied.
avc() {
  local line perms rc
  while IFS= read -r line; do
    [[ $line == "type=AVC "*"avc:  denied  { "* ]] || continue
    [[ $line == *" scontext=$1 tcontext=$2 tclass=$3 permissive=$4" ]] || continue
    [ -n "${5:-}" ] && [[ $line != *"$5"* ]] && continue
    perms=$(sed -n 's/.*denied  { \(.*\) } for .*/\1/p' <<< "$line")
    "$BIN" check -p "$POL" "$1" "$2" "$3" $perms > /dev/null 2>&1; rc=$?
    [ $rc -eq 1 ] && return 0
  done < <(since)
  return 1
}
no_avc() { ! since | grep -q '^type=AVC '; }
# The tree under $1 as bytes: every object's type, mode, owner, size and mtime, every file's
# digest, every extended attribute.
snapshot() {
  (cd "$1" && find . -printf '%p %y %m %U:%G %s %T@\n' | LC_ALL=C sort \
    && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum \
    && getfattr -R -h -d -m - . 2>/dev/null)
}
