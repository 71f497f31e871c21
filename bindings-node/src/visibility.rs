//! Per-caller visibility (core's `Server::set_visibility`) for JS: which
//! tools, prompts, resources and templates each caller sees. Lists, the
//! "hidden is unknown" errors and the private cache scope of filtered
//! lists are core's; this file only answers core's question "may this
//! caller see this item?".
//!
//! The difficulty: core asks synchronously, while it holds its registry
//! lock, on whichever runtime thread serves the request, and a JS function
//! can only run on the JS thread. Blocking a runtime thread on the JS
//! thread for every item of every list would be slow (one thread hop per
//! item) and can stall: a JS thread registering a tool at that moment
//! waits for the registry lock the runtime thread holds while it waits for
//! the JS thread. So there are two kinds of rules, and JS is never waited
//! for in the common case:
//!
//! - **Data rules** (`visible: { scopes, clients, subjects }` of a
//!   registration) are evaluated here, in Rust, from the request's meta:
//!   no JS at all.
//! - **JS predicates** (`server.visibility((ctx, item) => boolean)` and
//!   `visible: (ctx) => boolean`) are evaluated *before* core needs them:
//!   a middleware link ([`Precompute`]), kept last in the chain so that
//!   it sees the params as the primitive will, asks the JS side,
//!   asynchronously and in one call, for the verdicts on the items the
//!   request can make core ask about (a list: every item of its kind; a
//!   call or a prompt get: the item named; a read: the resource and every
//!   template...), then runs the primitive with the verdicts in a
//!   task-local, where core's synchronous rule reads them. A list's items
//!   are the ones registered through this binding, plus those learned
//!   below.
//! - Core may still ask about an item this binding never registered and
//!   has not seen yet (one a `mount()` or `addSkills()` added inside
//!   core), or outside a request that went through the link. Only then
//!   does the rule call the JS side and block for the answer, with a
//!   timeout ([`FALLBACK_TIMEOUT`]); never on the JS thread itself, and
//!   failing closed (hidden) on a timeout, an error, a throwing predicate,
//!   or a predicate answering with a promise. The item is then known, and
//!   later requests get its verdict in advance.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use ferromcp::protocol::methods::{
    COMPLETION_COMPLETE, PROMPTS_GET, PROMPTS_LIST, RESOURCES_LIST, RESOURCES_READ,
    RESOURCES_TEMPLATES_LIST, TOOLS_CALL, TOOLS_LIST,
};
use ferromcp::server::{
    BoxFuture, FromHost, Middleware, MiddlewareRequest, MiddlewareResult, Next, OutputError,
    RequestMeta, Visible,
};
use napi::Status;
use napi::bindgen_prelude::FnArgs;
use napi_derive::napi;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::context;
use crate::host_call::{self, HostFunction, HostOutput, JsCallback};
use crate::server::JsServer;

/// How long core's rule waits for the JS side in the rare blocking case.
const FALLBACK_TIMEOUT: Duration = Duration::from_secs(1);
/// After a timeout, how long blocking asks fail closed at once (the JS
/// thread is busy or waiting for core's lock: asking again would stall
/// every item of a list).
const STALL: Duration = Duration::from_secs(1);
/// At most this many items learned from core's questions are kept.
const MAX_LEARNED: usize = 10_000;

tokio::task_local! {
    /// The JS verdicts of the request being served, set by [`Precompute`].
    static VERDICTS: Arc<Verdicts>;
}

/// A kind of item, as the facade and `requireScopes` name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    Tool = 0,
    Prompt = 1,
    Resource = 2,
    Template = 3,
}

impl Kind {
    pub(crate) fn parse(kind: &str) -> napi::Result<Kind> {
        match kind {
            "tool" => Ok(Kind::Tool),
            "prompt" => Ok(Kind::Prompt),
            "resource" => Ok(Kind::Resource),
            "resourceTemplate" => Ok(Kind::Template),
            other => Err(napi::Error::new(
                Status::InvalidArg,
                format!("unknown kind {other:?}"),
            )),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
            Kind::Template => "resourceTemplate",
        }
    }

