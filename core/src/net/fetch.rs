//! Plain HTTP exchanges of small JSON documents with any origin, over the
//! shared connection pool and TLS settings: the client's OAuth flow
//! (metadata, registration, token endpoint) and the server's token verifier
//! (the issuer's metadata and keys). Redirects are never followed: a
//! metadata document must come from where it was looked up, and an
//! authorization endpoint's redirect is the answer the flow wants.

use bytes::Bytes;
use http::header;
use http_body_util::{BodyExt, Full, Limited};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;

use super::pool::{Pool, Sent};
use super::tls::{TlsConnect, TlsOptions};
use crate::Error;
use crate::rpc::lock_unpoisoned;

/// Metadata and token answers are small; a bigger one is refused.
const MAX_BODY: usize = 1 << 20;

/// One answer.
pub(crate) struct Fetched {
    pub(crate) status: u16,
    pub(crate) location: Option<String>,
    /// `DPoP-Nonce` the server asked proofs to carry.
    pub(crate) dpop_nonce: Option<String>,
    pub(crate) body: Bytes,
}

impl Fetched {
    /// The body as a JSON object, if it is one.
    pub(crate) fn json(&self) -> Option<serde_json::Map<String, Value>> {
        match serde_json::from_slice(&self.body) {
            Ok(Value::Object(map)) => Some(map),
            _ => None,
        }
    }

    pub(crate) fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// A body to send.
pub(crate) enum Body {
    Form(String),
    Json(Value),
    /// Bytes of the given content type (an OTLP export).
    Raw(&'static str, Vec<u8>),
}

/// Connection pools per origin.
pub(crate) struct Fetcher {
    tls: TlsOptions,
    pools: Mutex<HashMap<String, Pool>>,
}

impl Fetcher {
    pub(crate) fn new(tls: TlsOptions) -> Fetcher {
        Fetcher {
            tls,
            pools: Mutex::default(),
        }
    }

    fn pool(&self, uri: &http::Uri) -> Result<Pool, Error> {
        let secure = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            _ => {
                return Err(Error::Http(format!(
                    "unsupported URL {uri} (http:// and https:// are supported)"
                )));
            }
        };
        let host = uri
            .host()
            .ok_or_else(|| Error::Http(format!("URL {uri} has no host")))?
            .to_owned();
        let port = uri.port_u16().unwrap_or(if secure { 443 } else { 80 });
        let key = format!("{secure}:{host}:{port}");
        if let Some(pool) = lock_unpoisoned(&self.pools).get(&key) {
            return Ok(pool.clone());
        }
        let tls = if secure {
            Some(TlsConnect::new(&host, port, &self.tls)?)
        } else {
            None
        };
        let pool = Pool::new(host, port, tls);
        lock_unpoisoned(&self.pools).insert(key, pool.clone());
        Ok(pool)
    }

    /// `GET url` (with `Accept: application/json`).
    pub(crate) async fn get(&self, url: &str) -> Result<Fetched, Error> {
        self.send(http::Method::GET, url, None, None, None, &[])
            .await
    }

    /// `POST url` with a body and optionally an `Authorization` header.
    pub(crate) async fn post(
        &self,
        url: &str,
        body: Body,
        authorization: Option<&str>,
        dpop: Option<&str>,
    ) -> Result<Fetched, Error> {
        self.send(
            http::Method::POST,
            url,
            Some(body),
            authorization,
            dpop,
            &[],
        )
        .await
    }

    /// `POST url` with a body and headers of the caller's (an exporter's
    /// configured headers).
    pub(crate) async fn post_with_headers(
        &self,
        url: &str,
        body: Body,
        headers: &[(String, String)],
    ) -> Result<Fetched, Error> {
        self.send(http::Method::POST, url, Some(body), None, None, headers)
            .await
    }

    async fn send(
        &self,
        method: http::Method,
        url: &str,
        body: Option<Body>,
        authorization: Option<&str>,
        dpop: Option<&str>,
        extra_headers: &[(String, String)],
    ) -> Result<Fetched, Error> {
        let uri: http::Uri = url
            .parse()
            .map_err(|e| Error::Http(format!("invalid URL {url:?}: {e}")))?;
        let pool = self.pool(&uri)?;
        let target = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
        let authority = uri.authority().map_or("", |a| a.as_str()).to_owned();
        let mut builder = http::Request::builder()
            .method(method)
            .uri(target)
            .header(header::HOST, authority)
            .header(header::ACCEPT, "application/json");
        if let Some(auth) = authorization {
            builder = builder.header(header::AUTHORIZATION, auth);
        }
        if let Some(proof) = dpop {
            builder = builder.header("dpop", proof);
        }
        for (name, value) in extra_headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        let bytes = match body {
            Some(Body::Form(form)) => {
                builder = builder.header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
                Bytes::from(form)
            }
            Some(Body::Json(json)) => {
                builder = builder.header(header::CONTENT_TYPE, "application/json");
                Bytes::from(serde_json::to_vec(&json)?)
            }
            Some(Body::Raw(content_type, bytes)) => {
                builder = builder.header(header::CONTENT_TYPE, content_type);
                Bytes::from(bytes)
            }
            None => Bytes::new(),
        };
        let request = builder
            .body(Full::new(bytes))
            .map_err(|e| Error::Http(e.to_string()))?;
        let (mut conn, response) = match pool.send(request).await? {
            Sent::Answered(conn, response) => (conn, response),
            Sent::Failed(_, e) => return Err(Error::Http(format!("{url}: {e}"))),
        };
        let status = response.status().as_u16();
        let location = response
            .headers()
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let dpop_nonce = response
            .headers()
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = conn
            .drive(Limited::new(response.into_body(), MAX_BODY).collect())
            .await
            .map_err(|e| Error::Http(format!("reading {url}: {e}")))?
            .to_bytes();
        pool.put(conn);
        Ok(Fetched {
            status,
            location,
            dpop_nonce,
            body,
        })
    }
}
