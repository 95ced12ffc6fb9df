#!/usr/bin/env bash
# Runs each fuzz target for a bounded time (default 60 s), seeded with the compiled test
# policies. Not part of `make test`. Crashes land in fuzz/artifacts/<target>/; turn each into a
# regression test in crates/testkit/tests/.
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-60}
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
make -C .. policies >/dev/null
mkdir -p corpus/policy_reader corpus/context_parser corpus/file_contexts corpus/subjects corpus/audit_records corpus/policy_cases corpus/check_access corpus/check_access_debian corpus/has_perm corpus/has_perm_debian
cp ../target/policies/* corpus/policy_reader/ 2>/dev/null || true
[ -e /etc/selinux/default/policy/policy.33 ] && cp /etc/selinux/default/policy/policy.33 corpus/policy_reader/debian-default.33
printf 'system_u:object_r:etc_t:s0' > corpus/context_parser/seed1
printf 'staff_u:staff_r:staff_t:s0-s0:c0.c3,c5' > corpus/context_parser/seed2
for f in /etc/selinux/*/contexts/files/file_contexts /etc/selinux/*/contexts/files/file_contexts.homedirs.bin /etc/selinux/*/contexts/files/file_contexts.subs_dist; do
  [ -e "$f" ] && cp "$f" "corpus/file_contexts/$(echo "$f" | tr / _)"
done
printf 'exe=/usr/sbin/nginx system_u:system_r:httpd_t:s0\nuid=1001 user_u:user_r:user_t:s0 # x\ncgroup=/a.slice c:d:e\ntransition a:b:c:s0\ndefault u:r:t:s0-s0:c0.c3\n' > corpus/subjects/seed1
printf 'type=AVC msg=audit(1700000000.123:456): avc:  denied  { read write } for  pid=1234 comm="httpd" name="shadow" scontext=system_u:system_r:httpd_t:s0 tcontext=system_u:object_r:shadow_t:s0 tclass=file permissive=0\ntype=USER_AVC msg=audit(1.5:9): pid=1 uid=0 msg=\x27avc:  denied  { status } for auid=0 scontext=u:r:t:s0 tcontext=u:object_r:x_t:s0 tclass=service exe="/x"\x27\n' > corpus/audit_records/seed1
cp ../examples/*.tests.toml corpus/policy_cases/
printf '[[neverallow]]\nsource = ["domain", "-kernel_t"]\ntarget = "self"\nclasses = "capability"\nperms = ["*"]\nwith_booleans = { b = true }\n\n[[create]]\nscontext = "u:r:t:s0"\ntcontext = "u:object_r:x_t:s0"\nclass = "file"\nobject_name = "n"\nexpect = "u:object_r:y_t:s0"\n' > corpus/policy_cases/seed1
for t in policy_reader context_parser file_contexts subjects audit_records policy_cases check_access has_perm; do
  echo "== fuzzing $t for $secs s"
  cargo +nightly fuzz run "$t" "corpus/$t" -- -max_total_time="$secs" -max_len=4000000 -rss_limit_mb=2048
done
# The C library's two again on Debian's policy, whose handle_unknown (allow) is the example's
# opposite.
if [ -e /etc/selinux/default/policy/policy.33 ]; then
  for t in check_access has_perm; do
    echo "== fuzzing $t on Debian's policy for $secs s"
    SEACCESS_FUZZ_POLICY=/etc/selinux/default/policy/policy.33 \
      cargo +nightly fuzz run "$t" "corpus/${t}_debian" -- -max_total_time="$secs" -max_len=4096 -rss_limit_mb=2048
  done
fi
