//! Answers of a host's input handlers (elicitation, sampling, roots) on
//! their way back to core: each binding runs its handler through its own
//! host-call adapter, typed by the kind's result; what it got back, or how
//! the handler failed, is turned into the request's answer here, once.

use serde::Serialize;
use serde_json::Value;

use crate::Error;
use crate::protocol::InputKind;
use crate::server::HandlerError;

/// The answer to one input request: the typed result the handler gave as
/// JSON, or an error for how it failed. A raised `McpError` keeps its code
/// (a legacy server receives it as is); any other failure is reported as
/// the handler's, naming the kind.
///
/// ```
/// use ferromcp::host::input::input_answer;
/// use ferromcp::protocol::{ElicitResult, InputKind};
/// use ferromcp::server::HandlerError;
///
/// let failed: Result<ElicitResult, _> = Err(HandlerError::tool("no user"));
/// let error = input_answer(InputKind::Elicitation, failed).unwrap_err();
/// assert_eq!(error.to_string(), "protocol error: the elicitation handler failed: no user");
/// ```
pub fn input_answer<R: Serialize>(
    kind: InputKind,
    answer: Result<R, HandlerError>,
) -> Result<Value, Error> {
    let answer = answer.map_err(|error| match error {
        HandlerError::Protocol(mcp) => Error::Mcp(mcp),
        HandlerError::Tool(message) => Error::Protocol(format!(
            "the {} handler failed: {message}",
            kind.capability()
        )),
    })?;
    Ok(serde_json::to_value(answer)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::McpError;
    use crate::protocol::ListRootsResult;

    #[test]
    fn a_raised_mcp_error_keeps_its_code() {
        let raised: Result<ListRootsResult, _> =
            Err(HandlerError::Protocol(McpError::new(-32042, "no roots")));
        match input_answer(InputKind::Roots, raised) {
            Err(Error::Mcp(mcp)) => assert_eq!(mcp.code, -32042),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_answer_becomes_its_json() {
        let roots = ListRootsResult { roots: Vec::new() };
        let value = input_answer(InputKind::Roots, Ok(roots)).unwrap();
        assert_eq!(value, serde_json::json!({"roots": []}));
    }
}
