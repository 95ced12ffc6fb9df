#!/usr/bin/env bash
# The guest suites (`make kernel-test`): each boots Debian's stock kernel under QEMU once and
# compares what the kernel did with what seaccess says, or (the last) runs the mount as a
# service of Debian's systemd. Prints, last, one summary line per
# suite. SEACCESS_BUILD names the build whose binaries answer on the host (target/ci in
# `make test`). A suite that cannot run prints SKIP with the reason; SEACCESS_REQUIRE_GUEST=1
# (make test) turns that into a failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/kernel/lib.sh
source tests/peer-explain.sh
BUILD=${SEACCESS_BUILD:-target/release}
out=${SEACCESS_GUEST_OUT:-target/kernel/runs}

if ! why=$(guest_ready); then
  if [ "${SEACCESS_REQUIRE_GUEST:-0}" = 1 ]; then
    echo "kernel-test: cannot run: $why" >&2
    exit 1
  fi
  echo "SKIP: kernel suites: $why"
  exit 0
fi
mkdir -p "$out"
summaries=()
failed=0

# The oracle: Debian's default policy enforced by the kernel, the same operations answered by
# crates/objmgr's hooks (tests/kernel/oracle/compare.sh).
guest_initramfs "$out/oracle.initrd.gz" tests/kernel/oracle/guest.sh tests/kernel/workload.sh
# With no audit daemon kauditd prints the records; a burst larger than the audit backlog (64 by
# default) loses records the comparison needs (seen on a loaded host: audit_lost=4), so the
# backlog is made larger than the workload's records, and a loss is said as such.
guest_boot "$out/oracle.initrd.gz" "$out/oracle" "security=selinux selinux=1 enforcing=1 log_buf_len=16M audit_backlog_limit=65536"
if lost=$(grep -o 'audit_lost=[0-9]*' "$out/oracle/console.log" | tail -1) && [ -n "$lost" ]; then
  echo "guest: the kernel lost audit records ($lost): its differences below may be records it never printed"
fi
rc=0
SEACCESS_BUILD=$BUILD bash tests/kernel/oracle/compare.sh "$out/oracle/results.log" > "$out/oracle/compare.log" || rc=$?
grep -v '^kernel-oracle:' "$out/oracle/compare.log" || true
summaries+=("$(grep '^kernel-oracle:' "$out/oracle/compare.log" || echo "kernel-oracle: the comparison did not run (status $rc)")")
[ "$rc" -eq 0 ] || failed=1

