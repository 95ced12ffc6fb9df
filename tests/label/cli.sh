#!/usr/bin/env bash
# `seaccess label` end to end, as a user runs it: its output against libselinux's own
# matchpathcon, --apply on a scratch tree read back with getfattr (as root, and as another user
# who gets user.selinux), --check, --plan, --compile, and the errors for broken files.
# Needs `make build` and Debian's policy and file_contexts (make deps). Run as root.
set -uo pipefail
cd "$(dirname "$0")/../.."
# The build under test: target/release, or the directory SEACCESS_BUILD names (`make test` sets
# target/ci, its profile without LTO).
BUILD=${SEACCESS_BUILD:-target/release}
BIN=./$BUILD/seaccess
FC=/etc/selinux/default/contexts/files/file_contexts
POL=/etc/selinux/default/policy/policy.33
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok: $1"; }
bad() { fail=$((fail + 1)); echo "FAIL: $1"; }
expect() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
REQUIRED=${SEACCESS_REQUIRE_ORACLE:-0}
for need in matchpathcon getfattr; do
  if ! command -v $need >/dev/null; then
    if [ "$REQUIRED" = 1 ]; then bad "$need is required (make deps)"; else echo "SKIP: no $need (make deps)"; fi
    echo "label: $pass passed, $fail failed"; exit $((fail > 0))
  fi
done
[ -x "$BIN" ] || cargo build --profile "${BUILD##*/}" -q -p seaccess-cli

# The same output as matchpathcon, byte for byte: a sample of this machine's tree (lstat
# types), the same paths with each forced type, and paths that do not exist.
find /usr /etc /var /opt /srv /home /root -xdev 2>/dev/null | grep -v $'\t' | awk 'NR % 97 == 1' > "$T/paths"
printf '%s\n' /nonexistent/x /usr/bin/ /usr//lib///x /var/run/lock /run/lock / /home/u/.ssh "" >> "$T/paths"
xargs -d '\n' matchpathcon -f "$FC" < "$T/paths" > "$T/m" 2>/dev/null; mrc=$?
$BIN label -f "$FC" - < "$T/paths" > "$T/s" 2>/dev/null; src=$?
# The empty path fails in both (EINVAL), which both report on standard error and in the status.
expect "label prints what matchpathcon prints ($(wc -l < "$T/paths") paths)" 'cmp -s "$T/m" "$T/s" && [ $mrc -ne 0 ] && [ $src -ne 0 ]'
for t in f:file d:dir l:lnk_file c:chr_file b:blk_file s:sock_file p:fifo_file; do
  awk 'NR % 5 == 1' "$T/paths" | grep . > "$T/p5"
  xargs -d '\n' matchpathcon -m "${t%%:*}" -f "$FC" < "$T/p5" > "$T/m" 2>&1
  $BIN label -f "$FC" --type "${t#*:}" - < "$T/p5" > "$T/s" 2>&1
  expect "label --type ${t#*:} prints what matchpathcon -m ${t%%:*} prints" 'cmp -s "$T/m" "$T/s"'
done
$BIN label --json /etc/passwd /proc/x > "$T/j"
expect "label --json gives one object a path, null for <<none>>" \
  'python3 -c "import json,sys; a=[json.loads(l) for l in open(\"$T/j\")]; assert a[0][\"context\"].endswith(\":etc_t:s0\") and a[0][\"type\"]==\"file\" and a[1][\"context\"] is None"'

