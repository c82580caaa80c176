export CLOUD_API_URL=http://127.0.0.1:8080
export CLOUD_API_KEY_ID=emulator-admin-key CLOUD_API_KEY_SECRET=emulator-admin-secret
export CLOUD_ORGANIZATION_ID=3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d
export CLOUD_SERVICE_ID=a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d
export KAFKA_PASSWORD=reader-password
mkdir pipes
for name in orders events; do
  printf 'name: %s\nsource:\n  kafka:\n    brokers: b-1.kafka.example:9098\n    topics: %s\n    credentials: {username: reader, password: {env: KAFKA_PASSWORD}}\ndestination: {database: default, table: %s, managedTable: true, columns: [{name: id, type: UInt64}]}\nfieldMappings: [{sourceField: id, destinationField: id}]\n' "$name" "$name" "$name" > "pipes/$name.yaml"
done
mv pipes/events.yaml events.yaml
# ANCHOR: push
# On a workstation, the state in a file; then moved into the shared store, once:
cloudctl apply -f pipes --state pipes/.cloudctl-state.json --yes
cloudctl state push -f pipes --state pipes/.cloudctl-state.json --to "$CLOUD_STATE"
# ANCHOR_END: push
# ANCHOR: ci
# In the CI job, CLOUD_STATE is a secret: postgres://ci:PASSWORD@db.internal:5432/ops?sslmode=require
# (or rediss://:PASSWORD@state.internal:6380/0). No file on the runner:
cloudctl plan -f pipes                 # exit 0: the state read from the store
mv events.yaml pipes/                  # a change under review lands
cloudctl apply -f pipes --yes          # holds the service's lease for its whole length
cloudctl state unlock -f pipes         # who holds the lease, since when, lapsing when: no one now
cloudctl state unlock -f pipes --force # ends a lease; only when its runner is known to be gone
cloudctl plan -f pipes                 # exit 0
# ANCHOR_END: ci
