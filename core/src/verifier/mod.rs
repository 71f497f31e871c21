//! A ready [`TokenVerifier`](crate::server::auth::TokenVerifier) for the
//! common case: [`JwtVerifier`], JWT access tokens signed by the
//! authorization server and checked against its published keys.
//!
//! Its own module above `server` and `client`: it implements the server's
//! verifier interface with the client's HTTP and TLS stack (to fetch the
//! issuer's metadata and keys), and neither of those layers may import the
//! other. One job per file: `jwt` checks a token, `jwks` holds the keys.

mod jwks;
mod jwt;

pub use jwt::JwtVerifier;
