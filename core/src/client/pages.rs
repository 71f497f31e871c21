//! [`Pages`]: walking a paginated list (spec:
//! server/utilities/pagination.mdx).

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::calls::decode;
use super::{CacheMode, Client};
use crate::Error;

/// Walks a paginated list, following `nextCursor` (spec:
/// server/utilities/pagination.mdx). A cursor seen before ends the walk, so
/// a misbehaving server cannot loop it forever, not even through a cycle of
/// several cursors (A, B, A, ...).
pub struct Pages<'a, T> {
    client: &'a Client,
    method: &'static str,
    field: &'static str,
    cache: CacheMode,
    cursor: Option<String>,
    /// Every cursor this walk has followed.
    seen: std::collections::HashSet<String>,
    done: bool,
    _items: std::marker::PhantomData<fn() -> T>,
}

impl<'a, T: DeserializeOwned> Pages<'a, T> {
    pub(super) fn new(
        client: &'a Client,
        method: &'static str,
        field: &'static str,
        cache: CacheMode,
    ) -> Self {
        Pages {
            client,
            method,
            field,
            cache,
            cursor: None,
            seen: std::collections::HashSet::new(),
            done: false,
            _items: std::marker::PhantomData,
        }
    }

    /// The cursor the next page will be asked from: the last page's
    /// `nextCursor`, or `None` before the first page and after the last.
    pub fn next_cursor(&self) -> Option<&str> {
        if self.done {
            return None;
        }
        self.cursor.as_deref()
    }

    /// The next page's items; `None` after the last page.
    pub async fn next_page(&mut self) -> Option<Result<Vec<T>, Error>> {
        if self.done {
            return None;
        }
        let mut page = match self
            .client
            .list_page(self.method, self.cursor.as_deref(), self.cache)
            .await
        {
            Ok(page) => page,
            Err(e) => {
                self.done = true;
                return Some(Err(e));
            }
        };
        let mut items = Vec::new();
        if let Some(Value::Array(list)) = page.get_mut(self.field) {
            for item in list.drain(..) {
                match decode(self.method, item) {
                    Ok(item) => items.push(item),
                    Err(e) => {
                        self.done = true;
                        return Some(Err(e));
                    }
                }
            }
        }
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) if self.seen.insert(next.to_owned()) => self.cursor = Some(next.to_owned()),
            _ => self.done = true,
        }
        Some(Ok(items))
    }
}

/// A list a client walks page by page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListKind {
    /// `tools/list`
    Tools,
    /// `resources/list`
    Resources,
    /// `resources/templates/list`
    ResourceTemplates,
    /// `prompts/list`
    Prompts,
    /// `skills/list` (the skills extension)
    Skills,
}

/// One request for the next page of a [`Client::serve_pages`] walk,
/// answered with the page, or `None` after the last one.
pub type PageDemand = tokio::sync::oneshot::Sender<Option<Result<Value, Error>>>;

impl Client {
    /// Walks the pages of `kind`, fetching one each time a demand arrives
    /// (never ahead), until the walk ends or `demands` closes. Each page is
    /// `{"items": [...], "nextCursor"?: "..."}`. For bindings, whose host
    /// iterators pull one page at a time from another thread.
    ///
    /// ```no_run
    /// # async fn run(client: ferromcp::client::Client) {
    /// use ferromcp::client::ListKind;
    /// use tokio::sync::{mpsc, oneshot};
    ///
    /// let (demand, demands) = mpsc::unbounded_channel();
    /// tokio::spawn(async move { client.serve_pages(ListKind::Tools, demands).await });
    /// let (reply, page) = oneshot::channel();
    /// demand.send(reply).unwrap();
    /// let first = page.await.unwrap(); // Some(Ok({"items": [...]})) or None
    /// # }
    /// ```
    pub async fn serve_pages(
        &self,
        kind: ListKind,
        demands: tokio::sync::mpsc::UnboundedReceiver<PageDemand>,
    ) {
        match kind {
            ListKind::Tools => serve_pages(self.tool_pages(), demands).await,
            ListKind::Resources => serve_pages(self.resource_pages(), demands).await,
            ListKind::ResourceTemplates => {
                serve_pages(self.resource_template_pages(), demands).await
            }
            ListKind::Prompts => serve_pages(self.prompt_pages(), demands).await,
            ListKind::Skills => serve_pages(self.skill_pages(), demands).await,
        }
    }
}

