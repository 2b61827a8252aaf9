//! A streaming `multipart/form-data` reader for browser form uploads.
//!
//! The fields before the file are small and read whole, within a budget;
//! the file part, which may be gigabytes, is handed out piece by piece as
//! it arrives. The reader holds at most one received piece plus a
//! delimiter's length, so no client can make it buffer more.

use bytes::{Buf, Bytes, BytesMut};

use crate::auth::Payload;
use crate::error::{Code, S3Error, S3Result};

/// The longest header block of one part (its Content-Disposition and
/// Content-Type); browsers send a few hundred bytes.
const MAX_PART_HEADERS: usize = 8 * 1024;

/// One part's header: its field name (lower-cased: S3 matches form field
/// names without regard to case), and for the file part its file name.
#[derive(Debug, PartialEq, Eq)]
pub struct PartHead {
    pub name: String,
    pub filename: Option<String>,
    pub content_type: Option<String>,
}

pub struct FormReader<'a> {
    payload: &'a mut Payload,
    buf: BytesMut,
    /// `\r\n--boundary`: what ends every part. The body is read as if it
    /// began with `\r\n`, so the first boundary looks like the others.
    delimiter: Vec<u8>,
    state: State,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the first delimiter.
    Preamble,
    /// Just after a delimiter: `--` ends the form, a line break starts a part.
    AfterDelimiter,
    /// Inside a part's body.
    Body,
    /// The closing delimiter has been read.
    Done,
}

impl<'a> FormReader<'a> {
    /// A reader for a body whose Content-Type named `boundary`.
    pub fn new(payload: &'a mut Payload, boundary: &str) -> Self {
        let mut delimiter = b"\r\n--".to_vec();
        delimiter.extend_from_slice(boundary.as_bytes());
        Self {
            payload,
            buf: BytesMut::from(&b"\r\n"[..]),
            delimiter,
            state: State::Preamble,
        }
    }

    /// The next part's header, or `None` once the form has ended. The rest
    /// of the current part's body, if any, is skipped.
    pub async fn next_part(&mut self) -> S3Result<Option<PartHead>> {
        loop {
            match self.state {
                State::Done => return Ok(None),
                State::Preamble | State::Body => while self.next_chunk().await?.is_some() {},
                State::AfterDelimiter => {
                    while self.buf.len() < 2 {
                        self.fill().await?;
                    }
                    if self.buf.starts_with(b"--") {
                        self.state = State::Done;
                        return Ok(None);
                    }
                    return self.read_head().await.map(Some);
                }
            }
        }
    }

    /// The next piece of the current part's body; `None` at its end.
    pub async fn next_chunk(&mut self) -> S3Result<Option<Bytes>> {
        if !matches!(self.state, State::Preamble | State::Body) {
            return Ok(None);
        }
        loop {
            if let Some(at) = find(&self.buf, &self.delimiter) {
                let piece = self.buf.split_to(at).freeze();
                self.buf.advance(self.delimiter.len());
                self.state = State::AfterDelimiter;
                return Ok(Some(piece).filter(|piece| !piece.is_empty()));
            }
            // All but a delimiter's length is surely body.
            let safe = self.buf.len().saturating_sub(self.delimiter.len() - 1);
            if safe > 0 {
                return Ok(Some(self.buf.split_to(safe).freeze()));
            }
            self.fill().await?;
        }
    }

    /// The rest of the current part's body, refused beyond `budget` bytes
    /// (which the caller shares among all the small fields).
    pub async fn read_value(&mut self, budget: &mut usize) -> S3Result<Bytes> {
        let mut value = BytesMut::new();
        while let Some(piece) = self.next_chunk().await? {
            if piece.len() > *budget {
                return Err(S3Error::new(
                    Code::MaxMessageLengthExceeded,
                    "The form fields before the file are larger than allowed.",
                ));
            }
            *budget -= piece.len();
            value.extend_from_slice(&piece);
        }
        Ok(value.freeze())
    }

    async fn read_head(&mut self) -> S3Result<PartHead> {
        let end = loop {
            if let Some(at) = find(&self.buf, b"\r\n\r\n") {
                break at;
            }
            if self.buf.len() > MAX_PART_HEADERS {
                return Err(malformed("a form part's headers are too long."));
            }
            self.fill().await?;
        };
        if end + 4 > MAX_PART_HEADERS {
            return Err(malformed("a form part's headers are too long."));
        }
        let block = self.buf.split_to(end + 4);
        self.state = State::Body;
        // The line break that ended the delimiter line starts the block.
        let text = std::str::from_utf8(&block[..end])
            .map_err(|_| malformed("a form part's headers are not UTF-8."))?;
        let text = text.trim_start_matches([' ', '\t']);
        let text = text
            .strip_prefix("\r\n")
            .ok_or_else(|| malformed("a boundary is not followed by a line break."))?;
        parse_head(text)
    }

    /// Reads the next piece of the request body into the buffer.
    async fn fill(&mut self) -> S3Result<()> {
        match self.payload.next_chunk().await {
            Some(piece) => {
                self.buf.extend_from_slice(&piece?);
                Ok(())
            }
            None => Err(malformed(
                "the body ended before the form's closing boundary.",
            )),
        }
    }
}

