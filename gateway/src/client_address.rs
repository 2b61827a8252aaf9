//! Who a request came from: the connection's peer, or, when that peer is
//! a proxy the operator trusts (`trusted_proxies`: a load balancer, an
//! ingress), the address it forwarded in `X-Forwarded-For`. Only a trusted
//! proxy's header is believed: any client can write any address into it.
//!
//! The header is read from the right, the way proxies append to it: each
//! entry a trusted proxy added is skipped, and the first one that is not a
//! trusted proxy is the client (anything left of it is what that client
//! claimed, and is not believed). An entry that is not an IP address ends
//! the walk at the last trusted hop.
//!
//! Also here: what a connection tells each of its requests (its peer,
//! whether it is TLS), for the access log and bucket policy conditions.

use std::net::{IpAddr, SocketAddr};

use http::HeaderMap;

/// The proxies whose `X-Forwarded-For` is believed; none by default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<Network>);

/// The address of the client a request came from: the connection's peer
/// (behind a load balancer, the balancer's), or the client a trusted
/// proxy's PROXY header named. A request extension.
#[derive(Clone, Copy, Debug)]
pub struct ClientAddr(pub SocketAddr);

/// Marks a request that arrived over TLS, with the protocol version
/// (`1.2`, `1.3`) as `s3:TlsVersion` compares it. A request extension.
#[derive(Clone, Copy, Debug)]
pub struct Tls {
    /// `None` for a version rustls does not name (it speaks none older).
    pub version: Option<&'static str>,
}

/// An address block: `10.0.0.0/8`, `fd00::/8`, or one address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Network {
    base: IpAddr,
    prefix: u8,
}

impl TrustedProxies {
    /// The blocks in `list` (each `ADDR/PREFIX` or a single `ADDR`).
    pub fn parse<'a>(list: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        list.into_iter()
            .map(str::trim)
            .filter(|text| !text.is_empty())
            .map(Network::parse)
            .collect::<Result<_, _>>()
            .map(Self)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The address a request from `peer` with `headers` came from.
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = peer.to_canonical();
        if !self.trusts(peer) {
            return peer;
        }
        let mut client = peer;
        let forwarded = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .collect::<Vec<_>>();
        for entry in forwarded.iter().rev().flat_map(|value| value.rsplit(',')) {
            let Some(hop) = parse_hop(entry) else {
                return client;
            };
            client = hop;
            if !self.trusts(hop) {
                return hop;
            }
        }
        client
    }

    /// Whether `address` is one of the trusted proxies.
    pub fn trusts(&self, address: IpAddr) -> bool {
        let address = address.to_canonical();
        self.0.iter().any(|network| network.contains(address))
    }
}

/// One `X-Forwarded-For` entry: an address, an IPv6 one possibly in
/// brackets, either possibly with a port (as some proxies write them).
fn parse_hop(entry: &str) -> Option<IpAddr> {
    let entry = entry.trim();
    if let Ok(address) = entry.parse::<IpAddr>() {
        return Some(address.to_canonical());
    }
    if let Ok(socket) = entry.parse::<std::net::SocketAddr>() {
        return Some(socket.ip().to_canonical());
    }
    let bracketed = entry.strip_prefix('[')?.strip_suffix(']')?;
    bracketed.parse::<IpAddr>().ok().map(|a| a.to_canonical())
}

impl Network {
    pub fn parse(text: &str) -> Result<Self, String> {
        let refused =
            || format!("{text:?} is not an address or ADDR/PREFIX block (e.g. 10.0.0.0/8)");
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let base: IpAddr = address.parse().map_err(|_| refused())?;
        let bits = if base.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => bits,
            Some(prefix) => prefix
                .parse::<u8>()
                .ok()
                .filter(|&p| p <= bits)
                .ok_or_else(refused)?,
        };
        Ok(Self {
            base: base.to_canonical(),
            prefix,
        })
    }

    /// Whether the block holds every address (`0.0.0.0/0`, `::/0`).
    pub fn is_everything(&self) -> bool {
        self.prefix == 0
    }

    /// Whether `address` (canonical: an IPv4-mapped one as IPv4) is in it.
    pub fn contains(&self, address: IpAddr) -> bool {
        match (self.base, address) {
            (IpAddr::V4(base), IpAddr::V4(address)) => same_prefix(
                u32::from(base).into(),
                u32::from(address).into(),
                32,
                self.prefix,
            ),
            (IpAddr::V6(base), IpAddr::V6(address)) => {
                same_prefix(base.into(), address.into(), 128, self.prefix)
            }
            _ => false,
        }
    }
}

