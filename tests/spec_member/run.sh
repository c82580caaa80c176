#!/usr/bin/env bash
# The test of the pipe file's design: on a copy of the workspace, add one optional string member
# (`owner`) to the pipe create request and to the pipe response of spec/management.yaml, run
# `cargo xtask codegen`, and build cloudctl and the emulator from the copy, with no other change to
# any source file. Then, with no code of ours knowing the member by name:
#   - a pipe file takes it, and it is sent (`pipe create --dry-run` shows it);
#   - the emulator stores it and answers it (its pipe store follows the spec);
#   - a plan names it when the file or the server changes it;
#   - `pipe export` writes it.
# And the unmodified cloudctl refuses the same file (an unknown member), so the member did come
# from the spec. The copy builds in this workspace's target directory, so only our crates compile.
# Build isolation only, in the copy's manifests: its version is another (cargo names a workspace
# crate's artifacts by its name, version and path within the workspace, which are the same in a
# copy, so they would overwrite this workspace's), and its binaries have names of their own (cargo
# copies a binary to target/debug/<name>).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
target="${CARGO_TARGET_DIR:-$root/target}"
copy=$(mktemp -d)
emulator_pid=""
cleanup() {
  [ -n "$emulator_pid" ] && kill "$emulator_pid" 2>/dev/null || true
  rm -rf "$copy"
}
trap cleanup EXIT
fail() { echo "spec member test FAILED: $*" >&2; exit 1; }

cd "$root"
git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$copy"

# The one change: `owner` in the create request and in the pipe response.
python3 - "$copy/spec/management.yaml" <<'EOF'
import sys
path = sys.argv[1]
spec = open(path).read()
def add(schema, member):
    anchor = f"    {schema}:\n"
    at = spec.index(anchor)
    props = spec.index("      properties:\n", at) + len("      properties:\n")
    return spec[:props] + member + spec[props:]
spec = add("PipeCreateRequest", "        owner:\n          type: string\n          maxLength: 64\n          description: Who owns the pipe.\n")
spec = add("Pipe", "        owner:\n          type: string\n          nullable: true\n          description: Who owns the pipe.\n")
open(path, "w").write(spec)
EOF
# The workspace's version, read from its manifest (a version written here once went stale at a
# release, and the copy's crates overwrote the workspace's artifacts).
version=$(sed -n 's/^version = "\([^"]*\)"$/\1/p' "$copy/Cargo.toml" | head -1)
[ -n "$version" ] || fail "no workspace version in Cargo.toml"
sed -i "s/^version = \"$version\"\$/version = \"$version-spec-member\"/" "$copy/Cargo.toml"
# The workspace's crates require each other at exactly their version.
sed -i "s/version = \"=$version\"/version = \"=$version-spec-member\"/" "$copy/Cargo.toml"
grep -q "^version = \"$version-spec-member\"\$" "$copy/Cargo.toml" || fail "the copy's version is not $version-spec-member"
grep -q "\"=$version\"" "$copy/Cargo.toml" && fail "a path dependency still requires =$version"
sed -i '/^\[\[bin\]\]$/{n;s/^name = "cloudctl"$/name = "cloudctl-spec-member"/}' "$copy/crates/api-cli/Cargo.toml"
sed -i '/^\[\[bin\]\]$/{n;s/^name = "api-emulator"$/name = "api-emulator-spec-member"/}' "$copy/crates/api-emulator/Cargo.toml"
printf '\n[[bin]]\nname = "xtask-spec-member"\npath = "src/main.rs"\n' >> "$copy/xtask/Cargo.toml"

# The workspace's own cloudctl, for the contrast below: built here, unless SPEC_MEMBER_CLOUDCTL
# names one built from this workspace's sources (CI passes the one its tests ran).
workspace_cloudctl=${SPEC_MEMBER_CLOUDCTL:-}
if [ -z "$workspace_cloudctl" ]; then
  (cd "$root" && CARGO_TARGET_DIR="$target" cargo build --quiet --locked -p api-cli)
  workspace_cloudctl="$target/debug/cloudctl"
fi
[ -x "$workspace_cloudctl" ] || fail "no cloudctl at $workspace_cloudctl"

echo "== the copy: cargo xtask codegen, then cloudctl and the emulator"
# --offline: the new version changes only the lock's own crates; nothing is fetched.
# The copy's xtask is the workspace's (the copy has its files): SPEC_MEMBER_XTASK may name one built
# from this workspace's sources (CI passes the one its tests built); else the copy builds its own.
if [ -n "${SPEC_MEMBER_XTASK:-}" ]; then
  (cd "$copy" && XTASK_WORKSPACE_ROOT="$copy" "$SPEC_MEMBER_XTASK" codegen)
else
  (cd "$copy" && CARGO_TARGET_DIR="$target" XTASK_WORKSPACE_ROOT="$copy" \
    cargo run --quiet --offline -p xtask --bin xtask-spec-member -- codegen)
