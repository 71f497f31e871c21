//! Errors, converted in one place, in both directions:
//!
//! - a core [`ferromcp::Error`] becomes an instance of the facade's JS
//!   `McpError` class (`extends Error`, with `code`, `kind` and `data`), the
//!   code and kind being core's classification;
//! - whatever a JS tool handler throws or rejects with becomes a
//!   [`HandlerError`]: a thrown `McpError` a JSON-RPC error, anything else
//!   a tool error whose message is `"<ErrorName>: <message>"`.

use std::cell::RefCell;
use std::mem::ManuallyDrop;

use ferromcp::protocol::codes;
use ferromcp::server::HandlerError;
use ferromcp::{Error, ErrorKind, McpError};
use napi::bindgen_prelude::{FnArgs, Function, FunctionRef, JsObjectValue, Object};
use napi::{Env, JsValue, Status, Unknown, ValueType};
use napi_derive::napi;
use serde_json::{Map, Value, json};

/// The JS `McpError` constructor: `new McpError(message, { code, data })`.
type ErrorClass = FunctionRef<FnArgs<(String, Value)>, ()>;

thread_local! {
    /// The `McpError` class registered by the facade, per JS thread (each
    /// worker thread has its own env and loads its own facade). Never
    /// dropped: deleting the reference during thread teardown could run
    /// after the env is gone, and one leaked reference per thread is free.
    static ERROR_CLASS: RefCell<Option<(usize, ManuallyDrop<ErrorClass>)>> =
        const { RefCell::new(None) };
}

/// Registers the class that native errors are instances of. The facade
/// calls this once when it loads; later calls from the same thread replace
/// the class.
///
/// @internal Used by the `ferromcp` package itself.
// Unit-test builds compile out napi's registration glue, its only caller.
#[cfg_attr(test, allow(dead_code))]
#[napi(
    ts_args_type = "errorClass: new (message: string, options: { code: number; kind?: string; data?: unknown }) => Error"
)]
pub fn register_error_class(
    env: &Env,
    error_class: Function<'_, FnArgs<(String, Value)>, ()>,
) -> napi::Result<()> {
    let class = error_class.create_ref()?;
    ERROR_CLASS.with(|slot| {
        *slot.borrow_mut() = Some((env.raw() as usize, ManuallyDrop::new(class)));
    });
    Ok(())
}

/// A core error as a JS `McpError`, ready to be thrown or to reject a
/// promise. Must run on the JS thread of `env`.
///
/// `code` and `kind` are core's classification ([`Error::host_code`],
/// [`Error::kind`]); nothing here decides them.
pub(crate) fn to_js(env: &Env, error: &Error) -> napi::Error {
    ThrownForm::of(error).to_js(env)
}

/// A core error as its JS `McpError` carries it (`message`, `code`, `kind`,
/// `data`), made on any thread and turned into the JS error later on the
/// JS thread. A client middleware link's `next` rejects with it, and keeps
/// the core error itself: a link that lets that rejection through fails
/// the call with the very error, its kind (`"timeout"`...) included,
/// rather than with a peer error read back from JS ([`ThrownForm::is`]).
#[derive(Clone)]
pub(crate) struct ThrownForm {
    message: String,
    code: i32,
    kind: &'static str,
    data: Value,
}

impl ThrownForm {
    pub(crate) fn of(error: &Error) -> ThrownForm {
        ThrownForm {
            message: error.host_message(),
            code: error.host_code(),
            kind: error.kind().as_str(),
            data: data(error),
        }
    }

    /// The JS `McpError`. Must run on the JS thread of `env`.
    pub(crate) fn to_js(&self, env: &Env) -> napi::Error {
        match construct(env, &self.message, self.code, self.kind, self.data.clone()) {
            Ok(Some(instance)) => napi::Error::from(instance),
            // Without a registered class (the addon used without its facade)
            // or when construction failed, the message still gets through.
            Ok(None) | Err(_) => napi::Error::new(Status::GenericFailure, self.message.clone()),
        }
    }

    /// Whether `thrown` (what JS threw, read back by [`from_thrown`]) is
    /// this error as JS got it: the same code, message and data.
    pub(crate) fn is(&self, thrown: &McpError) -> bool {
        thrown.code == self.code
            && thrown.message == self.message
            && thrown.data.as_ref().unwrap_or(&Value::Null) == &self.data
    }
}

/// The `data` a core error carries in JS: the peer's `data` for a JSON-RPC
/// error; for a failure that never reached the wire, `{kind}` (kept from
/// before `error.kind` existed) plus what detail the failure has.
fn data(error: &Error) -> Value {
    let kind = error.kind().as_str();
    match error {
        Error::Mcp(mcp) => mcp.data.clone().unwrap_or(Value::Null),
        Error::Io(io) => json!({ "kind": kind, "ioKind": format!("{:?}", io.kind()) }),
        Error::HttpStatus(status, _) => json!({ "kind": kind, "status": status }),
        _ => json!({ "kind": kind }),
    }
}

