//! A Python visibility rule behind core's [`VisibilityRule`], and the view
//! of the caller it is given ([`PyCaller`]).
//!
//! Core asks the rule about each item while it holds the server's registry
//! lock, on whichever thread serves the request: the rule is a plain
//! callable, called there with the GIL. That is why every method of the
//! native `Server` that takes the registry lock releases the GIL first
//! (`server.rs`): a thread holding the GIL while it waits for the lock
//! would wait for a rule that waits for the GIL. A rule that raises hides
//! the item (core fails closed the same way when a rule panics), and its
//! exception goes to `sys.unraisablehook`.

use std::collections::HashSet;
use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use ferromcp::server::{RequestMeta, VisibilityRule, Visible};

use crate::refs::{HandlerKey, HandlerKind, PyRefs};
use crate::{context, values};

/// The key of a server's one rule in its [`PyRefs`].
fn rule_key() -> HandlerKey {
    (HandlerKind::Visibility, Arc::from(""))
}

/// Sets `rule(caller, kind, key) -> bool` as `server`'s visibility rule.
/// With `items` (`(kind, key)` pairs), it is asked only about those: the
/// others are visible without taking the GIL.
pub(crate) fn set(
    py: Python<'_>,
    server: &ferromcp::server::Server,
    refs: &Arc<PyRefs>,
    rule: Bound<'_, PyAny>,
    items: Option<Vec<(String, String)>>,
) -> PyResult<()> {
    crate::primitives::callable(&rule)?;
    let only = items.map(Items::read).transpose()?;
    refs.set_handler(HandlerKind::Visibility, "", rule.unbind());
    let rule = PyVisibility {
        key: rule_key(),
        refs: refs.clone(),
        only,
    };
    // Core takes the registry lock: see the module's documentation.
    py.detach(|| server.set_visibility(rule));
    Ok(())
}

/// Takes `server`'s visibility rule away.
pub(crate) fn clear(py: Python<'_>, server: &ferromcp::server::Server, refs: &PyRefs) {
    py.detach(|| server.clear_visibility());
    refs.remove_handler(HandlerKind::Visibility, "");
}

/// The items a rule is asked about, by kind.
#[derive(Default)]
struct Items {
    tools: HashSet<String>,
    prompts: HashSet<String>,
    resources: HashSet<String>,
    templates: HashSet<String>,
}

impl Items {
    fn read(pairs: Vec<(String, String)>) -> PyResult<Self> {
        let mut items = Items::default();
        for (kind, key) in pairs {
            let set = match kind.as_str() {
                "tool" => &mut items.tools,
                "prompt" => &mut items.prompts,
                "resource" => &mut items.resources,
                "resource_template" => &mut items.templates,
                other => {
                    return Err(PyValueError::new_err(format!(
                        "unknown item kind {other:?}: use \"tool\", \"prompt\", \"resource\" or \"resource_template\""
                    )));
                }
            };
            set.insert(key);
        }
        Ok(items)
    }

    fn contains(&self, item: Visible<'_>) -> bool {
        match item {
            Visible::Tool(key) => self.tools.contains(key),
            Visible::Prompt(key) => self.prompts.contains(key),
            Visible::Resource(key) => self.resources.contains(key),
            Visible::ResourceTemplate(key) => self.templates.contains(key),
        }
    }
}

/// How Python names an item's kind, and its key.
fn kind_and_key(item: Visible<'_>) -> (&'static str, &str) {
    match item {
        Visible::Tool(key) => ("tool", key),
        Visible::Prompt(key) => ("prompt", key),
        Visible::Resource(key) => ("resource", key),
        Visible::ResourceTemplate(key) => ("resource_template", key),
    }
}

/// The Python rule stored in `refs` under `key`.
struct PyVisibility {
    key: HandlerKey,
    refs: Arc<PyRefs>,
    /// `Some`: the only items the rule is asked about.
    only: Option<Items>,
}

impl VisibilityRule for PyVisibility {
    fn visible(&self, meta: &RequestMeta, item: Visible<'_>) -> bool {
        if self.only.as_ref().is_some_and(|only| !only.contains(item)) {
            return true;
        }
        // No interpreter any more (it is shutting down): hidden.
        Python::try_attach(|py| self.ask(py, meta, item)).unwrap_or(false)
    }
}

impl PyVisibility {
    fn ask(&self, py: Python<'_>, meta: &RequestMeta, item: Visible<'_>) -> bool {
        // A cleared server (collected) has no rule left: hidden.
        let Some(rule) = self.refs.handler(py, &self.key) else {
            return false;
        };
        let rule = rule.bind(py);
        let (kind, key) = kind_and_key(item);
        let caller = PyCaller { meta: meta.clone() };
        match rule
            .call1((caller, kind, key))
            .and_then(|answer| answer.is_truthy())
        {
            Ok(visible) => visible,
            Err(e) => {
                e.write_unraisable(py, Some(rule));
                false
            }
        }
    }
}

/// Who a request is from, as a visibility rule sees it: the request's
/// meta (`ferromcp.Caller` wraps it).
#[pyclass(module = "ferromcp._native", name = "Caller", frozen)]
pub(crate) struct PyCaller {
    meta: RequestMeta,
}

#[pymethods]
impl PyCaller {
    /// The protocol revision the client spoke.
    #[getter]
    fn protocol_version(&self) -> &str {
        &self.meta.protocol_version
    }

    /// The `clientInfo` the request carried, or `None`.
    #[getter]
    fn client_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        context::client_info(py, &self.meta)
    }

    /// The capabilities the client declared for this request.
    #[getter]
    fn client_capabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        values::to_python_dict(py, &self.meta.client_capabilities)
    }

    /// The verified access token's claims, or `None`.
    #[getter]
    fn auth<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.meta
            .auth
            .as_deref()
            .map(|info| context::auth_dict(py, info))
            .transpose()
    }

    /// The HTTP request's headers; empty over stdio and in memory.
    #[getter]
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        context::headers(py, self.meta.http_headers.as_deref())
    }

    fn __repr__(&self) -> String {
        format!(
            "<ferromcp._native.Caller protocol_version={:?}>",
            self.meta.protocol_version
        )
    }
}
