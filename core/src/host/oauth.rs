//! A client's OAuth settings as every binding gathers them from its host:
//! the grant and its data, the host's callbacks adapted to core's, the
//! settings every grant shares ([`OAuthSettings`]) and the token store,
//! put together into core's [`OAuthOptions`] once, here.
//!
//! A binding reads the grant from its host's options and checks there
//! what its host can get wrong (a missing `redirectUri`, an unknown
//! grant); which constructor of [`OAuthOptions`] a grant maps to, and
//! what a grant needs from the host, is decided only in this file.

use std::sync::Arc;

use crate::client::TlsOptions;
use crate::client::auth::{
    AssertionCallback, AuthorizeCallback, EnterpriseIdp, OAuthOptions, OAuthSettings, TokenStore,
};

/// How a host's client obtains tokens, with the data that grant needs. The
/// host's callbacks come separately ([`HostCallbacks`]): a C program sets
/// them after the options, a JS program passes them along.
#[derive(Clone, PartialEq, Eq)]
pub enum HostGrant {
    /// A user logs in in a browser, shown the authorization URL by the
    /// authorize callback; without one, only a `stored_only` client (see
    /// [`OAuthSettings::stored_only`]), which never asks a user.
    AuthorizationCode {
        /// Where the authorization server sends the browser back.
        redirect_uri: String,
    },
    /// The client's own credentials (no user): its secret, or with
    /// `private_key_pem` (PKCS#8 PEM, P-256) `private_key_jwt`.
    ClientCredentials {
        /// The client's id at the authorization server.
        client_id: String,
        /// Its secret (`client_secret_basic` or `_post`).
        client_secret: Option<String>,
        /// Its private key instead of a secret.
        private_key_pem: Option<String>,
    },
    /// A JWT the workload holds, from the assertion callback (RFC 7523).
    JwtBearer {
        /// The client's id at the authorization server.
        client_id: String,
        /// Its secret, for a confidential client.
        client_secret: Option<String>,
    },
    /// Enterprise-managed authorization (SEP-990) through `idp`.
    EnterpriseManaged {
        /// The client's id at the authorization server.
        client_id: String,
        /// Its secret there.
        client_secret: Option<String>,
        /// The identity provider and the user's ID token from it.
        idp: EnterpriseIdp,
    },
}

/// The host's callbacks and token store, adapted to core's types; what a
/// grant does not use is ignored.
#[derive(Clone, Default)]
pub struct HostCallbacks {
    /// Shows the authorization URL, for [`HostGrant::AuthorizationCode`].
    pub authorize: Option<AuthorizeCallback>,
    /// Gives the current assertion, for [`HostGrant::JwtBearer`].
    pub assertion: Option<AssertionCallback>,
    /// Keeps tokens and registrations; `None`: in memory.
    pub store: Option<Arc<dyn TokenStore>>,
}

/// The callback a grant needs and the host did not give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissingCallback {
    /// [`HostGrant::AuthorizationCode`] without an authorize callback and
    /// not `stored_only`.
    Authorize,
    /// [`HostGrant::JwtBearer`] without an assertion callback.
    Assertion,
}

