//! Just enough of the protobuf wire format for the block-token identifier:
//! varints and length-delimited fields, written and read by hand so the
//! token code needs no code generator.

/// Wire types we write or must be able to skip.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LENGTH_DELIMITED: u8 = 2;
const FIXED32: u8 = 5;

#[derive(Default)]
pub(crate) struct Encoder {
    buf: Vec<u8>,
}

impl Encoder {
    pub(crate) fn finish(self) -> Vec<u8> {
        self.buf
    }

    fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.buf.push((value as u8) | 0x80);
            value >>= 7;
        }
        self.buf.push(value as u8);
    }

    fn tag(&mut self, field: u32, wire_type: u8) {
        self.varint((u64::from(field) << 3) | u64::from(wire_type));
    }

    pub(crate) fn uint64(&mut self, field: u32, value: u64) {
        self.tag(field, VARINT);
        self.varint(value);
    }

    /// `int64` is a plain varint of the two's-complement value (not zigzag).
    pub(crate) fn int64(&mut self, field: u32, value: i64) {
        self.uint64(field, value as u64);
    }

    pub(crate) fn bytes(&mut self, field: u32, value: &[u8]) {
        self.tag(field, LENGTH_DELIMITED);
        self.varint(value.len() as u64);
        self.buf.extend_from_slice(value);
    }
}

/// One decoded field value; fixed-width values are only skipped.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Value<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

pub(crate) struct Decoder<'a> {
    buf: &'a [u8],
}

impl<'a> Decoder<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self { buf }
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self.buf.split_first().ok_or("truncated varint")?;
            self.buf = rest;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("varint longer than 10 bytes".into())
    }

    fn take(&mut self, len: u64) -> Result<&'a [u8], String> {
        let len = usize::try_from(len).map_err(|_| "field length overflows")?;
        if len > self.buf.len() {
            return Err("truncated field".into());
        }
        let (head, rest) = self.buf.split_at(len);
        self.buf = rest;
        Ok(head)
    }

    /// The next `(field number, value)`, or `None` at the end of the message.
    pub(crate) fn next_field(&mut self) -> Result<Option<(u32, Value<'a>)>, String> {
        if self.buf.is_empty() {
            return Ok(None);
        }
        let tag = self.varint()?;
        let field = u32::try_from(tag >> 3).map_err(|_| "field number overflows")?;
        let value = match (tag & 0x7) as u8 {
            VARINT => Value::Varint(self.varint()?),
            LENGTH_DELIMITED => {
                let len = self.varint()?;
                Value::Bytes(self.take(len)?)
            }
            FIXED64 => {
                self.take(8)?;
                Value::Fixed
            }
            FIXED32 => {
                self.take(4)?;
                Value::Fixed
            }
            other => return Err(format!("unsupported wire type {other}")),
        };
        Ok(Some((field, value)))
    }

    /// Reads a packed run of varints (the payload of a length-delimited field).
    pub(crate) fn packed_varints(buf: &'a [u8]) -> Result<Vec<u64>, String> {
        let mut decoder = Decoder::new(buf);
        let mut values = Vec::new();
        while !decoder.buf.is_empty() {
            values.push(decoder.varint()?);
        }
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_bytes_round_trip() {
        let mut enc = Encoder::default();
        enc.uint64(1, 300);
        enc.int64(2, -1);
        enc.bytes(3, b"hello");
        enc.uint64(4, u64::MAX);
        let buf = enc.finish();
        assert_eq!(
            &buf[..3],
            &[0x08, 0xac, 0x02],
            "300 is the protobuf docs' example"
        );
        let mut dec = Decoder::new(&buf);
        assert_eq!(dec.next_field().unwrap(), Some((1, Value::Varint(300))));
        assert_eq!(
            dec.next_field().unwrap(),
            Some((2, Value::Varint(u64::MAX)))
        );
        assert_eq!(dec.next_field().unwrap(), Some((3, Value::Bytes(b"hello"))));
        assert_eq!(
            dec.next_field().unwrap(),
            Some((4, Value::Varint(u64::MAX)))
        );
        assert_eq!(dec.next_field().unwrap(), None);
    }

    #[test]
    fn truncated_input_is_an_error_not_a_panic() {
        let mut enc = Encoder::default();
        enc.bytes(3, b"hello");
        let buf = enc.finish();
        for cut in 1..buf.len() {
            let mut dec = Decoder::new(&buf[..cut]);
            assert!(dec.next_field().is_err(), "cut at {cut}");
        }
    }
}
