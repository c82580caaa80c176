export CLOUD_API_KEY_ID=emulator-admin-key CLOUD_API_KEY_SECRET=emulator-admin-secret
org=3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d service=a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d
# ANCHOR: record
# 1. Record a session against the real deployment (credentials go through, never into the file).
api-emulator record --upstream https://api.example.com --cassette prod.jsonl --listen 127.0.0.1:8089 &
until (exec 3<>/dev/tcp/127.0.0.1/8089) 2>/dev/null; do sleep 0.1; done   # until it listens
curl -sf -u "$CLOUD_API_KEY_ID:$CLOUD_API_KEY_SECRET" \
  "http://127.0.0.1:8089/v1/organizations/$org/services/$service/pipesReversePrivateEndpoints"   # or your program
kill $! && wait $!          # SIGTERM (or Ctrl-C) closes the file
# ANCHOR_END: record
# ANCHOR: replay
# 2. Commit prod.jsonl; in CI, replay it: no account, no secret.
api-emulator replay --cassette prod.jsonl --listen 127.0.0.1:8089 &
until (exec 3<>/dev/tcp/127.0.0.1/8089) 2>/dev/null; do sleep 0.1; done
curl -sf -u "$CLOUD_API_KEY_ID:$CLOUD_API_KEY_SECRET" \
  "http://127.0.0.1:8089/v1/organizations/$org/services/$service/pipesReversePrivateEndpoints"   # as recorded
curl -s -u "$CLOUD_API_KEY_ID:$CLOUD_API_KEY_SECRET" \
  "http://127.0.0.1:8089/v1/organizations/$org/services/$service/pipes/0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c"   # 400 NOT_RECORDED
kill $! && wait $!
# ANCHOR_END: replay
# ANCHOR: check
# 3. Check what production said against the spec; send us the findings (or the cassette).
api-emulator cassette check prod.jsonl      # exit 0: no finding (1 with findings, one per line)
# ANCHOR_END: check