impl HostGrant {
    /// Core's options for this grant, with the host's `callbacks`, the
    /// shared `settings` applied, and the client's `tls` (an enterprise
    /// identity provider is reached with it too).
    ///
    /// ```
    /// use ferromcp::client::TlsOptions;
    /// use ferromcp::client::auth::{Grant, OAuthSettings};
    /// use ferromcp::host::oauth::{HostCallbacks, HostGrant, MissingCallback};
    ///
    /// let grant = HostGrant::ClientCredentials {
    ///     client_id: "svc".into(),
    ///     client_secret: Some("s3cret".into()),
    ///     private_key_pem: None,
    /// };
    /// let settings = OAuthSettings { dpop: Some(true), ..Default::default() };
    /// let options = grant.oauth_options(HostCallbacks::default(), &settings, &TlsOptions::default());
    /// let options = options.expect("needs no callback");
    /// assert_eq!(options.grant, Grant::ClientCredentials);
    /// assert!(options.dpop);
    ///
    /// let login = HostGrant::AuthorizationCode { redirect_uri: "http://127.0.0.1:8765/cb".into() };
    /// let missing = login.oauth_options(HostCallbacks::default(), &OAuthSettings::default(), &TlsOptions::default());
    /// assert_eq!(missing.err(), Some(MissingCallback::Authorize));
    /// ```
    pub fn oauth_options(
        &self,
        callbacks: HostCallbacks,
        settings: &OAuthSettings,
        tls: &TlsOptions,
    ) -> Result<OAuthOptions, MissingCallback> {
        let options = match self {
            HostGrant::AuthorizationCode { redirect_uri } => {
                match (callbacks.authorize, &settings.stored_only) {
                    (Some(authorize), _) => {
                        OAuthOptions::new(redirect_uri.clone(), move |url| authorize(url))
                    }
                    // Core stops before any authorization: no user to ask.
                    (None, Some(message)) => OAuthOptions::stored_only(message.clone()),
                    (None, None) => return Err(MissingCallback::Authorize),
                }
            }
            HostGrant::ClientCredentials {
                client_id,
                private_key_pem: Some(pem),
                ..
            } => OAuthOptions::client_credentials_jwt(client_id.clone(), pem.clone()),
            HostGrant::ClientCredentials {
                client_id,
                client_secret,
                ..
            } => OAuthOptions::client_credentials(client_id.clone(), client_secret.clone()),
            HostGrant::JwtBearer {
                client_id,
                client_secret,
            } => {
                let assertion = callbacks.assertion.ok_or(MissingCallback::Assertion)?;
                OAuthOptions::jwt_bearer(client_id.clone(), client_secret.clone(), move |request| {
                    assertion(request)
                })
            }
            HostGrant::EnterpriseManaged {
                client_id,
                client_secret,
                idp,
            } => OAuthOptions::enterprise_managed(
                client_id.clone(),
                client_secret.clone(),
                idp.clone(),
                tls.clone(),
            ),
        };
        let options = match callbacks.store {
            Some(store) => options.with_store(store),
            None => options,
        };
        Ok(options.with_settings(settings))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::auth::Grant;

    fn options(
        grant: &HostGrant,
        callbacks: HostCallbacks,
        settings: &OAuthSettings,
    ) -> Result<OAuthOptions, MissingCallback> {
        grant.oauth_options(callbacks, settings, &TlsOptions::default())
    }

    #[test]
    fn stored_only_needs_no_authorize_callback() {
        let grant = HostGrant::AuthorizationCode {
            redirect_uri: String::new(),
        };
        let settings = OAuthSettings {
            stored_only: Some("log in first".into()),
            ..Default::default()
        };
        let oauth = options(&grant, HostCallbacks::default(), &settings).expect("stored only");
        assert_eq!(oauth.stored_only.as_deref(), Some("log in first"));
    }

    #[test]
    fn jwt_bearer_needs_the_assertion_callback() {
        let grant = HostGrant::JwtBearer {
            client_id: "workload".into(),
            client_secret: None,
        };
        let settings = OAuthSettings::default();
        let missing = options(&grant, HostCallbacks::default(), &settings).err();
        assert_eq!(missing, Some(MissingCallback::Assertion));
        let callbacks = HostCallbacks {
            assertion: Some(Arc::new(|_| Box::pin(async { Ok("jwt".to_owned()) }))),
            ..Default::default()
        };
        let oauth = options(&grant, callbacks, &settings).expect("assertion given");
        assert_eq!(oauth.grant, Grant::JwtBearer);
        assert!(oauth.assertion.is_some());
    }

    #[test]
    fn a_private_key_selects_private_key_jwt() {
        let grant = HostGrant::ClientCredentials {
            client_id: "svc".into(),
            client_secret: None,
            private_key_pem: Some("PEM".into()),
        };
        let oauth = options(&grant, HostCallbacks::default(), &OAuthSettings::default())
            .expect("needs no callback");
        let credentials = &oauth.pre_registered[0].credentials;
        assert_eq!(credentials.private_key_pem.as_deref(), Some("PEM"));
        assert_eq!(
            credentials.token_endpoint_auth_method.as_deref(),
            Some("private_key_jwt")
        );
    }
}
