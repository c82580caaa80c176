export CLOUD_API_URL=http://127.0.0.1:8080
export CLOUD_API_KEY_ID=emulator-admin-key CLOUD_API_KEY_SECRET=emulator-admin-secret
export CLOUD_ORGANIZATION_ID=3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d
export CLOUD_SERVICE_ID=a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d
export KAFKA_PASSWORD=reader-password
# ANCHOR: first-apply
mkdir pipes && echo 'state: running' > pipes/service.yaml
cat > pipes/orders.yaml <<'EOF'
name: orders
source:
  kafka:
    brokers: b-1.kafka.example:9098
    topics: orders, returns            # the server answers `orders,returns`
    credentials: {username: reader, password: {env: KAFKA_PASSWORD}}
destination:
  database: default
  table: orders
  managedTable: true
  columns:
    - {name: id, type: UInt64}
    - {name: total, type: 'decimal(18,2)'}   # the server answers `Decimal(18, 2)`
fieldMappings:
  - {sourceField: id, destinationField: id}
  - {sourceField: total, destinationField: total}
scaling: {replicas: 2}
EOF
cloudctl plan -f pipes                       # exit 8: changes to make
# Plan for pipes: 1 to create, 0 unchanged.
#   + create    orders
cloudctl apply -f pipes --yes                # off a terminal, --yes; in one it shows the plan and asks
# Applied:
#   ok      created orders 0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c, Running
cloudctl plan -f pipes                       # exit 0: the server's own forms are no change
# No changes: the service matches the 1 pipe declared in pipes.
# ANCHOR_END: first-apply
id=$(cloudctl state list -f pipes -o json | jq -r '.pipes[] | select(.name == "orders") | .id')
# ANCHOR: drift
# Someone sets 3 replicas in the console (here, the emulator's console edit):
curl -sf -X PATCH "http://127.0.0.1:8080/_emulator/pipes/$id" \
  -H 'Authorization: Bearer emulator-control-token' -H 'Content-Type: application/json' \
  -d '{"scaling": {"replicas": 3}}' > /dev/null
cloudctl plan -f pipes -o human              # exit 8
# Plan for pipes: 1 to replace, 0 unchanged.
#   ~ replace   orders  0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c
#       scaling.replicas: 3 -> 2  (changed on the server)
sed -i 's/replicas: 2/replicas: 3/' pipes/orders.yaml   # accept the console's edit
cloudctl plan -f pipes -o human              # exit 8
# Plan for pipes: 1 to record, 0 unchanged.
#   = record    orders  0f9e8d7c-...  (the server already has what the file says: only the state changes)
#       scaling.replicas: 3 -> 3  (the server has it: recorded only)
cloudctl apply -f pipes --yes                # records it; no call changes the pipe
# ANCHOR_END: drift
# ANCHOR: pending
# A gateway answers 504 to the next create, after the pipe was made (an emulator fault):
curl -sf -X POST http://127.0.0.1:8080/_emulator/faults -H 'Authorization: Bearer emulator-control-token' \
  -d '{"operation": "createPipe", "actions": [{"status": 504, "then": "apply"}]}' > /dev/null
sed 's/name: orders/name: events/; s/table: orders/table: events/' pipes/orders.yaml > pipes/events.yaml
cloudctl apply -f pipes --yes                # exit 7: pending create events, the outcome is unknown
cloudctl plan -f pipes                       # exit 7: no apply creates events again until resolved
cloudctl state list -f pipes
# NAME    PIPE ID                               STATUS          SINCE
# events  -                                     pending create  2026-11-25 19:38:11 UTC
# orders  0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c  recorded        2026-11-25 19:38:05 UTC
# ANCHOR_END: pending
made=$(curl -sf http://127.0.0.1:8080/_emulator/pipes -H 'Authorization: Bearer emulator-control-token' \
  | jq -r '.[] | select(.name == "events") | .id')
# ANCHOR: resolve
cloudctl state resolve -f pipes events --id "$made"    # found in the console: it was made
cloudctl plan -f pipes                       # exit 0
cloudctl state forget -f pipes events        # stop managing a pipe; the server is not touched
rm pipes/events.yaml
# ANCHOR_END: resolve
# ANCHOR: adopt
cloudctl pipe export "$made" > pipes/events.yaml   # its secrets as {env: EVENTS_KAFKA_PASSWORD}
export EVENTS_KAFKA_PASSWORD=reader-password
cloudctl import -f pipes events "$made"
cloudctl plan -f pipes                       # exit 0: export -> import -> plan shows no change
# ANCHOR_END: adopt
# ANCHOR: quick
sed -i 's/replicas: 3/replicas: 1/' pipes/orders.yaml
cloudctl plan -f pipes --refresh=false       # exit 8: a file changed; no call made
cloudctl apply -f pipes --target orders --yes   # replaces orders alone
cloudctl plan -f pipes                       # exit 0
# ANCHOR_END: quick
# ANCHOR: saved
sed -i 's/replicas: 1/replicas: 2/' pipes/orders.yaml
cloudctl plan -f pipes --out plan.json -o human   # exit 8: shown, and written for review
# Plan for pipes: 1 to replace, 1 unchanged.
#   ~ replace   orders  0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c
#       scaling.replicas: 1 -> 2  (changed in the file)
#       data: start-unknown (source.kafka): without `offset.timestamp`, where a new pipe starts ...
#       data: managed-table-unknown (destination.managedTable = true): the pipe manages its ...
jq -c '.actions[] | {action, name, cause, calls: (.calls | length)}' plan.json
# {"action":"replace","name":"orders","cause":"declaration","calls":2}
cloudctl apply -f pipes --plan plan.json --yes    # exactly the calls the document lists
cloudctl apply -f pipes --plan plan.json --yes    # exit 14: applied already, so nothing is sent
# ANCHOR_END: saved
# ANCHOR: protect
echo 'lifecycle: {protect: true}' >> pipes/orders.yaml
cloudctl apply -f pipes --yes                     # records the lifecycle; no call changes the pipe
mv pipes/orders.yaml orders.yaml.kept
cloudctl plan -f pipes -o human                   # exit 12: the plan would delete orders
#   - delete    orders  0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c  PROTECTED: refused
cloudctl apply -f pipes --yes                     # exit 12: refused before any call
mv orders.yaml.kept pipes/orders.yaml
# ANCHOR_END: protect