    fn of(item: Visible<'_>) -> (Kind, &str) {
        match item {
            Visible::Tool(key) => (Kind::Tool, key),
            Visible::Prompt(key) => (Kind::Prompt, key),
            Visible::Resource(key) => (Kind::Resource, key),
            Visible::ResourceTemplate(key) => (Kind::Template, key),
        }
    }
}

/// A registration's `visible` as data, evaluated in Rust: every condition
/// given must hold.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct DataRule {
    /// The caller's access token carries every one of these scopes.
    #[serde(default)]
    scopes: Vec<String>,
    /// The caller's `clientInfo.name` is one of these.
    clients: Option<Vec<String>>,
    /// The token's subject (`sub`) is one of these.
    subjects: Option<Vec<String>>,
}

impl DataRule {
    fn allows(&self, meta: &RequestMeta) -> bool {
        let auth = meta.auth.as_deref();
        if !self.scopes.is_empty()
            && !auth.is_some_and(|auth| self.scopes.iter().all(|s| auth.scopes.contains(s)))
        {
            return false;
        }
        if let Some(subjects) = &self.subjects
            && !auth
                .and_then(|auth| auth.subject.as_ref())
                .is_some_and(|subject| subjects.contains(subject))
        {
            return false;
        }
        if let Some(clients) = &self.clients {
            #[derive(Deserialize)]
            struct Named {
                name: String,
            }
            let name = meta
                .client_info
                .as_ref()
                .and_then(|info| serde_json::from_str::<Named>(info.get()).ok());
            if !name.is_some_and(|named| clients.contains(&named.name)) {
                return false;
            }
        }
        true
    }
}

/// Every rule of one server, by kind.
#[derive(Default)]
struct Rules {
    data: [HashMap<String, DataRule>; 4],
    /// Keys with a JS predicate of their own (the function is the facade's).
    own: [HashSet<String>; 4],
    /// Keys the server-wide predicate is asked about in advance.
    known: [HashSet<String>; 4],
    /// How many of `known` were learned from core's questions.
    learned: usize,
    /// Whether a server-wide JS predicate is set.
    every: bool,
}

impl Rules {
    fn any(&self) -> bool {
        self.every
            || self.data.iter().any(|rules| !rules.is_empty())
            || self.own.iter().any(|keys| !keys.is_empty())
    }

    fn judged_by_js(&self, kind: Kind, key: &str) -> bool {
        self.every || self.own[kind as usize].contains(key)
    }
}

/// A server's visibility: its rules, the JS evaluator, and how core's rule
/// is doing.
pub(crate) struct Visibility {
    rules: RwLock<Rules>,
    /// The facade's `(ctx, items) => boolean[]`, set once.
    evaluator: OnceLock<JsCallback>,
    /// The thread the evaluator runs on (the JS thread), never blocked on.
    js_thread: OnceLock<ThreadId>,
    /// Until when blocking asks fail closed at once (after a timeout).
    stalled_until: Mutex<Option<Instant>>,
    /// Whether core's rule is set on the server.
    installed: AtomicBool,
    /// The generation of the [`Precompute`] link that is last in the
    /// chain (0: none yet); earlier ones let requests through.
    generation: AtomicU64,
}

