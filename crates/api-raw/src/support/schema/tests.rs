use serde_json::json;

use super::check::is_uuid;
use super::*;

fn set(schemas: Value) -> SchemaSet {
    SchemaSet::new(&json!({ "components": { "schemas": schemas } })).unwrap()
}

fn messages(set: &SchemaSet, name: &str, value: Value) -> Vec<String> {
    set.violations(name, &value)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn types_nullable_and_whole_numbers() {
    let set = set(json!({
        "T": {"type": "object", "properties": {
            "n": {"type": "integer", "nullable": true},
            "s": {"type": "string"},
            "b": {"type": "boolean"},
            "f": {"type": "number"},
        }}
    }));
    assert!(messages(&set, "T", json!({"n": 3.0, "s": "x", "b": true, "f": 0.5})).is_empty());
    assert!(messages(&set, "T", json!({"n": null})).is_empty());
    assert_eq!(
        messages(
            &set,
            "T",
            json!({"n": 0.5, "s": null, "b": "yes", "f": "1"})
        ),
        [
            "b: expected a boolean, found a string",
            "f: expected a number, found a string",
            "n: expected an integer, found a number",
            "s: expected a string, found null",
        ]
    );
    assert_eq!(
        messages(&set, "T", json!([])),
        ["body: expected an object, found an array"]
    );
}

#[test]
fn references_required_and_unknown_members() {
    let set = set(json!({
        "Outer": {"type": "object", "required": ["inner", "name"], "properties": {
            "inner": {"$ref": "#/components/schemas/Inner"},
            "name": {"type": "string", "minLength": 1, "maxLength": 3},
        }},
        "Inner": {"type": "object", "additionalProperties": false, "properties": {
            "ids": {"type": "array", "minItems": 1, "items": {"type": "string", "format": "uuid"}},
        }},
        "Open": {"type": "object", "additionalProperties": {}, "properties": {"a": {"type": "integer"}}},
    }));
    assert_eq!(
        messages(&set, "Outer", json!({})),
        ["inner: is required", "name: is required"]
    );
    assert_eq!(
        messages(
            &set,
            "Outer",
            json!({"name": "long", "inner": {"ids": ["a1b2c3d4-0000-4000-8000-00000000000g"], "extra": 1}})
        ),
        [
            "inner.extra: is not a member of this object",
            "inner.ids[0]: is not a UUID (8-4-4-4-12 hexadecimal digits)",
            "name: must be at most 3 characters long",
        ]
    );
    assert_eq!(
        messages(&set, "Outer", json!({"name": "", "inner": {"ids": []}})),
        [
            "inner.ids: must hold at least 1 item",
            "name: must be at least 1 character long",
        ]
    );
    assert!(messages(&set, "Open", json!({"a": 1, "anything": {"x": [1]}})).is_empty());
}

#[test]
fn bounds_enums_patterns_formats_and_one_of() {
    let set = set(json!({
        "T": {"type": "object", "properties": {
            "replicas": {"type": "integer", "minimum": 1, "maximum": 20},
            "command": {"type": "string", "enum": ["start", "stop"]},
            "arn": {"type": "string", "pattern": "^arn:[^:]+:[^:]*:[^:]*:[^:]*:.+$"},
            "at": {"type": "string", "format": "date-time"},
            "cpu": {"oneOf": [{"type": "number"}, {"type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?m?$"}]},
            "hint": {"type": "integer", "format": "int64"},
        }}
    }));
    assert!(
        messages(
            &set,
            "T",
            json!({"replicas": 20, "command": "stop", "arn": "arn:aws:iam::1:role/x", "at": "2026-03-01T12:00:00Z", "cpu": "500m", "hint": 7})
        )
        .is_empty()
    );
    assert_eq!(
        messages(
            &set,
            "T",
            json!({"replicas": 50, "command": "reboot", "arn": "nope", "at": "2026-03-01", "cpu": "lots"})
        ),
        [
            "arn: must be an ARN (arn:<partition>:<service>:<region>:<account>:<resource>)",
            "at: is not an RFC 3339 date-time (2026-03-01T12:00:00Z)",
            "command: must be one of \"start\", \"stop\"",
            "cpu: must be a CPU quantity (500m, or cores: 1, 0.25)",
            "replicas: must be between 1 and 20, got 50",
        ]
    );
    // A value of neither branch's type matches no shape.
    assert_eq!(
        messages(&set, "T", json!({"cpu": true})),
        ["cpu: matches none of the allowed shapes"]
    );
    assert_eq!(
        messages(&set, "T", json!({"replicas": 0})),
        ["replicas: must be between 1 and 20, got 0"]
    );
}

#[test]
fn a_spec_the_validator_would_not_enforce_is_refused() {
    for (schemas, expected) in [
        (
            json!({"T": {"type": "string", "multipleOf": 2}}),
            "does not enforce the keyword \"multipleOf\"",
        ),
        (
            json!({"T": {"$ref": "#/components/schemas/Missing"}}),
            "does not resolve",
        ),
        (
            json!({"T": {"type": "string", "pattern": "^[a-z]+$"}}),
            "has no check in api-raw",
        ),
        (
            json!({"T": {"type": "string", "format": "email"}}),
            "unknown format",
        ),
        (
            json!({"T": {"type": "object", "properties": {"a": {"allOf": []}}}}),
            "components.schemas.T.a",
        ),
        (
            json!({"T": {"type": "array", "x-compare": "sorted"}}),
            "x-compare is `set`, `case-insensitive` or {key: MEMBER}",
        ),
        (
            json!({"T": {"type": "object", "x-data-impact": {"on": ["delete"]}}}),
            "x-data-impact is a list",
        ),
        (
            json!({"T": {"type": "object", "x-data-impact": [{"on": ["update"], "class": "c", "says": "s"}]}}),
            "x-data-impact[0]: `on` takes delete, replace and recreate",
        ),
        (
            json!({"T": {"type": "object", "x-data-impact": [{"on": ["delete"], "class": "c"}]}}),
            "`says` is a non-empty string",
        ),
        (
            json!({"T": {"type": "object", "x-data-impact": [{"on": ["delete"], "if": {"member": "a"}, "class": "c", "says": "s"}]}}),
            "`if` is {member: PATH, set: BOOL} or {equals: VALUE}",
        ),
        (
            json!({"T": {"type": "object", "x-data-impact": [{"on": ["delete"], "class": "c", "says": "s", "when": 1}]}}),
            "unknown key \"when\"",
        ),
    ] {
        let error = SchemaSet::new(&json!({ "components": { "schemas": schemas } }))
            .err()
            .unwrap_or_default();
        assert!(error.contains(expected), "{expected:?} not in {error:?}");
    }
}

#[test]
fn each_member_compares_as_the_spec_says() {
    let schemas = SchemaSet::management();
    let request = schemas.schema("PipeCreateRequest").unwrap();
    let destination = request.member("destination").unwrap();
    let columns = destination.member("columns").unwrap();
    assert_eq!(columns.comparison(), Comparison::Keyed("name"));
    let column_type = columns.items().unwrap().member("type").unwrap();
    assert_eq!(column_type.comparison(), Comparison::CaseInsensitive);
    assert_eq!(
        destination.member("table").unwrap().comparison(),
        Comparison::Exact
    );
    assert_eq!(
        request.member("fieldMappings").unwrap().comparison(),
        Comparison::Keyed("sourceField")
    );
    let kafka = request.member("source").unwrap().member("kafka").unwrap();
    let endpoints = kafka.member("reversePrivateEndpointIds").unwrap();
    assert_eq!(endpoints.comparison(), Comparison::Set);
    assert_eq!(
        endpoints.items().unwrap().comparison(),
        Comparison::CaseInsensitive,
        "a UUID"
    );
    let storage = request
        .member("source")
        .unwrap()
        .member("objectStorage")
        .unwrap();
    assert_eq!(
        storage.member("compression").unwrap().comparison(),
        Comparison::CaseInsensitive,
        "a value of a set"
    );
}

#[test]
fn both_embedded_specs_are_wholly_enforced() {
    for set in [SchemaSet::management(), SchemaSet::observability()] {
        assert!(set.schemas.len() > 5);
    }
}

#[test]
fn declared_members_only_reports_unknown_members_where_the_schema_is_closed() {
    let set = set(json!({
        "T": {"type": "object", "properties": {
            "a": {"type": "integer", "minimum": 0.5},
            "open": {"type": "object", "additionalProperties": {}, "properties": {"x": {"type": "integer", "maximum": 3}}},
        }}
    }));
    let value = json!({"a": 0, "b": 1, "open": {"x": 4, "y": [1]}});
    let strict: Vec<String> = set
        .check("T", &value, Members::Declared)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        strict,
        [
            "a: must be at least 0.5, got 0",
            "b: unknown member; expected one of: a, open",
            "open.x: must be at most 3, got 4",
        ]
    );
    assert_eq!(messages(&set, "T", value).len(), 2, "open by default");
}

