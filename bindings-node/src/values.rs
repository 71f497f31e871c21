//! JS values to JSON values.
//!
//! napi's `serde-json` conversion walks the JS value directly (no
//! `JSON.stringify` text in between), but JS has a single number type and napi
//! keeps only 32-bit integral numbers as integers. This module restores the
//! `JSON.stringify` result for every integral number a double holds exactly,
//! so `2 ** 40` is written as `1099511627776`, not `1099511627776.0`, and the
//! Node server stays byte-for-byte equal to the other languages.

use napi::bindgen_prelude::FromNapiValue;
use napi::{JsValue, Unknown, ValueType};
use serde_json::{Number, Value};

/// The largest integer a double represents exactly (`Number.MAX_SAFE_INTEGER`).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Converts a JS value to JSON. `undefined` (a handler that returns nothing)
/// becomes `null`; functions, symbols and `undefined` nested in arrays are
/// errors, as they have no JSON form.
pub(crate) fn from_js(value: Unknown<'_>) -> napi::Result<Value> {
    if value.get_type()? == ValueType::Undefined {
        return Ok(Value::Null);
    }
    let raw = value.value();
    // SAFETY: `raw` is a live handle of the current JS thread's env: every
    // caller runs on the JS thread, inside the callback that received it.
    let mut json = unsafe { Value::from_napi_value(raw.env, raw.value) }?;
    integral_numbers_as_integers(&mut json);
    Ok(json)
}

/// Rewrites integral doubles as JSON integers, without recursion so a deep
/// value cannot overflow the stack.
fn integral_numbers_as_integers(value: &mut Value) {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Number(number) => {
                if let Some(integer) = exact_integer(number) {
                    *number = Number::from(integer);
                }
            }
            Value::Array(items) => pending.extend(items.iter_mut()),
            Value::Object(map) => pending.extend(map.values_mut()),
            Value::Null | Value::Bool(_) | Value::String(_) => {}
        }
    }
}

/// The integer a floating-point JSON number stands for exactly, if any.
fn exact_integer(number: &Number) -> Option<i64> {
    if !number.is_f64() {
        return None;
    }
    let float = number.as_f64()?;
    // Within the safe range the cast is exact; beyond it a double no longer
    // tells consecutive integers apart, so it stays a float.
    (float.fract() == 0.0 && float.abs() <= MAX_SAFE_INTEGER).then_some(float as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integral_doubles_become_integers() {
        let mut value = json!({"a": 5.0, "b": [1099511627776.0, 2.5, -0.0], "c": "5.0"});
        integral_numbers_as_integers(&mut value);
        assert_eq!(
            serde_json::to_string(&value).ok().as_deref(),
            Some(r#"{"a":5,"b":[1099511627776,2.5,0],"c":"5.0"}"#)
        );
    }

    #[test]
    fn doubles_beyond_the_safe_range_stay_floats() {
        let mut value = json!(1e300);
        integral_numbers_as_integers(&mut value);
        assert!(value.is_f64());
    }
}