impl Visibility {
    pub(crate) fn new() -> Arc<Visibility> {
        Arc::new(Visibility {
            rules: RwLock::new(Rules::default()),
            evaluator: OnceLock::new(),
            js_thread: OnceLock::new(),
            stalled_until: Mutex::new(None),
            installed: AtomicBool::new(false),
            generation: AtomicU64::new(0),
        })
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Rules> {
        // Only map and flag updates happen under the lock.
        self.rules
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Rules> {
        self.rules
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Notes that the binding registered (`true`) or removed an item:
    /// known items are judged in advance. A removed item loses its rules.
    pub(crate) fn registered(&self, kind: Kind, key: &str, present: bool) {
        let mut rules = self.write();
        let slot = kind as usize;
        if present {
            rules.known[slot].insert(key.to_owned());
        } else {
            rules.known[slot].remove(key);
            rules.data[slot].remove(key);
            rules.own[slot].remove(key);
        }
    }

    /// The identity verdicts are checked against (a task-local set by one
    /// server's link must not answer another server's rule).
    fn id(&self) -> usize {
        self as *const Visibility as usize
    }

    /// Core's question: may the caller with `meta` see `item`?
    fn visible(&self, meta: &RequestMeta, item: Visible<'_>) -> bool {
        let (kind, key) = Kind::of(item);
        let judged = {
            let rules = self.read();
            if let Some(rule) = rules.data[kind as usize].get(key)
                && !rule.allows(meta)
            {
                return false;
            }
            rules.judged_by_js(kind, key)
        };
        if !judged {
            return true;
        }
        let id = self.id();
        let known = VERDICTS
            .try_with(|verdicts| (verdicts.owner == id).then(|| verdicts.lookup(kind, key)))
            .ok()
            .flatten();
        match known {
            Some(Lookup::Verdict(visible)) => visible,
            Some(Lookup::Failed) => false,
            Some(Lookup::Missing) | None => self.wait_for_js(meta, kind, key),
        }
    }

    /// The rare case: asks the JS side and blocks for its answer (see the
    /// module documentation). Fails closed.
    fn wait_for_js(&self, meta: &RequestMeta, kind: Kind, key: &str) -> bool {
        // The JS thread cannot wait for itself.
        if self.js_thread.get() == Some(&std::thread::current().id()) {
            return false;
        }
        let Some(evaluator) = self.evaluator.get() else {
            return false;
        };
        {
            let mut stalled = self
                .stalled_until
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match *stalled {
                Some(until) if Instant::now() < until => return false,
                Some(_) => *stalled = None,
                None => {}
            }
        }
        let args = FnArgs::from((
            Value::Object(context::caller_json(meta)),
            json!([{ "kind": kind.name(), "key": key }]),
        ));
        match host_call::call_blocking::<VerdictList, _>(evaluator, args, FALLBACK_TIMEOUT) {
            Some(Ok(VerdictList(verdicts))) => {
                let mut rules = self.write();
                if rules.learned < MAX_LEARNED && rules.known[kind as usize].insert(key.to_owned())
                {
                    rules.learned += 1;
                }
                verdicts.first().copied().unwrap_or(false)
            }
            Some(Err(_)) => false,
            None => {
                *self
                    .stalled_until
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) =
                    Some(Instant::now() + STALL);
                false
            }
        }
    }

    /// The items the JS side judges for `request`: those core can ask
    /// about while serving it, that a JS predicate decides.
    fn judged_items(&self, request: &MiddlewareRequest) -> Vec<(Kind, String)> {
        let rules = self.read();
        let mut items = JudgedItems {
            rules: &rules,
            items: Vec::new(),
            seen: HashSet::new(),
        };
        let param = |name: &str| request.params.get(name).and_then(Value::as_str);
        match request.method.as_str() {
            TOOLS_LIST => items.all(Kind::Tool),
            TOOLS_CALL => items.one(Kind::Tool, param("name")),
            PROMPTS_LIST => items.all(Kind::Prompt),
            PROMPTS_GET => items.one(Kind::Prompt, param("name")),
            RESOURCES_LIST => items.all(Kind::Resource),
            RESOURCES_TEMPLATES_LIST => items.all(Kind::Template),
            // The resource, or whichever template matches the URI.
            RESOURCES_READ => {
                items.one(Kind::Resource, param("uri"));
                items.all(Kind::Template);
            }
            COMPLETION_COMPLETE => {
                let reference = request.params.get("ref");
                let field =
                    |name: &str| reference.and_then(|r| r.get(name)).and_then(Value::as_str);
                match field("type") {
                    Some("ref/prompt") => items.one(Kind::Prompt, field("name")),
                    Some("ref/resource") => {
                        items.one(Kind::Template, field("uri"));
                        items.one(Kind::Resource, field("uri"));
                        items.all(Kind::Template);
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        items.items
    }
}

/// The items of a request the JS side judges, without repeats.
struct JudgedItems<'a> {
    rules: &'a Rules,
    items: Vec<(Kind, String)>,
    seen: HashSet<(Kind, String)>,
}

impl JudgedItems<'_> {
    fn push(&mut self, kind: Kind, key: &str) {
        if self.seen.insert((kind, key.to_owned())) {
            self.items.push((kind, key.to_owned()));
        }
    }

    /// The item named by the request, when a JS predicate decides it
    /// (with a server-wide rule: always, known or not).
    fn one(&mut self, kind: Kind, key: Option<&str>) {
        if let Some(key) = key
            && self.rules.judged_by_js(kind, key)
        {
            self.push(kind, key);
        }
    }

    /// Every item of `kind` a JS predicate decides.
    fn all(&mut self, kind: Kind) {
        let rules = self.rules;
        let keys = if rules.every {
            &rules.known[kind as usize]
        } else {
            &rules.own[kind as usize]
        };
        for key in keys {
            self.push(kind, key);
        }
    }
}

/// The JS verdicts of one request.
struct Verdicts {
    /// The [`Visibility::id`] they were made for.
    owner: usize,
    by_kind: [HashMap<String, bool>; 4],
    /// The evaluator failed: every JS-judged item is hidden.
    failed: bool,
}

enum Lookup {
    Verdict(bool),
    Failed,
    Missing,
}

impl Verdicts {
    fn lookup(&self, kind: Kind, key: &str) -> Lookup {
        if self.failed {
            return Lookup::Failed;
        }
        match self.by_kind[kind as usize].get(key) {
            Some(&visible) => Lookup::Verdict(visible),
            None => Lookup::Missing,
        }
    }
}

/// What the evaluator returns: one boolean per item asked about.
struct VerdictList(Vec<bool>);

impl FromHost for VerdictList {
    const KIND: &'static str = "visibility";

    fn from_host(value: Value) -> Result<Self, OutputError> {
        match value {
            Value::Array(items) => Ok(VerdictList(
                items.iter().map(|v| v.as_bool() == Some(true)).collect(),
            )),
            _ => Err(OutputError {
                kind: Self::KIND,
                reason: "expected a list of booleans".into(),
            }),
        }
    }
}

impl HostOutput for VerdictList {}

/// The link that asks the JS side for a request's verdicts before core
/// needs them (see the module documentation). Only the one added last (of
/// the latest generation) does: it must see the params as the primitive
/// will, after every other link.
struct Precompute {
    state: Arc<Visibility>,
    generation: u64,
}

impl Middleware for Precompute {
    fn handle(&self, request: MiddlewareRequest, next: Next) -> BoxFuture<MiddlewareResult> {
        if self.state.generation.load(Ordering::Acquire) != self.generation {
            return Box::pin(next.run(request));
        }
        let items = self.state.judged_items(&request);
        let Some(evaluator) = self.state.evaluator.get().filter(|_| !items.is_empty()) else {
            return Box::pin(next.run(request));
        };
        let asked = Value::Array(
            items
                .iter()
                .map(|(kind, key)| json!({ "kind": kind.name(), "key": key }))
                .collect(),
        );
        let caller = Value::Object(context::caller_json(&request.meta));
        let call = host_call::call_with::<VerdictList, _>(evaluator, FnArgs::from((caller, asked)));
        let state = self.state.clone();
        Box::pin(async move {
            let mut verdicts = Verdicts {
                owner: state.id(),
                by_kind: Default::default(),
                failed: true,
            };
            if let Ok(VerdictList(list)) = call.await
                && list.len() == items.len()
            {
                verdicts.failed = false;
                for ((kind, key), visible) in items.into_iter().zip(list) {
                    verdicts.by_kind[kind as usize].insert(key, visible);
                }
            }
            VERDICTS.scope(Arc::new(verdicts), next.run(request)).await
        })
    }
}

#[napi]
impl JsServer {
    /// Sets (or with `null` removes) the visibility rule of one item
    /// (`kind` as for `requireScopes`, `key` its name, URI or template):
    /// data (`scopes`: the token carries them all; `clients`: the caller's
    /// `clientInfo.name` is one of them; `subjects`: the token's `sub` is
    /// one of them) evaluated natively, and/or `predicate: true` when the
    /// facade holds a JS predicate for it (see `setVisibilityEvaluator`).
    ///
    /// @internal The facade's `visible` registration option calls it.
    #[napi(
        ts_args_type = "kind: 'tool' | 'resource' | 'resourceTemplate' | 'prompt', key: string, rule: { scopes?: string[]; clients?: string[]; subjects?: string[]; predicate?: boolean } | null"
    )]
    pub fn set_visible(&self, kind: String, key: String, rule: Option<Value>) -> napi::Result<()> {
        let kind = Kind::parse(&kind)?;
        let (data, predicate) = match rule {
            None | Some(Value::Null) => (None, false),
            Some(Value::Object(mut rule)) => {
                let predicate = rule.remove("predicate").and_then(|p| p.as_bool()) == Some(true);
                let data = if rule.is_empty() {
                    None
                } else {
                    Some(
                        serde_json::from_value::<DataRule>(Value::Object(rule)).map_err(|e| {
                            napi::Error::new(
                                Status::InvalidArg,
                                format!(
                                    "visible: {e} (expected {{ scopes?, clients?, subjects? }} of strings, or a function)"
                                ),
                            )
                        })?,
                    )
                };
                (data, predicate)
            }
            Some(_) => {
                return Err(napi::Error::new(
                    Status::InvalidArg,
                    "visible must be an object or a function",
                ));
            }
        };
        {
            let mut rules = self.visibility.write();
            let slot = kind as usize;
            match data {
                Some(data) => rules.data[slot].insert(key.clone(), data),
                None => rules.data[slot].remove(&key),
            };
            if predicate {
                rules.own[slot].insert(key);
            } else {
                rules.own[slot].remove(&key);
            }
        }
        self.sync_visibility();
        Ok(())
    }

    /// Registers the facade's evaluator `(ctx, items) => boolean[]`, which
    /// applies the JS predicates (the server-wide one and each item's own)
    /// to every item of `items` (`{ kind, key }`) for the caller `ctx`
    /// (`auth`, `clientInfo`, `protocolVersion`, `clientCapabilities`,
    /// `headers`). It must answer synchronously; once per server.
    ///
    /// @internal Used by the `ferromcp` package itself.
    #[napi(
        ts_args_type = "evaluate: (ctx: { auth: AuthInfo | null; clientInfo: Record<string, unknown> | null; protocolVersion: string; clientCapabilities: Record<string, unknown>; headers: Record<string, string> }, items: Array<{ kind: 'tool' | 'resource' | 'resourceTemplate' | 'prompt'; key: string }>) => boolean[]"
    )]
    pub fn set_visibility_evaluator(&self, evaluate: HostFunction<'_>) -> napi::Result<()> {
        let state = &self.visibility;
        if state.evaluator.get().is_some() {
            return Err(napi::Error::new(
                Status::InvalidArg,
                "the visibility evaluator is set already",
            ));
        }
        let _ = state.js_thread.set(std::thread::current().id());
        let _ = state.evaluator.set(JsCallback::new(&evaluate)?);
        self.keep_precompute_last();
        Ok(())
    }

