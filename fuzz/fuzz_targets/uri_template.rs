//! URI-template matching (RFC 6570, as `resources/read` routes by it): a
//! template line, then the URI to match. Parsing and matching must not
//! panic on any input, and a parsed template keeps its text.
#![no_main]

use ferromcp::server::uri_template::UriTemplate;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (template, uri) = text.split_once('\n').unwrap_or((&text, ""));
    if let Ok(parsed) = UriTemplate::parse(template) {
        assert_eq!(parsed.as_str(), template);
        if let Some(vars) = parsed.matches(uri) {
            // Whatever matched is reported as JSON the handler can read.
            let _ = serde_json::to_string(&vars).expect("variables serialise");
        }
    }
});
