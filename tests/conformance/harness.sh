#!/usr/bin/env bash
# The emulator's own answers over HTTP, as a user's test sees them with curl: 405 and 413 with the
# management envelope, the request log (operationId, redacted body), a hangup (an empty reply), and a
# create that takes effect before a 504. Usage: harness.sh BASE_URL (an emulator on the default seed).
set -euo pipefail
url=$1
org=3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d
service=a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d
base="$url/v1/organizations/$org/services/$service"
key=(--user emulator-admin-key:emulator-admin-secret)
control=(-H 'Authorization: Bearer emulator-control-token')
failures=0

check() { # check NAME PYTHON-EXPRESSION-ON-`doc`-AND-`status` STATUS BODY
  local name=$1 expression=$2 status=$3 body=$4
  if STATUS="$status" BODY="$body" python3 -c "
import json, os, sys
status = int(os.environ['STATUS'])
try:
    doc = json.loads(os.environ['BODY'])
except ValueError:
    doc = None
sys.exit(0 if ($expression) else 1)"; then
    echo "ok   $name"
  else
    echo "FAIL $name: status $status, body ${body:0:400}"
    failures=$((failures + 1))
  fi
}

pipe='{"name": "harness", "source": {"kafka": {"brokers": "b:9092", "topics": "t", "format": "JSONEachRow",
  "authentication": "PLAIN", "credentials": {"username": "u", "password": "harness-password"}}},
  "destination": {"database": "default", "table": "t", "managedTable": true, "columns": [{"name": "id", "type": "UInt64"}]},
  "fieldMappings": [{"sourceField": "id", "destinationField": "id"}]}'

# Schemathesis ran before and may have left the service stopped (it sends stop commands too).
body=$(curl -s "${control[@]}" -X PUT -d '{"state": "running"}' -w '\n%{http_code}' "$url/_emulator/services/$service/state")
check "the service is put back to running" "status == 204" "${body##*$'\n'}" "${body%$'\n'*}"
curl -s "${control[@]}" -X DELETE "$url/_emulator/requests" >/dev/null
body=$(curl -s "${key[@]}" -H 'Content-Type: application/json' -d "$pipe" -w '\n%{http_code}' "$base/pipes")
check "createPipe answers 200" "status == 200 and doc['result']['name'] == 'harness'" "${body##*$'\n'}" "${body%$'\n'*}"

body=$(curl -s "${control[@]}" -w '\n%{http_code}' "$url/_emulator/requests")
check "the request log shows createPipe with the password redacted" \
  "status == 200 and doc[-1]['operationId'] == 'createPipe' and doc[-1]['body']['source']['kafka']['credentials']['password'] == '[REDACTED]' and 'harness-password' not in os.environ['BODY'] and doc[-1]['headers']['authorization'] == '[REDACTED]'" \
  "${body##*$'\n'}" "${body%$'\n'*}"

body=$(curl -s "${key[@]}" -X PUT -H 'Content-Type: application/json' -d '{"command": "start"}' -w '\n%{http_code}' "$base/state")
check "PUT on the state path: 405 with the envelope" \
  "status == 405 and doc['status'] == 405 and doc['error'].startswith('METHOD_NOT_ALLOWED') and doc['requestId']" \
  "${body##*$'\n'}" "${body%$'\n'*}"

big=$(mktemp)
trap 'rm -f "$big"' EXIT
python3 -c "import sys; sys.stdout.write('{\"name\": \"' + 'x' * (20 * 1024 * 1024) + '\"}')" >"$big"
body=$(curl -s "${key[@]}" -H 'Content-Type: application/json' --data-binary "@$big" -w '\n%{http_code}' "$base/pipes")
check "a 20 MB body: 413 with the envelope" \
  "status == 413 and doc['status'] == 413 and doc['error'].startswith('PAYLOAD_TOO_LARGE')" \
  "${body##*$'\n'}" "${body%$'\n'*}"

curl -s "${control[@]}" -d '{"operation": "listDashboards", "actions": [{"hangup": true}]}' "$url/_emulator/faults" >/dev/null
set +e
curl -s -o /dev/null -H 'Authorization: Bearer 0d8f3a4e-1c2b-4d5e-8f60-718293a4b5c6' "$url/api/v2/dashboards"
code=$?
set -e
check "a hangup rule: curl reports an empty reply (exit 52)" "status == 52" "$code" "null"

curl -s "${control[@]}" -d '{"method": "POST", "path": "/v1/organizations/*/services/*/pipes", "actions": [{"status": 504, "then": "apply"}]}' "$url/_emulator/faults" >/dev/null
body=$(curl -s "${key[@]}" -H 'Content-Type: application/json' -d "${pipe/harness/applied}" -w '\n%{http_code}' "$base/pipes")
check "then apply: the create is answered 504" "status == 504" "${body##*$'\n'}" "null"
body=$(curl -s "${control[@]}" -w '\n%{http_code}' "$url/_emulator/pipes")
check "then apply: the pipe is listed afterwards, secrets redacted" \
  "status == 200 and any(p['name'] == 'applied' for p in doc) and 'harness-password' not in os.environ['BODY']" \
  "${body##*$'\n'}" "${body%$'\n'*}"

if [ "$failures" -ne 0 ]; then
  echo "$failures harness check(s) failed" >&2
  exit 1
fi
