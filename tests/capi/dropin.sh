#!/usr/bin/env bash
# Builds target/libselinux/libselinux.so.1: libseaccess (its static archive) linked as a
# shared library named and versioned as libselinux 3.4's (crates/capi/libselinux.map), for
# programs built against libselinux to load unchanged (LD_LIBRARY_PATH=target/libselinux).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${SEACCESS_BUILD:-target/release}
# Cargo links the library up from deps/ only when the build that made it asked for it by name;
# `cargo test --workspace` (make test's build) does not always, so BUILD's copy may be missing or
# older than deps/'s. Brought up to date here, where `make capi`, `make install` and the suites
# that need the library all pass, so that each of them reads BUILD's copy.
for f in libseaccess.a libseaccess.so; do
  if [ "$BUILD/deps/$f" -nt "$BUILD/$f" ]; then ln -f "$BUILD/deps/$f" "$BUILD/$f"; fi
done
ARCHIVE=$BUILD/libseaccess.a
mkdir -p target/libselinux
gcc -shared -o target/libselinux/libselinux.so.1 -Wl,-soname,libselinux.so.1 \
  -Wl,--version-script=crates/capi/libselinux.map \
  -Wl,--whole-archive "$ARCHIVE" -Wl,--no-whole-archive \
  -lpcre2-8 -lpthread -ldl -lm -lgcc_s
# The interposer `seaccess run` preloads (crates/capi/preload/*.c): it needs
# libselinux.so.1, so that it shares libseaccess's state with the program.
gcc -shared -fPIC -O2 -Wall -Werror -o target/libselinux/libseaccess-preload.so crates/capi/preload/preload.c crates/capi/preload/shell.c \
  target/libselinux/libselinux.so.1 -ldl
