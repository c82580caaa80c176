//! CPU and memory amounts that arrive as JSON numbers or as quantity strings.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A quantity string that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantityError {
    input: String,
    expected: &'static str,
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid quantity {:?}: expected {}",
            self.input, self.expected
        )
    }
}

impl std::error::Error for QuantityError {}

/// CPU of one replica, in millicores.
///
/// Reads a JSON number in the field's unit (`500` = 500 millicores) or a quantity string in Kubernetes
/// notation, which is what `"500m"` is: `"500m"` = 500 millicores, a bare `"1"` or `"0.25"` = 1 or 0.25
/// cores (1000 or 250 millicores). One meaning each: a number counts millicores, a string without the
/// `m` counts cores. Anything that is not a whole number of millicores (`1.5m`, `0.0001`, `500.5`),
/// and every other string (`"2 cores"`, `"500mm"`, `"-5m"`), is an error, never a rounded or scaled
/// guess. Always writes a number.
///
/// ```
/// use api_raw::support::CpuMillicores;
///
/// let cpu: CpuMillicores = serde_json::from_str("\"500m\"").unwrap();
/// assert_eq!(cpu.get(), 500);
/// assert_eq!(serde_json::to_string(&cpu).unwrap(), "500");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CpuMillicores(u64);

impl CpuMillicores {
    /// A CPU amount of `millicores`.
    pub const fn new(millicores: u64) -> Self {
        Self(millicores)
    }

    /// The amount in millicores.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// Reads a quantity string: whole millicores with the `m` suffix (`"500m"`), or cores without it
    /// (`"1"`, `"0.25"`).
    pub fn parse_quantity(text: &str) -> Result<Self, QuantityError> {
        const EXPECTED: &str = "whole millicores like \"500m\", or cores like \"1\" or \"0.25\"";
        let err = || QuantityError {
            input: text.to_string(),
            expected: EXPECTED,
        };
        let trimmed = text.trim();
        if let Some(millicores) = trimmed.strip_suffix('m') {
            // Digits only (`u64::from_str` would take "+5"); an empty string fails to parse.
            if !millicores.bytes().all(|b| b.is_ascii_digit()) {
                return Err(err());
            }
            return millicores.parse::<u64>().map(Self).map_err(|_| err());
        }
        // Cores: at most three decimals, so that the amount is a whole number of millicores.
        let (whole, fraction) = trimmed.split_once('.').unwrap_or((trimmed, ""));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        let valid = !whole.is_empty()
            && digits(whole)
            && digits(fraction)
            && fraction.len() <= 3
            && !trimmed.ends_with('.');
        if !valid {
            return Err(err());
        }
        let cores: u64 = whole.parse().map_err(|_| err())?;
        let thousandths: u64 = format!("{fraction:0<3}").parse().map_err(|_| err())?;
        cores
            .checked_mul(1000)
            .and_then(|m| m.checked_add(thousandths))
            .map(Self)
            .ok_or_else(err)
    }
}

/// Memory of one replica, in GB (possibly fractional).
///
/// Reads a JSON number (`2`, `0.5`) or a quantity string. The production service writes GB as `Gi`, so
/// `"2Gi"` and `"2G"` both mean 2 GB, and `"512Mi"` and `"512M"` both mean 0.5 GB (1 GB = 1024 MB); a
/// bare `"2"` means 2 GB (the field's unit, as for a number). Every other string is an error. Always
/// writes a number.
///
/// ```
/// use api_raw::support::MemoryGb;
///
/// let memory: MemoryGb = serde_json::from_str("\"512Mi\"").unwrap();
/// assert_eq!(memory.get(), 0.5);
/// assert_eq!(serde_json::to_string(&memory).unwrap(), "0.5");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct MemoryGb(f64);

impl MemoryGb {
    /// A memory amount of `gb` GB. Negative or non-finite amounts are clamped to zero.
    pub fn new(gb: f64) -> Self {
        Self(if gb.is_finite() && gb > 0.0 { gb } else { 0.0 })
    }

    /// The amount in GB.
    pub const fn get(self) -> f64 {
        self.0
    }