# --apply on a scratch tree that will be mounted elsewhere (--root): the attributes getfattr
# shows are what `seaccess label` prints for the path under the root.
R=$T/root
mkdir -p "$R/usr/bin" "$R/etc/ssh" "$R/var/log" "$R/home/u/.ssh" "$R/proc/x"
touch "$R/usr/bin/ls" "$R/etc/passwd" "$R/etc/shadow" "$R/etc/ssh/sshd_config" "$R/var/log/syslog" "$R/home/u/.ssh/authorized_keys"
ln -s ../bin/ls "$R/usr/bin/lnk"; mkfifo "$R/var/log/fifo"
# PATH-UNDER-ROOT<TAB>LABEL for every object under $1, in path order, read with getfattr.
labels() {
  (cd "$1" && find . | LC_ALL=C sort) | while IFS= read -r p; do
    printf '%s\t%s\n' "$p" "$(getfattr -h --absolute-names -n "${2:-security.selinux}" --only-values -- "$1/$p" 2>/dev/null | tr -d '\0')"
  done
}
# What seaccess label prints for each object's path under $1, asked with the object's own type.
wanted() {
  (cd "$1" && find . | LC_ALL=C sort) | while IFS= read -r p; do
    case $(stat -c %F "$1/$p") in
      directory) t=dir ;; "symbolic link") t=lnk_file ;; fifo) t=fifo_file ;; socket) t=sock_file ;; *) t=file ;;
    esac
    key=${p#.}; [ -z "$key" ] && key=/
    printf '%s\t%s\n' "$p" "$($BIN label -f "$FC" --type $t "$key" | cut -f2 | sed 's/^<<none>>$//')"
  done
}
$BIN label --apply -n --root "$R" > "$T/n" 2>&1
expect "--apply -n lists what it would change" '[ $(grep -c "^Would relabel " "$T/n") -ge 10 ]'
expect "--apply -n writes nothing" '[ -z "$(labels "$R" | cut -f2 | tr -d "\n")" ]'
# On a terminal the walk counts its objects on standard error and erases the count when done, so
# that no line is left half overwritten; off a terminal ($T/n above) it writes no count.
if command -v script > /dev/null; then
  script -q -c "$BIN label --apply -n --root '$R' > /dev/null" "$T/tty" > /dev/null 2>&1
  expect "--apply on a terminal counts the objects, then erases the count" \
    'python3 -c "import re,sys; t=open(sys.argv[1],\"rb\").read(); m=list(re.finditer(rb\"\\r[0-9]+ objects\", t)); assert m and t[m[-1].end():].startswith(b\"\\r\\x1b[2K\"), t" "$T/tty"'
  expect "--apply off a terminal writes no count" '! grep -q "objects" "$T/n"'
else
  echo "SKIP: no script(1) for a terminal; the walk's count on a terminal not checked"
fi
$BIN label --check --root "$R" > /dev/null 2>&1; rc=$?
expect "--check exits 1 on an unlabeled tree" '[ $rc -eq 1 ]'
$BIN label --apply -v --root "$R" > "$T/v" 2>&1; rc=$?
expect "--apply -v labels the tree and says so" '[ $rc -eq 0 ] && grep -q "^Relabeled $R/etc/shadow from (null) to system_u:object_r:shadow_t:s0" "$T/v"'
expect "--apply says which attribute it wrote" 'grep -q "as security.selinux" "$T/v"'
labels "$R" > "$T/got"; wanted "$R" > "$T/want"
expect "getfattr shows the labels seaccess label prints for the path under --root ($(wc -l < "$T/want") objects, <<none>> left alone)" 'cmp -s "$T/got" "$T/want" && grep -q "^./proc/x	$" "$T/got"'
$BIN label --apply -v --root "$R" > "$T/v2" 2>&1
expect "a second --apply changes nothing" '[ ! -s "$T/v2" ]'
$BIN label --check --root "$R" > "$T/c" 2>&1; rc=$?
expect "--check exits 0 on a labeled tree" '[ $rc -eq 0 ] && [ ! -s "$T/c" ]'
setfattr -h -n security.selinux -v "system_u:object_r:tmp_t:s0" "$R/etc/passwd"
$BIN label --check --root "$R" > "$T/c" 2>&1; rc=$?
expect "--check lists a mislabeled object and exits 1" '[ $rc -eq 1 ] && grep -qx "$R/etc/passwd has context system_u:object_r:tmp_t:s0, should be system_u:object_r:etc_t:s0" "$T/c"'
setfattr -h -n security.selinux -v "staff_u:object_r:tmp_t:s0" "$R/etc/passwd"
$BIN label --apply --root "$R" 2>/dev/null
expect "--apply keeps user, role and level and fixes the type (restorecon without -F)" \
  '[ "$(getfattr -h --absolute-names --only-values -n security.selinux "$R/etc/passwd" | tr -d "\0")" = staff_u:object_r:etc_t:s0 ]'
