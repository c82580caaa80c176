#!/usr/bin/env bash
# Conformance: schemathesis (from PyPI, in a virtual environment) against the emulator binary, with our
# spec, for both APIs and valid credentials. Bounded: a fixed number of examples per operation and a
# fixed seed. Fails on server errors and on answers that break the spec's schemas or status codes.
set -euo pipefail
cd "$(dirname "$0")/../.."

bash tests/conformance/venv.sh
venv=target/conformance-venv

# The emulator binary: built here, unless CONFORMANCE_EMULATOR names one built from this
# workspace's sources (CI passes the one its tests ran).
emulator_bin=${CONFORMANCE_EMULATOR:-}
if [ -z "$emulator_bin" ]; then
  cargo build --quiet --locked -p api-emulator
  emulator_bin=target/debug/api-emulator
fi
log=$(mktemp)
"$emulator_bin" --listen 127.0.0.1:0 --instant --no-rate-limit >"$log" 2>&1 &
emulator=$!
trap 'kill "$emulator" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 100); do
  url=$(sed -n 's/^api-emulator listening on //p' "$log")
  [ -n "$url" ] && break
  sleep 0.1
done
if [ -z "${url:-}" ]; then
  echo "the emulator did not start:" >&2
  cat "$log" >&2
  exit 1
fi

examples=${CONFORMANCE_EXAMPLES:-30}
st=("$venv/bin/st" --config-file tests/conformance/schemathesis.toml run --max-examples "$examples" --seed 1 --no-color)
echo "== schemathesis: management API at $url"
"${st[@]}" spec/management.yaml --url "$url" --auth emulator-admin-key:emulator-admin-secret
echo "== schemathesis: observability API at $url"
"${st[@]}" spec/observability.yaml --url "$url" --header "Authorization: Bearer 0d8f3a4e-1c2b-4d5e-8f60-718293a4b5c6"

echo "== the emulator as a test harness, over HTTP at $url"
tests/conformance/harness.sh "$url"