fi
grep -q 'pub owner:' "$copy/crates/api-raw/src/generated/management.rs" || fail "codegen did not add the member"
(cd "$copy" && CARGO_TARGET_DIR="$target" cargo build --quiet --offline -p api-cli -p api-emulator)
cloudctl="$target/debug/cloudctl-spec-member"
emulator="$target/debug/api-emulator-spec-member"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$emulator" --listen "127.0.0.1:$port" --instant --no-rate-limit >"$copy/emulator.log" 2>&1 &
emulator_pid=$!
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$port/_emulator/health" >/dev/null && break
  sleep 0.1
done
export HOME="$copy/home" XDG_CONFIG_HOME="$copy/home/.config"
export CLOUD_API_URL="http://127.0.0.1:$port" CLOUD_API_KEY_ID=emulator-admin-key
export CLOUD_API_KEY_SECRET=emulator-admin-secret CLOUD_ORGANIZATION_ID=3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d
export CLOUD_SERVICE_ID=a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d CLOUD_RATE_LIMIT=1000/1s
export KAFKA_PASSWORD=spec-member-password
control="Authorization: Bearer emulator-control-token"

mkdir -p "$copy/pipes"
cat >"$copy/pipes/orders.yaml" <<'EOF'
name: orders
owner: data-platform
source:
  kafka:
    brokers: b-1.kafka.example:9098
    topics: orders
    credentials: {username: reader, password: {env: KAFKA_PASSWORD}}
destination:
  database: default
  table: orders
  managedTable: true
  columns:
    - {name: id, type: UInt64}
fieldMappings:
  - {sourceField: id, destinationField: id}
EOF

echo "== the unmodified cloudctl does not know the member"
code=0
"$workspace_cloudctl" pipe create -f "$copy/pipes/orders.yaml" --dry-run -o json 2>"$copy/unknown.json" >/dev/null || code=$?
[ "$code" = 2 ] || fail "the workspace's own cloudctl took the member (exit $code)"
grep -q '"path":"owner"' "$copy/unknown.json" || fail "no unknown-member problem at owner: $(cat "$copy/unknown.json")"

echo "== a pipe file takes it, and it is sent"
"$cloudctl" pipe create -f "$copy/pipes/orders.yaml" --dry-run -o json >"$copy/dry-run.json"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["owner"] == "data-platform"' "$copy/dry-run.json" \
  || fail "--dry-run does not show the member: $(cat "$copy/dry-run.json")"

echo "== the emulator stores it and answers it"
"$cloudctl" apply -f "$copy/pipes" --yes -o json >"$copy/apply.json" || fail "apply: $(cat "$copy/apply.json")"
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pipes"]["orders"]["id"])' "$copy/pipes/.cloudctl-state.json")
curl -sf -u "$CLOUD_API_KEY_ID:$CLOUD_API_KEY_SECRET" \
  "$CLOUD_API_URL/v1/organizations/$CLOUD_ORGANIZATION_ID/services/$CLOUD_SERVICE_ID/pipes/$id" >"$copy/get.json"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["result"]["owner"] == "data-platform"' "$copy/get.json" \
  || fail "getPipe does not answer the member: $(cat "$copy/get.json")"
"$cloudctl" plan -f "$copy/pipes" -o json >/dev/null || fail "a plan right after the apply is not empty"

echo "== a plan names it when it differs"
sed -i 's/owner: data-platform/owner: analytics/' "$copy/pipes/orders.yaml"
code=0; "$cloudctl" plan -f "$copy/pipes" -o json >"$copy/plan-file.json" || code=$?
[ "$code" = 8 ] || fail "a changed member in the file: plan exit $code"
python3 -c 'import json,sys; c = json.load(open(sys.argv[1]))["actions"][0]; assert [m["path"] for m in c["changes"]] == ["owner"] and c["changes"][0]["cause"] == "declaration", c' "$copy/plan-file.json" \
  || fail "the plan does not name the member: $(cat "$copy/plan-file.json")"
sed -i 's/owner: analytics/owner: data-platform/' "$copy/pipes/orders.yaml"
curl -sf -X PATCH "$CLOUD_API_URL/_emulator/pipes/$id" -H "$control" -d '{"owner": "someone-else"}' >/dev/null \
  || fail "the control endpoint refused a change of the member"
code=0; "$cloudctl" plan -f "$copy/pipes" -o json >"$copy/plan-server.json" || code=$?
[ "$code" = 8 ] || fail "a changed member on the server: plan exit $code"
python3 -c 'import json,sys; m = json.load(open(sys.argv[1]))["actions"][0]["changes"][0]; assert (m["path"], m["old"], m["new"], m["cause"]) == ("owner", "someone-else", "data-platform", "server"), m' "$copy/plan-server.json" \
  || fail "the plan does not name the drift: $(cat "$copy/plan-server.json")"

echo "== pipe export writes it"
"$cloudctl" pipe export "$id" -o human >"$copy/export.yaml" 2>/dev/null
grep -q '^owner: someone-else$' "$copy/export.yaml" || fail "export has no owner: $(cat "$copy/export.yaml")"

echo "spec member test: the member went through the file, the request, the emulator, the plan and the export"