    /// Reads a quantity string: `"2Gi"`, `"2G"`, `"512Mi"`, `"512M"` or a plain number of GB.
    pub fn parse_quantity(text: &str) -> Result<Self, QuantityError> {
        const EXPECTED: &str = "GB like \"2Gi\" or \"0.5\", or MB like \"512Mi\"";
        let err = || QuantityError {
            input: text.to_string(),
            expected: EXPECTED,
        };
        let trimmed = text.trim();
        let (number, divisor) = if let Some(n) = trimmed
            .strip_suffix("Gi")
            .or_else(|| trimmed.strip_suffix('G'))
        {
            (n, 1.0)
        } else if let Some(n) = trimmed
            .strip_suffix("Mi")
            .or_else(|| trimmed.strip_suffix('M'))
        {
            (n, 1024.0)
        } else {
            (trimmed, 1.0)
        };
        parse_non_negative(number)
            .map(|v| Self(v / divisor))
            .ok_or_else(err)
    }
}

impl fmt::Display for CpuMillicores {
    /// Millicores with the `m` suffix, as a person writes them: `500m`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}m", self.0)
    }
}

impl fmt::Display for MemoryGb {
    /// Gigabytes with the unit: `2 GB`, `0.5 GB`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} GB", self.0)
    }
}

fn parse_non_negative(text: &str) -> Option<f64> {
    let valid = !text.is_empty()
        && text.chars().all(|c| c.is_ascii_digit() || c == '.')
        && text.chars().filter(|&c| c == '.').count() <= 1
        && !text.starts_with('.')
        && !text.ends_with('.');
    if !valid {
        return None;
    }
    text.parse::<f64>().ok().filter(|v| v.is_finite())
}

fn to_u64(value: f64) -> Option<u64> {
    // `u64::MAX as f64` is 2^64, one past the largest u64: it must be excluded.
    (value.is_finite() && value >= 0.0 && value < u64::MAX as f64).then_some(value as u64)
}

impl Serialize for CpuMillicores {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.0)
    }
}

impl Serialize for MemoryGb {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        super::serialize_number(self.0, serializer)
    }
}

struct CpuVisitor;

