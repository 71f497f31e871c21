//! The `WWW-Authenticate: Bearer ...` challenge of a 401 or 403 (RFC 6750
//! §3, RFC 9728 §5.1): `resource_metadata`, `scope` and `error`.

/// The Bearer challenge's parameters the client acts on.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Challenge {
    pub(crate) resource_metadata: Option<String>,
    pub(crate) scope: Option<Vec<String>>,
    pub(crate) error: Option<String>,
}

impl Challenge {
    /// Parses the Bearer challenge of one header value; other schemes'
    /// challenges in the same value are skipped. Quoted strings may hold
    /// commas and escaped quotes.
    pub(crate) fn parse(header: &str) -> Challenge {
        let mut challenge = Challenge::default();
        let mut in_bearer = false;
        let mut rest = header.trim();
        while !rest.is_empty() {
            // A token followed by whitespace (not `=`) starts a new scheme.
            let token_end = rest
                .find(|c: char| c == '=' || c == ',' || c.is_whitespace())
                .unwrap_or(rest.len());
            let token = &rest[..token_end];
            let after = rest[token_end..].trim_start();
            if !after.starts_with('=') {
                if !token.is_empty() {
                    // DPoP challenges (RFC 9449 §7.1) carry the same
                    // parameters.
                    in_bearer =
                        token.eq_ignore_ascii_case("bearer") || token.eq_ignore_ascii_case("dpop");
                }
                rest = after.trim_start_matches(',').trim_start();
                continue;
            }
            let after = after[1..].trim_start();
            let (value, remaining) = if let Some(quoted) = after.strip_prefix('"') {
                let mut value = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some((_, escaped)) = chars.next() {
                                value.push(escaped);
                            }
                        }
                        '"' => {
                            end = i + 1;
                            break;
                        }
                        other => value.push(other),
                    }
                }
                (value, &quoted[end.min(quoted.len())..])
            } else {
                let end = after.find(',').unwrap_or(after.len());
                (after[..end].trim().to_owned(), &after[end..])
            };
            if in_bearer {
                match token.to_ascii_lowercase().as_str() {
                    "resource_metadata" => challenge.resource_metadata = Some(value),
                    "scope" => {
                        challenge.scope =
                            Some(value.split_whitespace().map(str::to_owned).collect())
                    }
                    "error" => challenge.error = Some(value),
                    _ => {}
                }
            }
            rest = remaining.trim_start().trim_start_matches(',').trim_start();
        }
        challenge
    }

    /// A 403 that asks for more scope (step-up), as opposed to a plain
    /// refusal that a new token would not change.
    pub(crate) fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_bearer_parameters() {
        let c = Challenge::parse(
            r#"Bearer error="insufficient_scope", scope="mcp:read mcp:write", resource_metadata="http://localhost:3/.well-known/oauth-protected-resource/mcp", error_description="a, \"quoted\" text""#,
        );
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert!(c.insufficient_scope());
        assert_eq!(
            c.scope,
            Some(vec!["mcp:read".to_owned(), "mcp:write".to_owned()])
        );
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://localhost:3/.well-known/oauth-protected-resource/mcp")
        );
    }

    #[test]
    fn ignores_other_schemes_and_handles_bare_tokens() {
        let c = Challenge::parse(
            r#"Basic realm="x", scope="nope", Bearer realm=api, error=invalid_token, scope="a""#,
        );
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(c.scope, Some(vec!["a".to_owned()]));
        assert!(!c.insufficient_scope());
        let dpop = Challenge::parse(r#"DPoP error="use_dpop_nonce", resource_metadata="http://r""#);
        assert_eq!(dpop.error.as_deref(), Some("use_dpop_nonce"));
        assert_eq!(dpop.resource_metadata.as_deref(), Some("http://r"));
        assert_eq!(Challenge::parse("Bearer"), Challenge::default());
        assert_eq!(Challenge::parse(""), Challenge::default());
    }
}
