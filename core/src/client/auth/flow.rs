//! Runs the pieces in order when the MCP endpoint refuses a request:
//! discovery, registration, the authorization-code flow (or a refresh),
//! and keeps the token the transport sends.

use crate::client::deadline::InteractionClock;
use std::sync::RwLock;

use super::challenge::Challenge;
use super::dpop::DpopKey;
use super::metadata::{ResourceMetadata, ServerMetadata};
use super::pkce::{Pkce, random_token};
use super::registration::Purpose;
use super::store::{ClientCredentials, StoredTokens};
use super::{AuthError, Grant, OAuthOptions, registration, scope, token};
use crate::Error;
use crate::net::TlsOptions;
use crate::net::fetch::Fetcher;
use crate::net::urls;
use crate::rpc::{read_unpoisoned, write_unpoisoned};

/// Whether a response is one the authorizer answers: any 401, and a 403
/// asking for more scope. Other 403s are final (a new token would not
/// change the server's mind).
pub(crate) fn wants(status: u16, www_authenticate: Option<&str>) -> bool {
    match status {
        401 => true,
        403 => www_authenticate.is_some_and(|h| Challenge::parse(h).insufficient_scope()),
        _ => false,
    }
}

/// Checks the redirect the user came back with and returns the code:
/// `state` must be ours; `iss` (RFC 9207), when present, must be the
/// issuer exactly, and must be present when the server promised it; only
/// then is an `error` reported or the code used.
pub(crate) fn check_redirect(
    redirect: &str,
    state: &str,
    issuer: &str,
    iss_required: bool,
) -> Result<String, AuthError> {
    let pairs = urls::query_pairs(redirect).map_err(AuthError::Response)?;
    let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    if get("state") != Some(state) {
        return Err(AuthError::Response(
            "the state parameter does not match the request".into(),
        ));
    }
    match get("iss") {
        Some(iss) if iss != issuer => {
            return Err(AuthError::Response(format!(
                "iss {iss:?} is not the authorization server's issuer {issuer:?}"
            )));
        }
        None if iss_required => {
            return Err(AuthError::Response(
                "iss is missing although the authorization server promised it".into(),
            ));
        }
        _ => {}
    }
    if let Some(error) = get("error") {
        return Err(AuthError::Denied {
            error: error.to_owned(),
            description: get("error_description").map(str::to_owned),
        });
    }
    get("code")
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| AuthError::Response("no code in the redirect".into()))
}

/// One MCP server's authorization state.
pub(crate) struct Authorizer {
    options: OAuthOptions,
    server_url: String,
    fetcher: Fetcher,
    current: RwLock<Option<StoredTokens>>,
    /// One authorization at a time: concurrent refused requests wait for
    /// it and retry with its token instead of each starting a login. Holds
    /// what the last authorization found, for refreshing an expired token
    /// before it is sent.
    busy: tokio::sync::Mutex<Option<Known>>,
    /// The DPoP key, when the options ask for bound tokens.
    dpop: Option<DpopKey>,
    /// Time spent in the user's authorize callback, which call timeouts
    /// do not count.
    interactions: InteractionClock,
}

/// Where the current token came from.
struct Known {
    resource: ResourceMetadata,
    server: ServerMetadata,
    client: ClientCredentials,
}

