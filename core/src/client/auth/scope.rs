//! Which scopes to ask for (MCP "Scope Selection Strategy" and "Step-Up
//! Authorization Flow", SEP-2207 for `offline_access`).

/// The scopes of a first authorization: the challenge's `scope`, else every
/// scope the protected resource metadata lists, else none (the `scope`
/// parameter is then omitted and the authorization server decides).
pub(crate) fn initial(
    challenge: Option<&[String]>,
    resource_supported: Option<&[String]>,
) -> Vec<String> {
    challenge
        .or(resource_supported)
        .map(<[String]>::to_vec)
        .unwrap_or_default()
}

/// The scopes of a re-authorization after 403 `insufficient_scope`: what
/// was asked for before plus what the challenge names (SEP-2350: dropping
/// the earlier scopes would break the calls that worked).
pub(crate) fn step_up(previous: &[String], challenged: &[String]) -> Vec<String> {
    let mut scopes = previous.to_vec();
    for s in challenged {
        if !scopes.contains(s) {
            scopes.push(s.clone());
        }
    }
    scopes
}

/// Adds `offline_access` (to get a refresh token) when the client wants one
/// and the authorization server lists it; never to an otherwise empty
/// request, which would narrow what the server grants by default.
pub(crate) fn with_offline_access(
    mut scopes: Vec<String>,
    server_supported: Option<&[String]>,
    wanted: bool,
) -> Vec<String> {
    const OFFLINE: &str = "offline_access";
    let listed = server_supported.is_some_and(|s| s.iter().any(|x| x == OFFLINE));
    if wanted && listed && !scopes.is_empty() && !scopes.iter().any(|s| s == OFFLINE) {
        scopes.push(OFFLINE.to_owned());
    }
    scopes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_challenge_wins_then_metadata_then_nothing() {
        let supported = v(&["a", "b"]);
        assert_eq!(initial(Some(&v(&["x"])), Some(&supported)), v(&["x"]));
        assert_eq!(initial(None, Some(&supported)), supported);
        assert!(initial(None, None).is_empty());
    }

    #[test]
    fn step_up_keeps_what_was_granted() {
        assert_eq!(
            step_up(&v(&["mcp:basic"]), &v(&["mcp:write", "mcp:basic"])),
            v(&["mcp:basic", "mcp:write"])
        );
    }

    #[test]
    fn offline_access_only_when_listed_and_wanted() {
        let listed = v(&["mcp:basic", "offline_access"]);
        assert_eq!(
            with_offline_access(v(&["mcp:basic"]), Some(&listed), true),
            v(&["mcp:basic", "offline_access"])
        );
        assert_eq!(
            with_offline_access(v(&["mcp:basic"]), Some(&v(&["mcp:basic"])), true),
            v(&["mcp:basic"])
        );
        assert_eq!(
            with_offline_access(v(&["mcp:basic"]), Some(&listed), false),
            v(&["mcp:basic"])
        );
        assert!(with_offline_access(Vec::new(), Some(&listed), true).is_empty());
    }
}
