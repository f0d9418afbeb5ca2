#!/usr/bin/env bash
# summary.sh MODE TARGET... — a markdown table of libFuzzer's final figures
# from build/fuzz/<target>.<MODE>.log (MODE: long or smoke).
set -euo pipefail
mode=$1; shift
echo "| target | run time (s) | executions | exec/s | cov | ft | corpus (inputs/bytes) | peak RSS (MB) | crashes |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---|"
for t in "$@"; do
  log=build/fuzz/$t.$mode.log
  [ -f "$log" ] || { echo "| $t | (no log) | | | | | | | |"; continue; }
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$done_line")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")
  corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$done_line")
  secs=$(sed -n "s/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p" "$log" | tail -1)
  crashes=$(cd build/fuzz/crashes 2>/dev/null && ls -- $t-* 2>/dev/null | tr "\n" " " || true)
  echo "| $t | ${secs:-?} | $execs | $eps | $cov | $ft | $corp | $rss | ${crashes:-0} |"
done
