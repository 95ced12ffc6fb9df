#!/bin/bash
# Compile seaccess's test policies (testdata/policies/*.cil) to binary policies.
#
#   testdata/policies/compile.sh OUTDIR [VERSIONS...]
#
# Writes OUTDIR/NAME.VERSION (e.g. OUTDIR/example.33) for every NAME.cil and every
# requested policy version.  Without VERSIONS: 24 30 31 33, plus each policy's own
# min-version if that is not among them (as crates/testkit's versions() does).
# Each .cil file may carry header comment lines that this script reads:
#   ; min-version: N       compile only at versions >= N (others are skipped: below N
#                          secilc would fail or silently drop the feature tested)
#   ; mls: true|false      passed as `secilc -M` (default true)
#   ; secilc-args: ARGS    extra secilc arguments (e.g. -N to skip bounds checks)
# Every NAME.conf (checkpolicy source, MLS) is compiled with `checkpolicy -M` to
# OUTDIR/NAME-conf.VERSION, for the layouts only checkpolicy writes (as the testkit's
# compile_conf does).
# Exits non-zero if any compilation fails (all are still attempted).
set -u

usage() { echo "usage: $0 OUTDIR [VERSIONS...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
case "$1" in -h|--help) usage ;; esac

outdir=$1; shift
versions=("$@")
explicit=1
[ ${#versions[@]} -gt 0 ] || { versions=(24 30 31 33); explicit=0; }
for v in "${versions[@]}"; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "$0: bad policy version '$v'" >&2; exit 2; }
done

command -v secilc >/dev/null || { echo "$0: secilc not found (apt-get install secilc)" >&2; exit 2; }
srcdir=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$outdir" || exit 2

# header FILE KEY: the value of the first "; KEY: value" line, trailing comment-free.
header() {
	sed -n -E "s/^;[[:space:]]*$2:[[:space:]]*([^[:space:]].*)\$/\1/p" "$1" | head -n 1 |
		sed -E 's/[[:space:]]+\(.*$//; s/[[:space:]]+$//'
}

failed=0 built=0 skipped=0
shopt -s nullglob
files=("$srcdir"/*.cil)
[ ${#files[@]} -gt 0 ] || { echo "$0: no .cil files in $srcdir" >&2; exit 2; }

for f in "${files[@]}"; do
	name=$(basename "$f" .cil)
	minv=$(header "$f" min-version); minv=${minv:-0}
	mls=$(header "$f" mls); mls=${mls:-true}
	extra=$(header "$f" secilc-args)
	[[ $minv =~ ^[0-9]+$ ]] || { echo "$name: bad min-version '$minv'" >&2; failed=1; continue; }
	case "$mls" in true|false) ;; *) echo "$name: bad mls '$mls'" >&2; failed=1; continue ;; esac

	these=("${versions[@]}")
	if [ $explicit -eq 0 ] && [ "$minv" -gt 0 ] && [[ " ${these[*]} " != *" $minv "* ]]; then
		these=("$minv" "${these[@]}")
	fi
	for v in "${these[@]}"; do
		if [ "$v" -lt "$minv" ]; then
			echo "skip  $name.$v (needs version >= $minv)"
			skipped=$((skipped + 1))
			continue
		fi
		out="$outdir/$name.$v"
		# shellcheck disable=SC2206  # $extra is a list of arguments
		cmd=(secilc -c "$v" -M "$mls" $extra -o "$out" -f /dev/null "$f")
		if "${cmd[@]}"; then
			echo "ok    $name.$v"
			built=$((built + 1))
		else
			echo "FAIL  $name.$v (${cmd[*]})" >&2
			rm -f "$out"
			failed=1
		fi
	done
done

confs=("$srcdir"/*.conf)
if [ ${#confs[@]} -gt 0 ] && ! command -v checkpolicy >/dev/null; then
	echo "$0: checkpolicy not found (apt-get install checkpolicy)" >&2; exit 2
fi
for f in "${confs[@]}"; do
	name=$(basename "$f" .conf)
	for v in "${versions[@]}"; do
		out="$outdir/$name-conf.$v"
		if checkpolicy -M -c "$v" -o "$out" "$f" >/dev/null; then
			echo "ok    $name-conf.$v"
			built=$((built + 1))
		else
			echo "FAIL  $name-conf.$v (checkpolicy -M -c $v -o $out $f)" >&2
			rm -f "$out"
			failed=1
		fi
	done
done

echo "built $built, skipped $skipped$([ $failed -ne 0 ] && echo ', FAILURES')"
exit $failed
