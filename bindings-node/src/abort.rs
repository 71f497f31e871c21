//! How a JS handler's `ctx.signal` learns that core stopped waiting for it.
//!
//! Core drops a handler's future when the client cancels the request, goes
//! away, or (2026-07-28) when the handler asked for input the request does
//! not carry and the round ends. The facade creates an `AbortController`
//! only for a handler that reads `ctx.signal`; that call's context is then
//! *watched*: when core lets go of the call, one shared threadsafe function
//! tells the facade the watch id and whether the call was abandoned (abort
//! the signal) or completed (just forget the controller). Calls that never
//! read `ctx.signal` cost nothing here.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use napi::bindgen_prelude::{FnArgs, Function};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Status};
use napi_derive::napi;

/// `(watchId, aborted)`. Weak: it must never keep the event loop alive.
type AbortHook =
    ThreadsafeFunction<FnArgs<(u32, bool)>, (), FnArgs<(u32, bool)>, Status, false, true>;

thread_local! {
    /// The facade's hook, per JS thread (a worker thread loads its own
    /// facade), with the env that registered it.
    static HOOK: RefCell<Option<(usize, Arc<AbortHook>)>> = const { RefCell::new(None) };
}

/// Watch ids; they only need to be unique among the live watches of one
/// JS thread, and wrap around after 4 billion.
static NEXT_ID: AtomicU32 = AtomicU32::new(1);

/// Registers `hook(watchId, aborted)`, called once for every watched call
/// when core lets go of it. The facade calls this once when it loads.
///
/// @internal Used by the `ferromcp` package itself.
#[cfg_attr(test, allow(dead_code))]
#[napi(ts_args_type = "hook: (watchId: number, aborted: boolean) => void")]
pub fn register_abort_hook(
    env: &Env,
    hook: Function<'_, FnArgs<(u32, bool)>, ()>,
) -> napi::Result<()> {
    let hook: AbortHook = hook.build_threadsafe_function().weak::<true>().build()?;
    HOOK.with(|slot| *slot.borrow_mut() = Some((env.raw() as usize, Arc::new(hook))));
    Ok(())
}

/// One watched call: told once, when the call is released.
pub(crate) struct Watch {
    id: u32,
    hook: Arc<AbortHook>,
}

impl Watch {
    /// A new watch through the hook registered on this JS thread by `env`,
    /// if any. Must run on the JS thread.
    pub(crate) fn new(env: &Env) -> Option<Watch> {
        let hook = HOOK.with(|slot| {
            let slot = slot.borrow();
            let (owner, hook) = slot.as_ref()?;
            (*owner == env.raw() as usize).then(|| hook.clone())
        })?;
        Some(Watch {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            hook,
        })
    }

    /// The id the facade keys its controller by.
    pub(crate) fn id(&self) -> u32 {
        self.id
    }

    /// Tells the facade the call is over; `aborted` when core gave up on it
    /// before it completed. Any thread.
    pub(crate) fn finish(self, aborted: bool) {
        // Not queued only while the env shuts down, when nobody waits on
        // the signal any more.
        let _ = self.hook.call(
            FnArgs::from((self.id, aborted)),
            ThreadsafeFunctionCallMode::NonBlocking,
        );
    }
}