async fn serve_pages<T: DeserializeOwned + serde::Serialize>(
    mut pages: Pages<'_, T>,
    mut demands: tokio::sync::mpsc::UnboundedReceiver<PageDemand>,
) {
    while let Some(reply) = demands.recv().await {
        let page = match pages.next_page().await {
            Some(Ok(items)) => Some(serde_json::to_value(items).map_err(Error::from).map(
                |items| {
                    let mut page = serde_json::Map::new();
                    page.insert("items".into(), items);
                    if let Some(next) = pages.next_cursor() {
                        page.insert("nextCursor".into(), Value::from(next));
                    }
                    Value::Object(page)
                },
            )),
            Some(Err(e)) => Some(Err(e)),
            None => None,
        };
        let _ = reply.send(page);
    }
}

#[cfg(test)]
mod tests {
    use super::ListKind;
    use crate::Error;
    use crate::client::testing::{Scripted, modern};
    use serde_json::json;

    fn tool(name: &str) -> serde_json::Value {
        json!({"name": name, "inputSchema": {"type": "object"}})
    }

    #[tokio::test]
    async fn follows_cursors_and_stops_on_a_repeated_one() {
        let transport = Scripted::new([
            Ok(json!({"tools": [tool("a")], "nextCursor": "c1"})),
            Ok(json!({"tools": [tool("b")], "nextCursor": "c2"})),
            // A server that hands back the cursor it was given would loop.
            Ok(json!({"tools": [tool("c")], "nextCursor": "c2"})),
            Ok(json!({"tools": [tool("never")]})),
        ]);
        let client = transport.client(modern());
        let names: Vec<String> = client
            .list_all_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["a", "b", "c"]);
        let cursors: Vec<_> = transport
            .sent()
            .iter()
            .map(|s| s.params.get("cursor").cloned())
            .collect();
        assert_eq!(cursors, [None, Some(json!("c1")), Some(json!("c2"))]);
    }

    #[tokio::test]
    async fn a_cycle_of_cursors_ends_the_walk() {
        let transport = Scripted::new([
            Ok(json!({"tools": [tool("a")], "nextCursor": "A"})),
            Ok(json!({"tools": [tool("b")], "nextCursor": "B"})),
            // Back to A: following it would cycle A, B, A, ... for ever.
            Ok(json!({"tools": [tool("c")], "nextCursor": "A"})),
            Ok(json!({"tools": [tool("never")]})),
        ]);
        let client = transport.client(modern());
        let names: Vec<String> = client
            .list_all_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(transport.sent().len(), 3);
    }

    #[tokio::test]
    async fn the_next_cursor_is_known_between_pages() {
        let transport = Scripted::new([
            Ok(json!({"tools": [tool("a")], "nextCursor": "c1"})),
            Ok(json!({"tools": [tool("b")]})),
        ]);
        let client = transport.client(modern());
        let mut pages = client.tool_pages();
        assert_eq!(pages.next_cursor(), None);
        pages.next_page().await.unwrap().unwrap();
        assert_eq!(pages.next_cursor(), Some("c1"));
        pages.next_page().await.unwrap().unwrap();
        assert_eq!(pages.next_cursor(), None);
        assert!(pages.next_page().await.is_none());
    }

    #[tokio::test]
    async fn a_malformed_item_ends_the_walk_with_an_error() {
        let transport = Scripted::new([
            Ok(json!({"tools": [{"name": 7}], "nextCursor": "c1"})),
            Ok(json!({"tools": [tool("b")]})),
        ]);
        let client = transport.client(modern());
        let mut pages = client.tool_pages();
        let first = pages.next_page().await;
        assert!(matches!(first, Some(Err(Error::Protocol(_)))), "{first:?}");
        assert!(pages.next_page().await.is_none());
        assert_eq!(transport.sent().len(), 1);
    }

    #[tokio::test]
    async fn pages_are_served_one_per_demand_with_their_cursor() {
        let transport = Scripted::new([
            Ok(json!({"tools": [tool("a")], "nextCursor": "c1"})),
            Ok(json!({"tools": [tool("b")]})),
        ]);
        let client = transport.client(modern());
        let (demand, demands) = tokio::sync::mpsc::unbounded_channel();
        let walker = client.clone();
        let walk = tokio::spawn(async move { walker.serve_pages(ListKind::Tools, demands).await });
        let next = move || {
            let (reply, page) = tokio::sync::oneshot::channel();
            demand.send(reply).unwrap();
            page
        };
        let first = next().await.unwrap().unwrap().unwrap();
        assert_eq!(first["items"][0]["name"], "a");
        assert_eq!(first["nextCursor"], "c1");
        assert_eq!(transport.sent().len(), 1, "never fetched ahead");
        let second = next().await.unwrap().unwrap().unwrap();
        assert_eq!(second["items"][0]["name"], "b");
        assert!(second.get("nextCursor").is_none());
        assert!(next().await.unwrap().is_none());
        drop(next);
        walk.await.unwrap();
    }
}
