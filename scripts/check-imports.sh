#!/bin/sh
# The house rule of docs/architecture.md, checked: every Swift module under
# Sources/ imports only the modules listed for it below. Data flows one way
# (scenario → backend → model → runtime → report): the model knows no Lua and no
# backend; the backends (Simulator, StudyStore, Importers) know no Lua and not each
# other, except that the importers write into the store; LuaHost knows no sensors; the
# runtime knows no backend (StudyWorlds wires them together); the report knows no Lua
# and no runtime; JSONText knows nothing.
#
# Usage: scripts/check-imports.sh [SOURCES_DIR]   (default: Sources)
# Prints each forbidden import as FILE:LINE and exits 1 if there is any.
set -eu
src=${1:-Sources}

# The system's own modules, which any module may use.
system="Foundation Glibc Dispatch"

allowed() {
  case $1 in
    CivilTime)      echo "$system" ;;
    SensorKitModel) echo "$system CivilTime" ;;
    JSONText)       echo "$system" ;;
    LuaHost)        echo "$system CLua CLuaShim CivilTime" ;;
    Simulator)      echo "$system SensorKitModel" ;;
    StudyStore)     echo "$system SensorKitModel GRDB" ;;
    Importers)      echo "$system SensorKitModel StudyStore JSONText CIsal CZstd GRDB" ;;
    StudyReport)    echo "$system SensorKitModel JSONText" ;;
    StudyRuntime)   echo "$system LuaHost SensorKitModel StudyReport JSONText CStudyLua" ;;
    ApiReference)   echo "$system LuaHost SensorKitModel" ;;
    StudyWorlds)    echo "$system LuaHost SensorKitModel Simulator StudyStore StudyReport StudyRuntime" ;;
    Sensorium)      echo "$system LuaHost SensorKitModel Simulator Importers StudyReport StudyRuntime StudyWorlds" ;;
    SensoriumCLI)   echo "$system ArgumentParser CEditLine CLua CLuaShim CIsal Sensorium LuaHost SensorKitModel Simulator StudyStore Importers StudyReport StudyRuntime ApiReference StudyWorlds JSONText" ;;
    *)              echo "?" ;;
  esac
}

status=0
for dir in "$src"/*/; do
  module=$(basename "$dir")
  files=$(find "$dir" -name '*.swift' | sort)
  [ -n "$files" ] || continue
  ok=$(allowed "$module")
  if [ "$ok" = "?" ]; then
    echo "check-imports: module $module has no rule in scripts/check-imports.sh (add one and a line to docs/architecture.md)"
    status=1
    continue
  fi
  # `import X`, `@testable import X`, `import struct X.Y`, `@preconcurrency import X`.
  for f in $files; do
    grep -nE '^[[:space:]]*(@[A-Za-z_]+(\([^)]*\))?[[:space:]]+)*import[[:space:]]+((class|struct|enum|protocol|func|var|let|typealias)[[:space:]]+)?[A-Za-z_][A-Za-z0-9_]*' "$f" |
    while IFS= read -r hit; do
      line=${hit%%:*}
      name=$(printf '%s\n' "${hit#*:}" | sed -E 's/.*import[[:space:]]+((class|struct|enum|protocol|func|var|let|typealias)[[:space:]]+)?([A-Za-z_][A-Za-z0-9_]*).*/\3/')
      case " $ok " in
        *" $name "*) ;;
        *) echo "$f:$line: $module must not import $name (allowed: ${ok:-nothing})"; echo x >&3 ;;
      esac
    done 3>>"${TMPDIR:-/tmp}/check-imports.$$"
  done
done
if [ -s "${TMPDIR:-/tmp}/check-imports.$$" ]; then status=1; fi
rm -f "${TMPDIR:-/tmp}/check-imports.$$"
[ $status -eq 0 ] && echo "check-imports: every module imports only what docs/architecture.md allows"
exit $status
