#!/usr/bin/env bash
# Builds the Debian package (`make deb`): what `make install` installs, under /usr with the C
# library in the multiarch directory, packed by dpkg-deb into target/deb/seaccess_VERSION-1_ARCH.deb.
# Depends are dpkg-shlibdeps' reading of the binaries' libraries, plus fuse3 (fusermount3, which
# `seaccess mount` runs). The drop-in libselinux.so.1 lives in a private directory, so the package
# never stands in for the system's libselinux1.
# Usage: scripts/deb.sh (BUILD: the Cargo output directory, target/release by default).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-target/release}
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
ARCH=$(dpkg --print-architecture)
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
# Whoever builds the package for others names themselves (DEB_MAINTAINER); the default says no
# one answers at that address (.invalid is reserved for that).
MAINTAINER=${DEB_MAINTAINER:-seaccess developers <seaccess@seaccess.invalid>}
OUT=target/deb
ROOT=$OUT/root
rm -rf "$ROOT"
mkdir -p "$ROOT/DEBIAN"

BUILD=$BUILD DESTDIR=$PWD/$ROOT PREFIX=/usr LIBDIR=/usr/lib/$MULTIARCH bash scripts/install.sh install >/dev/null

# Debian's policy: manual pages compressed, a copyright file and a changelog in the doc directory.
find "$ROOT/usr/share/man" -type f -name '*.[18]' -exec gzip -9n {} +
doc=$ROOT/usr/share/doc/seaccess
mkdir -p "$doc"
{
  echo 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/'
  echo 'Upstream-Name: seaccess'
  echo
  echo 'Files: *'
  echo 'Copyright: 2026 the seaccess developers'
  echo "License: $(sed -n 's/^license = "\(.*\)"/\1/p' Cargo.toml | head -1)"
} > "$doc/copyright"
chmod 0644 "$doc/copyright"
date=$(date -R -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")
printf 'seaccess (%s-1) unstable; urgency=medium\n\n  * Built from the seaccess tree by make deb.\n\n -- %s  %s\n' \
  "$VERSION" "$MAINTAINER" "$date" | gzip -9n > "$doc/changelog.Debian.gz"
chmod 0644 "$doc/changelog.Debian.gz"

# dpkg-shlibdeps reads debian/control; a throwaway one in a scratch directory serves.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/debian"
printf 'Source: seaccess\n\nPackage: seaccess\nArchitecture: any\n' > "$scratch/debian/control"
bins=("$PWD/$ROOT/usr/bin/seaccess" "$PWD/$ROOT/usr/bin/seaccess-lab" "$PWD/$ROOT/usr/lib/$MULTIARCH/libseaccess.so.$VERSION"
      "$PWD/$ROOT/usr/lib/$MULTIARCH/seaccess/libselinux.so.1")
# The interposer needs libselinux.so.1, which is the package's own private drop-in.
shlibs=$(cd "$scratch" && dpkg-shlibdeps -O -l"$PWD/$ROOT/usr/lib/$MULTIARCH/seaccess" "${bins[@]}" 2>/dev/null \
  | sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || { echo "deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

size=$(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)
cat > "$ROOT/DEBIAN/control" <<EOF
Package: seaccess
Version: $VERSION-1
Architecture: $ARCH
Maintainer: $MAINTAINER
Installed-Size: $size
Depends: $shlibs, fuse3
Recommends: selinux-policy-default
Section: admin
Priority: optional
Description: SELinux access decisions on any compiled policy, on any kernel
 seaccess reads compiled SELinux policies and answers access decisions as the
 kernel's security server does, with a lock-free access vector cache. It labels
 files from file_contexts, enforces a policy on a directory tree through FUSE
 (mountable from /etc/fstab as fuse.seaccess), runs programs built for
 libselinux on its own libselinux-compatible library (seaccess run), and
 explains denials as audit2why does.
EOF
# The shared library in the multiarch directory: ldconfig runs when the package comes and goes,
# and a package built against it depends on this one (the shlibs file dpkg-shlibdeps reads).
echo 'activate-noawait ldconfig' > "$ROOT/DEBIAN/triggers"
echo "libseaccess ${VERSION%%.*} seaccess (>= $VERSION)" > "$ROOT/DEBIAN/shlibs"
(cd "$ROOT" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$ROOT/DEBIAN/md5sums"
chmod 0644 "$ROOT/DEBIAN/control" "$ROOT/DEBIAN/triggers" "$ROOT/DEBIAN/shlibs" "$ROOT/DEBIAN/md5sums"
deb=$OUT/seaccess_${VERSION}-1_${ARCH}.deb
dpkg-deb --root-owner-group -Zxz --build "$ROOT" "$deb" >/dev/null
echo "$deb"
