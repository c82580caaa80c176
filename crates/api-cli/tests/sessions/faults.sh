# The emulator started with `api-emulator --listen 127.0.0.1:8080` (its built-in control token).
curl -sf -X POST http://127.0.0.1:8080/_emulator/faults -H 'Authorization: Bearer emulator-control-token' \
  -d '{"method": "GET", "path": "/v1/organizations/*/services/*/pipes/*",
       "actions": [{"status": 503, "times": 2}, {"html": true, "status": 502}, {"drop": true},
                   {"truncate": true}, {"malformed": true}, {"delay_ms": 2000},
                   {"status": 429, "headers": {"X-RateLimit-Reset": "1"}}]}'
curl -sf -X POST http://127.0.0.1:8080/_emulator/faults -H 'Authorization: Bearer emulator-control-token' \
  -d '{"operation": "createPipe", "actions": [{"status": 504, "then": "apply"}, {"hangup": true}]}'
curl -sf http://127.0.0.1:8080/_emulator/faults -H 'Authorization: Bearer emulator-control-token'   # the armed rules
curl -sf -X DELETE http://127.0.0.1:8080/_emulator/faults -H 'Authorization: Bearer emulator-control-token'
curl -sf -X POST http://127.0.0.1:8080/_emulator/faults -H 'Authorization: Bearer emulator-control-token' \
  -d '{"operation": "createPipe", "actions": [{"status": 999}]}'   # exit 22: a 400 naming what is wrong
