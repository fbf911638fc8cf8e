#!/bin/sh
# Usage: scripts/public-surface.sh REPO MODULE...   (e.g. scripts/public-surface.sh "$PWD" Sensorium LuaHost)
# The public surface of the library products, from the compiler (swift-symbolgraph-extract):  — public (non-SPI) symbols per module, counting also those
# that mention Int32/LUA_MULTRET and those without a doc comment. Run after `swift build` in REPO.
R=$1; shift
for m in "$@"; do
  out=$(mktemp -d)
  swift-symbolgraph-extract -module-name $m -I $R/.build/debug/Modules -target x86_64-unknown-linux-gnu -minimum-access-level public -output-dir $out \
    -Xcc -I/usr/include/lua5.4 -Xcc -fmodule-map-file=$R/Sources/CLua/module.modulemap \
    $(for f in $R/.build/debug/*.build/module.modulemap $R/Sources/C*/module.modulemap $R/.build/checkouts/GRDB.swift/Sources/GRDBSQLite/module.modulemap; do printf -- '-Xcc -fmodule-map-file=%s ' $f; done) 2>&1 | grep error: | head -3
  python3 - $out "$m" <<'PY'
import json,sys,glob
syms=[]
for f in glob.glob(sys.argv[1]+"/*.symbols.json"):
    syms+=[s for s in json.load(open(f))["symbols"] if not s.get("spi") and "/Sources/" in s.get("location",{}).get("uri","")]
def text(s): return "".join(f["spelling"] for f in s.get("declarationFragments",[]))
bad=[".".join(s["pathComponents"]) for s in syms if "Int32" in text(s) or "LUA_MULTRET" in text(s)]
undoc=sorted(".".join(s["pathComponents"]) for s in syms if not s.get("docComment"))
print(sys.argv[2], "public symbols:", len(syms), "| mentioning Int32/LUA_MULTRET:", len(bad), "| without doc comment:", len(undoc))
for b in bad[:15]: print("   Int32:", b)
for b in undoc[:60]: print("   undocumented:", b)
PY
done