#[test]
fn shapes_follow_references_and_know_secrets_and_defaults() {
    let set = set(json!({
        "Secret": {"type": "string", "x-api-raw-type": "Secret"},
        "Req": {"type": "object", "properties": {
            "password": {"$ref": "#/components/schemas/Secret"},
            "n": {"type": "integer", "x-server-default": 4},
            "list": {"type": "array", "items": {"$ref": "#/components/schemas/Item"}},
            "open": {"type": "object", "additionalProperties": {}},
        }},
        "Item": {"type": "object", "properties": {"name": {"type": "string"}}},
    }));
    let shape = set.schema("Req").unwrap();
    assert!(shape.member("password").unwrap().is_secret());
    assert!(!shape.member("n").unwrap().is_secret());
    assert_eq!(shape.member("n").unwrap().server_default(), Some(&json!(4)));
    assert_eq!(shape.member("password").unwrap().server_default(), None);
    let item = shape.member("list").unwrap().items().unwrap();
    assert!(item.declares("name") && !item.declares("other") && !item.is_open());
    assert!(item.member("other").is_none());
    let open = shape.member("open").unwrap();
    assert!(open.is_open() && open.member("anything").is_some());
    assert_eq!(
        shape.members().collect::<Vec<_>>(),
        ["list", "n", "open", "password"]
    );
    assert!(set.schema("Missing").is_none());

    let responses = super::tests::set(json!({
        "Res": {"type": "object", "additionalProperties": {}, "properties": {
            "list": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
            "open": {"type": "object", "additionalProperties": {}},
        }},
    }));
    let response = responses.schema("Res").unwrap();
    assert!(shape.is_request_only("password", Some(&response)));
    assert!(!shape.is_request_only("list", Some(&response)));
    assert!(!shape.is_request_only("undeclared", Some(&response)));
    let mut value = json!({"password": "p", "n": 1, "list": [{"name": "a", "x": 2}], "open": {"k": 1}, "later": true});
    shape.drop_request_only(&response, &mut value);
    assert_eq!(
        value,
        json!({"list": [{"name": "a"}], "open": {"k": 1}, "later": true}),
        "request-only members go even where the response is open"
    );
}

