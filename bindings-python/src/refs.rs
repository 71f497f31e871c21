//! [`PyRefs`], every Python object a server (or a client) holds, keyed by
//! [`HandlerKind`] and name: the one table every kind of handler reads its
//! callable from, and the one place the garbage collector looks.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use pyo3::PyTraverseError;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;

use crate::loop_dispatch::LoopDispatcher;
use crate::sync::lock;

/// The kinds of Python callables a server holds. Part of the key of
/// [`PyRefs`]' table, so a tool and a prompt (or a resource) with the same
/// name never replace each other's handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum HandlerKind {
    Tool,
    Resource,
    Prompt,
    Completion,
    /// A client's answer to a server's input request, named by the
    /// capability (`elicitation`, `sampling`, `roots`).
    Input,
    /// A protected server's token verifier (`ferromcp.Protection`).
    Verifier,
    /// A client's OAuth callback (`authorize`, `assertion`) or token store.
    OAuth,
    /// A link of the server's middleware chain (`middleware.rs`).
    Middleware,
    /// The server's visibility rule (`visibility.rs`).
    Visibility,
    /// Not a callable: the native `Server` or `Client` a mount (or a proxy)
    /// serves, or the native `Server` an in-memory client is joined to,
    /// held here so it lives as long as the mount (the client) and the
    /// collector sees it (see `gateway.rs`, `client.rs`).
    Upstream,
}

impl HandlerKind {
    /// How error messages name a handler of this kind.
    pub(crate) fn noun(self) -> &'static str {
        match self {
            HandlerKind::Tool => "tool",
            HandlerKind::Resource => "resource",
            HandlerKind::Prompt => "prompt",
            HandlerKind::Completion => "completion provider",
            HandlerKind::Input => "input handler",
            HandlerKind::Verifier => "token verifier",
            HandlerKind::OAuth => "OAuth callback",
            HandlerKind::Middleware => "middleware",
            HandlerKind::Visibility => "visibility rule",
            HandlerKind::Upstream => "mounted upstream",
        }
    }
}

/// A registered callable: its kind and name.
pub(crate) type HandlerKey = (HandlerKind, Arc<str>);

/// Every Python object a server holds, in one place so the garbage
/// collector can see (and break) cycles through them.
///
/// Lock discipline: these mutexes are only ever held for a map operation,
/// and nothing acquires the GIL while holding one, so a thread holding the
/// GIL can always take them. `traverse` still uses `try_lock` because a GC
/// pass must never block.
#[derive(Default)]
pub(crate) struct PyRefs {
    handlers: Mutex<HashMap<HandlerKey, Py<PyAny>>>,
    /// The serving asyncio loop and its job queue (see [`LoopDispatcher`]).
    event_loop: Mutex<Option<Arc<LoopDispatcher>>>,
    json_default: Mutex<Option<Py<PyAny>>>,
    /// The references of the servers this one is mounted in, by mount key
    /// (`gateway.rs`), and of the in-memory clients joined to it
    /// (`client.rs`): a server is then served only through them, so their
    /// loop runs its async handlers when it has none of its own. Weak: a
    /// mount must not keep the server it is in alive, nor a server its
    /// clients.
    lenders: Mutex<Vec<(String, Weak<PyRefs>)>>,
}

/// How many mounts deep [`PyRefs::loop_dispatcher`] looks for a loop: a
/// chain of servers mounted in each other ends well before, and a cycle
/// (which core would follow without end anyway) must not overflow the stack.
const MAX_MOUNT_DEPTH: usize = 16;

impl PyRefs {
    pub(crate) fn new(json_default: Option<Py<PyAny>>) -> Self {
        PyRefs {
            json_default: Mutex::new(json_default),
            ..PyRefs::default()
        }
    }

    pub(crate) fn set_handler(&self, kind: HandlerKind, name: &str, handler: Py<PyAny>) {
        lock(&self.handlers).insert((kind, Arc::from(name)), handler);
    }