$BIN label --apply -F --root "$R" 2>/dev/null
expect "--apply -F sets the whole context" \
  '[ "$(getfattr -h --absolute-names --only-values -n security.selinux "$R/etc/passwd" | tr -d "\0")" = system_u:object_r:etc_t:s0 ]'
$BIN label --apply --threads 1 --root "$R" "$R/etc" > /dev/null 2>&1; rc=$?
expect "--apply of a subtree under --root with one thread" '[ $rc -eq 0 ]'

# Another user cannot write security.*: the labels go to user.selinux, and the command says so.
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
  U=$T/user; mkdir -p "$U/etc"; touch "$U/etc/passwd"; chown -R nobody "$U"; chmod 755 "$T"
  touch "$U/probe"; chown nobody "$U/probe"
  if setpriv --reuid=nobody --regid=nogroup --clear-groups setfattr -n security.selinux -v x "$U/probe" 2>/dev/null; then
    attr=security.selinux
    echo "SKIP: this kernel lets a file's owner write security.selinux, so the user.selinux fallback cannot be provoked here"
  else
    attr=user.selinux
  fi
  rm -f "$U/probe"
  setpriv --reuid=nobody --regid=nogroup --clear-groups $BIN label --apply --root "$U" > "$T/u" 2>&1; rc=$?
  expect "an unprivileged --apply writes $attr and says so" '[ $rc -eq 0 ] && grep -q "labels as $attr" "$T/u"'
  expect "$attr holds the label" '[ "$(getfattr --only-values -n $attr "$U/etc/passwd" | tr -d "\0")" = system_u:object_r:etc_t:s0 ]'
  mkdir -p "$T/ux/etc"; touch "$T/ux/etc/passwd"
  $BIN label --apply --xattr user.selinux --root "$T/ux" > "$T/ux.out" 2>&1; rc=$?
  expect "--xattr user.selinux writes only user.selinux" '[ $rc -eq 0 ] && grep -q "labels as user.selinux$" "$T/ux.out" && [ "$(getfattr --only-values -n user.selinux "$T/ux/etc/passwd" | tr -d "\0")" = system_u:object_r:etc_t:s0 ] && ! getfattr -n security.selinux "$T/ux/etc/passwd" >/dev/null 2>&1'
  $BIN label --check --xattr user.selinux --root "$T/ux" > /dev/null 2>&1; rc=$?
  expect "--check --xattr user.selinux reads it back" '[ $rc -eq 0 ]'
  $BIN label --check --xattr security.selinux --root "$T/ux" > /dev/null 2>&1; rc=$?
  expect "--check --xattr security.selinux does not count user.selinux" '[ $rc -eq 1 ]'
  setpriv --reuid=nobody --regid=nogroup --clear-groups $BIN label --check --root "$U" > /dev/null 2>&1; rc=$?
  expect "--check reads user.selinux back" '[ $rc -eq 0 ]'
else
  echo "SKIP: no user nobody or setpriv: the user.selinux fallback is not tried"
fi

# --xattr trusted.selinux (where `seaccess mount` keeps labels): written and read back, on a
# link too (labelled itself), and security.selinux left alone.
mkdir -p "$T/tr/etc"; touch "$T/tr/etc/passwd"; ln -s passwd "$T/tr/etc/lnk"
$BIN label --apply --xattr trusted.selinux --root "$T/tr" > "$T/tr.out" 2>&1; rc=$?
expect "--xattr trusted.selinux writes only trusted.selinux, a link's own too" '[ $rc -eq 0 ] && grep -q "labels as trusted.selinux$" "$T/tr.out" && [ "$(getfattr --only-values -n trusted.selinux "$T/tr/etc/passwd" | tr -d "\0")" = system_u:object_r:etc_t:s0 ] && [ "$(getfattr -h --only-values -n trusted.selinux "$T/tr/etc/lnk" | tr -d "\0")" = "$($BIN label -f "$FC" --type lnk_file /etc/lnk | cut -f2)" ] && ! getfattr -n security.selinux "$T/tr/etc/passwd" >/dev/null 2>&1'
$BIN label --check --xattr trusted.selinux --root "$T/tr" > /dev/null 2>&1; rc=$?
expect "--check --xattr trusted.selinux reads it back" '[ $rc -eq 0 ]'
setfattr -n trusted.selinux -v system_u:object_r:tmp_t:s0 "$T/tr/etc/passwd"
$BIN label --check --xattr trusted.selinux --root "$T/tr" > "$T/tr.c" 2>&1; rc=$?
expect "--check --xattr trusted.selinux sees a wrong one" '[ $rc -eq 1 ] && grep -q "etc/passwd has context system_u:object_r:tmp_t:s0" "$T/tr.c"'

