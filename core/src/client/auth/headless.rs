//! Authorizing without a browser, for an authorization server that approves
//! without a login page (test servers, the conformance suite's mock): the
//! redirect the authorization URL answers with is the one a browser would
//! have been sent to.

use super::AuthError;
use crate::Error;
use crate::net::TlsOptions;
use crate::net::fetch::Fetcher;

/// Requests an authorization URL and returns where it redirects, without
/// following it: what a browser would be sent to, carrying `code`, `state`
/// and `iss`. For headless use against an authorization server that
/// approves without a login page (test servers, the conformance suite's
/// mock); a real user authorizes in a browser instead.
///
/// ```no_run
/// # async fn demo() -> Result<(), ferromcp::Error> {
/// use ferromcp::client::auth::headless_authorize;
/// let redirect = headless_authorize("http://127.0.0.1:9000/authorize?client_id=x", &Default::default()).await?;
/// assert!(redirect.contains("code="));
/// # Ok(()) }
/// ```
pub async fn headless_authorize(url: &str, tls: &TlsOptions) -> Result<String, Error> {
    let answer = Fetcher::new(tls.clone()).get(url).await?;
    match (answer.status, answer.location) {
        (300..=399, Some(location)) => Ok(location),
        (status, _) => Err(AuthError::Interaction(format!(
            "the authorization endpoint answered HTTP {status} without a redirect"
        ))
        .into()),
    }
}
