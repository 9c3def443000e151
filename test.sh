#!/usr/bin/env bash
# Runs the whole test suite: installs what the tests need, vets, runs every test with the race
# detector, then each fuzz target for a short while. Usage: ./test.sh
set -euo pipefail
cd "$(dirname "$0")"

# Debian packages the tests drive for real. Installed when missing (needs root or sudo).
packages=(redis-server redis-sentinel haproxy postgresql espeak-ng flite pocketsphinx pocketsphinx-en-us chromium sip-tester)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# Node.js and npm run the web client's browser tests: Debian's, or any other installed build.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The library, and the tool and example that are modules of their own, so that the library
# does not depend on what only they need.
modules=(. cmd/engineload examples/chi)
for m in "${modules[@]}"; do go -C "$m" mod download; done
# The web client's browser tests drive the system's Chromium through playwright-core; no
# browser is downloaded.
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefix examples/web/test --no-audit --no-fund --loglevel=error
npm ci --prefix docs/lint --no-audit --no-fund --loglevel=error
echo "== OpenAPI lint (Redocly CLI, recommended rules as errors)"
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true npm run --silent --prefix docs/lint lint 2>&1 | grep -v '[║╔╚]'
echo "== go vet"
for m in "${modules[@]}"; do go -C "$m" vet ./...; done
echo "== go test -race"
# The tests keep what the engine logged (at debug level), kept in turn logs, exported as traces
# and streamed to clients in this directory; once they have all run, a scan looks there for the
# card numbers and IBANs they sent.
artifacts="$(mktemp -d)"
export ENGINE_TEST_ARTIFACTS="$artifacts"
for m in "${modules[@]}"; do go -C "$m" test -race -count=1 -timeout 10m ./...; done
unset ENGINE_TEST_ARTIFACTS
echo "== personal data in what the tests left ($(du -sh "$artifacts" | cut -f1))"
ENGINE_SCAN_ARTIFACTS="$artifacts" go test -count=1 -v -run '^TestTheTestCommandLeftNoSentCard$' ./internal/leakscan | grep -v '^=== RUN'
rm -rf "$artifacts"

# The soak in its short form: the reference server under SSE turns, voice-socket turns and
# confirmed actions at once, then back to its baseline, each action run once. The full soak
# (10 minutes, 1 000 turns in flight and 1 000 sockets) is ./soak.sh without arguments.
echo "== soak (short form)"
soak_dir="$(mktemp -d)"
if ! SOAK_DIR="$soak_dir" ./soak.sh 20s 200 200 10 5 >"$soak_dir/soak.out" 2>&1; then
  tail -n 60 "$soak_dir/soak.out"
  echo "FAIL soak (its files are in $soak_dir)"
  exit 1
fi
sed -n '/phases at once/,$p' "$soak_dir/soak.out"
rm -rf "$soak_dir"

# Fuzz targets, a few seconds each: "package target" pairs.
# A budget of executions rather than of time: a time budget can end a run while a worker is
# inside an input, which go test reports as "context deadline exceeded" on a busy machine.
fuzztime="${FUZZTIME:-3000x}"
echo "== fuzz ($fuzztime each)"
while read -r pkg target; do
  if ! out=$(go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -timeout 5m "$pkg" 2>&1); then
    echo "$out"
    echo "FAIL $pkg $target"
    exit 1
  fi
  # A target that moved is no fuzzing at all, and go test does not fail for it.
  if grep -q "no fuzz tests to fuzz" <<<"$out"; then
    echo "FAIL $pkg $target: no such fuzz target"
    exit 1
  fi
  echo "ok   $pkg $target"
done <<'TARGETS'
. FuzzTurnBody
. FuzzHeaders
./internal/jsonenc FuzzAppendString
./internal/headers FuzzForwardedHeaders
./internal/jsonenc FuzzCanonicalize
./internal/dpop FuzzDPoPProof
./internal/dpop FuzzParsePasskeyKey
./internal/sse FuzzSSE
./client FuzzPlainAudio
./audio FuzzDecodeWAV
./deepgram FuzzMessages
./elevenlabs FuzzStreamMessage
./internal/verbalize FuzzCutSentences
./widgets FuzzDecode
./record FuzzVerifyExport
./httptools FuzzParse
./intent FuzzMatch
./intent FuzzTemplate
./openai FuzzSpeechWAV
./openai FuzzStreamReader
./redisstore FuzzRecords
./internal/headers FuzzRequestIDSyntax
./internal/headers FuzzTurnID
./pii FuzzFind
./scenario FuzzParse
./gotools FuzzCall
./internal/modeltape FuzzOpen
./voice FuzzPlainAudioChunk
./voice FuzzStreamMessage
./widgets FuzzStrictUnmarshal
./internal/jsonenc FuzzHasDuplicateMembers
./examples/demobank FuzzVerify
./agui FuzzRunAgentInput
./handoff FuzzVerify
./telephony/sip FuzzOffer
./telephony/sip FuzzKeys
./telephony/twilio FuzzStreamMessage
TARGETS
