//! The stdio framing both sides read: one message per line, ended by `\n`
//! or by `\r\n` as a Windows program writes it, within a size limit.

use tokio::io::AsyncBufReadExt;

/// What [`read_line_bounded`] found.
pub(crate) enum LineRead {
    Line,
    TooLong,
    Eof,
}

/// Reads one line into `buf`, without its terminator: `\n`, or `\r\n` as a
/// Windows program writes it. The limit is on the message, so the same
/// message fits whichever ending it has; `buf` never holds more than `limit`
/// bytes and a `\r`. A longer line is consumed and reported as `TooLong`.
/// A last line without a terminator counts as a line.
pub(crate) async fn read_line_bounded<R: AsyncBufReadExt + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<LineRead> {
    // One byte over the limit is allowed while the line is open: it may be
    // the `\r` of a `\r\n` whose `\n` has not arrived yet.
    let room = limit.saturating_add(1);
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        let at_end = available.is_empty();
        if at_end && buf.is_empty() && !too_long {
            return Ok(LineRead::Eof);
        }
        let newline = available.iter().position(|&b| b == b'\n');
        let (content, used) = match newline {
            Some(i) => (&available[..i], i + 1),
            None => (available, available.len()),
        };
        if !too_long {
            if buf.len() + content.len() > room {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(content);
            }
        }
        reader.consume(used);
        if newline.is_some() || at_end {
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            if too_long || buf.len() > limit {
                buf.clear();
                return Ok(LineRead::TooLong);
            }
            return Ok(LineRead::Line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{LineRead, read_line_bounded};

    /// Every line of `input` read with `limit`, through a buffer of
    /// `capacity` bytes (small ones split `\r\n` across reads): `Some(line)`
    /// or `None` for a line over the limit.
    async fn lines(input: &[u8], limit: usize, capacity: usize) -> Vec<Option<String>> {
        let mut reader = tokio::io::BufReader::with_capacity(capacity, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            buf.clear();
            match read_line_bounded(&mut reader, &mut buf, limit)
                .await
                .unwrap()
            {
                LineRead::Line => out.push(Some(String::from_utf8(buf.clone()).unwrap())),
                LineRead::TooLong => out.push(None),
                LineRead::Eof => return out,
            }
        }
    }

    #[tokio::test]
    async fn crlf_and_lf_lines_are_read_alike_and_blank_crlf_lines_are_empty() {
        for capacity in 1..=12 {
            assert_eq!(
                lines(b"{\"a\":1}\r\n\r\n{\"b\":2}\n\n{\"c\":3}\r", 64, capacity).await,
                [
                    Some("{\"a\":1}".into()),
                    Some(String::new()),
                    Some("{\"b\":2}".into()),
                    Some(String::new()),
                    Some("{\"c\":3}".into()),
                ],
                "capacity {capacity}"
            );
        }
    }

    #[tokio::test]
    async fn the_limit_is_on_the_message_whatever_its_line_ending() {
        for capacity in 1..=12 {
            // Exactly the limit fits with either ending; one byte more
            // does not, and the reader goes on with the next line.
            assert_eq!(
                lines(
                    b"12345678\r\n12345678\n123456789\r\n123456789\nok\r\n",
                    8,
                    capacity
                )
                .await,
                [
                    Some("12345678".into()),
                    Some("12345678".into()),
                    None,
                    None,
                    Some("ok".into()),
                ],
                "capacity {capacity}"
            );
            // A `\r` inside a line is part of it (and counts).
            assert_eq!(
                lines(b"1234567\r8\r\n1234\r678\n", 8, capacity).await,
                [None, Some("1234\r678".into())],
                "capacity {capacity}"
            );
            // A last line without a terminator, over and at the limit.
            assert_eq!(lines(b"123456789", 8, capacity).await, [None]);
            assert_eq!(
                lines(b"12345678\r", 8, capacity).await,
                [Some("12345678".into())]
            );
        }
    }
}
