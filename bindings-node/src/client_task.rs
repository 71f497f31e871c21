//! The native `ToolTask` class: core's [`ToolTask`] for Node, the handle on
//! a `tools/call` the server runs as a task (SEP-2663). The facade's
//! `ToolTask` (`lib/client.js`) wraps it and wires `AbortSignal`s.

use std::sync::Arc;

use ferromcp::client::{CallOptions, CallResult, ToolTask};
use napi::bindgen_prelude::{ClassInstance, Function, Object};
use napi::{Env, Status, Unknown};
use napi_derive::napi;
use serde_json::{Map, Value};

use crate::client::{CancelToken, JsRelay};
use crate::runtime::spawn;

/// A task handle. Use the facade's `client.startToolTask(...)`.
///
/// @example
/// ```js
/// const task = await native.startToolTask("render", {}, null, null);
/// console.log(task.id, (await task.refresh()).status);
/// console.log(await task.result(null));
/// ```
#[napi(js_name = "ToolTask")]
pub struct JsToolTask {
    pub(crate) task: ToolTask,
}

#[napi]
impl JsToolTask {
    /// The task's id; `null` when the server answered at once.
    #[napi(getter)]
    pub fn id(&self) -> Option<String> {
        self.task.id().map(str::to_owned)
    }

    /// The last state seen (a task as `tasks/get` gives it), or the result
    /// when there was no task.
    #[napi(getter, ts_return_type = "any")]
    pub fn last(&self) -> Value {
        self.task.last()
    }

    /// `tasks/get` now.
    #[napi(ts_return_type = "Promise<any>")]
    pub fn refresh<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        let task = self.task.clone();
        spawn(env, async move { task.refresh().await }, Ok)
    }

    /// `tasks/update` with `responses` (input responses by request key).
    #[napi(
        ts_args_type = "responses: Record<string, any>",
        ts_return_type = "Promise<void>"
    )]
    pub fn respond<'env>(&self, env: &'env Env, responses: Value) -> napi::Result<Object<'env>> {
        let Value::Object(responses) = responses else {
            return Err(napi::Error::new(
                Status::InvalidArg,
                "responses must be an object of answers by request key",
            ));
        };
        let task = self.task.clone();
        spawn(env, async move { task.respond(responses).await }, Ok)
    }

    /// `tasks/cancel`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn cancel<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        let task = self.task.clone();
        spawn(env, async move { task.cancel().await }, Ok)
    }

    /// Follows the task to its end and answers with the tool's result;
    /// cancelling `cancel` stops following and cancels the task (dropping
    /// the follow sends `tasks/cancel`). `onState(state)` is called with
    /// the task's state each time its status or status message changes,
    /// in order, all before the promise settles.
    #[napi(
        ts_args_type = "cancel?: CancelToken | null, onState?: ((state: any) => unknown) | null",
        ts_return_type = "Promise<any>"
    )]
    pub fn result<'env>(
        &self,
        env: &'env Env,
        cancel: Option<ClassInstance<'_, CancelToken>>,
        on_state: Option<Function<'_, Value, Unknown<'static>>>,
    ) -> napi::Result<Object<'env>> {
        let task = self.task.clone();
        let mut options = CallOptions {
            cancel: cancel.map(|c| c.token.clone()),
            ..CallOptions::default()
        };
        let relay = on_state.map(JsRelay::new).transpose()?;
        if let Some(relay) = &relay {
            let relay = relay.clone();
            options.on_task_state = Some(Arc::new(move |state: &Value| relay.send(state.clone())));
        }
        spawn(
            env,
            async move {
                let result = task.result_with(&options).await;
                if let Some(relay) = relay {
                    relay.delivered().await;
                }
                Ok(serde_json::to_value(CallResult::CallTool(result?))?)
            },
            Ok,
        )
    }
}

/// `startToolTask`'s arguments, as the wire has them.
pub(crate) fn tool_arguments(arguments: Option<Value>) -> Result<Value, String> {
    match arguments {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(value @ Value::Object(_)) => Ok(value),
        Some(_) => Err("arguments must be an object".into()),
    }
}
