#!/bin/sh
# The SDK end to end, as a plugin author meets it:
#   1. install this build into a fresh temporary prefix, under umask 002 (the
#      registry's trust rule refuses group-writable folders: the install must
#      set its own modes), and check what is there (SONAME, headers, CMake
#      package, pkg-config files, man pages, op reference, corpus, one INI
#      per built plugin, every file installed once); build and run a program
#      against it with find_package(TensorPlay) and with pkg-config;
#   2. copy the template plugin out of the *installed* SDK and build it in a
#      clean environment against that prefix alone (CMAKE_PREFIX_PATH);
#   3. register it through TP_BACKENDS_PATH: `tp-backends list` shows it and
#      `tp-backends check template --conformance` passes;
#   4. install its INI into the user folder instead ($XDG_CONFIG_HOME) and find
#      it there without TP_BACKENDS_PATH;
#   5. build it again with TEMPLATE_BREAK_OP=exp: the kit fails, naming exp.
# usage: run_sdk_test.sh BUILD_DIR [CMAKE]
set -eu
build_dir=$1
cmake=${2:-cmake}
umask 002
work=$(mktemp -d /tmp/tp-sdk-test.XXXXXX)
trap '[ -n "${TP_KEEP_WORK:-}" ] || rm -rf "$work"' EXIT
prefix=$work/prefix
step() { printf '\n== %s\n' "$*"; }
fail() { printf 'FAILED: %s\n' "$*"; exit 1; }
# A clean environment: nothing from the caller's shell or the source tree.
clean_env() { env -i PATH=/usr/bin:/bin HOME="$work/home" XDG_CONFIG_HOME="$work/xdg" "$@"; }
# The user folders stand for a home made by the system (0755): the trust rule
# refuses a group-writable folder above an INI, with its reason.
mkdir -m 0755 "$work/home" "$work/xdg"

step "install into $prefix"
"$cmake" --install "$build_dir" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
for file in lib/libtensorplay.so lib/libtensorplay.so.0 include/tensorplay/tensorplay.h \
    include/tensorplay/plugin.h include/tensorplay-plugin/tensorplay/plugin.h \
    lib/cmake/TensorPlay/TensorPlayConfig.cmake lib/cmake/TensorPlay/TensorPlayConfigVersion.cmake \
    lib/pkgconfig/tensorplay.pc lib/pkgconfig/tensorplay-plugin.pc \
    bin/tp-backends bin/tpc share/man/man1/tp-backends.1.gz share/man/man1/tpc.1.gz \
    share/man/man1/tp-bench.1.gz share/man/man7/tensorplay-ops.7.gz share/doc/tensorplay/ops.txt \
    share/tensorplay/conformance/pointwise/add.tpir \
    share/tensorplay/sdk/README.md share/tensorplay/sdk/template/CMakeLists.txt; do
    [ -e "$prefix/$file" ] || fail "not installed: $file"
