//! The PROXY protocol header (HAProxy's, versions 1 and 2) that a TCP
//! load balancer sends before a connection's first byte, naming the
//! client it accepted the connection from. Read only from the proxies in
//! `trusted_proxies`, and only with `proxy_protocol` on: from anyone else
//! the header would be a client's claim.
//!
//! The header is read to its last byte and no further, so what follows
//! (TLS or HTTP) reaches the server untouched: version 1 byte by byte up to
//! its CRLF (at most [`V1_MAX`] bytes), version 2 by its length field.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use tokio::io::{AsyncRead, AsyncReadExt};

/// The longest version 1 header, CRLF included (the specification's).
const V1_MAX: usize = 107;
/// Version 2's fixed start.
const V2_SIGNATURE: [u8; 12] = *b"\r\n\r\n\0\r\nQUIT\n";
/// The most address and TLV bytes taken after a version 2 header: the
/// addresses need 216 at most; TLVs (which are skipped) rarely need more.
const V2_MAX_BODY: usize = 4096;

/// Reads the header at the start of `stream`: the client's address, or
/// `None` when the proxy speaks for itself (version 2 `LOCAL`, a health
/// check) or names no IP client (`UNKNOWN`, a Unix socket).
pub(super) async fn read<S: AsyncRead + Unpin>(stream: &mut S) -> io::Result<Option<SocketAddr>> {
    let mut start = [0u8; 6];
    stream.read_exact(&mut start).await?;
    if &start == b"PROXY " {
        let mut line = start.to_vec();
        while !line.ends_with(b"\r\n") {
            if line.len() == V1_MAX {
                return Err(invalid("a PROXY v1 header longer than 107 bytes"));
            }
            line.push(stream.read_u8().await?);
        }
        return parse_v1(&line);
    }
    if start != V2_SIGNATURE[..6] {
        return Err(invalid("no PROXY header from a proxy that must send one"));
    }
    let mut rest = [0u8; 10];
    stream.read_exact(&mut rest).await?;
    if rest[..6] != V2_SIGNATURE[6..] {
        return Err(invalid("a PROXY v2 signature that does not match"));
    }
    let (command, family) = (rest[6], rest[7]);
    let length = usize::from(u16::from_be_bytes([rest[8], rest[9]]));
    if length > V2_MAX_BODY {
        return Err(invalid("a PROXY v2 header longer than 4 KiB"));
    }
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).await?;
    parse_v2(command, family, &body)
}

/// `PROXY TCP4|TCP6 SOURCE DESTINATION SPORT DPORT\r\n`, or
/// `PROXY UNKNOWN ...\r\n`.
fn parse_v1(line: &[u8]) -> io::Result<Option<SocketAddr>> {
    let text = std::str::from_utf8(line).map_err(|_| invalid("a PROXY v1 header not in ASCII"))?;
    let fields: Vec<&str> = text.trim_end_matches("\r\n").split(' ').collect();
    match fields.as_slice() {
        ["PROXY", "UNKNOWN", ..] => Ok(None),
        [
            "PROXY",
            family @ ("TCP4" | "TCP6"),
            source,
            _destination,
            port,
            _,
        ] => {
            let ip: IpAddr = source
                .parse()
                .map_err(|_| invalid("a PROXY v1 source address"))?;
            let port: u16 = port
                .parse()
                .map_err(|_| invalid("a PROXY v1 source port"))?;
            if ip.is_ipv4() != (*family == "TCP4") {
                return Err(invalid("a PROXY v1 address of the other family"));
            }
            Ok(Some(SocketAddr::new(ip, port)))
        }
        _ => Err(invalid("a malformed PROXY v1 header")),
    }
}