    pub(crate) fn remove_handler(&self, kind: HandlerKind, name: &str) {
        lock(&self.handlers).remove(&(kind, Arc::from(name)));
    }

    pub(crate) fn handler(&self, py: Python<'_>, key: &HandlerKey) -> Option<Py<PyAny>> {
        lock(&self.handlers).get(key).map(|h| h.clone_ref(py))
    }
    pub(crate) fn set_event_loop(&self, event_loop: Py<PyAny>) {
        let mut slot = lock(&self.event_loop);
        if slot
            .as_ref()
            .is_some_and(|d| d.event_loop().as_ptr() == event_loop.as_ptr())
        {
            return;
        }
        let old = slot.replace(Arc::new(LoopDispatcher::new(event_loop)));
        drop(slot);
        if let Some(old) = old {
            old.retire();
        }
    }

    /// Forgets `event_loop` unless another serve call installed a newer one.
    pub(crate) fn release_event_loop(&self, event_loop: &Py<PyAny>) {
        let mut slot = lock(&self.event_loop);
        if slot
            .as_ref()
            .is_some_and(|d| d.event_loop().as_ptr() == event_loop.as_ptr())
            && let Some(old) = slot.take()
        {
            drop(slot);
            old.retire();
        }
    }

    /// The serving loop's dispatcher, or else that of a server this one is
    /// mounted in; needs no GIL.
    pub(crate) fn loop_dispatcher(&self) -> Option<Arc<LoopDispatcher>> {
        self.loop_within(MAX_MOUNT_DEPTH)
    }

    fn loop_within(&self, depth: usize) -> Option<Arc<LoopDispatcher>> {
        if let Some(own) = lock(&self.event_loop).clone() {
            return Some(own);
        }
        let depth = depth.checked_sub(1)?;
        // Upgraded under the lock, searched after it is released: a
        // lender's own lock is taken next. Newest first: of several
        // in-memory clients still open, the latest is the one most likely
        // in use, its loop the one most likely still running (an older
        // client's loop may have stopped without the client being closed).
        let lenders: Vec<Arc<PyRefs>> = lock(&self.lenders)
            .iter()
            .rev()
            .filter_map(|(_, lender)| lender.upgrade())
            .collect();
        lenders.iter().find_map(|lender| lender.loop_within(depth))
    }

    /// This server is mounted (under `key`) in the server of `lender`, or
    /// joined to the in-memory client of `lender`.
    pub(crate) fn add_lender(&self, key: &str, lender: &Arc<PyRefs>) {
        lock(&self.lenders).push((key.to_owned(), Arc::downgrade(lender)));
    }

    /// The mount (or in-memory client) `key` was taken out (closed).
    pub(crate) fn remove_lender(&self, key: &str) {
        lock(&self.lenders).retain(|(held, _)| held != key);
    }

    pub(crate) fn json_default(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        lock(&self.json_default).as_ref().map(|d| d.clone_ref(py))
    }

    pub(crate) fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Ok(handlers) = self.handlers.try_lock() {
            for handler in handlers.values() {
                visit.call(handler)?;
            }
        }
        if let Ok(event_loop) = self.event_loop.try_lock()
            && let Some(dispatcher) = event_loop.as_ref()
        {
            visit.call(dispatcher.event_loop())?;
        }
        if let Ok(default) = self.json_default.try_lock() {
            visit.call(&*default)?;
        }
        Ok(())
    }

    /// Drops every reference (GC `__clear__`); tools then answer with a
    /// tool error instead of calling into Python.
    pub(crate) fn clear(&self) {
        let handlers = std::mem::take(&mut *lock(&self.handlers));
        let event_loop = lock(&self.event_loop).take();
        if let Some(dispatcher) = &event_loop {
            dispatcher.retire();
        }
        let default = lock(&self.json_default).take();
        // Dropped after the locks are released: a decref may run arbitrary
        // Python code (finalizers) that could re-enter this server.
        drop((handlers, event_loop, default));
    }
}
