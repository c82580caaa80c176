# ANCHOR: env
# The emulator's built-in seed: `api-emulator --print-default-seed` shows its keys and ids.
export CLOUD_API_URL=http://127.0.0.1:8080 CLOUD_OBSERVABILITY_URL=http://127.0.0.1:8080
export CLOUD_API_KEY_ID=emulator-admin-key CLOUD_API_KEY_SECRET=emulator-admin-secret
export CLOUD_ORGANIZATION_ID=3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d
export CLOUD_SERVICE_ID=a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d
export CLOUD_OBSERVABILITY_TOKEN=0d8f3a4e-1c2b-4d5e-8f60-718293a4b5c6
export KAFKA_PASSWORD=reader-password
# ANCHOR_END: env
cat > pipe.yaml <<'EOF'
# ANCHOR: pipe-file
name: orders
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
scaling: {replicas: 1}
# ANCHOR_END: pipe-file
EOF

# ANCHOR: session
cloudctl config show                          # where each setting comes from
cloudctl service stop --wait                  # State  stopped
cloudctl pipe create --file pipe.yaml --wait  # exit 1: FAILED_DEPENDENCY (HTTP 424), the service is stopped
cloudctl service start --wait                 # waits out the stop, then the start (about 4 s at 2-s transitions)
cloudctl pipe create --file pipe.yaml --dry-run          # the request, password "[REDACTED]"; nothing sent
id=$(cloudctl pipe create --file pipe.yaml --wait -o json | jq -r .id)
cloudctl pipe get "$id"                       # ID, Name, State Running, Source kafka: topics orders from ...
cloudctl pipe settings "$id"                  # SETTING / VALUE table
cloudctl endpoint list                        # two reverse private endpoints
cloudctl endpoint register --id vpce-0123456789abcdef0 --description "CI runners"
cloudctl alert get 66a1f0c2d4e5f60718293a4b   # Checkout p99 latency, threshold above 800
cloudctl dashboard list -o json | jq -r '.[].name'
cloudctl pipe delete "$id" --wait             # Deleted pipe ...; it is gone.
cloudctl pipe get "$id"                       # exit 3: not found
CLOUD_API_KEY_SECRET=wrong cloudctl endpoint list   # exit 4: check CLOUD_API_KEY_ID and CLOUD_API_KEY_SECRET
# ANCHOR_END: session
