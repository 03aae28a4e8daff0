#!/usr/bin/env bash
# Installs a built tree into a temporary prefix and uses it as a user
# would: every program answers --help and --version from there, `man`
# finds each page, fastbf-campaign runs the fastbf-replay beside it, and a
# C program built with `pkg-config fastbf-edc` loads libfastbf-edc and
# gets fastbf's hello.
# Usage: bash tools/check-install.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(find "$prefix" -name libfastbf-edc.so -printf '%h\n' | head -1)
fail() { echo "check-install: $*" >&2; exit 1; }
for p in fastbf fastbf-replay fastbf-gen fastbf-plot fastbf-campaign fastbf-fluxsim fastbf-jstat; do
  [ -x "$prefix/bin/$p" ] || fail "$p is not installed in $prefix/bin"
  "$prefix/bin/$p" --help >/dev/null || fail "$p --help failed"
  "$prefix/bin/$p" --version | grep -q "^$p " || fail "$p --version does not name it"
  man -M "$prefix/share/man" -w "$p" >/dev/null || fail "man $p: no page"
  MANWIDTH=80 man -M "$prefix/share/man" "$p" 2>/dev/null | grep -q -- "--help" ||
    fail "man $p does not render the options"
done
# fastbf-campaign runs the fastbf-replay installed beside it.
printf '; MaxProcs: 2\n1 0 -1 10 1 -1 -1 1 20 -1 1 -1 -1 -1 -1 -1 -1 -1\n' >"$prefix/one.swf"
printf 'traces = one.swf\npolicies = fcfs, easy\n' >"$prefix/c.ini"
(cd / && "$prefix/bin/fastbf-campaign" --no-plots "$prefix/c.ini" >/dev/null) ||
  fail "the installed fastbf-campaign did not run its cells"
[ "$(grep -c ',done,' "$prefix/c-results/results.csv")" = 2 ] ||
  fail "the installed fastbf-campaign's table is not two done cells"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cat >"$prefix/host.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <fastbf_edc.h>
int main(void)
{
    const char *init = "{\"policy\":\"easy\"}";
    uint32_t flags = 0, size = 0;
    uint8_t *hello = NULL;
    if (batsim_edc_init((const uint8_t *)init, (uint32_t)strlen(init), &flags, &hello, &size))
        return 1;
    int ok = flags == 0x2 && size > 0 && strstr((const char *)hello, "EDCHelloEvent");
    batsim_edc_deinit();
    return ok ? 0 : 2;
}
C
# shellcheck disable=SC2046
cc -o "$prefix/host" "$prefix/host.c" $(pkg-config --cflags --libs fastbf-edc) ||
  fail "a host does not build with pkg-config fastbf-edc"
LD_LIBRARY_PATH="$libdir" "$prefix/host" || fail "the installed libfastbf-edc did not say hello"
echo "check-install: programs, man pages and libfastbf-edc work from $prefix"
