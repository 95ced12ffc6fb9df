# Shared by tests/capi/bench.sh and bench-instructions.sh: builds tests/capi/bench.c against
# libseaccess (OUT/bench-seaccess) and libselinux 3.4 (OUT/bench-libselinux), and writes the
# queries both are asked: T/classes (the policy's class and permission numbers) and T/w (N
# random triples of POL that allow something, each asking its lowest allowed permission, with
# libsepol's decision).
# bench_prepare POL N OUT T
bench_prepare() {
  local POL=$1 N=$2 OUT=$3 T=$4 ORACLE=target/oracle/sepol-oracle
  gcc -O2 -Wall -Werror -pthread -o "$OUT/bench-seaccess" tests/capi/bench.c \
    -L"$PWD/target/release" -lseaccess -Wl,-rpath,"$PWD/target/release"
  gcc -O2 -Wall -Werror -pthread -DPEER_LIBSELINUX -o "$OUT/bench-libselinux" tests/capi/bench.c \
    -Wl,--export-dynamic-symbol=security_compute_av_flags_raw -lselinux

  export SEACCESS_POLICY=$POL
  "$ORACLE" perms "$POL" | "$OUT/bench-seaccess" classes > "$T/classes"
  "$ORACLE" gen "$POL" 4242 "$N" > "$T/q"
  "$ORACLE" av "$POL" < "$T/q" > "$T/o"
  # Each query checks one permission: the lowest allowed one. Triples that allow nothing are left
  # out: an object manager's checks mostly pass, and a denial's audit record (formatted and logged
  # by both libraries) would be what is measured.
  paste -d' ' "$T/q" "$T/o" | awk -v classes="$T/classes" '
    BEGIN { while ((getline l < classes) > 0) { split(l, f, " "); name[f[1] " " f[3]] = f[4]; if (!(f[1] in first) || f[3] < first[f[1]]) first[f[1]] = f[3] } }
    $4 == "error" { next }
    {
      al = strtonum("0x" $4); b = -1
      for (i = 0; i < 32; i++) if (and(al, lshift(1, i)) && ((($3 " " i) in name))) { b = i; break }
      if (b < 0) next
      if (!(($3 " " b) in name)) next
      print $1, $2, $3, name[$3 " " b], $4, $6, $7
    }' > "$T/w"
}
