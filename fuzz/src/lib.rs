//! What the fuzz targets share: a request written as HTTP/1.1 text, so the
//! corpus holds readable requests that the fuzzer mutates.

use http::request::Parts;
use http::{HeaderName, HeaderValue, Method, Request, Uri};

/// A request parsed from `METHOD TARGET\r\n` (or `\n`), `name: value`
/// lines, a blank line and the body. `None` when the text is not one the
/// HTTP layer would hand on (hyper refuses such requests before the
/// gateway sees them).
pub fn parse_request(input: &[u8]) -> Option<(Parts, &[u8])> {
    let (head, body) = split_head(input);
    let head = std::str::from_utf8(head).ok()?;
    let mut lines = head
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line));
    let (method, target) = lines.next()?.split_once(' ')?;
    let mut builder = Request::builder()
        .method(Method::from_bytes(method.as_bytes()).ok()?)
        .uri(Uri::try_from(target).ok()?);
    for line in lines {
        let (name, value) = line.split_once(':')?;
        let name = HeaderName::from_bytes(name.trim().as_bytes()).ok()?;
        let value = HeaderValue::from_bytes(value.trim().as_bytes()).ok()?;
        builder = builder.header(name, value);
    }
    Some((builder.body(()).ok()?.into_parts().0, body))
}

fn split_head(input: &[u8]) -> (&[u8], &[u8]) {
    for (separator, len) in [(&b"\r\n\r\n"[..], 4), (&b"\n\n"[..], 2)] {
        if let Some(at) = input.windows(len).position(|w| w == separator) {
            return (&input[..at], &input[at + len..]);
        }
    }
    (input, &[])
}