done
soname=$(objdump -p "$prefix/lib/libtensorplay.so" | awk '/SONAME/ {print $2}')
[ "$soname" = "libtensorplay.so.0" ] || fail "SONAME is '$soname', expected libtensorplay.so.0"
[ "$(ls "$prefix/include/tensorplay-plugin/tensorplay" | tr "\n" " ")" = "plugin.h plugin_ops.h " ] || fail "the plugin include folder must hold plugin.h and plugin_ops.h alone"
duplicates=$(sort "$build_dir/install_manifest.txt" | uniq -d)
[ -z "$duplicates" ] || fail "installed more than once: $duplicates"
for plugin in "$build_dir"/plugins/*.so; do
    [ -e "$plugin" ] || continue
    [ -e "$prefix/lib/tensorplay/plugins/$(basename "$plugin")" ] || fail "plugin $(basename "$plugin") not installed"
done
[ ! -e "$prefix/share/tensorplay/backends.d/tensorplay.ini" ] || fail "the all-plugins tensorplay.ini is installed"
grep -q '^linear$' "$prefix/share/doc/tensorplay/ops.txt" || fail "ops.txt does not describe linear"
echo "ok: files, SONAME $soname, each file installed once"

step "the installed tree finds its own registry from where it is installed"
clean_env "$prefix/bin/tp-backends" paths | tee "$work/paths.txt"
grep -q "$prefix/share/tensorplay/backends.d" "$work/paths.txt" ||
    fail "tp-backends paths does not list $prefix/share/tensorplay/backends.d"
clean_env "$prefix/bin/tp-backends" list --all | grep -Eq "^eager " || fail "eager is not listed"
clean_env "$prefix/bin/tp-backends" list >"$work/installed-list.txt"
if [ -e "$build_dir/plugins/stax-llvm.so" ]; then
    grep -Eq "^stax +available .*$prefix/share/tensorplay/backends.d/stax.ini" "$work/installed-list.txt" ||
        { cat "$work/installed-list.txt"; fail "stax is not available from $prefix/share/tensorplay/backends.d/stax.ini"; }
fi
echo "ok: $prefix/share/tensorplay/backends.d is on the search path"

step "pkg-config: build a program against tensorplay.pc"
pc() { clean_env PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config "$@"; }
[ "$(pc --modversion tensorplay)" = "$(pc --modversion tensorplay-plugin)" ] || fail "pc versions differ"
pc --cflags tensorplay-plugin | grep -q -- "-I$prefix/lib/pkgconfig/../../include/tensorplay-plugin" ||
    fail "tensorplay-plugin.pc cflags: $(pc --cflags tensorplay-plugin)"
printf '#include <stdio.h>\n#include <tensorplay/tensorplay.h>\nint main(void) { printf("%%s\\n", tp_version()); return 0; }\n' >"$work/version.c"
# shellcheck disable=SC2046
cc -o "$work/version" "$work/version.c" $(pc --cflags --libs tensorplay) -Wl,-rpath,"$prefix/lib" || fail "pkg-config build"
echo "ok: a pkg-config program runs and prints TensorPlay $("$work/version")"

step "CMake: build a program against find_package(TensorPlay) alone"
cp -r "$(dirname "$0")/consumer" "$work/consumer"
clean_env "$cmake" -S "$work/consumer" -B "$work/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" \
    >"$work/consumer.log" 2>&1 || { cat "$work/consumer.log"; fail "configure the find_package consumer"; }
clean_env "$cmake" --build "$work/consumer-build" >>"$work/consumer.log" 2>&1 ||
    { cat "$work/consumer.log"; fail "build the find_package consumer"; }
output=$(clean_env "$work/consumer-build/consumer") || fail "the find_package consumer fails: $output"
case "$output" in *": 2 4 6") ;; *) fail "the find_package consumer printed '$output', not 2 4 6" ;; esac
echo "ok: $output"
# shellcheck disable=SC2046
cc -o "$work/consumer-pc" "$work/consumer/consumer.c" $(pc --cflags --libs tensorplay) -Wl,-rpath,"$prefix/lib" ||
    fail "pkg-config build of the consumer"
[ "$("$work/consumer-pc")" = "$output" ] || fail "the pkg-config consumer differs: $("$work/consumer-pc")"
echo "ok: the same program built with pkg-config"

step "build the template out of tree against $prefix only"
cp -r "$prefix/share/tensorplay/sdk/template" "$work/template"
clean_env "$cmake" -S "$work/template" -B "$work/template-build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_INSTALL_PREFIX="$work/plugins" >"$work/configure.log" || { cat "$work/configure.log"; fail "configure the template"; }
clean_env "$cmake" --build "$work/template-build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build the template"; }
if grep -qi 'warning' "$work/build.log"; then cat "$work/build.log"; fail "the template builds with warnings"; fi
clean_env "$cmake" --install "$work/template-build" >/dev/null || fail "install the template"
if grep -rq "$(cd "$build_dir" && pwd)" "$work/template-build/CMakeCache.txt"; then fail "the template build refers to the TensorPlay build tree"; fi
echo "ok: built and installed into $work/plugins"

tool() { clean_env TP_BACKENDS_PATH="$work/plugins/share/tensorplay/backends.d" "$prefix/bin/tp-backends" "$@"; }
step "tp-backends list"
tool list | tee "$work/list.txt"
grep -Eq '^template +available' "$work/list.txt" || fail "template is not listed as available"

step "tp-backends check template --conformance"
tool check template --conformance --json "$work/template.json" >"$work/conformance.txt" ||
    { cat "$work/conformance.txt"; fail "the template does not pass the conformance kit"; }
tail -n 3 "$work/conformance.txt"
grep -q '"fail": 0' "$work/template.json" || fail "JSON summary: $(head -c 300 "$work/template.json")"
grep -Eq '"pass": [1-9]' "$work/template.json" || fail "no case passed"

step "the INI in the user folder (TEMPLATE_INSTALL_USER_INI=ON, XDG_CONFIG_HOME)"
clean_env "$cmake" -S "$work/template" -B "$work/template-build" -DTEMPLATE_INSTALL_USER_INI=ON >/dev/null
clean_env "$cmake" --install "$work/template-build" >/dev/null
[ -f "$work/xdg/tensorplay/backends.d/template.ini" ] || fail "no INI in \$XDG_CONFIG_HOME/tensorplay/backends.d"
clean_env "$prefix/bin/tp-backends" list | grep -Eq '^template +available' || fail "the user INI is not found"
echo "ok: found through \$XDG_CONFIG_HOME"
rm -f "$work/xdg/tensorplay/backends.d/template.ini"

step "a deliberately broken build (TEMPLATE_BREAK_OP=exp) fails, naming exp"
clean_env "$cmake" -S "$work/template" -B "$work/broken-build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DTEMPLATE_BREAK_OP=exp >/dev/null || fail "configure the broken template"
clean_env "$cmake" --build "$work/broken-build" >/dev/null 2>&1 || fail "build the broken template"
# A build folder made under umask 002 is group-writable: the trust rule
# refuses it, as the guide says; fix it as the guide says.
chmod -R go-w "$work/broken-build"
if clean_env TP_BACKENDS_PATH="$work/broken-build/backends.d" "$prefix/bin/tp-backends" check template \
    --conformance >"$work/broken.txt"; then
    fail "the broken template passes the conformance kit"
fi
tail -n 4 "$work/broken.txt"
grep -q '^ops in the most failing cases: exp ' "$work/broken.txt" || fail "the failure does not name exp"
grep -Eq '^exp +[0-9]+ +[0-9]+ +[1-9]' "$work/broken.txt" || fail "no failing row for exp in the table"
printf '\nok: the SDK works end to end\n'
