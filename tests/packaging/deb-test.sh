#!/usr/bin/env bash
# The Debian packages end to end (as root, on a Debian machine):
#   1. configure a Release build for prefix /usr (multiarch libdir), build it
#      and make the packages with `cpack -G DEB`;
#   2. lintian: no errors;
#   3. install the core package alone: `tp-backends list` shows no backend;
#      install them all with `apt-get install ./*.deb`; the installed
#      `tp-backends list` shows each installed plugin, available unless the
#      system lacks what it requires (cuda without the NVIDIA driver), and no
#      backend that is not installed; the stax package carries its prebuilt
#      micro-kernel objects beside the plugin; the main job runs against /usr;
#   4. remove them again (also when a step fails) and check nothing is left.
# usage: tests/packaging/deb-test.sh [BUILD_DIR]   (default: build-deb)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build-deb}
mkdir -p "$build"
build=$(cd "$build" && pwd) # apt-get takes a package file by a path with a slash
fail() { printf 'deb-test FAILED: %s\n' "$*" >&2; exit 1; }
step() { printf '\n== deb-test: %s\n' "$*"; }
[ "$(id -u)" = 0 ] || fail "run as root (it installs packages with apt-get)"
export DEBIAN_FRONTEND=noninteractive
command -v lintian >/dev/null || apt-get install -y -q --no-install-recommends lintian

step "build for /usr and package"
rm -rf "$build/_CPack_Packages" "$build"/*.deb
mkdir -p "$build-logs" # next to the build: a failed configure still leaves its log
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
    -DTP_BUILD_TESTS=OFF -DTP_WERROR=ON >"$build-logs/configure.log" 2>&1 ||
    { cat "$build-logs/configure.log"; fail "configure"; }
cmake --build "$build" -j"$(nproc)" >"$build-logs/build.log" 2>&1 || { tail -n 40 "$build-logs/build.log"; fail "build"; }
(cd "$build" && cpack -G DEB >cpack.log 2>&1) || { cat "$build/cpack.log"; fail "cpack"; }
mapfile -t debs < <(ls "$build"/*.deb)
[ "${#debs[@]}" -ge 2 ] || fail "expected the core package and at least one plugin package: ${debs[*]}"
packages=()
for deb in "${debs[@]}"; do
    packages+=("$(dpkg-deb -f "$deb" Package)")
    echo "$(basename "$deb"): $(dpkg-deb -f "$deb" Depends)"
done
libdir=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
core_files=$(dpkg-deb -c "$build"/tensorplay_*.deb)
grep -q "\./usr/lib/$libdir/libtensorplay\.so\.0" <<<"$core_files" ||
    fail "the core package has no /usr/lib/$libdir/libtensorplay.so.0"
if grep -q '/backends\.d/' <<<"$core_files"; then
    fail "the core package ships backend INI files (they belong to the plugin packages)"
fi
# The stax package carries the prebuilt micro-kernel objects beside the plugin.
if ls "$build"/tensorplay-plugin-stax_*.deb >/dev/null 2>&1; then
    stax_files=$(dpkg-deb -c "$build"/tensorplay-plugin-stax_*.deb)
    for family in avx512 avx2 generic avx512-legacy avx2-legacy generic-legacy legacy; do
        grep -q "\./usr/lib/$libdir/tensorplay/plugins/stax-gemm-$family\.prebuilt" <<<"$stax_files" ||
            fail "the stax package has no stax-gemm-$family.prebuilt beside stax-llvm.so"
    done
fi

step "lintian"
lintian --fail-on error --suppress-tags package-name-doesnt-match-sonames "${debs[@]}" ||
    fail "lintian reports errors"

# dpkg --purge skips (with a warning) a package that is not installed.
cleanup() { dpkg --purge "${packages[@]}" >/dev/null 2>&1 || true; }
# The backend names of `tp-backends list`'s table (its other lines, like the
# one saying what `auto` picks, are not rows).
listed_backends() {
    awk '$2 ~ /^(available|unavailable|loaded|failed|shadowed)$/ {print $1}' "$@"
}
trap cleanup EXIT
step "the core package alone: no backend listed (the plugins bring their INI)"
apt-get install -y -q "$build"/tensorplay_*.deb >"$build-logs/apt.log" 2>&1 || { cat "$build-logs/apt.log"; fail "apt-get install the core"; }
core_list=$(env -i PATH=/usr/bin:/bin HOME=/nonexistent /usr/bin/tp-backends list)
if [ -n "$(listed_backends <<<"$core_list")" ]; then
    printf '%s\n' "$core_list"
    fail "with the core package alone, tp-backends list shows backends"
fi
echo "ok: nothing listed"

step "apt-get install ./*.deb"
apt-get install -y -q "${debs[@]/#/}" >"$build-logs/apt.log" 2>&1 || { cat "$build-logs/apt.log"; fail "apt-get install"; }

step "installed tp-backends list"
env -i PATH=/usr/bin:/bin HOME=/nonexistent /usr/bin/tp-backends list | tee "$build-logs/list.txt"
for package in "${packages[@]}"; do
    [ "$package" = tensorplay ] && continue
    backend=${package#tensorplay-plugin-}
    line=$(grep -E "^$backend " "$build-logs/list.txt") || fail "installed backend '$backend' is not listed"
    case "$line" in
    *" available "*) ;;
    *"requires "*"not found"*) [ "$backend" = cuda ] || fail "'$backend' unavailable: $line" ;;
    *) fail "'$backend' is not available: $line" ;;
    esac
    grep -q "/usr/share/tensorplay/backends.d/$backend.ini" <<<"$line" ||
        fail "'$backend' is not read from /usr/share/tensorplay/backends.d/$backend.ini"
done
for name in $(listed_backends "$build-logs/list.txt"); do
    printf '%s\n' "${packages[@]}" | grep -qx "tensorplay-plugin-$name" ||
        fail "'$name' is listed but its package is not installed"
done

step "main job against /usr"
mkdir -p "$build/usr-bin"
ln -sf /usr/bin/tpc /usr/bin/tp-backends "$build/usr-bin/"
"$here/scripts/main-job.sh" "$build/usr-bin"

step "man pages and docs from the install"
for page in man1/tpc.1 man1/tp-backends.1 man1/tp-bench.1 man7/tensorplay-ops.7; do
    [ -f "/usr/share/man/$page.gz" ] || fail "/usr/share/man/$page.gz is not installed"
done
zcat /usr/share/man/man7/tensorplay-ops.7.gz | grep -q '^\.SS linear$' || fail "tensorplay-ops(7) lacks linear"
[ -f /usr/share/doc/tensorplay/ops.txt ] || fail "/usr/share/doc/tensorplay/ops.txt is not installed"

step "remove"
apt-get remove -y -q --purge "${packages[@]}" >/dev/null
trap - EXIT
for path in /usr/bin/tpc "/usr/lib/$libdir/libtensorplay.so.0" /usr/share/tensorplay; do
    [ ! -e "$path" ] || fail "$path is left after removing the packages"
done
printf '\ndeb-test: ok (%s)\n' "${packages[*]}"
