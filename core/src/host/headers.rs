//! A request's HTTP headers as a host shows them to a handler: one entry a
//! name, lower-case, a repeated header's values joined with `", "` (as HTTP
//! allows for most headers), invalid UTF-8 replaced.

use http::HeaderMap;

/// `headers` as `(name, value)` pairs, one a name.
///
/// ```
/// use ferromcp::host::headers::joined;
/// use http::HeaderMap;
///
/// let mut headers = HeaderMap::new();
/// headers.append("x-tag", "a".parse().unwrap());
/// headers.append("x-tag", "b".parse().unwrap());
/// assert_eq!(joined(&headers), vec![("x-tag".to_owned(), "a, b".to_owned())]);
/// ```
pub fn joined(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .keys()
        .map(|name| {
            let values: Vec<String> = headers
                .get_all(name)
                .iter()
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .collect();
            (name.as_str().to_owned(), values.join(", "))
        })
        .collect()
}