/// RFC 7523 §2.1 grant type.
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// Refresh this long before the announced expiry: the request must not
/// arrive with a token that expired on the way.
const EXPIRY_MARGIN_SECS: u64 = 30;

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Authorizer {
    pub(crate) fn new(options: OAuthOptions, server_url: &str, tls: &TlsOptions) -> Authorizer {
        let dpop = if options.dpop {
            DpopKey::generate()
                .inspect_err(|e| tracing::warn!(error = %e, "no DPoP key; using bearer tokens"))
                .ok()
        } else {
            None
        };
        Authorizer {
            dpop,
            current: RwLock::new(options.store.load_tokens(server_url)),
            options,
            server_url: server_url.to_owned(),
            fetcher: Fetcher::new(tls.clone()),
            busy: tokio::sync::Mutex::new(None),
            interactions: InteractionClock::default(),
        }
    }

    /// The clock of the user's interactions, for timeouts to skip them.
    pub(crate) fn interactions(&self) -> &InteractionClock {
        &self.interactions
    }

    /// The access token requests carry now.
    pub(crate) fn bearer(&self) -> Option<String> {
        read_unpoisoned(&self.current)
            .as_ref()
            .map(|t| t.access_token.clone())
    }

    /// The token to send, refreshed first when it has expired (or is about
    /// to) and a refresh token and the server it came from are known; a
    /// refused refresh leaves the old token, whose 401 then starts over.
    pub(crate) async fn fresh_bearer(&self) -> Option<String> {
        let expired = |t: &StoredTokens| {
            t.refresh_token.is_some()
                && t.expires_at
                    .is_some_and(|at| at <= now_secs() + EXPIRY_MARGIN_SECS)
        };
        if !read_unpoisoned(&self.current).as_ref().is_some_and(expired) {
            return self.bearer();
        }
        let known = self.busy.lock().await;
        let current = read_unpoisoned(&self.current).clone();
        if let (Some(known), Some(tokens)) = (known.as_ref(), current)
            && expired(&tokens)
            && tokens.issuer == known.server.issuer
            && let Some(refresh) = tokens.refresh_token.as_deref()
        {
            let grant = [
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh),
                ("resource", known.resource.resource.as_str()),
            ];
            match token::request(
                &self.fetcher,
                &known.server,
                &known.client,
                &grant,
                &tokens.scopes,
                Some(refresh),
                self.dpop.as_ref(),
            )
            .await
            {
                Ok(tokens) => self.save(tokens),
                Err(e) => tracing::debug!(error = %e, "refreshing an expired token failed"),
            }
        }
        self.bearer()
    }

    /// The `Authorization` value for `token`, and the DPoP proof for a
    /// request with `method` when the token is DPoP-bound.
    pub(crate) fn authorization(
        &self,
        method: &str,
        token: &str,
    ) -> Result<(String, Option<String>), Error> {
        let bound = read_unpoisoned(&self.current)
            .as_ref()
            .is_some_and(|t| t.access_token == token && t.token_type.as_deref() == Some("DPoP"));
        match (&self.dpop, bound) {
            (Some(key), true) => Ok((
                format!("DPoP {token}"),
                Some(key.proof(method, &self.server_url, Some(token))?),
            )),
            _ => Ok((format!("Bearer {token}"), None)),
        }
    }

    /// A 401 asking for a DPoP nonce: remembered, and the request is sent
    /// again (no new authorization).
    pub(crate) fn nonce_challenge(
        &self,
        status: u16,
        www_authenticate: Option<&str>,
        nonce: Option<&str>,
    ) -> bool {
        let (Some(key), Some(nonce), 401) = (&self.dpop, nonce, status) else {
            return false;
        };
        if Challenge::parse(www_authenticate.unwrap_or(""))
            .error
            .as_deref()
            != Some("use_dpop_nonce")
        {
            return false;
        }
        key.remember_nonce(&self.server_url, nonce);
        true
    }

    pub(crate) fn max_authorizations(&self) -> usize {
        self.options.max_authorizations
    }

    fn save(&self, tokens: StoredTokens) {
        self.options.store.save_tokens(&self.server_url, &tokens);
        *write_unpoisoned(&self.current) = Some(tokens);
    }

    /// Answers a refused request (see [`wants`]) so that it can be retried:
    /// `sent` is the token it carried.
    pub(crate) async fn handle(
        &self,
        status: u16,
        www_authenticate: Option<&str>,
        sent: Option<&str>,
    ) -> Result<(), Error> {
        let mut known = self.busy.lock().await;
        let now = self.bearer();
        if now.is_some() && now.as_deref() != sent {
            // Another request got a new token meanwhile.
            return Ok(());
        }
        let challenge = Challenge::parse(www_authenticate.unwrap_or(""));
        let resource = ResourceMetadata::discover(
            &self.fetcher,
            &self.server_url,
            challenge.resource_metadata.as_deref(),
        )
        .await?;
        // The first server listed is the one to use (MCP: the client picks;
        // the spec gives no preference order beyond the list's).
        let issuer = resource.authorization_servers[0].clone();
        let server = ServerMetadata::discover(&self.fetcher, &issuer).await?;
        let previous = read_unpoisoned(&self.current)
            .clone()
            .filter(|t| t.issuer == server.issuer);
        let earlier: &[String] = previous.as_ref().map_or(&[], |t| &t.scopes);
        let scopes = if status == 403 {
            scope::step_up(earlier, challenge.scope.as_deref().unwrap_or(&[]))
        } else {
            scope::step_up(
                earlier,
                &scope::initial(
                    challenge.scope.as_deref(),
                    resource.scopes_supported.as_deref(),
                ),
            )
        };
        if status == 401
            && let Some(refresh) = previous.as_ref().and_then(|t| t.refresh_token.clone())
        {
            // The client the refresh token was issued to, whatever redirect
            // URI it registered: a refresh has no redirect.
            let client =
                registration::client_for(&self.fetcher, &self.options, &server, Purpose::Token)
                    .await?;
            let grant = [
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh.as_str()),
                ("resource", resource.resource.as_str()),
            ];
            match token::request(
                &self.fetcher,
                &server,
                &client,
                &grant,
                &scopes,
                Some(&refresh),
                self.dpop.as_ref(),
            )
            .await
            {
                Ok(tokens) => {
                    self.save(tokens);
                    *known = Some(Known {
                        resource,
                        server,
                        client,
                    });
                    return Ok(());
                }
                Err(e) => tracing::debug!(error = %e, "refresh refused; authorizing again"),
            }
        }
        if let Some(message) = &self.options.stored_only {
            // Before registering: a client that only uses stored logins
            // must leave nothing behind at the authorization server.
            return Err(AuthError::Interaction(message.clone()).into());
        }
        let scopes = scope::with_offline_access(
            scopes,
            server.scopes_supported.as_deref(),
            self.options.offline_access,
        );
        let purpose = match self.options.grant {
            Grant::AuthorizationCode => Purpose::Authorize,
            Grant::ClientCredentials | Grant::JwtBearer => Purpose::Token,
        };
        let client =
            registration::client_for(&self.fetcher, &self.options, &server, purpose).await?;
        let tokens = match self.options.grant {
            Grant::AuthorizationCode => {
                self.authorization_code(&resource, &server, &client, &scopes)
                    .await?
            }
            Grant::ClientCredentials => {
                let grant = [
                    ("grant_type", "client_credentials"),
                    ("resource", resource.resource.as_str()),
                ];
                self.direct_grant(&server, &client, &grant, &scopes).await?
            }
            Grant::JwtBearer => {
                let source = self.options.assertion.as_ref().ok_or_else(|| {
                    AuthError::Interaction("the jwt-bearer grant needs an assertion source".into())
                })?;
                let assertion = source(super::AssertionRequest {
                    issuer: server.issuer.clone(),
                    resource: resource.resource.clone(),
                })
                .await
                .map_err(|e| match e {
                    Error::Auth(e) => Error::Auth(e),
                    other => AuthError::Interaction(format!("assertion: {other}")).into(),
                })?;
                let grant = [
                    ("grant_type", JWT_BEARER),
                    ("assertion", assertion.trim()),
                    ("resource", resource.resource.as_str()),
                ];
                self.direct_grant(&server, &client, &grant, &scopes).await?
            }
        };
        self.save(tokens);
        *known = Some(Known {
            resource,
            server,
            client,
        });
        Ok(())
    }

    /// A grant without a user (client credentials, jwt-bearer): its members,
    /// plus `scope` when any was chosen, sent to the token endpoint.
    async fn direct_grant(
        &self,
        server: &ServerMetadata,
        client: &ClientCredentials,
        grant: &[(&str, &str)],
        scopes: &[String],
    ) -> Result<StoredTokens, Error> {
        let scope = scopes.join(" ");
        let mut pairs: Vec<(&str, &str)> = grant.to_vec();
        if !scope.is_empty() {
            pairs.push(("scope", &scope));
        }
        token::request(
            &self.fetcher,
            server,
            client,
            &pairs,
            scopes,
            None,
            self.dpop.as_ref(),
        )
        .await
    }

    async fn authorization_code(
        &self,
        resource: &ResourceMetadata,
        server: &ServerMetadata,
        client: &ClientCredentials,
        scopes: &[String],
    ) -> Result<StoredTokens, Error> {
        server.require_pkce()?;
        let pkce = Pkce::generate()?;
        let state = random_token()?;
        let scope = scopes.join(" ");
        let mut params = vec![
            ("response_type", "code"),
            ("client_id", client.client_id.as_str()),
            ("redirect_uri", self.options.redirect_uri.as_str()),
            ("code_challenge", pkce.challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("state", state.as_str()),
            ("resource", resource.resource.as_str()),
        ];
        if !scope.is_empty() {
            params.push(("scope", scope.as_str()));
        }
        let url = urls::with_query(&server.authorization_endpoint, &params);
        let user_time = self.interactions.pause();
        let redirect = (self.options.authorize)(url).await;
        drop(user_time);
        let redirect = redirect.map_err(|e| match e {
            Error::Auth(e) => Error::Auth(e),
            other => AuthError::Interaction(other.to_string()).into(),
        })?;
        let code = check_redirect(
            &redirect,
            &state,
            &server.issuer,
            server.iss_parameter_supported,
        )?;
        let grant = [
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", self.options.redirect_uri.as_str()),
            ("code_verifier", pkce.verifier.as_str()),
            ("resource", resource.resource.as_str()),
        ];
        token::request(
            &self.fetcher,
            server,
            client,
            &grant,
            scopes,
            None,
            self.dpop.as_ref(),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AS: &str = "http://localhost:4000";

    fn redirect(extra: &str) -> String {
        format!("http://127.0.0.1:1/cb?code=c0de&state=s{extra}")
    }

    #[test]
    fn iss_is_compared_exactly_and_required_when_promised() {
        let with_iss = redirect("&iss=http%3A%2F%2Flocalhost%3A4000");
        assert_eq!(check_redirect(&with_iss, "s", AS, true).unwrap(), "c0de");
        assert_eq!(check_redirect(&with_iss, "s", AS, false).unwrap(), "c0de");
        // Not promised, not sent: accepted.
        assert_eq!(
            check_redirect(&redirect(""), "s", AS, false).unwrap(),
            "c0de"
        );
        // Promised but missing, wrong, or equal only after normalisation.
        assert!(check_redirect(&redirect(""), "s", AS, true).is_err());
        let wrong = redirect("&iss=https%3A%2F%2Fevil.example.com");
        assert!(check_redirect(&wrong, "s", AS, true).is_err());
        assert!(check_redirect(&wrong, "s", AS, false).is_err());
        let slash = redirect("&iss=http%3A%2F%2Flocalhost%3A4000%2F");
        assert!(check_redirect(&slash, "s", AS, true).is_err());
    }

    #[test]
    fn state_errors_and_missing_codes_are_refused() {
        assert!(matches!(
            check_redirect(&redirect(""), "other", AS, false),
            Err(AuthError::Response(_))
        ));
        assert_eq!(
            check_redirect(
                "http://l/cb?state=s&error=access_denied&error_description=no",
                "s",
                AS,
                false
            ),
            Err(AuthError::Denied {
                error: "access_denied".into(),
                description: Some("no".into())
            })
        );
        assert!(check_redirect("http://l/cb?state=s", "s", AS, false).is_err());
    }

    #[test]
    fn only_401_and_insufficient_scope_403_are_answered() {
        assert!(wants(401, None));
        assert!(wants(
            403,
            Some(r#"Bearer error="insufficient_scope", scope="x""#)
        ));
        assert!(!wants(403, Some(r#"Bearer error="invalid_token""#)));
        assert!(!wants(403, None));
        assert!(!wants(500, None));
    }
}