# A directory the walker may not read (root without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH,
# a directory of mode 000): labelled by its name, the rest of the tree too, and the run fails
# saying which directory it could not go into.
L=$T/locked; mkdir -p "$L/etc/shut/in"; touch "$L/etc/passwd"; chmod 000 "$L/etc/shut"
if command -v setpriv >/dev/null; then
  setpriv --bounding-set=-dac_override,-dac_read_search -- $BIN label --apply --xattr security.selinux --root "$L" > "$T/l.out" 2>&1; rc=$?
  chmod 755 "$L/etc/shut"
  expect "an unreadable directory is labelled, reported, and the run fails" '[ $rc -eq 2 ] && grep -q "$L/etc/shut: opening the directory: Permission denied" "$T/l.out" && [ -n "$(getfattr --only-values -n security.selinux "$L/etc/shut" 2>/dev/null)" ] && [ -n "$(getfattr --only-values -n security.selinux "$L/etc/passwd" 2>/dev/null)" ] && [ -z "$(getfattr --only-values -n security.selinux "$L/etc/shut/in" 2>/dev/null)" ]'
else
  echo "SKIP: no setpriv: the unreadable directory is not tried"
fi

# -x: a file system mounted inside the tree is labelled at its mount point and not gone into.
mkdir -p "$T/xd/etc" "$T/xd/mnt"; touch "$T/xd/etc/passwd"
if mount -t tmpfs -o size=1m seaccess-x "$T/xd/mnt" 2>/dev/null; then
  touch "$T/xd/mnt/inner"
  $BIN label --apply -x --root "$T/xd" > /dev/null 2>&1; rc=$?
  expect "-x labels the mount point and nothing under it" '[ $rc -eq 0 ] && getfattr -n security.selinux "$T/xd/mnt" >/dev/null 2>&1 && ! getfattr -n security.selinux "$T/xd/mnt/inner" >/dev/null 2>&1 && getfattr -n security.selinux "$T/xd/etc/passwd" >/dev/null 2>&1'
  $BIN label --apply --root "$T/xd" > /dev/null 2>&1
  expect "without -x it goes in" 'getfattr -n security.selinux "$T/xd/mnt/inner" >/dev/null 2>&1'
  umount "$T/xd/mnt"
else
  echo "SKIP: cannot mount a tmpfs here: -x is not tried"
fi

# The descriptors a walk holds: its open ancestors and its queued batches' directories. Under
# a limit of 64 (soft and hard, so it cannot be raised), a tree of 600 directories, 40 deep in
# places, is labelled whole: batches keep few enough directories open.
F=$T/fds; mkdir -p "$F/w"
(cd "$F/w" && seq -f 'd%g' 1 600 | xargs mkdir && for d in d*; do touch "$d/f"; done)
mkdir -p "$F/deep/$(printf 'x/%.0s' $(seq 40))"
(ulimit -n 64; $BIN label --apply --threads 2 --root "$F" > /dev/null 2> "$T/fds.err"); rc=$?
expect "under a 64-descriptor limit, 600 directories and 40 levels are labelled whole" '[ $rc -eq 0 ] && ! grep -qv "^seaccess label: wrote [0-9]* labels as security.selinux$" "$T/fds.err" && [ "$($BIN label --check --root "$F" | wc -l)" = 0 ]'