/// Version 2 after its 16 fixed bytes: `command` (0x20 LOCAL, 0x21 PROXY),
/// `family` (0x11 TCP over IPv4, 0x21 TCP over IPv6, others named no IP
/// client) and the address block.
fn parse_v2(command: u8, family: u8, body: &[u8]) -> io::Result<Option<SocketAddr>> {
    match command {
        0x20 => return Ok(None),
        0x21 => {}
        _ => {
            return Err(invalid(
                "a PROXY v2 header of an unknown version or command",
            ));
        }
    }
    let source = match family {
        0x11 | 0x12 if body.len() >= 12 => {
            let ip = Ipv4Addr::new(body[0], body[1], body[2], body[3]);
            SocketAddr::new(IpAddr::V4(ip), u16::from_be_bytes([body[8], body[9]]))
        }
        0x21 | 0x22 if body.len() >= 36 => {
            let octets: [u8; 16] = body[..16].try_into().expect("16 bytes");
            let ip = Ipv6Addr::from(octets);
            SocketAddr::new(IpAddr::V6(ip), u16::from_be_bytes([body[32], body[33]]))
        }
        0x11 | 0x12 | 0x21 | 0x22 => return Err(invalid("a PROXY v2 address block too short")),
        _ => return Ok(None),
    };
    Ok(Some(source))
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_all(bytes: &[u8]) -> (io::Result<Option<SocketAddr>>, Vec<u8>) {
        let mut stream = bytes;
        let header = read(&mut stream).await;
        (header, stream.to_vec())
    }

    fn v2(command: u8, family: u8, body: &[u8]) -> Vec<u8> {
        let mut out = V2_SIGNATURE.to_vec();
        out.extend([command, family]);
        out.extend(u16::try_from(body.len()).unwrap().to_be_bytes());
        out.extend(body);
        out
    }

    #[tokio::test]
    async fn version_1_names_the_client_and_leaves_the_request() {
        let sent = b"PROXY TCP4 203.0.113.9 10.0.0.1 56324 9878\r\nGET / HTTP/1.1\r\n";
        let (header, rest) = read_all(sent).await;
        assert_eq!(header.unwrap(), Some("203.0.113.9:56324".parse().unwrap()));
        assert_eq!(rest, b"GET / HTTP/1.1\r\n");
        let v6 = b"PROXY TCP6 2001:db8::1 fd00::1 4711 443\r\n\x16";
        let (header, rest) = read_all(v6).await;
        assert_eq!(header.unwrap(), Some("[2001:db8::1]:4711".parse().unwrap()));
        assert_eq!(rest, b"\x16");
        let (header, rest) = read_all(b"PROXY UNKNOWN\r\nGET").await;
        assert_eq!((header.unwrap(), rest.as_slice()), (None, &b"GET"[..]));
    }

    #[tokio::test]
    async fn version_2_names_the_client_and_leaves_the_request() {
        let mut body = vec![203, 0, 113, 9, 10, 0, 0, 1];
        body.extend(56324u16.to_be_bytes());
        body.extend(9878u16.to_be_bytes());
        body.extend([0x03, 0, 4, 1, 2, 3, 4]); // a CRC32C TLV, skipped
        let mut sent = v2(0x21, 0x11, &body);
        sent.extend(b"GET /");
        let (header, rest) = read_all(&sent).await;
        assert_eq!(header.unwrap(), Some("203.0.113.9:56324".parse().unwrap()));
        assert_eq!(rest, b"GET /");
        let mut v6 = "2001:db8::1".parse::<Ipv6Addr>().unwrap().octets().to_vec();
        v6.extend([0; 16]);
        v6.extend(4711u16.to_be_bytes());
        v6.extend(443u16.to_be_bytes());
        let (header, _) = read_all(&v2(0x21, 0x21, &v6)).await;
        assert_eq!(header.unwrap(), Some("[2001:db8::1]:4711".parse().unwrap()));
        // LOCAL: the proxy's own health check; a Unix socket client: no IP.
        let (header, rest) = read_all(&[v2(0x20, 0x00, &[]), b"GET".to_vec()].concat()).await;
        assert_eq!((header.unwrap(), rest.as_slice()), (None, &b"GET"[..]));
        let (header, _) = read_all(&v2(0x21, 0x31, &[0; 216])).await;
        assert_eq!(header.unwrap(), None);
    }

    #[tokio::test]
    async fn anything_else_is_refused() {
        let refused: Vec<Vec<u8>> = vec![
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            b"PROXY TCP4 203.0.113.9 10.0.0.1 56324\r\n".to_vec(),
            b"PROXY TCP4 2001:db8::1 10.0.0.1 1 2\r\n".to_vec(),
            b"PROXY TCP4 203.0.113.9 10.0.0.1 99999 2\r\n".to_vec(),
            [b"PROXY TCP4 ".to_vec(), vec![b'1'; 200]].concat(),
            b"PROXY TCP4 203.0.113.9".to_vec(), // ends before its CRLF
            v2(0x22, 0x11, &[0; 12]),
            v2(0x21, 0x11, &[0; 4]),
            [V2_SIGNATURE.to_vec(), vec![0x21, 0x11, 0xff, 0xff]].concat(),
            b"\r\n\r\n\0\r\nQUIT?rest".to_vec(),
        ];
        for sent in refused {
            let (header, _) = read_all(&sent).await;
            assert!(
                header.is_err(),
                "{:?} was taken: {header:?}",
                String::from_utf8_lossy(&sent)
            );
        }
    }
}
