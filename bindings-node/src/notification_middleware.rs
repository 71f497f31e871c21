//! Notification middleware: a JS function as a link of core's chain that
//! sees the notifications a server or a client receives
//! (`server.useNotifications(hook)`, `client.useNotifications(hook)`),
//! through core's `Middleware::notification` and
//! `ClientMiddleware::notification`. Requests pass such a link straight on.
//!
//! Threads: core calls the hook synchronously, in arrival order, on the
//! runtime task that reads the connection, and acts on its answer at once
//! (go on, changed or not, or stop). The JS function runs on the JS thread,
//! so the runtime thread queues the call (a weak threadsafe function, never
//! blocking to queue) and waits for its synchronous answer, at most
//! [`WAIT`]: the answer comes back over a channel the JS thread sends on
//! itself, not through the runtime, so a runtime whose workers are all busy
//! cannot hold it back. On the runtime's workers the wait is
//! `block_in_place`, which hands the worker's other tasks to another thread
//! meanwhile (as `oauth.rs`'s token store does).
//!
//! Why this cannot deadlock: the JS thread never waits for the runtime
//! here (every call of the package into core that waits is a promise; the
//! synchronous ones only take short locks that the delivering task does
//! not hold while it waits), and even if it did, or if it is busy with
//! synchronous work, the wait ends after [`WAIT`]. Past it, and when the
//! function throws, returns a promise or gives params that are not JSON,
//! the notification passes on unchanged and a warning is logged (core's
//! `tracing`, which the package's logger receives). A call that comes too
//! late is not made: the hook never sees a notification whose fate was
//! already decided without it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, sync_channel};
use std::time::Duration;

use ferromcp::host::notification_link::NotificationLink;
use ferromcp::protocol::jsonrpc::ReceivedNotification;
use napi::bindgen_prelude::{FnArgs, Function};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Status, Unknown};
use napi_derive::napi;
use serde_json::{Value, json};

use crate::client::JsClient;
use crate::server::JsServer;

/// How long the delivering thread waits for the JS function's answer.
pub(crate) const WAIT: Duration = Duration::from_millis(1000);

/// `(note, late)`: the notification `{ method, params }`, and whether its
/// fate was decided already (the facade's adapter then returns at once
/// without calling the user's function).
type HookArgs = FnArgs<(Value, bool)>;

/// The facade's adapter, callable from any thread; weak: it never keeps
/// the event loop alive.
type Hook = ThreadsafeFunction<Pending, Unknown<'static>, HookArgs, Status, false, true>;

/// One notification waiting for the JS thread.
struct Pending {
    note: Value,
    /// Set by the waiting thread when it stopped waiting.
    gave_up: Arc<AtomicBool>,
}

/// What the JS function decided.
enum Answer {
    /// Go on with these params.
    Pass(Value),
    /// Stop the notification here.
    Stop,
    /// Go on unchanged, with a warning saying why.
    Unchanged(String),
}

/// A JS notification hook, shared by a server's link and a client's.
struct NotificationHook {
    hook: Hook,
    /// `"server"` or `"client"`, for warnings.
    side: &'static str,
}

impl NotificationHook {
    fn new(
        hook: Function<'_, HookArgs, Unknown<'static>>,
        side: &'static str,
    ) -> napi::Result<Self> {
        let hook = hook
            .build_threadsafe_function::<Pending>()
            .weak::<true>()
            .build_callback(|ctx| {
                let Pending { note, gave_up } = ctx.value;
                Ok(FnArgs::from((note, gave_up.load(Ordering::Acquire))))
            })?;
        Ok(NotificationHook { hook, side })
    }

    /// Asks the JS function about `method` with `params` and waits for its
    /// answer, at most [`WAIT`].
    fn ask(&self, method: &str, params: Value) -> Answer {
        let (sender, receiver) = sync_channel::<Answer>(1);
        let gave_up = Arc::new(AtomicBool::new(false));
        let pending = Pending {
            note: json!({ "method": method, "params": params }),
            gave_up: gave_up.clone(),
        };
        let queued = self.hook.call_with_return_value(
            pending,
            ThreadsafeFunctionCallMode::NonBlocking,
            move |returned, _env| {
                // The waiting thread may be gone (it gave up): nothing to do.
                let _ = sender.send(read_answer(returned));
                Ok(())
            },
        );
        if queued != Status::Ok {
            // The JS environment is shutting down.
            return Answer::Unchanged(format!("the hook cannot be called ({queued})"));
        }
        match wait(&receiver) {
            Ok(answer) => answer,
            Err(RecvTimeoutError::Timeout) => {
                gave_up.store(true, Ordering::Release);
                Answer::Unchanged(format!(
                    "the hook did not answer within {} ms (the JavaScript thread is busy or blocked)",
                    WAIT.as_millis()
                ))
            }
            // The call was dropped unmade (the environment went away).
            Err(RecvTimeoutError::Disconnected) => Answer::Unchanged(
                "the hook was not called (the JavaScript environment is gone)".into(),
            ),
        }
    }
}

