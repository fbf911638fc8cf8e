#!/bin/sh
# Fetches Lua 5.4.4's `testes/` folder from PyPI, where CI reaches it: the source
# distribution of lupa 2.0 carries Lua 5.4.4's sources (`third-party/lua54/`, its
# `lua.h` says 5.4.4) with the test suite, file for file those of tag v5.4.4 of
# github.com/lua/lua.
#
#   contrib/lua-testsuite/fetch-testes.sh DEST
#
# On success DEST/testes holds the suite and the exit status is 0. The archive is
# checked against the sha256 pinned below, and its lua.h against 5.4.4. The link
# is read from PyPI's simple index (PIP_INDEX_URL when set, else pypi.org) with
# curl; without curl, or when that fails, `pip download` (python3 -m pip) fetches
# the same sdist. When neither reaches the registry the status is 1 and stderr
# says why; nothing is left in DEST but the empty folder. Nothing is ever written
# into the repository.
set -u
dest=${1:?usage: fetch-testes.sh DEST}
name=lupa-2.0.tar.gz
sha256=ad3fef486be7adddd349fe9a9c393789061312cf98ebc533b489be34f484cb79
index=${PIP_INDEX_URL:-https://pypi.org/simple}
index=${index%/}

rm -rf "$dest" && mkdir -p "$dest/download" || exit 1
archive="$dest/download/$name"

# from_index: the sdist's link on the simple index, then the file, by curl.
from_index() {
  command -v curl >/dev/null 2>&1 || { echo "fetch-testes: no curl" >&2; return 1; }
  page=$(curl -fsSL --max-time 60 "$index/lupa/") || { echo "fetch-testes: cannot read $index/lupa/" >&2; return 1; }
  link=$(printf '%s\n' "$page" | grep -o "href=\"[^\"]*/$name[^\"]*\"" | head -n 1 |
    sed -e 's/^href="//' -e 's/"$//' -e 's/#.*//' -e 's/&amp;/\&/g')
  [ -n "$link" ] || { echo "fetch-testes: $index/lupa/ does not list $name" >&2; return 1; }
  case "$link" in http*) ;; /*) link="$(echo "$index" | sed 's#^\(https\{0,1\}://[^/]*\).*#\1#')$link" ;; *) link="$index/lupa/$link" ;; esac
  curl -fsSL --max-time 300 -o "$archive" "$link"
}

# from_pip: the same sdist by pip download.
from_pip() {
  python3 -m pip --version >/dev/null 2>&1 || { echo "fetch-testes: no pip (python3 -m pip)" >&2; return 1; }
  python3 -m pip download -q --no-deps --no-binary :all: lupa==2.0 -d "$dest/download" >&2
}

if ! { from_index || from_pip; } || [ ! -f "$archive" ]; then
  rm -rf "$dest/download"; exit 1
fi
got=$(sha256sum "$archive" | cut -d' ' -f1)
if [ "$got" != "$sha256" ]; then
  echo "fetch-testes: $name has sha256 $got, expected $sha256" >&2
  rm -rf "$dest/download"; exit 1
fi
tar -xzf "$archive" -C "$dest/download" lupa-2.0/third-party/lua54/testes lupa-2.0/third-party/lua54/lua.h || exit 1
lua54="$dest/download/lupa-2.0/third-party/lua54"
if ! grep -q '#define LUA_VERSION_RELEASE[[:space:]]*"4"' "$lua54/lua.h" ||
   ! grep -q '#define LUA_VERSION_MINOR[[:space:]]*"4"' "$lua54/lua.h"; then
  echo "fetch-testes: $name does not carry Lua 5.4.4 (its lua.h)" >&2
  rm -rf "$dest/download"; exit 1
fi
mv "$lua54/testes" "$dest/testes" && rm -rf "$dest/download"