# Enforcement, one boot with the BPF LSM and no SELinux (tests/kernel/enforce/guest.sh): the
# smoke suite runs `seaccess enforce` and its clients as README shows them, checking the
# kernel's answers against the policy's, then crates/enforce's enforce_smoke for what the
# commands cannot reach; then the audit suite (Debian's auditd, the daemon's USER_AVC records
# found by ausearch there and explained here by audit2why and audit2allow); then the oracle's
# workload under `seaccess enforce`, its answers set beside the SELinux kernel's above
# (tests/kernel/enforce/compare.py).
bin=$PWD/$BUILD/seaccess
smoke=$PWD/$BUILD/examples/enforce_smoke
auditd=$PWD/$KERNEL_DIR/auditd
if [ -x "$bin" ] && "$bin" enforce --help > /dev/null 2>&1; then
  extra=(tests/kernel/checks.sh tests/kernel/enforce/smoke.sh tests/kernel/enforce/audit.sh tests/kernel/enforce/oracle.sh
    tests/kernel/workload.sh)
  [ -x "$smoke" ] && extra+=("$smoke")
  [ -x "$auditd/sbin/auditd" ] || echo "kernel-test: no auditd unpacked at $auditd (make kernel runs scripts/fetch-auditd.sh): the audit suite fails"
  GUEST_SEACCESS=$bin GUEST_AUDITD=$auditd guest_initramfs "$out/enforce.initrd.gz" tests/kernel/enforce/guest.sh "${extra[@]}"
  rc=0
  rm -f "$out/enforce/compare.log"
  guest_boot "$out/enforce.initrd.gz" "$out/enforce" "lsm=lockdown,capability,landlock,bpf" || rc=$?
  grep -v '^kernel-enforce-smoke:\|^kernel-enforce-bpf:\|^kernel-enforce-audit:\|^SUITE-END\|^[RTLCSAU] ' "$out/enforce/results.log" || true
  summaries+=("$(grep '^kernel-enforce-smoke:' "$out/enforce/results.log" || echo "kernel-enforce-smoke: the suite did not finish (status $rc)")")
  [ -x "$smoke" ] && summaries+=("$(grep '^kernel-enforce-bpf:' "$out/enforce/results.log" || echo "kernel-enforce-bpf: the suite did not finish (status $rc)")")
  # The guest's USER_AVC records, as ausearch printed them, given to the peer tools here.
  # (The serial port ends lines with CR LF.)
  tr -d '\r' < "$out/enforce/results.log" | sed -n 's/^U //p' > "$out/enforce/user-avc.log"
  if line=$(tr -d '\r' < "$out/enforce/results.log" | grep '^kernel-enforce-audit:'); then
    n=$(echo "$line" | sed 's/.*: \([0-9]*\) checks, \([0-9]*\) failed/\1/')
    f=$(echo "$line" | sed 's/.*: \([0-9]*\) checks, \([0-9]*\) failed/\2/')
    policy=/etc/selinux/default/policy/policy.33
    n=$((n + 1))
    if why=$(peer_explains "$out/enforce/user-avc.log" "$policy"); then
      echo "ok - audit2why explains ausearch's USER_AVC record as a missing allow rule"
    else
      f=$((f + 1)); echo "FAIL - audit2why on ausearch's USER_AVC records: $why"
    fi
    n=$((n + 1))
    if rules=$(peer_allows "$out/enforce/user-avc.log" "$policy"); then
      echo "ok - audit2allow turns it into a rule on the record's types ($rules)"
    else
      f=$((f + 1)); echo "FAIL - audit2allow on ausearch's USER_AVC records: $rules"
    fi
    summaries+=("kernel-enforce-audit: $n checks, $f failed")
    [ "$f" -eq 0 ] || failed=1
  else
    summaries+=("kernel-enforce-audit: the suite did not finish (status $rc)")
  fi
  if [ "$rc" -eq 0 ]; then
    python3 tests/kernel/enforce/compare.py "$out/oracle/results.log" "$out/enforce/results.log" \
      tests/kernel/enforce/documented.txt > "$out/enforce/compare.log" || rc=$?
    grep -v '^kernel-enforce:' "$out/enforce/compare.log" || true
  fi
  summaries+=("$(grep -s '^kernel-enforce:' "$out/enforce/compare.log" || echo "kernel-enforce: the comparison did not run (status $rc)")")
  [ "$rc" -eq 0 ] || failed=1
else
  summaries+=("kernel-enforce: cannot run: no $bin with an enforce command (cargo build -p seaccess-cli)")
  failed=1
fi

# The mount as a system service, one boot with Debian's systemd as PID 1 and its journald
# (tests/kernel/systemd/guest.sh): seaccess-mount@.service as `make install` puts it, started,
# reloaded and stopped with systemctl, its denial read back with journalctl.
if [ -x "$bin" ]; then
  GUEST_INIT=systemd GUEST_SEACCESS=$bin guest_initramfs "$out/systemd.initrd.gz" tests/kernel/systemd/guest.sh tests/kernel/checks.sh
  rc=0
  guest_boot "$out/systemd.initrd.gz" "$out/systemd" "lsm=lockdown,capability,landlock systemd.unit=seaccess-guest.service" || rc=$?
  tr -d '\r' < "$out/systemd/results.log" | grep -v '^kernel-systemd:\|^SUITE-END\|^# unit: ' || true
  summaries+=("$(tr -d '\r' < "$out/systemd/results.log" | grep '^kernel-systemd:' || echo "kernel-systemd: the suite did not finish (status $rc)")")
  [ "$rc" -eq 0 ] || failed=1
else
  summaries+=("kernel-systemd: cannot run: no $bin (cargo build -p seaccess-cli)")
  failed=1
fi

for s in "${summaries[@]}"; do echo "$s"; done
exit "$failed"
