//! Properties of the hand-written support types: quantities and open value sets, for any input.
#![cfg(all(feature = "management", feature = "observability"))]

use api_raw::support::{
    AlertThresholdType, Compression, CpuMillicores, MemoryGb, PipeState, ServiceState,
};
use proptest::prelude::*;

/// Equal but for the last bit or two: serde_json's float printing does not round-trip every bit.
/// Counted in units in the last place, so that a subnormal number (whose last bit is a far larger
/// share of it than a normal number's) is held to the same bits.
fn close(a: f64, b: f64) -> bool {
    a == b
        || (a.is_finite()
            && b.is_finite()
            && a.is_sign_negative() == b.is_sign_negative()
            && a.to_bits().abs_diff(b.to_bits()) <= 4)
}

#[test]
fn a_subnormal_amount_reads_back_but_for_its_last_bits() {
    // Found by the property below: 1.12512953266839e-309 read back as 1.125129532668393e-309.
    let value = 1.12512953266839e-309;
    let json = serde_json::json!(value).to_string();
    let memory = serde_json::from_str::<MemoryGb>(&json).unwrap();
    assert!(close(memory.get(), value), "{} from {value}", memory.get());
    assert!(!close(1.0, 1.0 + 1e-12) && !close(-1e-309, 1e-309));
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_cpu_string_parses_or_fails_without_panicking(text in ".{0,24}") {
        if let Ok(cpu) = CpuMillicores::parse_quantity(&text) {
            // Whatever was read prints as millicores and reads back as the same amount.
            let shown = cpu.to_string();
            prop_assert!(shown.ends_with('m'));
            prop_assert_eq!(CpuMillicores::parse_quantity(&shown).unwrap(), cpu);
        }
    }

    #[test]
    fn millicores_round_trip(millicores in any::<u64>()) {
        let cpu = CpuMillicores::new(millicores);
        prop_assert_eq!(CpuMillicores::parse_quantity(&cpu.to_string()).unwrap(), cpu);
        let json = serde_json::to_string(&cpu).unwrap();
        prop_assert_eq!(serde_json::from_str::<CpuMillicores>(&json).unwrap(), cpu);
    }

    #[test]
    fn cores_and_millicores_never_disagree(cores in 0u64..100_000, thousandths in 0u64..1000) {
        // One meaning each: "1.5" (cores) is exactly "1500m", never a rounded or scaled guess.
        let as_cores = CpuMillicores::parse_quantity(&format!("{cores}.{thousandths:03}")).unwrap();
        let as_millicores =
            CpuMillicores::parse_quantity(&format!("{}m", cores * 1000 + thousandths)).unwrap();
        prop_assert_eq!(as_cores, as_millicores);
    }

    #[test]
    fn any_cpu_number_decodes_or_fails_without_panicking(value in any::<f64>()) {
        let json = serde_json::json!(value).to_string();
        if let Ok(cpu) = serde_json::from_str::<CpuMillicores>(&json) {
            prop_assert!(close(cpu.get() as f64, value), "{} from {}", cpu.get(), value);
        }
    }

    #[test]
    fn any_memory_input_reads_as_a_finite_non_negative_amount(text in ".{0,24}", value in any::<f64>()) {
        if let Ok(memory) = MemoryGb::parse_quantity(&text) {
            prop_assert!(memory.get().is_finite() && memory.get() >= 0.0);
        }
        let json = serde_json::json!(value).to_string();
        match serde_json::from_str::<MemoryGb>(&json) {
            Ok(memory) => prop_assert!(close(memory.get(), value), "{} from {}", memory.get(), value),
            Err(_) => prop_assert!(!value.is_finite() || value < 0.0),
        }
        let clamped = MemoryGb::new(value).get();
        prop_assert!(clamped.is_finite() && clamped >= 0.0);
    }

    #[test]
    fn gigabytes_and_megabytes_agree(megabytes in 0u32..1_000_000) {
        let mi = MemoryGb::parse_quantity(&format!("{megabytes}Mi")).unwrap();
        let m = MemoryGb::parse_quantity(&format!("{megabytes}M")).unwrap();
        prop_assert_eq!(mi, m);
        prop_assert_eq!(mi.get(), f64::from(megabytes) / 1024.0);
    }

    #[test]
    fn open_value_sets_keep_any_text_and_know_their_values(text in ".{0,32}") {
        let state = PipeState::from(text.as_str());
        prop_assert_eq!(state.as_str(), text.as_str());
        prop_assert_eq!(state.is_other(), !PipeState::KNOWN.contains(&text.as_str()));
        prop_assert_eq!(PipeState::from(text.clone()), state.clone());
        let json = serde_json::to_string(&state).unwrap();
        prop_assert_eq!(serde_json::from_str::<PipeState>(&json).unwrap(), state);
        let service = ServiceState::from(text.as_str());
        prop_assert_eq!(service.is_other(), !ServiceState::KNOWN.contains(&text.as_str()));
    }

    #[test]
    fn known_values_always_map_to_their_variant(index in 0usize..64) {
        for known in [PipeState::KNOWN, ServiceState::KNOWN, Compression::KNOWN, AlertThresholdType::KNOWN] {
            let value = known[index % known.len()];
            prop_assert!(!PipeState::from(value).is_other() || !PipeState::KNOWN.contains(&value));
        }
        let value = PipeState::KNOWN[index % PipeState::KNOWN.len()];
        let decoded: PipeState = serde_json::from_value(serde_json::json!(value)).unwrap();
        prop_assert!(!decoded.is_other());
        prop_assert_eq!(decoded.to_string(), value);
    }
}
