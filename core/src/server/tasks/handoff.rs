//! A handler turning its own call into a task ([`TaskStart::ByHandler`]):
//! the handler asks, the call's runner creates the task and answers it.
//!
//! [`TaskStart::ByHandler`]: super::TaskStart::ByHandler

use std::sync::{Arc, OnceLock};
use tokio::sync::Notify;

use crate::McpError;
use crate::server::HandlerError;
use crate::server::context::LiveRequester;

/// What a task, once started, gives its handler's context.
pub(crate) struct Started {
    /// Where questions go from then on.
    pub(crate) requester: Arc<dyn LiveRequester>,
}

/// Between a handler's `ctx.start_task()` and the call that runs it.
#[derive(Default)]
pub(crate) struct TaskHandoff {
    /// The handler asked (a stored permit: the call may look later).
    asked: Notify,
    /// Set once the call tried to create the task.
    outcome: OnceLock<Result<Started, McpError>>,
    decided: Notify,
}

impl TaskHandoff {
    /// The task, once it runs.
    pub(crate) fn started(&self) -> Option<&Started> {
        self.outcome.get().and_then(|o| o.as_ref().ok())
    }

    /// The handler's side: asks for the task and waits until it exists.
    pub(crate) async fn request(&self) -> Result<(), HandlerError> {
        let decided = self.decided.notified();
        let mut decided = std::pin::pin!(decided);
        // Registered before asking, so the answer cannot slip past.
        decided.as_mut().enable();
        if self.outcome.get().is_none() {
            self.asked.notify_one();
            decided.await;
        }
        match self.outcome.get() {
            Some(Ok(_)) => Ok(()),
            Some(Err(error)) => Err(HandlerError::Protocol(error.clone())),
            None => Err(HandlerError::Protocol(McpError::internal(
                "the task was neither created nor refused",
            ))),
        }
    }

    /// The call's side: resolves once the handler asked.
    pub(crate) async fn asked(&self) {
        self.asked.notified().await
    }

    /// The call's side: the task exists (or could not be created).
    pub(crate) fn decide(&self, outcome: Result<Started, McpError>) {
        let _ = self.outcome.set(outcome);
        self.decided.notify_waiters();
    }
}