# The relabel race (issue 34): nobody owns 20 directories inside --root and swaps each, in turn
# and as fast as it can, with a link to a root-owned directory outside holding the same names
# (renameat2 RENAME_EXCHANGE, tests/label/swap.c) while root runs --check, --plan and --apply -F
# on the tree (--check first: an outside label --apply had changed would read as right). Nothing
# outside may be written or read: every outside label stays byte for byte, and no outside label
# or name shows in what --check and --plan print.
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && command -v runuser >/dev/null && command -v gcc >/dev/null; then
  A=$T/race; chmod 755 "$T"; mkdir -p "$A/root/pub" "$A/out/secret"
  gcc -O2 -Wall -o "$A/swap" tests/label/swap.c
  pairs=()
  for i in $(seq 20); do
    mkdir "$A/root/pub/d$i"; (cd "$A/root/pub/d$i" && seq -f 'f%g' 1 250 | xargs touch)
    ln -s "$A/out" "$A/root/pub/l$i"; pairs+=("$A/root/pub/d$i" "$A/root/pub/l$i")
  done
  (cd "$A/out" && seq -f 'f%g' 1 250 | xargs touch && touch secret/s)
  chown -R nobody:nogroup "$A/root/pub"
  (cd "$A/out" && find . -mindepth 1 | sed 's|^\./||') \
    | awk -v o="$A/out" '{print "# file: " o "/" $0; print "security.selinux=\"system_u:object_r:shadow_t:s0\""; print ""}' > "$A/labels"
  setfattr -h --restore="$A/labels"
  getfattr -R -h -d -m - --absolute-names "$A/out" > "$A/before" 2>/dev/null
  printf '/.*\tsystem_u:object_r:etc_t:s0\n' > "$A/fc.old"; printf '/.*\tsystem_u:object_r:tmp_t:s0\n' > "$A/fc.new"
  runuser -u nobody -- timeout 600 "$A/swap" "$A/stop" "${pairs[@]}" > "$A/swaps" 2>&1 &
  sw=$!
  late=0
  for _ in 1 2 3 4 5; do timeout 120 $BIN label --check --root "$A/root" >> "$A/check" 2>&1; [ $? = 124 ] && late=1; done
  for _ in 1 2 3 4 5; do timeout 120 $BIN label --plan --from "$A/fc.old" -f "$A/fc.new" --root "$A/root" >> "$A/plan" 2>&1; [ $? = 124 ] && late=1; done
  for _ in 1 2 3; do timeout 120 $BIN label --apply -F --root "$A/root" > /dev/null 2>&1; [ $? = 124 ] && late=1; done
  touch "$A/stop"; wait $sw
  getfattr -R -h -d -m - --absolute-names "$A/out" > "$A/after" 2>/dev/null
  swaps=$(cat "$A/swaps")
  expect "the race ran: nobody made $swaps swaps, every run ended in time" '[ "$swaps" -gt 1000 ] 2>/dev/null && [ $late = 0 ]'
  # (And the runs did label the tree: a directory swapped at the wrong moment in every run may
  # be missed, being then a link, labelled as one.)
  inside=$(getfattr -R -h -n security.selinux --absolute-names "$A/root/pub" 2>/dev/null | grep -c "^security.selinux=\"$($BIN label -f "$FC" /pub/d1/f1 | cut -f2)\"")
  expect "--apply -F under the race relabels nothing outside --root ($(grep -c '^# file' "$A/labels") labels compared byte for byte; $inside inside labelled)" 'cmp -s "$A/before" "$A/after" && [ "$inside" -gt 250 ]'
  expect "--check under the race reads no label outside --root" '! grep -q shadow_t "$A/check"'
  expect "--plan under the race walks nothing outside --root" '! grep -q secret "$A/plan" && grep -q "^  $A/root/pub/[dl][0-9]*/f1$" "$A/plan"'
else
  echo "SKIP: the relabel race needs root, the user nobody, runuser and gcc"
fi

