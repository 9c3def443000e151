#!/usr/bin/env bash
# Measures the figures of docs/benchmarks.md on this machine and writes the JSON reports, the
# charts and the Go benchmark output next to this script. Several short rounds, bare handler
# and engine in turn, keep drifting background load from favouring either.
# Usage: docs/bench/measure.sh [seconds per phase, default 5]
set -euo pipefail
cd "$(dirname "$0")/../.."
d="${1:-5}s"
out=docs/bench
go -C cmd/engineload build -o /tmp/engineload .
load=(/tmp/engineload -local -q)

echo "== throughput: engine against the bare handler, saturated, 64 workers"
"${load[@]}" -raw -c 64 -d "$d" -rounds 5 -json $out/throughput.json -svg $out/throughput-latency.svg
echo "== 256 concurrent turns, model at zero delay (saturated)"
"${load[@]}" -raw -c 256 -d "$d" -rounds 2 -json $out/turn-256.json -svg $out/turn-256-latency.svg
echo "== 256 concurrent turns, deltas 20 ms apart (about 0.8 s a turn)"
"${load[@]}" -raw -c 256 -d "$d" -rounds 2 -token-interval 20ms -json $out/turn-256-paced.json -svg $out/turn-latency.svg
echo "== no growth with the number of turns"
"${load[@]}" -raw -c 64 -n 10000 -json $out/growth-10k.json
"${load[@]}" -raw -c 64 -n 50000 -json $out/growth-50k.json
echo "== through the client package, and with DPoP-bound sessions"
"${load[@]}" -c 64 -d "$d" -rounds 3 -json $out/turn-client.json
"${load[@]}" -c 64 -d "$d" -rounds 3 -bound -json $out/turn-bound.json
echo "== execute"
"${load[@]}" -mode execute -c 16 -n 5000 -json $out/execute.json -svg $out/execute-latency.svg
echo "== Go benchmarks"
go test -run '^$' -bench . -benchmem -count 6 . ./widgets ./audio ./internal/... | tee $out/gobench.txt
