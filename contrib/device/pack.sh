#!/bin/sh
# Packs the release build of `sensorium` to run on a machine with no Swift and no Debian
# libraries (a lent many-core machine): the stripped binary, every shared library `ldd`
# lists and the dynamic loader, in one .tar.gz (about 33 MB; the device tool carries at
# most 64 MiB). On the other machine:
#   mkdir -p /tmp/p && tar xzf pack.tar.gz -C /tmp/p && sh /tmp/p/curve.sh
# usage: contrib/device/pack.sh [OUT.tar.gz]   (default .build/device-pack.tar.gz, ignored by git: the
# device tool carries it when named in its `carry`; run from the checkout)
set -eu
out=${1:-.build/device-pack.tar.gz}
bin=.build/release/sensorium
[ -x "$bin" ] || { echo "pack.sh: no $bin: run 'make release' first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lib"
cp "$bin" "$work/sensorium"
strip "$work/sensorium"
# Every library the binary loads, and the loader itself (it is what runs the binary there).
ldd "$bin" | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' | while read -r lib; do cp -L "$lib" "$work/lib/"; done
loader=$(ldd "$bin" | awk '/ld-linux/ { print ($3 ? $3 : $1) }' | head -n 1)
cp -L "$loader" "$work/lib/ld-linux-x86-64.so.2"
# What the benches read: the flagship protocol and the benchmark protocols.
cp -R protocols "$work/protocols"
mkdir -p "$work/bench" && cp -R bench/study "$work/bench/study"
cp contrib/device/curve.sh "$work/curve.sh"
mkdir -p "$(dirname "$out")"
tar czf "$out" -C "$work" .
echo "pack.sh: $out ($(du -h "$out" | cut -f1)); there: mkdir -p /tmp/p && tar xzf $(basename "$out") -C /tmp/p && sh /tmp/p/curve.sh"
