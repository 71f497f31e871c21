//! Serde helpers shared by the type modules: exact number round-trips,
//! "present but null" optional values and tag-based dispatch of unions.

use serde::de::{self, Deserialize, DeserializeOwned, Deserializer};
use serde::ser::Serializer;
use serde_json::Value;

/// Largest integer an `f64` represents exactly (2^53).
const MAX_EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

/// Writes an `f64` the way JSON wrote it: integral values as integers, so a
/// `50` read into an `f64` goes back out as `50`, not `50.0`.
fn serialize_number<S: Serializer>(value: f64, serializer: S) -> Result<S::Ok, S::Error> {
    if value.fract() == 0.0 && value.abs() <= MAX_EXACT_INTEGER {
        // Exact: |value| <= 2^53, so the cast neither truncates nor saturates.
        if value >= 0.0 {
            serializer.serialize_u64(value as u64)
        } else {
            serializer.serialize_i64(value as i64)
        }
    } else {
        serializer.serialize_f64(value)
    }
}

/// `#[serde(with = "number")]` for a required `f64` (schema type `number`).
pub(crate) mod number {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_number(*value, serializer)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
        f64::deserialize(deserializer)
    }
}

/// `#[serde(with = "opt_number")]` for an optional `f64` (schema type `number`).
pub(crate) mod opt_number {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(
        value: &Option<f64>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(v) => serialize_number(*v, serializer),
            None => serializer.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<f64>, D::Error> {
        Option::<f64>::deserialize(deserializer)
    }
}

/// `deserialize_with` for an optional "any JSON" member: a member that is
/// present with the value `null` becomes `Some(Value::Null)` (and is written
/// back), while an absent member stays `None` via `#[serde(default)]`.
pub(crate) fn present<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// The string at `key` of a JSON object, if there is one.
pub(crate) fn str_member<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

/// Deserialises a union variant from an already buffered value, mapping the
/// error into the outer deserializer's error type.
pub(crate) fn variant<T: DeserializeOwned, E: de::Error>(value: Value) -> Result<T, E> {
    serde_json::from_value(value).map_err(E::custom)
}

/// The error for a union whose discriminator has an unknown value.
pub(crate) fn unknown_variant<E: de::Error>(
    union: &str,
    key: &str,
    found: Option<&str>,
    expected: &[&str],
) -> E {
    match found {
        Some(found) => E::custom(format_args!(
            "{union}: unknown {key} {found:?}, expected one of {expected:?}"
        )),
        None => E::custom(format_args!(
            "{union}: missing string member {key:?} (one of {expected:?})"
        )),
    }
}

/// Implements `Deserialize` for a union whose variants are told apart by a
/// string member (`type`, `method`...) matching each variant's marker; the
/// union itself serialises `#[serde(untagged)]`, each variant writing its own
/// discriminator.
macro_rules! union_by_tag {
    ($union:ident, $key:literal, { $($marker:ty => $variant:ident),+ $(,)? }) => {
        impl<'de> serde::Deserialize<'de> for $union {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = serde_json::Value::deserialize(deserializer)?;
                let tag = $crate::protocol::types::serde_util::str_member(&value, $key)
                    .map(str::to_owned);
                $(
                    if tag.as_deref() == Some(<$marker>::VALUE) {
                        return $crate::protocol::types::serde_util::variant(value)
                            .map($union::$variant);
                    }
                )+
                Err($crate::protocol::types::serde_util::unknown_variant(
                    stringify!($union),
                    $key,
                    tag.as_deref(),
                    &[$(<$marker>::VALUE),+],
                ))
            }
        }
    };
}

pub(crate) use union_by_tag;