impl Visitor<'_> for CpuVisitor {
    type Value = CpuMillicores;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("millicores as a non-negative number, or a quantity string like \"500m\"")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(CpuMillicores(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        u64::try_from(v)
            .map(CpuMillicores)
            .map_err(|_| E::custom(format!("negative CPU amount {v}")))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        // `500.0` is 500; a fraction of a millicore is an error, not a rounded guess.
        to_u64(v)
            .filter(|_| v.fract() == 0.0)
            .map(CpuMillicores)
            .ok_or_else(|| E::custom(format!("invalid CPU amount {v}: expected whole millicores")))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        CpuMillicores::parse_quantity(v).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for CpuMillicores {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(CpuVisitor)
    }
}

struct MemoryVisitor;

impl Visitor<'_> for MemoryVisitor {
    type Value = MemoryGb;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GB as a non-negative number, or a quantity string like \"2Gi\"")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(MemoryGb(v as f64))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        if v < 0 {
            return Err(E::custom(format!("negative memory amount {v}")));
        }
        Ok(MemoryGb(v as f64))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        if !v.is_finite() || v < 0.0 {
            return Err(E::custom(format!("invalid memory amount {v}")));
        }
        Ok(MemoryGb(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        MemoryGb::parse_quantity(v).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for MemoryGb {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MemoryVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(json: &str) -> Result<u64, String> {
        serde_json::from_str::<CpuMillicores>(json)
            .map(CpuMillicores::get)
            .map_err(|e| e.to_string())
    }

    fn memory(json: &str) -> Result<f64, String> {
        serde_json::from_str::<MemoryGb>(json)
            .map(MemoryGb::get)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn cpu_reads_numbers_and_quantities() {
        assert_eq!(cpu("500"), Ok(500));
        assert_eq!(cpu("500.0"), Ok(500));
        assert_eq!(cpu("\"500m\""), Ok(500));
        assert_eq!(cpu("\"1\""), Ok(1000), "a string without m counts cores");
        assert_eq!(cpu("\"1.5\""), Ok(1500));
        assert_eq!(cpu("\"0.25\""), Ok(250));
        assert_eq!(cpu("\"0.125\""), Ok(125));
        assert_eq!(cpu("\" 1000m \""), Ok(1000));
    }

    #[test]
    fn cpu_rejects_nonsense_with_a_clear_message() {
        let err = cpu("\"lots\"").unwrap_err();
        assert!(err.contains("invalid quantity \"lots\""), "{err}");
        assert!(cpu("-5").unwrap_err().contains("negative CPU amount"));
        assert!(
            cpu("500.5")
                .unwrap_err()
                .contains("expected whole millicores")
        );
        assert!(cpu("1e30").is_err());
        // 2^64 is one past the largest u64: refused, not saturated.
        assert!(cpu("18446744073709551616").is_err());
        assert_eq!(cpu("18446744073709549568"), Ok(18_446_744_073_709_549_568));
        let wrong_type = cpu("true").unwrap_err();
        assert!(
            wrong_type.contains("expected millicores as a non-negative number"),
            "{wrong_type}"
        );
        for bad in [
            "5mm",
            "",
            "m",
            "1.5m",
            "0.0001",
            "1.",
            ".5",
            "-5m",
            "2 cores",
            "+5",
            "1e3",
            "500M",
            "18446744073709552",
            "18446744073709551616m",
        ] {
            assert!(cpu(&format!("{bad:?}")).is_err(), "{bad:?}");
        }
        assert!(cpu("true").is_err());
    }

    #[test]
    fn memory_reads_numbers_and_quantities() {
        assert_eq!(memory("2"), Ok(2.0));
        assert_eq!(memory("0.5"), Ok(0.5));
        assert_eq!(memory("\"2Gi\""), Ok(2.0));
        assert_eq!(memory("\"2G\""), Ok(2.0));
        assert_eq!(memory("\"512Mi\""), Ok(0.5));
        assert_eq!(memory("\"1.5\""), Ok(1.5));
    }

    #[test]
    fn memory_rejects_nonsense_with_a_clear_message() {
        assert!(
            memory("\"2Ti\"")
                .unwrap_err()
                .contains("invalid quantity \"2Ti\"")
        );
        assert!(memory("-1").unwrap_err().contains("negative memory amount"));
        assert!(
            memory("-1.5")
                .unwrap_err()
                .contains("invalid memory amount")
        );
        let wrong_type = memory("[]").unwrap_err();
        assert!(
            wrong_type.contains("expected GB as a non-negative number"),
            "{wrong_type}"
        );
        // Other deserializers reach the integer and float paths serde_json does not take.
        use serde::de::IntoDeserializer;
        let from_i64 = |v: i64| {
            MemoryGb::deserialize(IntoDeserializer::<serde::de::value::Error>::into_deserializer(v))
        };
        assert_eq!(from_i64(0).unwrap().get(), 0.0);
        assert_eq!(from_i64(3).unwrap().get(), 3.0);
        assert!(from_i64(-3).is_err());
        let from_f64 = |v: f64| {
            MemoryGb::deserialize(IntoDeserializer::<serde::de::value::Error>::into_deserializer(v))
        };
        assert!(from_f64(f64::NAN).is_err() && from_f64(f64::INFINITY).is_err());
        assert_eq!(from_f64(0.0).unwrap().get(), 0.0);
        for bad in [
            ".5Gi", "2GB", "2Ti", "-1Gi", "NaN", "inf", "1e3", "", "Gi", "2 Gi",
        ] {
            assert!(memory(&format!("{bad:?}")).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn both_display_as_a_person_writes_them() {
        assert_eq!(CpuMillicores::new(500).to_string(), "500m");
        assert_eq!(MemoryGb::new(2.0).to_string(), "2 GB");
        assert_eq!(MemoryGb::new(0.5).to_string(), "0.5 GB");
    }

    #[test]
    fn both_write_plain_numbers() {
        assert_eq!(
            serde_json::to_string(&CpuMillicores::new(750)).unwrap(),
            "750"
        );
        assert_eq!(serde_json::to_string(&MemoryGb::new(1.5)).unwrap(), "1.5");
        assert_eq!(MemoryGb::new(-3.0).get(), 0.0);
    }
}