    /// Whether the facade holds a server-wide JS predicate, asked about
    /// every item.
    ///
    /// @internal The facade's `server.visibility(rule)` calls it.
    #[napi]
    pub fn set_visibility_rule(&self, enabled: bool) {
        self.visibility.write().every = enabled;
        self.sync_visibility();
    }
}

impl JsServer {
    /// Once JS predicates exist, puts a [`Precompute`] link at the end of
    /// the chain (again after each link added, the earlier one then
    /// letting requests through).
    pub(crate) fn keep_precompute_last(&self) {
        let state = &self.visibility;
        if state.evaluator.get().is_none() {
            return;
        }
        let generation = state.generation.fetch_add(1, Ordering::AcqRel) + 1;
        self.server.add_middleware(Precompute {
            state: state.clone(),
            generation,
        });
    }

    /// Sets core's rule when there is any rule, and takes it away when
    /// there is none (a filtered list is marked private: with no rule the
    /// configured cache scope stands).
    pub(crate) fn sync_visibility(&self) {
        let state = &self.visibility;
        let any = state.read().any();
        if any && !state.installed.swap(true, Ordering::AcqRel) {
            let rule = state.clone();
            self.server
                .set_visibility(move |meta: &RequestMeta, item: Visible<'_>| {
                    rule.visible(meta, item)
                });
        } else if !any && state.installed.swap(false, Ordering::AcqRel) {
            self.server.clear_visibility();
        }
    }
}
