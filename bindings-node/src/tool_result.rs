//! The facade's `ToolResult` class: how a JS tool returns a whole result
//! (image, audio or resource content, several blocks, `isError`, `_meta`)
//! instead of a value. Its instances are recognised here and turned into
//! core's `ToolOutput::from_parts`, as Python's `ToolResult` and C's
//! `ferromcp_call_respond_result` are; the result itself is built and
//! checked by core.

use std::cell::RefCell;
use std::mem::ManuallyDrop;

use ferromcp::server::{HandlerError, ToolOutput};
use napi::bindgen_prelude::{Function, FunctionRef, JsObjectValue};
use napi::{Env, JsValue, Unknown, ValueType};
use napi_derive::napi;
use serde_json::Value;

type ResultClass = FunctionRef<(), ()>;

thread_local! {
    /// The registered class per JS thread, with the env that registered it
    /// (never dropped, for the reason given in `error.rs`).
    static RESULT_CLASS: RefCell<Option<(usize, ManuallyDrop<ResultClass>)>> =
        const { RefCell::new(None) };
}

/// Registers the class whose instances a tool handler returns as a whole
/// result. The facade calls this once when it loads.
///
/// @internal Used by the `ferromcp` package itself.
#[cfg_attr(test, allow(dead_code))]
#[napi(ts_args_type = "resultClass: new (...args: any[]) => object")]
pub fn register_tool_result_class(
    env: &Env,
    result_class: Function<'_, (), ()>,
) -> napi::Result<()> {
    let class = result_class.create_ref()?;
    RESULT_CLASS.with(|slot| {
        *slot.borrow_mut() = Some((env.raw() as usize, ManuallyDrop::new(class)));
    });
    Ok(())
}

/// The tool output for an instance of the registered class, or `None` for
/// any other value. Runs on the JS thread.
pub(crate) fn from_instance(
    env: &Env,
    value: Unknown<'_>,
) -> Option<Result<ToolOutput, HandlerError>> {
    if value.get_type().ok()? != ValueType::Object {
        return None;
    }
    let is_instance = RESULT_CLASS.with(|slot| {
        let slot = slot.borrow();
        let (owner, class) = slot.as_ref()?;
        if *owner != env.raw() as usize {
            return None;
        }
        let class = class.borrow_back(env).ok()?;
        value.instanceof(class).ok()
    });
    if is_instance != Some(true) {
        return None;
    }
    Some(parts(value))
}

/// `content`, `structuredContent`, `isError` and `_meta` of an instance,
/// handed to core.
fn parts(value: Unknown<'_>) -> Result<ToolOutput, HandlerError> {
    let object = value
        .coerce_to_object()
        .map_err(|e| HandlerError::Tool(format!("TypeError: {}", e.reason)))?;
    let field = |name: &str| -> Result<Value, HandlerError> {
        let property = object
            .get_named_property_unchecked::<Unknown<'_>>(name)
            .map_err(|e| {
                HandlerError::Tool(format!("TypeError: ToolResult.{name}: {}", e.reason))
            })?;
        crate::values::from_js(property)
            .map_err(|e| HandlerError::Tool(format!("TypeError: ToolResult.{name}: {}", e.reason)))
    };
    let content = match field("content")? {
        Value::Array(items) => items,
        Value::Null => Vec::new(),
        single => vec![single],
    };
    let structured = Some(field("structuredContent")?).filter(|v| !v.is_null());
    let is_error = field("isError")?.as_bool().unwrap_or(false);
    let meta = Some(field("_meta")?).filter(|v| !v.is_null());
    ToolOutput::from_parts(content, structured, is_error, meta).map_err(HandlerError::from)
}
