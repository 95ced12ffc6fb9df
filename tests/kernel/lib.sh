# The guest harness, sourced by tests/kernel/run.sh and the suites: builds an initramfs holding
# a minimal userland (busybox), Debian's SELinux tools and policy, the workload runner
# (probe.c) and one suite's guest script, boots Debian's stock kernel on it under QEMU (TCG:
# these machines have no usable KVM), and brings the suite's output back over the second serial
# port. One boot runs a whole suite.
#
# A boot that does not end with the guest's own "SUITE-END rc=0" line failed: a kernel panic,
# a hang (the QEMU deadline), a step of the suite that failed; it never passes silently.

KERNEL_DIR=${SEACCESS_KERNEL_DIR:-target/kernel}
# Seconds one boot may take under TCG on a loaded 2-core machine (an idle one boots in about 8).
GUEST_DEADLINE=${SEACCESS_GUEST_DEADLINE:-600}

# The programs the guest's userland needs beside busybox, each with its shared libraries.
GUEST_PROGRAMS=(/usr/sbin/load_policy /usr/sbin/setfiles /usr/sbin/getenforce)

# copy_libs ROOT PROGRAM [TREE]: the libraries ldd names for PROGRAM, at the same paths in ROOT;
# with TREE (a package unpacked there, not installed), found in TREE's library directories too,
# TREE's own at their paths inside TREE.
copy_libs() {
  local root=$1 prog=$2 tree=${3:-} lib dest envs=()
  [ -z "$tree" ] || envs=(LD_LIBRARY_PATH="$tree/usr/lib/x86_64-linux-gnu:$tree/lib/x86_64-linux-gnu")
  while read -r lib; do
    dest=$lib
    if [ -n "$tree" ]; then case $lib in "$tree"/*) dest=${lib#"$tree"} ;; esac; fi
    [ -e "$root$dest" ] || install -D "$lib" "$root$dest"
  done < <(env "${envs[@]}" ldd "$prog" | grep -o '/[^ ]*')
}

# copy_program ROOT PROGRAM: PROGRAM and its libraries, at the same paths in ROOT.
copy_program() {
  install -D "$2" "$1$2"
  copy_libs "$1" "$2"
}

# copy_program_as ROOT PROGRAM DEST: PROGRAM at DEST in ROOT, its libraries at their own paths
# (how the guest gets the seaccess binary a user installs: /usr/bin/seaccess).
copy_program_as() {
  install -D -m 755 "$2" "$1$3"
  copy_libs "$1" "$2"
}

# copy_unpacked ROOT TREE PROGRAM: TREE/PROGRAM at /PROGRAM in ROOT, with its libraries (TREE's
# at their paths inside TREE).
copy_unpacked() {
  install -D -m 755 "$2/$3" "$1/$3"
  copy_libs "$1" "$2/$3" "$2"
}

# The seaccess binary the guest carries as /usr/bin/seaccess, when set (the enforcement suite).
GUEST_SEACCESS=${GUEST_SEACCESS:-}
# Debian's auditd unpacked (scripts/fetch-auditd.sh), when set: the guest carries auditd,
# auditctl and ausearch, and auditd.conf as Debian ships it.
GUEST_AUDITD=${GUEST_AUDITD:-}

# What PID 1 is: the busybox script below (empty), or `systemd`: Debian's systemd with its
# journald, the units they need and the seaccess-mount@ template as `make install` puts it, the
# suite run by seaccess-guest.service once the system is up (guest_systemd).
GUEST_INIT=${GUEST_INIT:-}

# The units a systemd guest starts from (Debian's own files): journald and its sockets, the
# targets the services' default dependencies name, and what powers off.
GUEST_UNITS=(systemd-journald.service systemd-journald.socket systemd-journald-dev-log.socket
  sysinit.target basic.target sockets.target local-fs.target local-fs-pre.target paths.target
  timers.target slices.target swap.target multi-user.target shutdown.target)

# guest_systemd ROOT: systemd as ROOT's PID 1 (see GUEST_INIT).
guest_systemd() {
  local root=$1 p u
  for p in /lib/systemd/systemd /lib/systemd/systemd-journald /lib/systemd/systemd-shutdown \
           /bin/systemctl /bin/journalctl /usr/bin/fusermount3; do
    copy_program "$root" "$p"
  done
  mkdir -p "$root/lib/systemd/system/sockets.target.wants" "$root/lib/systemd/system/sysinit.target.wants" \
    "$root/etc/systemd/system" "$root/var/log" "$root/srv"
  for u in "${GUEST_UNITS[@]}"; do cp "/lib/systemd/system/$u" "$root/lib/systemd/system/"; done
  ln -s ../systemd-journald.socket "$root/lib/systemd/system/sockets.target.wants/"
  ln -s ../systemd-journald-dev-log.socket "$root/lib/systemd/system/sockets.target.wants/"
  ln -s ../systemd-journald.service "$root/lib/systemd/system/sysinit.target.wants/"
  sed -e "s|@BINDIR@|/usr/bin|" dist/seaccess-mount@.service > "$root/etc/systemd/system/seaccess-mount@.service"
  cat > "$root/etc/systemd/system/seaccess-guest.service" <<'UNIT'
[Unit]
Description=seaccess's guest suite
Requires=systemd-journald.socket systemd-journald-dev-log.socket
After=systemd-journald.service systemd-journald-dev-log.socket basic.target

[Service]
Type=oneshot
ExecStart=/bin/sh -c '/bin/sh /suite/guest.sh > /dev/ttyS1 2>&1; echo "SUITE-END rc=$?" > /dev/ttyS1; sync; /bin/busybox poweroff -f'
UNIT
  printf 'root:x:0:0:root:/root:/bin/sh\n' > "$root/etc/passwd"
  printf 'root:x:0:\n' > "$root/etc/group"
  printf 'ID=debian\nNAME="Debian GNU/Linux"\n' > "$root/etc/os-release"
  : > "$root/etc/machine-id"
}

# guest_initramfs OUT SUITE_SCRIPT [FILE...]: the initramfs at OUT, running SUITE_SCRIPT as
# /suite/guest.sh; each FILE is copied into /suite too.
guest_initramfs() {
  local out=$1 script=$2 root a
  shift 2
  root=$(mktemp -d)
  mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc/selinux,proc,sys,dev,tmp,run,suite}
  cp /usr/bin/busybox "$root/bin/busybox"
  for a in $(/usr/bin/busybox --list); do
    [ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"
  done
  for a in "${GUEST_PROGRAMS[@]}"; do copy_program "$root" "$a"; done
  [ -z "$GUEST_SEACCESS" ] || copy_program_as "$root" "$GUEST_SEACCESS" /usr/bin/seaccess
  if [ -n "$GUEST_AUDITD" ]; then
    for a in sbin/auditd sbin/auditctl sbin/ausearch; do copy_unpacked "$root" "$GUEST_AUDITD" "$a"; done
    install -D -m 640 "$GUEST_AUDITD/etc/audit/auditd.conf" "$root/etc/audit/auditd.conf"
  fi
  cp -a /etc/selinux/default "$root/etc/selinux/"
  printf 'SELINUX=enforcing\nSELINUXTYPE=default\n' > "$root/etc/selinux/config"
  gcc -static -O2 -Wall -Werror -o "$root/suite/probe" tests/kernel/probe.c
  install -m 755 "$script" "$root/suite/guest.sh"
  for a in "$@"; do cp -a "$a" "$root/suite/"; done
  cat > "$root/init" <<'EOF'
#!/bin/sh
# PID 1 of the guest: run the suite with its output on the second serial port, then power off
# (the kernel then exits QEMU: -no-reboot).
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t selinuxfs selinuxfs /sys/fs/selinux 2>/dev/null
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
/bin/sh /suite/guest.sh > /dev/ttyS1 2>&1
echo "SUITE-END rc=$?" > /dev/ttyS1
sync
poweroff -f
EOF
  if [ "$GUEST_INIT" = systemd ]; then
    guest_systemd "$root"
    printf '#!/bin/sh\n# PID 1: systemd (see GUEST_INIT); the suite is seaccess-guest.service.\nexec /lib/systemd/systemd\n' > "$root/init"
  fi
  chmod 755 "$root/init"
  (cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out"
  rm -rf "$root"
}

# guest_boot INITRD OUTDIR CMDLINE: boots the kernel on INITRD with CMDLINE; the console goes
# to OUTDIR/console.log, the suite's output to OUTDIR/results.log. Fails unless the suite
# ended with status 0. GUEST_QEMU_ARGS, when set, are added to QEMU's (the benchmark's -icount).
guest_boot() {
  local initrd=$1 out=$2 cmdline=$3 rc=0
  mkdir -p "$out"
  : > "$out/console.log"
  : > "$out/results.log"
  timeout "$GUEST_DEADLINE" qemu-system-x86_64 -machine q35 -accel tcg -cpu max -m 1024 -smp 1 \
    -display none -no-reboot -monitor none ${GUEST_QEMU_ARGS:-} \
    -serial "file:$out/console.log" -serial "file:$out/results.log" \
    -kernel "$KERNEL_DIR/vmlinuz" -initrd "$initrd" \
    -append "console=ttyS0 panic=-1 $cmdline" || rc=$?
  if [ "$rc" -eq 124 ]; then
    echo "guest: no power-off within ${GUEST_DEADLINE}s; the console's last lines:" >&2
    tail -20 "$out/console.log" >&2
    return 1
  fi
  if ! grep -q '^SUITE-END rc=0' "$out/results.log"; then
    echo "guest: the suite did not end well ($(grep '^SUITE-END' "$out/results.log" || echo 'no SUITE-END line')); its last lines:" >&2
    tail -20 "$out/results.log" >&2
    echo "guest: the console's last lines:" >&2
    tail -20 "$out/console.log" >&2
    return 1
  fi
}

# guest_ready: 0 when QEMU and the kernel are here; else prints why on stdout and returns 1.
guest_ready() {
  command -v qemu-system-x86_64 >/dev/null || { echo "qemu-system-x86_64 is not installed"; return 1; }
  [ -e "$KERNEL_DIR/vmlinuz" ] || { echo "no guest kernel at $KERNEL_DIR/vmlinuz (make kernel fetches it)"; return 1; }
  command -v busybox >/dev/null || { echo "busybox is not installed"; return 1; }
  command -v cpio >/dev/null || { echo "cpio is not installed"; return 1; }
}