/// Whether the first `prefix` of the `bits` low bits of `a` and `b` agree.
fn same_prefix(a: u128, b: u128, bits: u8, prefix: u8) -> bool {
    let ignored = u32::from(bits - prefix);
    a.checked_shr(ignored).unwrap_or(0) == b.checked_shr(ignored).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxies(list: &[&str]) -> TrustedProxies {
        TrustedProxies::parse(list.iter().copied()).unwrap()
    }

    fn headers(values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for value in values {
            map.append("x-forwarded-for", value.parse().unwrap());
        }
        map
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn an_untrusted_peers_header_is_not_believed() {
        let none = TrustedProxies::default();
        let forged = headers(&["203.0.113.9"]);
        assert_eq!(none.client(ip("198.51.100.7"), &forged), ip("198.51.100.7"));
        let other = proxies(&["10.0.0.0/8"]);
        assert_eq!(
            other.client(ip("198.51.100.7"), &forged),
            ip("198.51.100.7")
        );
    }

    #[test]
    fn a_trusted_proxy_names_the_client_and_earlier_claims_are_ignored() {
        let lb = proxies(&["10.0.0.0/8", "fd00::/8"]);
        let peer = ip("10.1.2.3");
        assert_eq!(
            lb.client(peer, &headers(&["203.0.113.9"])),
            ip("203.0.113.9")
        );
        // The client claimed 1.2.3.4; the balancer appended what it saw.
        let claimed = headers(&["1.2.3.4, 203.0.113.9"]);
        assert_eq!(lb.client(peer, &claimed), ip("203.0.113.9"));
        // Two trusted hops (an ingress behind the balancer), two headers.
        let chain = headers(&["1.2.3.4, 203.0.113.9", "10.9.9.9"]);
        assert_eq!(lb.client(peer, &chain), ip("203.0.113.9"));
        // No header: the proxy itself.
        assert_eq!(lb.client(peer, &HeaderMap::new()), peer);
        // IPv6, bracketed, with ports; an IPv4-mapped peer.
        let v6 = headers(&["[2001:db8::1]:4711"]);
        assert_eq!(lb.client(ip("fd00::5"), &v6), ip("2001:db8::1"));
        let v4_port = headers(&["203.0.113.9:5555"]);
        assert_eq!(
            lb.client(ip("::ffff:10.0.0.1"), &v4_port),
            ip("203.0.113.9")
        );
    }

    #[test]
    fn a_garbled_entry_ends_the_walk_at_the_last_trusted_hop() {
        let lb = proxies(&["10.0.0.0/8"]);
        let garbled = headers(&["203.0.113.9, unknown, 10.0.0.2"]);
        assert_eq!(lb.client(ip("10.0.0.1"), &garbled), ip("10.0.0.2"));
        let all_trusted = headers(&["10.0.0.3, 10.0.0.2"]);
        assert_eq!(lb.client(ip("10.0.0.1"), &all_trusted), ip("10.0.0.3"));
    }

    #[test]
    fn blocks_parse_and_match_by_prefix() {
        let blocks = proxies(&["192.168.0.0/16", " 127.0.0.1 ", "::1", "0.0.0.0/0"]);
        assert_eq!(blocks.0.len(), 4);
        assert!(proxies(&["192.168.0.0/16"]).trusts(ip("192.168.255.1")));
        assert!(!proxies(&["192.168.0.0/16"]).trusts(ip("192.169.0.1")));
        assert!(proxies(&["0.0.0.0/0"]).trusts(ip("8.8.8.8")));
        assert!(!proxies(&["0.0.0.0/0"]).trusts(ip("::2")));
        assert!(proxies(&["::/0"]).trusts(ip("2001:db8::1")));
        assert!(proxies(&["127.0.0.1"]).trusts(ip("::ffff:127.0.0.1")));
        for bad in [
            "10.0.0.0/33",
            "fd00::/129",
            "10.0.0.0/x",
            "host.example",
            "10.0.0/8",
            "",
        ] {
            let parsed = TrustedProxies::parse([bad]);
            assert!(bad.is_empty() == parsed.is_ok(), "{bad}: {parsed:?}");
        }
        assert!(TrustedProxies::parse(["10.0.0.0/8", "nope"]).is_err());
    }
}