/// The JSON-RPC error codes by name, from core, so the facade does not
/// retype them.
///
/// @internal Used by the `ferromcp` package itself (exported as `codes`).
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub fn error_codes() -> Value {
    codes::ALL
        .iter()
        .map(|&(name, code)| (name.to_owned(), Value::from(code)))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// The kinds core classifies failures into (`"peerError"`, `"timeout"`...),
/// the values `McpError.kind` takes.
///
/// @internal Used by the `ferromcp` package itself (exported as `ERROR_KINDS`).
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub fn error_kinds() -> Vec<&'static str> {
    ErrorKind::ALL.iter().map(|k| k.as_str()).collect()
}

/// `new McpError(message, { code, kind, data })` with the registered class.
fn construct<'env>(
    env: &'env Env,
    message: &str,
    code: i32,
    kind: &str,
    data: Value,
) -> napi::Result<Option<Unknown<'env>>> {
    ERROR_CLASS.with(|slot| {
        let slot = slot.borrow();
        let Some((owner, class)) = slot.as_ref() else {
            return Ok(None);
        };
        if *owner != env.raw() as usize {
            // Registered by an env that is gone from this thread.
            return Ok(None);
        }
        let mut options = Map::new();
        options.insert("code".into(), Value::from(code));
        options.insert("kind".into(), Value::from(kind));
        if !data.is_null() {
            options.insert("data".into(), data);
        }
        let class = class.borrow_back(env)?;
        let instance =
            class.new_instance(FnArgs::from((message.to_owned(), Value::Object(options))))?;
        Ok(Some(instance))
    })
}

/// What a JS handler threw (or rejected with) as a handler outcome. Runs on
/// the JS thread, inside the callback that caught `thrown`.
pub(crate) fn from_thrown(env: &Env, thrown: Unknown<'_>) -> HandlerError {
    match thrown_mcp_error(env, thrown) {
        Some(mcp) => HandlerError::Protocol(mcp),
        None => HandlerError::Tool(describe_thrown(env, thrown)),
    }
}

/// A thrown instance of the registered `McpError` class, read back into
/// the wire error it stands for.
fn thrown_mcp_error(env: &Env, thrown: Unknown<'_>) -> Option<McpError> {
    if thrown.get_type().ok()? != ValueType::Object {
        return None;
    }
    let is_mcp_error = ERROR_CLASS.with(|slot| {
        let slot = slot.borrow();
        let (owner, class) = slot.as_ref()?;
        if *owner != env.raw() as usize {
            return None;
        }
        let class = class.borrow_back(env).ok()?;
        thrown.instanceof(class).ok()
    });
    if is_mcp_error != Some(true) {
        return None;
    }
    let object = thrown.coerce_to_object().ok()?;
    let code = property::<i32>(env, &object, "code", ValueType::Number)?;
    let message =
        property::<String>(env, &object, "message", ValueType::String).unwrap_or_default();
    let data = object
        .get_named_property_unchecked::<Unknown<'_>>("data")
        .ok()
        .and_then(|data| crate::values::from_js(data).ok())
        .filter(|data| !data.is_null());
    clear_pending_exception(env);
    Some(McpError {
        code,
        message,
        data,
    })
}

/// `"<name>: <message>"`, as `Error.prototype.toString` writes it; a thrown
/// non-object is named `Error`.
fn describe_thrown(env: &Env, thrown: Unknown<'_>) -> String {
    let is_object = matches!(
        thrown.get_type(),
        Ok(ValueType::Object | ValueType::Function)
    );
    if !is_object {
        let text = thrown
            .coerce_to_string()
            .and_then(|s| s.into_utf8())
            .and_then(|s| s.into_owned());
        clear_pending_exception(env);
        return format!(
            "Error: {}",
            text.unwrap_or_else(|_| "(unprintable value)".into())
        );
    }
    let Ok(object) = thrown.coerce_to_object() else {
        return "Error".into();
    };
    let name = property::<String>(env, &object, "name", ValueType::String)
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "Error".into());
    match property::<String>(env, &object, "message", ValueType::String) {
        Some(message) if !message.is_empty() => format!("{name}: {message}"),
        _ => name,
    }
}

/// Reads `object[key]` when it has the expected type. A throwing getter is
/// treated as an absent property, and its exception cleared so it does not
/// surface later in unrelated code.
fn property<'env, T>(env: &Env, object: &Object<'env>, key: &str, expected: ValueType) -> Option<T>
where
    T: napi::bindgen_prelude::FromNapiValue,
{
    let value = match object.get_named_property_unchecked::<Unknown<'_>>(key) {
        Ok(value) => value,
        Err(_) => {
            clear_pending_exception(env);
            return None;
        }
    };
    if value.get_type().ok()? != expected {
        return None;
    }
    // SAFETY: the type was checked just above, as `cast` requires.
    unsafe { value.cast::<T>() }.ok()
}

/// Drops an exception left pending by a failed property read or coercion.
fn clear_pending_exception(env: &Env) {
    let mut pending = false;
    // SAFETY: `env` is the live env of the current JS thread.
    unsafe {
        if napi::sys::napi_is_exception_pending(env.raw(), &mut pending)
            == napi::sys::Status::napi_ok
            && pending
        {
            let mut exception = std::ptr::null_mut();
            napi::sys::napi_get_and_clear_last_exception(env.raw(), &mut exception);
        }
    }
}
