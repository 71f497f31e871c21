//! Header value encoding shared by client and server: plain visible ASCII,
//! or `=?base64?…?=` for anything else (spec: "Value Encoding"). The rules
//! live in [`crate::protocol::mcp_headers`]; re-exported here so transport
//! code keeps its paths.

pub use crate::protocol::mcp_headers::decode_header_value;
