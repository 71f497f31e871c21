//! Async work for JS callers: it runs on ferromcp's one tokio runtime and
//! settles a JS promise when done.
//!
//! napi's own async support (`tokio_rt`) would start a second runtime when
//! the addon loads; instead, a `JsDeferred` carries the outcome back to the
//! JS thread. While the promise is pending its deferred keeps the event loop
//! alive (a running server should keep the process running); once settled,
//! nothing from this module holds the loop.

use std::future::Future;

use napi::bindgen_prelude::Object;
use napi::{Env, Status};

use crate::error;

/// Runs `work` on the ferromcp runtime and returns a promise of its outcome:
/// resolved with `undefined`, or rejected with an `McpError`.
pub(crate) fn spawn_promise<'env, F>(env: &'env Env, work: F) -> napi::Result<Object<'env>>
where
    F: Future<Output = Result<(), ferromcp::Error>> + Send + 'static,
{
    let (deferred, promise) = env.create_deferred()?;
    let runtime = ferromcp::runtime::handle();
    let worker = runtime.clone();
    runtime.spawn(async move {
        // A separate task, so that a panic in `work` is reported through the
        // join handle instead of dropping the deferred unsettled, which
        // would leave the promise pending and the process alive forever.
        let outcome = worker.spawn(work).await;
        deferred.resolve(move |env| match outcome {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(error::to_js(&env, &e)),
            Err(join) => Err(napi::Error::new(
                Status::GenericFailure,
                format!("ferromcp internal error: {join}"),
            )),
        });
    });
    Ok(promise)
}
