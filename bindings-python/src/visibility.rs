//! A Python visibility rule behind core's [`VisibilityRule`].
//!
//! Core asks the rule once per request, with every item the request needs
//! judged, and never while it holds the server's registry lock. The rule is
//! a plain callable `rule(caller, items) -> verdicts`: `caller` is core's
//! description of who asks ([`caller_value`], a dict), `items` a list of
//! `(kind, key)` pairs, and the verdicts one per item, in order. It runs
//! where plain handlers run ([`host_call::with_gil`]: a Python worker
//! thread, never a runtime worker waiting for the GIL), with the GIL taken
//! once for the whole list. A verdict that is an exception stands for a
//! rule that raised on that item: the item is hidden and the exception
//! goes to `sys.unraisablehook`; so does an exception of the call itself,
//! which hides every item (core fails closed the same way when a rule
//! panics, or answers too few verdicts).

use std::collections::HashSet;
use std::sync::Arc;

use pyo3::exceptions::{PyBaseException, PyValueError};
use pyo3::prelude::*;
use serde_json::{Map, Value};

use ferromcp::host::caller::caller_value;
use ferromcp::server::{BoxFuture, RequestMeta, VisibilityRule, VisibleItem};

use crate::host_call;
use crate::refs::{HandlerKey, HandlerKind, PyRefs};
use crate::{telemetry, values};

/// Sets `rule(caller, items) -> verdicts` as `server`'s visibility rule.
/// With `items` (`(kind, key)` pairs), it is asked only about those: the
/// others are visible without taking the GIL.
pub(crate) fn set(
    server: &ferromcp::server::Server,
    refs: &Arc<PyRefs>,
    rule: Bound<'_, PyAny>,
    items: Option<Vec<(String, String)>>,
) -> PyResult<()> {
    crate::primitives::callable(&rule)?;
    let only = items
        .map(|pairs| pairs.into_iter().map(item).collect::<PyResult<_>>())
        .transpose()?;
    refs.set_handler(HandlerKind::Visibility, "", rule.unbind());
    server.set_visibility(PyVisibility {
        key: (HandlerKind::Visibility, Arc::from("")),
        refs: refs.clone(),
        only,
    });
    Ok(())
}

/// Takes `server`'s visibility rule away.
pub(crate) fn clear(server: &ferromcp::server::Server, refs: &PyRefs) {
    server.clear_visibility();
    refs.remove_handler(HandlerKind::Visibility, "");
}

/// Reads a `(kind, key)` pair as Python names it.
fn item((kind, key): (String, String)) -> PyResult<VisibleItem> {
    Ok(match kind.as_str() {
        "tool" => VisibleItem::Tool(key),
        "prompt" => VisibleItem::Prompt(key),
        "resource" => VisibleItem::Resource(key),
        "resource_template" => VisibleItem::ResourceTemplate(key),
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown item kind {other:?}: use \"tool\", \"prompt\", \"resource\" or \"resource_template\""
            )));
        }
    })
}

/// How Python names an item's kind.
fn kind_of(item: &VisibleItem) -> &'static str {
    match item {
        VisibleItem::Tool(_) => "tool",
        VisibleItem::Prompt(_) => "prompt",
        VisibleItem::Resource(_) => "resource",
        VisibleItem::ResourceTemplate(_) => "resource_template",
    }
}

/// The Python rule stored in `refs` under `key`.
struct PyVisibility {
    key: HandlerKey,
    refs: Arc<PyRefs>,
    /// `Some`: the only items the rule is asked about.
    only: Option<HashSet<VisibleItem>>,
}

impl VisibilityRule for PyVisibility {
    fn judge(&self, caller: &RequestMeta, items: Vec<VisibleItem>) -> BoxFuture<Vec<bool>> {
        let mut verdicts = vec![true; items.len()];
        // The items the rule is asked about, and their places.
        let (places, asked): (Vec<usize>, Vec<(&'static str, String)>) = items
            .into_iter()
            .enumerate()
            .filter(|(_, item)| self.only.as_ref().is_none_or(|only| only.contains(item)))
            .map(|(place, item)| (place, (kind_of(&item), item.key().to_owned())))
            .unzip();
        if asked.is_empty() {
            return Box::pin(std::future::ready(verdicts));
        }
        let trace = telemetry::on().then(|| caller.trace.clone()).flatten();
        let caller = caller_value(caller);
        let (key, refs) = (self.key.clone(), self.refs.clone());
        Box::pin(async move {
            // Not run (the interpreter is shutting down): hidden.
            let answers = host_call::with_gil(move |py| {
                let _attached = telemetry::attach(py, trace.as_ref());
                ask(py, &refs, &key, caller, asked)
            })
            .await
            .unwrap_or_default();
            for (n, place) in places.into_iter().enumerate() {
                verdicts[place] = answers.get(n).copied().unwrap_or(false);
            }
            verdicts
        })
    }
}

/// Calls the rule under `key` once with the caller and every item; its
/// verdicts, fewer (hidden) when it raised.
fn ask(
    py: Python<'_>,
    refs: &PyRefs,
    key: &HandlerKey,
    caller: Map<String, Value>,
    items: Vec<(&'static str, String)>,
) -> Vec<bool> {
    // A cleared server (collected) has no rule left: hidden.
    let Some(rule) = refs.handler(py, key) else {
        return Vec::new();
    };
    let rule = rule.bind(py);
    let verdicts = values::to_python(py, &caller)
        .and_then(|caller| rule.call1((caller, items)))
        .and_then(|answers| {
            answers
                .try_iter()?
                .map(|answer| {
                    let answer = answer?;
                    if answer.is_instance_of::<PyBaseException>() {
                        PyErr::from_value(answer).write_unraisable(py, Some(rule));
                        return Ok(false);
                    }
                    answer.is_truthy()
                })
                .collect()
        });
    verdicts.unwrap_or_else(|e| {
        e.write_unraisable(py, Some(rule));
        Vec::new()
    })
}