#[test]
fn server_defaults_fill_what_a_create_leaves_out() {
    let set = set(json!({
        "Req": {"type": "object", "properties": {
            "scaling": {"$ref": "#/components/schemas/Scaling"},
            "name": {"type": "string"},
        }},
        "Scaling": {"type": "object", "properties": {
            "replicas": {"type": "integer", "x-server-default": 1},
            "cpu": {"type": "integer", "x-server-default": 500},
            "other": {"type": "integer"},
        }},
    }));
    let shape = set.schema("Req").unwrap();
    let mut empty = json!({"name": "p"});
    shape.fill_defaults(&mut empty);
    assert_eq!(
        empty,
        json!({"name": "p", "scaling": {"replicas": 1, "cpu": 500}})
    );
    let mut given = json!({"scaling": {"replicas": 3, "cpu": null}});
    shape.fill_defaults(&mut given);
    assert_eq!(given, json!({"scaling": {"replicas": 3, "cpu": 500}}));
}

#[test]
fn uuids_are_hyphenated_hex() {
    assert!(is_uuid("0d8f3a4e-1c2b-4d5e-8f60-718293a4b5c6"));
    assert!(is_uuid("0D8F3A4E-1C2B-4D5E-8F60-718293A4B5C6"));
    for bad in [
        "0d8f3a4e1c2b4d5e8f60718293a4b5c6",
        "{0d8f3a4e-1c2b-4d5e-8f60-718293a4b5c6}",
        "0d8f3a4e-1c2b-4d5e-8f60-718293a4b5c",
        "0d8f3a4e-1c2b-4d5e-8f60_718293a4b5c6",
        "",
    ] {
        assert!(!is_uuid(bad), "{bad}");
    }
}