/// Waits for the answer; on a worker of a multi-thread runtime through
/// `block_in_place`, so the worker's other tasks move to another thread
/// meanwhile (elsewhere `block_in_place` would panic, and is not needed).
fn wait(receiver: &Receiver<Answer>) -> Result<Answer, RecvTimeoutError> {
    let on_worker = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if on_worker {
        tokio::task::block_in_place(|| receiver.recv_timeout(WAIT))
    } else {
        receiver.recv_timeout(WAIT)
    }
}

/// The adapter's answer: `{ stop: true }`, `{ params }`, `{ fault }` (the
/// user's function threw or returned a promise), or `null` (called late).
fn read_answer(returned: napi::Result<Unknown<'static>>) -> Answer {
    let returned = match returned.and_then(crate::values::from_js) {
        Ok(value) => value,
        Err(error) => {
            return Answer::Unchanged(format!(
                "the hook's answer has no JSON form: {}",
                error.reason
            ));
        }
    };
    if returned["stop"] == Value::Bool(true) {
        return Answer::Stop;
    }
    if let Some(fault) = returned["fault"].as_str() {
        return Answer::Unchanged(fault.to_owned());
    }
    match returned {
        Value::Object(mut answer) if answer.contains_key("params") => {
            Answer::Pass(answer.remove("params").unwrap_or(Value::Null))
        }
        _ => Answer::Unchanged("the hook gave no answer".into()),
    }
}

/// Logs why a notification went on unchanged.
fn warn(side: &str, method: &str, why: &str) {
    tracing::warn!(
        target: "ferromcp_node::notifications",
        "{side} notification hook on {method}: {why}; the notification goes on unchanged"
    );
}

impl NotificationHook {
    /// Core's hook (server and client alike): the JS answer, or the
    /// notification unchanged with a warning. A server's params that are
    /// not an object are refused by core (`Server::pass_notification`).
    fn notification(&self, notification: &mut ReceivedNotification) -> bool {
        match self.ask(&notification.method, notification.params.clone()) {
            Answer::Stop => false,
            Answer::Pass(params) => {
                notification.params = params;
                true
            }
            Answer::Unchanged(why) => {
                warn(self.side, &notification.method, &why);
                true
            }
        }
    }
}

#[napi]
impl JsServer {
    /// Adds a notification hook at the end of the middleware chain:
    /// `hook(note, late)` is called on the JS thread for each notification
    /// the server receives, before the server acts on it, with `note` =
    /// `{ method, params }`; it answers synchronously `{ stop: true }`,
    /// `{ params }` (go on with them) or `{ fault }` (go on unchanged, with
    /// a warning). `late`: the notification went on without it; return at
    /// once. Requests pass the link straight on.
    ///
    /// @internal The facade's `server.useNotifications(hook)` calls it with
    /// an adapter.
    #[napi(
        ts_args_type = "hook: (note: { method: string; params: Record<string, unknown> }, late: boolean) => unknown"
    )]
    pub fn use_notification_link(
        &self,
        hook: Function<'_, HookArgs, Unknown<'static>>,
    ) -> napi::Result<()> {
        let hook = NotificationHook::new(hook, "server")?;
        self.server
            .add_middleware(NotificationLink(move |note: &mut ReceivedNotification| {
                hook.notification(note)
            }));
        Ok(())
    }
}

#[napi]
impl JsClient {
    /// Adds a notification hook at the end of the client's middleware
    /// chain: as the server's (`Server.useNotificationLink`), for the
    /// notifications the client receives, before its callbacks and listen
    /// streams; `params` is any JSON value (`null` without).
    ///
    /// @internal The facade's `client.useNotifications(hook)` calls it with
    /// an adapter.
    #[napi(
        ts_args_type = "hook: (note: { method: string; params: unknown }, late: boolean) => unknown"
    )]
    pub fn use_notification_link(
        &self,
        hook: Function<'_, HookArgs, Unknown<'static>>,
    ) -> napi::Result<()> {
        let hook = NotificationHook::new(hook, "client")?;
        self.client
            .add_middleware(NotificationLink(move |note: &mut ReceivedNotification| {
                hook.notification(note)
            }));
        Ok(())
    }
}
