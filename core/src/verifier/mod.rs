//! A ready [`TokenVerifier`](crate::server::auth::TokenVerifier) for the
//! common case: [`JwtVerifier`], JWT access tokens signed by the
//! authorization server and checked against its published keys.
//!
//! Its own module above `server` and `net`: it implements the server's
//! verifier interface and fetches the issuer's metadata and keys with the
//! shared network layer (its pools, TLS options and well-known URLs), the
//! same the client's OAuth flow uses. One job per file: `jwt` checks a
//! token, `jwks` holds the keys.

mod jwks;
mod jwt;

pub use jwt::JwtVerifier;