fn parse_head(text: &str) -> S3Result<PartHead> {
    let mut head = PartHead {
        name: String::new(),
        filename: None,
        content_type: None,
    };
    let mut named = false;
    for line in text.split("\r\n") {
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| malformed("a form part's header line has no colon."))?;
        let value = value.trim();
        if name.trim().eq_ignore_ascii_case("content-disposition") {
            let mut params = value.split(';').map(str::trim);
            if !params
                .next()
                .is_some_and(|kind| kind.eq_ignore_ascii_case("form-data"))
            {
                return Err(malformed("a form part is not form-data."));
            }
            for param in params {
                let Some((key, raw)) = param.split_once('=') else {
                    continue;
                };
                let raw = raw.trim();
                let value = raw
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .unwrap_or(raw)
                    .replace("\\\"", "\"");
                match key.trim().to_ascii_lowercase().as_str() {
                    "name" => {
                        head.name = value.to_ascii_lowercase();
                        named = true;
                    }
                    "filename" => head.filename = Some(value),
                    _ => {}
                }
            }
        } else if name.trim().eq_ignore_ascii_case("content-type") {
            head.content_type = Some(value.to_owned());
        }
    }
    if !named {
        return Err(malformed("a form part has no field name."));
    }
    Ok(head)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window[0] == needle[0] && window == needle)
}

/// Every malformed form is answered the same way, saying what was wrong.
pub fn malformed(what: &str) -> S3Error {
    S3Error::new(
        Code::MalformedPOSTRequest,
        format!("The body of your POST request is not well-formed multipart/form-data: {what}"),
    )
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use futures::stream;

    use super::*;

    /// A payload arriving in pieces of `piece` bytes.
    fn payload(body: &[u8], piece: usize) -> Payload {
        let items: Vec<Result<Bytes, std::io::Error>> = body
            .chunks(piece)
            .map(|chunk| Ok(Bytes::copy_from_slice(chunk)))
            .collect();
        Payload::unsigned(Body::from_stream(stream::iter(items)), None)
    }

    const FORM: &[u8] = b"preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=\"Key\"\r\n\r\nuser/${filename}\r\n--XyZ\r\nContent-Disposition: form-data; name=\"empty\"\r\n\r\n\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a b.txt\"\r\nContent-Type: text/plain\r\n\r\nline one\r\n--Xy is not the end\r\n--XyZ--\r\n";

    async fn read_all(piece: usize) -> Vec<(PartHead, Vec<u8>)> {
        let mut body = payload(FORM, piece);
        let mut form = FormReader::new(&mut body, "XyZ");
        let mut parts = Vec::new();
        while let Some(head) = form.next_part().await.unwrap() {
            let mut value = Vec::new();
            while let Some(chunk) = form.next_chunk().await.unwrap() {
                value.extend_from_slice(&chunk);
            }
            parts.push((head, value));
        }
        parts
    }

    #[tokio::test]
    async fn a_large_file_is_handed_out_as_it_arrives() {
        let piece = 16 * 1024;
        let file = vec![b'f'; 4 * 1024 * 1024];
        let body = [
            b"--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n".as_slice(),
            &file,
            b"\r\n--b--\r\n",
        ]
        .concat();
        let mut body = payload(&body, piece);
        let mut form = FormReader::new(&mut body, "b");
        form.next_part().await.unwrap().unwrap();
        let (mut received, mut most_held) = (0, 0);
        while let Some(chunk) = form.next_chunk().await.unwrap() {
            received += chunk.len();
            most_held = most_held.max(form.buf.len() + chunk.len());
        }
        assert_eq!(received, file.len());
        // One piece and a delimiter's length at most, never the file.
        assert!(most_held <= piece + form.delimiter.len(), "{most_held}");
        assert!(form.next_part().await.unwrap().is_none());
    }

    #[tokio::test]
    async fn fields_and_file_are_read_whatever_the_piece_size() {
        for piece in [1, 2, 3, 7, 16, 1000] {
            let parts = read_all(piece).await;
            let names: Vec<&str> = parts.iter().map(|(h, _)| h.name.as_str()).collect();
            assert_eq!(names, ["key", "empty", "file"], "piece {piece}");
            assert_eq!(parts[0].1, b"user/${filename}");
            assert!(parts[1].1.is_empty());
            assert_eq!(parts[2].0.filename.as_deref(), Some("a b.txt"));
            assert_eq!(parts[2].0.content_type.as_deref(), Some("text/plain"));
            assert_eq!(parts[2].1, b"line one\r\n--Xy is not the end");
        }
    }

    #[tokio::test]
    async fn small_fields_share_a_budget() {
        let mut body = payload(FORM, 5);
        let mut form = FormReader::new(&mut body, "XyZ");
        form.next_part().await.unwrap();
        let mut budget = 10;
        let err = form.read_value(&mut budget).await.unwrap_err();
        assert_eq!(err.code, "MaxMessageLengthExceeded");
    }

    #[tokio::test]
    async fn malformed_forms_are_400_naming_the_fault() {
        let cases: [&[u8]; 5] = [
            b"--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nno end",
            b"--XyZ\r\nno colon here\r\n\r\nv\r\n--XyZ--",
            b"--XyZ\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nv\r\n--XyZ--",
            b"--XyZ\r\nContent-Type: text/plain\r\n\r\nv\r\n--XyZ--",
            b"nothing like a form",
        ];
        for case in cases {
            let mut body = payload(case, 4);
            let mut form = FormReader::new(&mut body, "XyZ");
            let outcome = async {
                while form.next_part().await?.is_some() {
                    while form.next_chunk().await?.is_some() {}
                }
                Ok::<_, S3Error>(())
            }
            .await;
            let err = outcome.unwrap_err();
            assert_eq!(
                (err.code, err.status.as_u16()),
                ("MalformedPOSTRequest", 400)
            );
        }
        let endless_head = [b"--XyZ\r\nX: ".as_slice(), &[b'a'; 20_000]].concat();
        let mut body = payload(&endless_head, 1000);
        let mut form = FormReader::new(&mut body, "XyZ");
        assert_eq!(
            form.next_part().await.unwrap_err().code,
            "MalformedPOSTRequest"
        );
    }
}
