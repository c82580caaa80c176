use api_emulator::{Fault, FaultRule, Method, OperationId};

/// Two rules: creates meet a 503, then a hangup after the pipe was stored; and two 429s.
pub fn fault_rules() -> (FaultRule, FaultRule) {
    let rule = FaultRule::on(Method::POST, "/v1/organizations/*/services/*/pipes")
        .then(Fault::status(503))
        .then(Fault::hangup().applied()); // stored, then no answer at all
    let throttled = FaultRule::operation(OperationId::CreatePipe)
        .then(Fault::status(429).header("X-RateLimit-Reset", "1").times(2));
    (rule, throttled)
}
