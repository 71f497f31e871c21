//! Hands the outcomes of `async def` handlers back to the runtime in
//! batches, once per turn of the asyncio loop.
//!
//! Each finished task used to answer its core [`Responder`] from its done
//! callback. Every answer wakes a runtime worker, and on a busy machine (or
//! one CPU) the woken worker preempts the loop thread at once: it handles
//! one answer, parks, and the loop thread resumes only to wake it again for
//! the next. That ping-pong made an `async def` tool cost about 2.7x the CPU
//! of a plain `def` one (bench/PERFORMANCE.md). Now the done callbacks of
//! one loop turn put their answers in an outbox, and one callback scheduled
//! behind them (`loop.call_soon`) sends the whole outbox to the runtime as
//! one message: one wake-up per turn, and the runtime delivers every answer
//! of the batch without leaving its thread.
//!
//! The outbox lives in that scheduled callback: if the loop closes before
//! running it, dropping the callback drops the answers, and the requests
//! fail with a handler error instead of waiting forever.

use std::cell::RefCell;
use std::sync::{Arc, Mutex, Weak};

use pyo3::prelude::*;

use crate::loop_dispatch::get_running_loop;
use crate::sync::lock;

/// Answers one request (its `Responder::respond`), on a runtime thread.
pub(crate) type Delivery = ferromcp::runtime::BatchJob;

struct Outbox {
    deliveries: Mutex<Vec<Delivery>>,
}

thread_local! {
    /// The outbox of this thread's loop turn whose flush is scheduled and
    /// has not run yet.
    static PENDING: RefCell<Weak<Outbox>> = const { RefCell::new(Weak::new()) };
}

/// Queues `delivery` for the runtime, sent with every other answer of this
/// loop turn. On the loop thread, holding the GIL.
pub(crate) fn deliver_after_this_turn(py: Python<'_>, delivery: Delivery) {
    if let Some(outbox) = PENDING.with(|pending| pending.borrow().upgrade()) {
        lock(&outbox.deliveries).push(delivery);
        return;
    }
    let outbox = Arc::new(Outbox {
        deliveries: Mutex::new(vec![delivery]),
    });
    let flush = Flush {
        outbox: outbox.clone(),
    };
    let scheduled = get_running_loop(py)
        .and_then(|get| get.call0())
        .and_then(|event_loop| event_loop.call_method1("call_soon", (flush,)));
    match scheduled {
        Ok(_) => PENDING.with(|pending| *pending.borrow_mut() = Arc::downgrade(&outbox)),
        // No running loop (it cannot be: done callbacks run on one) or a
        // closed one: deliver now.
        Err(_) => send(std::mem::take(&mut *lock(&outbox.deliveries))),
    }
}

/// The scheduled callback: sends its outbox.
#[pyclass(module = "ferromcp._native", frozen)]
struct Flush {
    outbox: Arc<Outbox>,
}

#[pymethods]
impl Flush {
    fn __call__(&self) {
        PENDING.with(|pending| {
            let mut pending = pending.borrow_mut();
            if std::ptr::eq(pending.as_ptr(), Arc::as_ptr(&self.outbox)) {
                *pending = Weak::new();
            }
        });
        send(std::mem::take(&mut *lock(&self.outbox.deliveries)));
    }
}

/// Sends a batch to the runtime, which delivers it with one wake-up.
fn send(batch: Vec<Delivery>) {
    ferromcp::runtime::run_batch(batch);
}
