//! Each hand-written rule accepts exactly what the spec's pattern accepts (checked with `regress`,
//! the engine the generated code would use, on the pattern read from the spec).

use proptest::prelude::*;

use super::*;

/// The `pattern` of `components.schemas.<schema>` (a JSON pointer below it) in `spec/<file>`, as
/// the package holds it (`crate::spec`, which `cargo xtask codegen --check` holds equal to `spec/`).
fn spec_pattern(file: &str, schema: &str) -> String {
    let text = match file {
        #[cfg(feature = "management")]
        "management.yaml" => crate::spec::MANAGEMENT,
        #[cfg(feature = "observability")]
        "observability.yaml" => crate::spec::OBSERVABILITY,
        other => panic!("no spec {other} in this build"),
    };
    let spec: serde_json::Value = serde_norway::from_str(text).unwrap();
    spec.pointer(&format!("/components/schemas/{schema}/pattern"))
        .and_then(|p| p.as_str())
        .unwrap_or_else(|| panic!("{file}: {schema} has no pattern"))
        .to_string()
}

#[derive(Debug, Clone)]
struct Rule {
    file: &'static str,
    schema: &'static str,
    pattern: &'static str,
    check: fn(&str) -> bool,
    /// Strings the pattern accepts, to mutate.
    valid: &'static [&'static str],
    /// Characters that matter to the pattern, and some that do not.
    alphabet: &'static str,
}

fn rules() -> Vec<Rule> {
    vec![
        #[cfg(feature = "management")]
        Rule {
            file: "management.yaml",
            schema: "Arn",
            pattern: Arn::PATTERN,
            check: is_arn,
            valid: &[
                "arn:aws:iam::123456789012:role/pipes",
                "arn:p::::x",
                "arn:a:b:c:d:e:f",
            ],
            alphabet: "arn::::x-/\n\r\u{2028}é ",
        },
        #[cfg(feature = "management")]
        Rule {
            file: "management.yaml",
            schema: "OffsetTimestamp",
            pattern: OffsetTimestamp::PATTERN,
            check: is_offset_timestamp,
            valid: &["2026-03-01T12:30", "0000-00-00T00:00"],
            alphabet: "0129-T:Z t\n٣",
        },
        #[cfg(feature = "management")]
        Rule {
            file: "management.yaml",
            schema: "CpuMillicores/oneOf/1",
            pattern: CPU_QUANTITY_PATTERN,
            check: is_cpu_quantity,
            valid: &["500m", "1", "0.25", "12.5m"],
            alphabet: "0159.mMk \n",
        },
        #[cfg(feature = "management")]
        Rule {
            file: "management.yaml",
            schema: "MemoryGb/oneOf/1",
            pattern: MEMORY_QUANTITY_PATTERN,
            check: is_memory_quantity,
            valid: &["2Gi", "512Mi", "0.5", "1G", "3M"],
            alphabet: "0129.GMiKg \n",
        },
        #[cfg(feature = "observability")]
        Rule {
            file: "observability.yaml",
            schema: "AlertId",
            pattern: AlertId::PATTERN,
            check: is_alert_id,
            valid: &["66a1f0c2d4e5f60718293a4b", "000000000000000000000000"],
            alphabet: "09afgAF\n ",
        },
    ]
}

#[test]
fn the_patterns_are_the_specs() {
    for rule in rules() {
        assert_eq!(
            spec_pattern(rule.file, rule.schema),
            rule.pattern,
            "{}",
            rule.schema
        );
        for valid in rule.valid {
            assert!((rule.check)(valid), "{}: {valid:?}", rule.schema);
        }
        let found = check_for_pattern(rule.pattern).expect("every spec pattern has its check");
        assert_eq!(found as usize, rule.check as usize, "{}", rule.schema);
    }
}

/// A string of characters of `alphabet`.
fn text_of(alphabet: &'static str, max: usize) -> impl Strategy<Value = String> {
    let chars: Vec<char> = alphabet.chars().collect();
    proptest::collection::vec(proptest::sample::select(chars), 0..max)
        .prop_map(|chars| chars.into_iter().collect())
}

/// A valid string with a few characters replaced, inserted or removed.
fn mutation_of(valid: &'static str, alphabet: &'static str) -> impl Strategy<Value = String> {
    let chars: Vec<char> = alphabet.chars().collect();
    let edit = (
        0usize..3,
        any::<prop::sample::Index>(),
        proptest::sample::select(chars),
    );
    proptest::collection::vec(edit, 0..4).prop_map(move |edits| {
        let mut text: Vec<char> = valid.chars().collect();
        for (kind, at, c) in edits {
            let i = at.index(text.len() + 1);
            match kind {
                0 if i < text.len() => text[i] = c,
                1 => text.insert(i, c),
                _ if i < text.len() => {
                    text.remove(i);
                }
                _ => {}
            }
        }
        text.into_iter().collect()
    })
}

fn agrees(rule: &Rule, text: &str) -> Result<(), TestCaseError> {
    let regex = regress::Regex::new(rule.pattern).unwrap();
    prop_assert_eq!(
        (rule.check)(text),
        regex.find(text).is_some(),
        "{} on {:?}",
        rule.schema,
        text
    );
    Ok(())
}

/// A rule and a string: arbitrary text over the rule's alphabet, or a valid value a few edits away.
fn case() -> impl Strategy<Value = (Rule, String)> {
    proptest::sample::select(rules()).prop_flat_map(|rule| {
        let alphabet = rule.alphabet;
        let near = proptest::sample::select(rule.valid.to_vec())
            .prop_flat_map(move |valid| mutation_of(valid, alphabet));
        let text = prop_oneof![near, text_of(alphabet, 40)];
        (Just(rule), text)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_rules_accept_exactly_what_the_patterns_accept((rule, text) in case()) {
        agrees(&rule, &text)?;
    }
}

#[test]
fn errors_and_serde() {
    #[cfg(feature = "observability")]
    {
        let error = AlertId::try_from("nope").unwrap_err();
        assert_eq!(
            error.to_string(),
            "not a valid AlertId: doesn't match pattern \"^[0-9a-f]{24}$\""
        );
        let id: AlertId = serde_json::from_str("\"66a1f0c2d4e5f60718293a4b\"").unwrap();
        assert_eq!(
            serde_json::to_string(&id).unwrap(),
            "\"66a1f0c2d4e5f60718293a4b\""
        );
        assert_eq!(id.to_string(), "66a1f0c2d4e5f60718293a4b");
        assert!(serde_json::from_str::<AlertId>("\"66a1\"").is_err());
    }
    #[cfg(feature = "management")]
    {
        let arn: Arn = "arn:aws:iam::1:role/x".parse().unwrap();
        assert_eq!(arn.as_str(), "arn:aws:iam::1:role/x");
        assert_eq!(String::from(arn), "arn:aws:iam::1:role/x");
    }
}
