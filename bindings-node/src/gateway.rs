//! Composition (core's `ferromcp::gateway`): `server.mount(prefix, client)`,
//! `server.mountServer(prefix, server)`, `Server.proxy(client)` and the
//! native `Mount` class. The facade's `server.mount(prefix, upstream)`
//! picks `mount` or `mountServer` by the upstream's class; see
//! `index.d.ts` for the public API.
//!
//! Everything gateway stays in core (renaming, mirrored lists kept in
//! step, forwarded calls); this file only checks the prefix at the call
//! and carries core's objects across.

use std::cell::RefCell;

use ferromcp::gateway::Mount;
use ferromcp::server::Server;
use napi::Env;
use napi::bindgen_prelude::Object;
use napi_derive::napi;

use crate::client::JsClient;
use crate::runtime;
use crate::server::JsServer;

#[napi]
impl JsServer {
    /// Serves what `upstream` (a connected client) serves as part of this
    /// server, renamed with `prefix`: tool `echo` under `"alpha"` is
    /// `alpha_echo`, resource `mem://r` is `alpha+mem://r` (an empty
    /// prefix keeps the names). Changes the upstream announces are
    /// followed. Rejects (core's invalid-definition error) when `prefix` is
    /// not a letter followed by letters, digits, `-`, `_` and `.`, and with
    /// an `McpError` when the upstream cannot be listed.
    #[napi(ts_return_type = "Promise<Mount>")]
    pub fn mount<'env>(
        &self,
        env: &'env Env,
        prefix: String,
        upstream: &JsClient,
    ) -> napi::Result<Object<'env>> {
        let server = self.server.clone();
        let client = upstream.client.clone();
        runtime::spawn(
            env,
            async move { server.mount(&prefix, client).await },
            |mount| Ok(JsMount::new(mount)),
        )
    }

    /// `mount` for another server object of this process, reached over an
    /// in-memory pipe (no socket, no process).
    #[napi(ts_return_type = "Promise<Mount>")]
    pub fn mount_server<'env>(
        &self,
        env: &'env Env,
        prefix: String,
        upstream: &JsServer,
    ) -> napi::Result<Object<'env>> {
        let server = self.server.clone();
        let upstream = upstream.server.clone();
        runtime::spawn(
            env,
            async move { server.mount_server(&prefix, &upstream).await },
            |mount| Ok(JsMount::new(mount)),
        )
    }

    /// A new server serving exactly what `upstream` serves, under its own
    /// names, with its identity and instructions.
    #[napi(ts_return_type = "Promise<Server>")]
    pub fn proxy<'env>(env: &'env Env, upstream: &JsClient) -> napi::Result<Object<'env>> {
        let client = upstream.client.clone();
        runtime::spawn(env, async move { Server::proxy(client).await }, |server| {
            Ok(JsServer::from_core(server))
        })
    }
}

/// One upstream mounted in a server. Use the facade's `server.mount(...)`.
///
/// @example
/// ```js
/// const mount = await nativeServer.mountServer("alpha", otherNativeServer);
/// mount.unmount(); // the alpha_* tools are gone
/// ```
#[napi(js_name = "Mount")]
pub struct JsMount {
    /// `None` once unmounted: core's `unmount` takes the mount.
    mount: RefCell<Option<Mount>>,
}

impl JsMount {
    fn new(mount: Mount) -> Self {
        JsMount {
            mount: RefCell::new(Some(mount)),
        }
    }
}

#[napi]
impl JsMount {
    /// Stops following the upstream and removes everything the mount
    /// registered (clients listening hear of it as a list change). Later
    /// calls do nothing.
    #[napi]
    pub fn unmount(&self) {
        if let Some(mount) = self.mount.borrow_mut().take() {
            mount.unmount();
        }
    }
}
