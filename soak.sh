#!/usr/bin/env bash
# Soaks the reference server with the demo tenant: SSE turns, voice-socket turns and confirmed
# actions at once for a while, then checks that nothing failed but intended 429s, that the
# server's goroutines and heap came back to where they started, and that the demo bank ran
# every confirmed action exactly once. Exits non-zero when a check fails.
#
# Usage: ./soak.sh [duration] [SSE workers] [voice sockets] [voice turns/s] [executes/s]
#   ./soak.sh                      the full soak: 10 minutes, 1 000 SSE turns in flight,
#                                  1 000 voice sockets
#   ./soak.sh 30s 200 200 10 5     the short form test.sh runs
set -euo pipefail
cd "$(dirname "$0")"
duration="${1:-10m}"
sse="${2:-1000}"
sockets="${3:-1000}"
voice_rate="${4:-10}"
execute_rate="${5:-5}"
out="${SOAK_DIR:-_artifacts/soak}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

go build -o "$out/engine" ./cmd/engine
# The load tool is a module of its own, so that the library does not depend on what it needs.
go -C cmd/engineload build -o "$out/engineload" .

# Each socket and each SSE turn holds a descriptor on both sides.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# The reference server as documented, on free loopback ports, with room for every turn at once.
# The conversation record is off: the soak drives turns flat out, each a new conversation,
# past what its SQLite default writes beside it on two cores (docs/records.md says what it
# sustains, and docs/benchmarks.md measures the record apart); its queue would overflow, and
# each entry it dropped is an error the soak fails on.
"$out/engine" -addr 127.0.0.1:0 -debug-addr 127.0.0.1:0 -max-turns $((sse + sockets + 64)) -max-sockets $((sockets + 64)) -log-level warn -records off \
  >"$out/engine.out" 2>"$out/engine.log" &
pid=$!
stop() { kill "$pid" 2>/dev/null || true; }
trap stop EXIT
for _ in $(seq 100); do
  grep -q "engine listening on" "$out/engine.out" && break
  kill -0 "$pid" 2>/dev/null || { cat "$out/engine.log"; echo "the engine did not start"; exit 1; }
  sleep 0.2
done
base=$(sed -n 's/^engine listening on \(http[^ ]*\).*/\1/p' "$out/engine.out")
bank=$(sed -n 's/^ *pk_demo bank: production \(http:[^ ]*\) .*/\1/p' "$out/engine.out")
stats=$(sed -n 's/^Debug figures and profiles (private): \(http[^ ]*\)/\1/p' "$out/engine.out")
echo "engine $base (pid $pid), bank $bank, stats $stats"

status=0
"$out/engineload" -target "$base" -pid "$pid" -stats "$stats" -bank "$bank" -soak \
  -mode "turn=$sse,voice=$sockets@$voice_rate,execute=8@$execute_rate" -voice-text \
  -d "$duration" -json "$out/soak.json" -svg "$out/soak-latency.svg" || status=$?

# The server shuts down cleanly after the soak: SIGTERM, then its exit status.
kill -TERM "$pid"
if ! wait "$pid"; then
  echo "the engine did not shut down cleanly"; tail -20 "$out/engine.log"; status=1
fi
trap - EXIT
if grep -q '"level":"ERROR"' "$out/engine.log"; then
  echo "the engine logged errors:"; grep '"level":"ERROR"' "$out/engine.log" | head -20; status=1
fi
exit $status
