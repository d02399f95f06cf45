#!/usr/bin/env bash
# Builds the Debian package from the release executables (make release first; `make deb` does both):
#   scripts/build-deb.sh [--version VERSION] [--out DIR]
# Both executables (stripped), the unit, the udev rule, the sysusers entry, the default
# configuration as a conffile, man pages from the command line's own help, the maintainer scripts
# (scripts/debian/). Depends comes from what the executables link (dpkg-shlibdeps).
# Prints the .deb's path. Needs dpkg-dev, binutils and (for the man pages) the package's own
# generate-manual tool, which it builds.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd -P)
version=""
out="$root/.build/deb"
while [ $# -gt 0 ]; do
    case "$1" in
        --version) version="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        *) echo "build-deb: unknown argument $1" >&2; exit 64 ;;
    esac
done
# A native package (no Debian revision). Upstream version from the Makefile; the commit count keeps later builds newer to dpkg.
if [ -z "$version" ]; then
    base=$(sed -n 's/^VERSION ?= *//p' Makefile)
    version="$base+git$(git rev-list --count HEAD 2>/dev/null || echo 0)"
fi
[[ "$version" =~ ^[0-9][A-Za-z0-9.+~-]*$ ]] || { echo "build-deb: '$version' is not a Debian version" >&2; exit 64; }
arch=$(dpkg --print-architecture)
built=.build/release
for executable in hrbridge hrbridged; do
    [ -x "$built/$executable" ] || { echo "build-deb: no $built/$executable (run: make release)" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/hrbridge-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
stage="$work/stage"
umask 022
install -d "$stage/DEBIAN" "$stage/usr/bin" "$stage/lib/systemd/system" "$stage/lib/udev/rules.d" \
    "$stage/usr/lib/sysusers.d" "$stage/etc/hrbridge" "$stage/usr/share/man/man1" "$stage/usr/share/man/man8" \
    "$stage/usr/share/doc/hrbridge"
for executable in hrbridge hrbridged; do
    install -m755 "$built/$executable" "$stage/usr/bin/$executable"
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$stage/usr/bin/$executable"
done
sed 's#^ExecStart=.*#ExecStart=/usr/bin/hrbridged#' systemd/hrbridge.service > "$stage/lib/systemd/system/hrbridge.service"
install -m644 udev/60-hrbridge.rules "$stage/lib/udev/rules.d/60-hrbridge.rules"
install -m644 systemd/hrbridge.sysusers "$stage/usr/lib/sysusers.d/hrbridge.conf"
# 0640 root:hrbridge once the group exists: postinst registers a dpkg-statoverride (it may hold tokens).
install -m644 systemd/config.toml "$stage/etc/hrbridge/config.toml"
chmod 644 "$stage/lib/systemd/system/hrbridge.service"

# Man pages from ArgumentParser's own description of the commands.
"${SWIFT:-swift}" build --product generate-manual >/dev/null
generator=$("${SWIFT:-swift}" build --product generate-manual --show-bin-path)/generate-manual
mkdir -p "$work/man"
date=$(git log -1 --format=%cs 2>/dev/null || date -u +%F)
"$generator" "$built/hrbridge" --date "$date" --section 1 -o "$work/man"
"$generator" "$built/hrbridged" --date "$date" --section 8 -o "$work/man"
# Blank lines (paragraph breaks in the help) are not mdoc: groff warns on each.
sed '/^[[:space:]]*$/d' "$work/man/hrbridge.1" | gzip -9n > "$stage/usr/share/man/man1/hrbridge.1.gz"
sed '/^[[:space:]]*$/d' "$work/man/hrbridged.8" | gzip -9n > "$stage/usr/share/man/man8/hrbridged.8.gz"

install -m644 scripts/debian/copyright "$stage/usr/share/doc/hrbridge/copyright"
{
    echo "hrbridge ($version) unstable; urgency=medium"
    echo
    echo "  * Built from $(git rev-parse --short HEAD 2>/dev/null || echo 'a source tree')."
    echo
    echo " -- $(sed -n 's/^Maintainer: //p' scripts/debian/control.in)  $(date -u -R -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)")"
} | gzip -9n > "$stage/usr/share/doc/hrbridge/changelog.gz"
chmod 644 "$stage/usr/share/doc/hrbridge/changelog.gz"

for script in postinst prerm postrm; do
    install -m755 "scripts/debian/$script" "$stage/DEBIAN/$script"
done
echo /etc/hrbridge/config.toml > "$stage/DEBIAN/conffiles"

# Depends: the shared libraries the executables need, as dpkg-shlibdeps finds them.
mkdir -p "$work/shlibs/debian"
printf 'Source: hrbridge\n\nPackage: hrbridge\nArchitecture: any\n' > "$work/shlibs/debian/control"
shlibs=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$stage/usr/bin/hrbridge" "$stage/usr/bin/hrbridged" | sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || { echo "build-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" -e "s/@SHLIBS@/$shlibs/" \
    scripts/debian/control.in > "$stage/DEBIAN/control"
(cd "$stage" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum) > "$stage/DEBIAN/md5sums"
chmod 644 "$stage/DEBIAN/control" "$stage/DEBIAN/conffiles" "$stage/DEBIAN/md5sums"

mkdir -p "$out"
deb="$out/hrbridge_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
