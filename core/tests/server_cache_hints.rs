//! Caching hints per resource registration (spec:
//! server/utilities/caching.mdx): a resource or template registered with
//! its own hint answers `resources/read` with it; others keep the
//! server-wide `caching.resource_read`.

mod common;

use common::{Stdio, meta, request_with_meta, server_with};
use ferromcp::protocol::{CacheScope, Resource, ResourceTemplate};
use ferromcp::server::{CacheHint, ResourceOutput, ResourceRequest, ServerOptions};
use serde_json::json;

fn read(id: i64, uri: &str) -> serde_json::Value {
    request_with_meta(id, "resources/read", json!({"uri": uri}), meta())
}

// caching.mdx: ttlMs and cacheScope on resources/read, per resource
#[tokio::test]
async fn caching_a_resource_registered_with_a_hint_answers_with_it() {
    let server = server_with(ServerOptions::default());
    let text = |_ctx, _req: ResourceRequest| async { Ok(ResourceOutput::Text("x".into())) };
    server
        .add_resource_cached(
            Resource::new("mem://logo", "logo"),
            CacheHint {
                ttl_ms: 60_000,
                scope: CacheScope::Public,
            },
            text,
        )
        .unwrap();
    server
        .add_resource_template_cached(
            ResourceTemplate::new("mem://users/{id}", "user"),
            CacheHint {
                ttl_ms: 5_000,
                scope: CacheScope::Private,
            },
            text,
        )
        .unwrap();
    server
        .add_resource(Resource::new("mem://plain", "plain"), text)
        .unwrap();
    let mut io = Stdio::start(server);

    let logo = io.call(read(1, "mem://logo")).await;
    assert_eq!(
        (&logo["result"]["ttlMs"], &logo["result"]["cacheScope"]),
        (&json!(60_000), &json!("public")),
        "{logo}"
    );
    let user = io.call(read(2, "mem://users/7")).await;
    assert_eq!(
        (&user["result"]["ttlMs"], &user["result"]["cacheScope"]),
        (&json!(5_000), &json!("private")),
        "{user}"
    );
    let plain = io.call(read(3, "mem://plain")).await;
    assert_eq!(plain["result"]["ttlMs"], json!(0), "{plain}");
}
