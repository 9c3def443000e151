#!/usr/bin/env bash
# The fault drill: three replicas of the reference server behind HAProxy, on Redis with a
# replica and three Redis Sentinels, all on loopback; SSE turns, voice-socket turns and
# confirmed actions through the balancer while a replica is killed (SIGKILL) mid-turn, Redis's
# primary is failed over and a replica is drained (SIGTERM), in rounds. It reports what the
# users saw and the time to recover from each fault, holds the demo bank's ledger against the
# actions confirmed, and exits non-zero when a check fails (docs/scaling.md).
#
# Usage: ./drill.sh [enginedrill flags]
#   ./drill.sh                                  3 minutes, 3 rounds, 12 SSE users, 6 voice
#                                               users, 4 users sending money
#   ./drill.sh -d 30s -rounds 1 -turns 4 -voice 2 -actions 2
#                                               the short form the test command runs
# Needs the Debian packages haproxy, redis-server and redis-sentinel (test.sh installs them).
set -euo pipefail
cd "$(dirname "$0")"
out="${DRILL_DIR:-_artifacts/drill}"
mkdir -p "$out"
exec go run ./cmd/enginedrill -dir "$out" -json "$out/drill.json" "$@"