#[test]
fn every_scalar_under_a_secret_name_is_a_secret_and_whole_values_are_visited() {
    let value = json!({
        "name": "p",
        "credentials": {"username": "u", "password": "p4ss"},
        "settings": {"kafka_sasl_password": ["first", "second"],
                     "ssl_keystore_secret": {"key": "k3y", "none": null},
                     "sasl_jaas": "x password=\"in-text\""},
    });
    let mut scalars = Vec::new();
    for_each_secret(&mut value.clone(), None, &mut |path, v| {
        scalars.push(format!("{path}={}", secret_text(v)));
    });
    assert_eq!(
        scalars,
        [
            "credentials.password=p4ss",
            "settings.kafka_sasl_password[0]=first",
            "settings.kafka_sasl_password[1]=second",
            "settings.ssl_keystore_secret.key=k3y",
        ]
    );
    let mut whole = Vec::new();
    let holds = |text: &str| text.contains("password=");
    for_each_secret_value(&mut value.clone(), None, &holds, &mut |path, v| {
        whole.push(format!("{path}={v}"));
    });
    assert_eq!(
        whole,
        [
            "credentials.password=\"p4ss\"",
            "settings.kafka_sasl_password=[\"first\",\"second\"]",
            "settings.sasl_jaas=\"x password=\\\"in-text\\\"\"",
            "settings.ssl_keystore_secret={\"key\":\"k3y\",\"none\":null}",
        ]
    );
}

#[test]
fn each_source_kind_says_what_a_replace_and_a_delete_do_to_the_data() {
    let request = SchemaSet::management().schema("PipeCreateRequest").unwrap();
    let source = request.member("source").unwrap();
    for kind in ["kafka", "kinesis", "objectStorage", "postgres"] {
        let impacts = source.member(kind).unwrap().data_impacts();
        for action in ["replace", "recreate", "delete"] {
            assert!(
                impacts.iter().any(|i| i.is_on(action)),
                "{kind} says nothing about {action}"
            );
        }
    }
    // Kafka: the class follows whether an offset is declared.
    let kafka = source.member("kafka").unwrap().data_impacts();
    let class = |value: serde_json::Value| {
        kafka
            .iter()
            .filter(|i| i.is_on("replace") && i.holds_for(Some(&value)))
            .map(|i| i.class)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        class(json!({"offset": {"timestamp": "2026-01-01T00:00"}})),
        ["rows-read-again"]
    );
    assert_eq!(class(json!({"topics": "orders"})), ["start-unknown"]);
    assert_eq!(
        class(json!({"offset": {"timestamp": null}})),
        ["start-unknown"]
    );
    // The managed table: by the member's value; absent, no entry holds.
    let managed = request
        .member("destination")
        .unwrap()
        .member("managedTable")
        .unwrap()
        .data_impacts();
    let holds = |value: Option<&serde_json::Value>| {
        managed
            .iter()
            .filter(|i| i.is_on("delete") && i.holds_for(value))
            .map(|i| i.class)
            .collect::<Vec<_>>()
    };
    assert_eq!(holds(Some(&json!(true))), ["managed-table-unknown"]);
    assert_eq!(holds(Some(&json!(false))), ["table-kept"]);
    assert!(holds(None).is_empty());
}
