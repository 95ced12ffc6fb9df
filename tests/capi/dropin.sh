#!/usr/bin/env bash
# Builds target/libselinux/libselinux.so.1: libseaccess (its static archive) linked as a
# shared library named and versioned as libselinux 3.4's (crates/capi/libselinux.map), for
# programs built against libselinux to load unchanged (LD_LIBRARY_PATH=target/libselinux).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${SEACCESS_BUILD:-target/release}
# Cargo copies the library up from deps/ only when the build that made it asked for it by name;
# `cargo test --workspace` (make test's build) does not always, so the copy may be missing or
# older than deps/'s: the newer of the two.
ARCHIVE=$BUILD/libseaccess.a
[ "$BUILD/deps/libseaccess.a" -nt "$ARCHIVE" ] && ARCHIVE=$BUILD/deps/libseaccess.a
mkdir -p target/libselinux
gcc -shared -o target/libselinux/libselinux.so.1 -Wl,-soname,libselinux.so.1 \
  -Wl,--version-script=crates/capi/libselinux.map \
  -Wl,--whole-archive "$ARCHIVE" -Wl,--no-whole-archive \
  -lpcre2-8 -lpthread -ldl -lm -lgcc_s
# The interposer `seaccess run` preloads (crates/capi/preload/*.c): it needs
# libselinux.so.1, so that it shares libseaccess's state with the program.
gcc -shared -fPIC -O2 -Wall -Werror -o target/libselinux/libseaccess-preload.so crates/capi/preload/preload.c crates/capi/preload/shell.c \
  target/libselinux/libselinux.so.1 -ldl