# --plan: what a new file_contexts relabels, grouped old -> new, exit 1 when anything changes.
mkdir -p "$T/new"; cp -p "$FC" "$FC.homedirs" "$FC.subs_dist" "$T/new/" 2>/dev/null
mv "$T/new/$(basename "$FC")" "$T/new/file_contexts" 2>/dev/null
printf '/etc/ssh(/.*)?\tsystem_u:object_r:tmp_t:s0\n' > "$T/new/file_contexts.local"
$BIN label --plan --from "$FC" -f "$T/new/file_contexts" --root "$R" > "$T/p" 2>&1; rc=$?
expect "--plan lists the objects the new file_contexts relabels" '[ $rc -eq 1 ] && grep -q "^system_u:object_r:etc_t:s0 -> system_u:object_r:tmp_t:s0: 2 objects" "$T/p" && grep -q "^  $R/etc/ssh/sshd_config$" "$T/p"'
$BIN label --plan --json --from "$FC" -f "$T/new/file_contexts" --root "$R" > "$T/pj" 2>&1
expect "--plan --json counts them" 'python3 -c "import json; d=json.load(open(\"$T/pj\")); assert d[\"changes\"]==2 and d[\"groups\"][0][\"count\"]==2, d"'
$BIN label --plan --from "$FC" -f "$FC" --root "$R" > "$T/p0" 2>&1; rc=$?
expect "--plan exits 0 when nothing changes" '[ $rc -eq 0 ] && grep -q "^0 of " "$T/p0"'

# --compile: the compiled form answers as the text does.
$BIN label -f "$FC" --compile "$T/fc.sea" 2>/dev/null
$BIN label -f "$T/fc.sea" - < "$T/paths" > "$T/c1"
$BIN label -f "$FC" - < "$T/paths" > "$T/c2"
expect "a compiled file_contexts answers as its text" 'cmp -s "$T/c1" "$T/c2"'
head -c 1000 "$T/fc.sea" > "$T/short.sea"
$BIN label -f "$T/short.sea" /etc/passwd > /dev/null 2> "$T/e"; rc=$?
expect "a truncated compiled file is refused" '[ $rc -eq 2 ] && grep -q "short.sea" "$T/e"'

# Broken files: an error naming the file and line, and nothing labeled with a half-read file.
B=$T/bad; mkdir -p "$B"
printf '/a(/.*)?\tsystem_u:object_r:etc_t:s0\n/b\n' > "$B/fc1"
printf '/a(/.*)?\tsystem_u:object_r:etc_t:s0\n/c(/.*)?\tsystem_u:object_r:no_such_type_t:s0\n' > "$B/fc2"
printf '/a(/.*)?\tsystem_u:object_r:etc_t:s0\n\n/d[a-\tsystem_u:object_r:etc_t:s0\n' > "$B/fc3"
printf '/a -z system_u:object_r:etc_t:s0\n' > "$B/fc4"
mkdir -p "$T/r2/a"
for case in "fc1:2:is missing fields" "fc2:2:invalid context system_u:object_r:no_such_type_t:s0" "fc3:3:invalid regular expression" "fc4:1:invalid file type -z"; do
  f=${case%%:*}; rest=${case#*:}; line=${rest%%:*}; msg=${rest#*:}
  $BIN label --apply -f "$B/$f" --policy "$POL" --root "$T/r2" > /dev/null 2> "$T/e"; rc=$?
  expect "$f: refused with '$B/$f:$line: $msg'" '[ $rc -eq 2 ] && grep -qF "$B/$f:$line: $msg" "$T/e" && [ -z "$(getfattr -h -n security.selinux --only-values "$T/r2/a" 2>/dev/null)" ]'
done

# Duplicate specifications, refused without --policy too, as setfiles refuses them (Fedora's
# monolithic build has 88): which of two lines labels a file must not be an accident of order.
printf '/a(/.*)?\tsystem_u:object_r:etc_t:s0\n/b\tsystem_u:object_r:etc_t:s0\n/a(/.*)?\tsystem_u:object_r:bin_t:s0\n' > "$B/dup"
setfiles -n "$B/dup" "$T/r2" > /dev/null 2>&1; prc=$?
$BIN label --apply -f "$B/dup" --root "$T/r2" > /dev/null 2> "$T/e"; rc=$?
expect "duplicates: setfiles refuses them ($prc) and so does --apply without --policy ($rc: $(head -c 200 "$T/e"))" \
  '[ $prc -ne 0 ] && [ $rc -eq 2 ] && grep -qF "two different specifications for /a(/.*)? (line 1: system_u:object_r:etc_t:s0, line 3: system_u:object_r:bin_t:s0)" "$T/e" && [ -z "$(getfattr -h -n security.selinux --only-values "$T/r2/a" 2>/dev/null)" ]'

echo "label: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
