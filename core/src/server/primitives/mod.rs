//! One file per primitive a server answers: what each request's params
//! must be, how its handler runs, and the result it produces. Routing,
//! `_meta` and admission live in [`super::dispatch`]; these functions see
//! an admitted request.
//!
//! What they share is here: running a handler round (panics isolated, the
//! round ended as soon as the handler asks for input the request does not
//! carry), the `InputRequiredResult` that ends such a round, and the caching
//! fields of cacheable results.

mod completion;
mod discover;
mod lists;
mod prompts;
mod resources;
mod skills;
mod tasks;
mod tools;

pub(crate) use skills::SkillMethod;
pub(crate) use tasks::{TaskMethod, task_owner, tasks_required};

use serde_json::{Map, Value};

use super::handler::{BoxFuture, HandlerError};
use super::input::InputRound;
use super::panic::{CatchUnwind, catch_panic, panic_message};
use super::tasks::TaskHandoff;
use super::{CacheHint, Server};
use crate::McpError;

/// How a handler round ended.
pub(crate) enum Ran<O> {
    Done(Result<O, HandlerError>),
    Panicked(String),
    InputRequired,
}

/// A handler's future, its panics caught.
pub(crate) type Running<O> = CatchUnwind<BoxFuture<Result<O, HandlerError>>>;

/// How [`drive_round`] stopped.
pub(crate) enum RoundEnd<O> {
    /// The round ended.
    Ran(Ran<O>),
    /// The handler asked to become a task; its future goes on elsewhere.
    TaskAsked,
}

/// Starts a handler, isolating a panic while its future is built.
fn start_handler<O>(
    start: impl FnOnce() -> BoxFuture<Result<O, HandlerError>>,
) -> Result<Running<O>, Ran<O>> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(start)) {
        Ok(future) => Ok(catch_panic(future)),
        Err(payload) => Err(Ran::Panicked(panic_message(payload.as_ref()))),
    }
}

/// Runs a handler, isolating panics (while building its future or while
/// polling it) and ending the round as soon as it asks for input the
/// request does not carry yet, or with `-32602` once it was given an answer
/// that does not fit its question.
async fn run_handler<O>(
    input: Option<&InputRound>,
    start: impl FnOnce() -> BoxFuture<Result<O, HandlerError>>,
) -> Ran<O> {
    let mut future = match start_handler(start) {
        Ok(future) => future,
        Err(ran) => return ran,
    };
    match drive_round(input, &mut future, None).await {
        RoundEnd::Ran(ran) => ran,
        // Without a handoff nobody can ask.
        RoundEnd::TaskAsked => {
            Ran::Panicked("a task was asked for outside a task-capable call".into())
        }
    }
}

/// Polls a started handler until its round ends, or until it asks through
/// `handoff` to become a task (its future is then left running).
async fn drive_round<O>(
    input: Option<&InputRound>,
    future: &mut Running<O>,
    handoff: Option<&TaskHandoff>,
) -> RoundEnd<O> {
    let outcome = match (input, handoff) {
        (None, None) => future.await,
        (input, handoff) => {
            let out = tokio::select! {
                biased;
                out = &mut *future => Some(out),
                _ = async { match input { Some(round) => round.pending().await, None => std::future::pending().await } } => None,
                _ = async { match handoff { Some(h) => h.asked().await, None => std::future::pending().await } } => {
                    return RoundEnd::TaskAsked;
                }
            };
            match input {
                Some(round) => {
                    // An answer that did not fit ends the request with its
                    // error, whatever the handler did with it and whatever
                    // else is still unanswered: asking again would only
                    // repeat the same question.
                    if let Some(error) = round.invalid_answer() {
                        return RoundEnd::Ran(Ran::Done(Err(HandlerError::Protocol(error))));
                    }
                    match out {
                        Some(_) if round.has_pending() => return RoundEnd::Ran(Ran::InputRequired),
                        Some(out) => out,
                        None => return RoundEnd::Ran(Ran::InputRequired),
                    }
                }
                None => match out {
                    Some(out) => out,
                    None => return RoundEnd::Ran(Ran::InputRequired),
                },
            }
        }
    };
    RoundEnd::Ran(match outcome {
        Ok(result) => Ran::Done(result),
        Err(panic) => Ran::Panicked(panic),
    })
}

impl Server {
    /// The `InputRequiredResult` that ends a round.
    fn input_required(
        &self,
        round: &InputRound,
        params: &Map<String, Value>,
    ) -> Map<String, Value> {
        let options = &self.shared.options;
        round.input_required(params, &options.seal_key, options.request_state_ttl)
    }

    /// How a resource or prompt handler's round ends: its output, the
    /// `InputRequiredResult` (as `Ok(Err(..))`), or a JSON-RPC error (these
    /// have no `isError` result to carry a failure).
    fn non_tool_outcome<O>(
        &self,
        ran: Ran<O>,
        input: Option<&InputRound>,
        params: &Map<String, Value>,
        what: &str,
    ) -> Result<Result<O, Map<String, Value>>, McpError> {
        match ran {
            Ran::InputRequired => Ok(Err(self.input_required(expect_round(input)?, params))),
            Ran::Done(Ok(output)) => Ok(Ok(output)),
            Ran::Done(Err(HandlerError::Protocol(error))) => Err(error),
            Ran::Done(Err(HandlerError::Tool(message))) => Err(McpError::internal(message)),
            Ran::Panicked(panic) => {
                tracing::error!(%what, %panic, "handler panicked");
                Err(McpError::internal(format!("{what} failed: {panic}")))
            }
        }
    }
}

/// A round that ended in `InputRequired` always had an input round.
fn expect_round(input: Option<&InputRound>) -> Result<&InputRound, McpError> {
    input.ok_or_else(|| McpError::internal("input required outside an input-capable request"))
}

/// `ttlMs` and `cacheScope` of a cacheable result.
fn insert_cache_hint(result: &mut Map<String, Value>, hint: CacheHint) {
    result.insert("ttlMs".into(), Value::from(hint.ttl_ms));
    result.insert(
        "cacheScope".into(),
        serde_json::to_value(hint.scope).unwrap_or(Value::from("private")),
    );
}

impl Server {
    /// What `pick` finds in the registry, if the rule lets `caller` see it
    /// (`item` names it to the rule): a hidden item is as absent as one
    /// never added. The registry's lock is let go before the rule judges.
    pub(super) async fn find_shown<T>(
        &self,
        caller: &super::RequestMeta,
        pick: impl FnOnce(&super::registry::Registry) -> Option<T>,
        item: impl FnOnce(&T) -> super::visibility::VisibleItem,
    ) -> Option<T> {
        let (found, rule) = {
            let registry = self.registry_read();
            (pick(&registry), registry.visibility.clone())
        };
        let found = found?;
        super::visibility::shown(rule.as_ref(), caller, item(&found))
            .await
            .then_some(found)
    }
}
