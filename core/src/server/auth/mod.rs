//! Protected servers (spec 2026-07-28 `basic/authorization`, the resource
//! server side): who a request's bearer token belongs to ([`AuthInfo`]),
//! the host-supplied check that says so ([`TokenVerifier`], or the ready
//! [`JwtVerifier`](crate::verifier::JwtVerifier)), and the scopes each tool, resource or prompt requires
//! ([`ScopeTarget`], `Server::require_scopes`).
//!
//! One job per file: `info` holds the verified claims and the verifier
//! interface, `scopes` the per-primitive requirements and the check,
//! `host` the answer of a verifier written in a binding's language.
//! The HTTP side (protected resource metadata, `WWW-Authenticate`
//! challenges, the gate every request passes) lives in
//! [`crate::transport::http`] (`ProtectedResource`); stdio servers never
//! see any of it.

mod host;
mod info;
mod scopes;

pub use host::HostVerdict;
pub use info::{AuthInfo, TokenError, TokenRequest, TokenVerifier};
pub(crate) use scopes::RequiredScopes;
pub use scopes::{ScopeCheck, ScopeTarget};
