//! Async work for JS callers: it runs on ferromcp's one tokio runtime and
//! settles a JS promise when done.
//!
//! napi's own async support (`tokio_rt`) would start a second runtime when
//! the addon loads; instead, a `JsDeferred` carries the outcome back to the
//! JS thread. While the promise is pending its deferred keeps the event loop
//! alive (a running server should keep the process running); once settled,
//! nothing from this module holds the loop.

use std::future::Future;

use ferromcp::Error;
use napi::bindgen_prelude::{Object, ToNapiValue};
use napi::{Env, Status};

use crate::error;

/// Runs `work` on the ferromcp runtime; the promise resolves with what
/// `done` makes of its output, or rejects with an `McpError`.
pub(crate) fn spawn<'env, T, R, F>(
    env: &'env Env,
    work: F,
    done: impl FnOnce(T) -> napi::Result<R> + Send + 'static,
) -> napi::Result<Object<'env>>
where
    T: Send + 'static,
    R: ToNapiValue + 'static,
    F: Future<Output = Result<T, Error>> + Send + 'static,
{
    let (deferred, promise) = env.create_deferred()?;
    // A client call the facade traces runs in its span (telemetry.rs).
    let work = crate::telemetry::in_next_call(work);
    let runtime = ferromcp::runtime::handle();
    let worker = runtime.clone();
    runtime.spawn(async move {
        // A separate task: a panic is reported through the join handle
        // instead of leaving the promise pending forever.
        let outcome = worker.spawn(work).await;
        deferred.resolve(move |env| match outcome {
            Ok(Ok(value)) => done(value),
            Ok(Err(e)) => Err(error::to_js(&env, &e)),
            Err(join) => Err(napi::Error::new(
                Status::GenericFailure,
                format!("ferromcp internal error: {join}"),
            )),
        });
    });
    Ok(promise)
}

/// [`spawn`] for work with no value: the promise resolves with `undefined`,
/// or rejects with an `McpError`.
pub(crate) fn spawn_promise<'env, F>(env: &'env Env, work: F) -> napi::Result<Object<'env>>
where
    F: Future<Output = Result<(), Error>> + Send + 'static,
{
    spawn(env, work, Ok::<(), napi::Error>)
}
