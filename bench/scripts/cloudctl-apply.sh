#!/usr/bin/env bash
# `cloudctl apply --yes` of N new pipes (20 by default) as a user runs it: the release binaries,
# the emulator with its 2 s transitions and a management limit of 20 per 2 s, cloudctl at 20/2s,
# its default parallelism and state file. Prints the wall time, the floor the key allows (20 creates
# at once, each pipe's read once it runs, as `api-bench burst-floor` computes it), their ratio, and
# the 429s. Needs `cargo build --release -p api-emulator -p api-cli -p api-bench` and curl, jq.
set -euo pipefail
pipes=${1:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin="$root/target/release"
work=$(mktemp -d)
trap 'kill "$emulator" 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin/api-emulator" --listen "127.0.0.1:$port" --management-rate-limit 20/2s > "$work/emulator.log" 2>&1 &
emulator=$!
until curl -sf "http://127.0.0.1:$port/_emulator/health" > /dev/null; do sleep 0.05; done
export CLOUD_API_URL="http://127.0.0.1:$port"
export CLOUD_API_KEY_ID=emulator-admin-key CLOUD_API_KEY_SECRET=emulator-admin-secret
export CLOUD_ORGANIZATION_ID=3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d
export CLOUD_SERVICE_ID=a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d
export CLOUD_RATE_LIMIT=20/2s KAFKA_PASSWORD=reader-password HOME="$work" XDG_CACHE_HOME="$work"
mkdir "$work/pipes"
for i in $(seq -w 1 "$pipes"); do
  cat > "$work/pipes/orders-$i.yaml" <<PIPE
name: orders-$i
source:
  kafka:
    brokers: b-1.kafka.example:9098
    topics: orders-$i
    credentials: {username: reader, password: {env: KAFKA_PASSWORD}}
destination:
  database: default
  table: orders_$i
  managedTable: true
  columns:
    - {name: id, type: UInt64}
fieldMappings:
  - {sourceField: id, destinationField: id}
PIPE
done
cd "$work"
started=$(date +%s.%N)
${WRAP:-} "$bin/cloudctl" apply -f pipes --yes -o json > apply.json
ended=$(date +%s.%N)
log=$(curl -sf -H 'Authorization: Bearer emulator-control-token' "$CLOUD_API_URL/_emulator/requests")
throttled=$(jq '[.[] | select(.status == 429)] | length' <<< "$log")
calls=$(jq 'length' <<< "$log")
# The floor: bursts of 20 per 2 s; the calls other than creates and pipe reads go first (the same
# computation as the benchmark's, from its binary).
floor=$("$bin/api-bench" burst-floor "$(( calls > 2 * pipes ? calls - 2 * pipes : 0 ))" "$pipes")
[ -n "${TIMELINE:-}" ] && echo "started $(date -u -d @$started +%T.%N) ended $(date -u -d @$ended +%T.%N)" >&2 && jq -r '.[] | "\(.at) \(.method) \(.status) \(.path)"' <<< "$log" | cut -c12-60 >&2
python3 -c "w=$ended-$started; f=$floor; print(f'{$pipes} pipes: {w:.2f} s, floor {f:.2f} s ({$calls} calls), {w/f:.2f}x, $throttled 429s')"
