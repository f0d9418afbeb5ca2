#!/usr/bin/env bash
# stage.sh NAME COMMAND... — run one stage of `make test`, print its wall time, and append
# "NAME SECONDS STATUS" to build/test-stages.txt (tests/README.md records the figures).
# The stage's exit status is passed on, so a failing stage still stops `make test`.
set -uo pipefail
name="$1"; shift
mkdir -p build
start=$(date +%s)
"$@"
rc=$?
secs=$(( $(date +%s) - start ))
echo "== stage $name: ${secs} s (exit $rc)"
echo "$name $secs $rc" >> build/test-stages.txt
exit $rc
