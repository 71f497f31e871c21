//! The few protobuf encodings OTLP/HTTP needs (varints, length-delimited
//! fields, fixed64, doubles), written by hand: the messages are fixed and
//! small, and a protobuf code generator would add a build step and a
//! dependency tree for about a hundred lines.

/// Wire types.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;

/// A protobuf message being written.
#[derive(Default)]
pub(crate) struct Writer {
    pub(crate) bytes: Vec<u8>,
}

impl Writer {
    fn key(&mut self, field: u32, wire: u8) {
        self.varint((u64::from(field) << 3) | u64::from(wire));
    }

    fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.bytes.push((value as u8) | 0x80);
            value >>= 7;
        }
        self.bytes.push(value as u8);
    }

    /// A `uint32`/`uint64`/`int64`/enum field (omitted when zero, as proto3
    /// does).
    pub(crate) fn uint(&mut self, field: u32, value: u64) {
        if value != 0 {
            self.key(field, VARINT);
            self.varint(value);
        }
    }

    /// An `int64` field, negative values as ten-byte varints.
    pub(crate) fn int(&mut self, field: u32, value: i64) {
        self.uint(field, value as u64);
    }

    /// A `fixed64` field (always written: a time or count of zero is rare
    /// and harmless).
    pub(crate) fn fixed64(&mut self, field: u32, value: u64) {
        self.key(field, FIXED64);
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    /// A `double` field.
    pub(crate) fn double(&mut self, field: u32, value: f64) {
        self.key(field, FIXED64);
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    /// A `bytes` field (omitted when empty).
    pub(crate) fn bytes(&mut self, field: u32, value: &[u8]) {
        if !value.is_empty() {
            self.key(field, LEN);
            self.varint(value.len() as u64);
            self.bytes.extend_from_slice(value);
        }
    }

    /// A `string` field (omitted when empty).
    pub(crate) fn string(&mut self, field: u32, value: &str) {
        self.bytes(field, value.as_bytes());
    }

    /// A packed `repeated fixed64` field.
    pub(crate) fn packed_fixed64(&mut self, field: u32, values: &[u64]) {
        if values.is_empty() {
            return;
        }
        self.key(field, LEN);
        self.varint((values.len() * 8) as u64);
        for value in values {
            self.bytes.extend_from_slice(&value.to_le_bytes());
        }
    }

    /// A packed `repeated double` field.
    pub(crate) fn packed_double(&mut self, field: u32, values: &[f64]) {
        if values.is_empty() {
            return;
        }
        self.key(field, LEN);
        self.varint((values.len() * 8) as u64);
        for value in values {
            self.bytes.extend_from_slice(&value.to_le_bytes());
        }
    }

    /// An embedded message field, written by `fill` (always written, even
    /// empty: presence matters for messages).
    pub(crate) fn message(&mut self, field: u32, fill: impl FnOnce(&mut Writer)) {
        let mut inner = Writer::default();
        fill(&mut inner);
        self.key(field, LEN);
        self.varint(inner.bytes.len() as u64);
        self.bytes.extend_from_slice(&inner.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_match_the_protobuf_wire_format() {
        let mut w = Writer::default();
        w.uint(1, 150);
        assert_eq!(w.bytes, [0x08, 0x96, 0x01]);
        let mut w = Writer::default();
        w.string(2, "testing");
        assert_eq!(w.bytes, b"\x12\x07testing");
        let mut w = Writer::default();
        w.message(3, |m| m.uint(1, 150));
        assert_eq!(w.bytes, [0x1a, 0x03, 0x08, 0x96, 0x01]);
        let mut w = Writer::default();
        w.fixed64(7, 1);
        assert_eq!(w.bytes, [0x39, 1, 0, 0, 0, 0, 0, 0, 0]);
        let mut w = Writer::default();
        w.int(3, -1);
        assert_eq!(w.bytes.len(), 11);
        let mut w = Writer::default();
        w.uint(1, 0);
        w.string(2, "");
        assert!(w.bytes.is_empty());
    }
}
