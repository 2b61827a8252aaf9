"""Requests written byte for byte on a plain socket.

HTTP libraries fix up what these tests need to send wrong on purpose: an
absolute-form target beside a different Host, a header section that never
ends, a body shorter than declared, an HTTP/2 preface and nothing else.
"""

import socket
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field


@dataclass
class Reply:
    status: int
    headers: dict = field(default_factory=dict)  # lower-case names, last value wins
    body: bytes = b""

    def error_code(self) -> str | None:
        """The S3 XML error's Code, or None when the body is not one."""
        try:
            root = ET.fromstring(self.body)
        except ET.ParseError:
            return None
        code = root.find("Code")
        return code.text if root.tag == "Error" and code is not None else None


def connect(port: int, timeout: float = 30) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=timeout)


def request_bytes(request_line: str, headers: list[tuple[str, str]], body: bytes = b"") -> bytes:
    lines = [request_line] + [f"{name}: {value}" for name, value in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def read_reply(sock: socket.socket) -> Reply:
    """Reads one HTTP/1.1 response (Content-Length framed, or up to close)."""
    received = b""
    while b"\r\n\r\n" not in received:
        data = sock.recv(65536)
        if not data:
            raise ConnectionError(f"connection closed before a response head: {received[:200]!r}")
        received += data
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        length = int(headers["content-length"])
        while len(body) < length:
            data = sock.recv(65536)
            if not data:
                break
            body += data
        body = body[:length]
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        body = read_chunked(sock, body)
    return Reply(status, headers, body)


def read_chunked(sock: socket.socket, buffered: bytes) -> bytes:
    out = b""
    while True:
        while b"\r\n" not in buffered:
            buffered += sock.recv(65536)
        line, _, buffered = buffered.partition(b"\r\n")
        size = int(line.split(b";")[0], 16)
        while len(buffered) < size + 2:
            buffered += sock.recv(65536)
        out += buffered[:size]
        buffered = buffered[size + 2:]
        if size == 0:
            return out


def exchange(port: int, request_line: str, headers: list[tuple[str, str]], body: bytes = b"",
             timeout: float = 30) -> Reply:
    """Sends one request on a fresh connection and reads its response."""
    with connect(port, timeout) as sock:
        sock.sendall(request_bytes(request_line, headers, body))
        return read_reply(sock)


def closed_by_server(sock: socket.socket, within: float) -> bool:
    """Whether the server closes `sock` within `within` seconds (any bytes it
    sends first, such as an error response or a GOAWAY, are read and dropped)."""
    deadline = time.monotonic() + within
    try:
        while (left := deadline - time.monotonic()) > 0:
            sock.settimeout(left)
            if not sock.recv(65536):
                return True
    except (socket.timeout, TimeoutError):
        return False
    except OSError:
        return True  # reset
    return False


# ---- HTTP/2 over cleartext (prior knowledge), just enough to misbehave ----

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
H2_DATA, H2_HEADERS, H2_SETTINGS, H2_GOAWAY, H2_CONTINUATION = 0x0, 0x1, 0x4, 0x7, 0x9
END_STREAM, END_HEADERS = 0x1, 0x4


def h2_frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload


def hpack_integer(value: int, prefix_bits: int = 7) -> bytes:
    """An HPACK integer (RFC 7541 §5.1) with the prefix's flag bits clear."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([value])
    out, value = [limit], value - limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    return bytes(out + [value])


def hpack_literal(name: str, value: str) -> bytes:
    """A header as an HPACK literal without indexing, no Huffman."""
    name_bytes, value_bytes = name.encode(), value.encode()
    return (b"\x00" + hpack_integer(len(name_bytes)) + name_bytes
            + hpack_integer(len(value_bytes)) + value_bytes)


def h2_header_block(headers: list[tuple[str, str]]) -> bytes:
    return b"".join(hpack_literal(name, value) for name, value in headers)


def h2_start() -> bytes:
    """The client preface and an empty SETTINGS frame."""
    return H2_PREFACE + h2_frame(H2_SETTINGS, 0, 0)


def h2_response(sock: socket.socket, stream: int = 1, within: float = 30) -> tuple[bytes, bytes]:
    """The header block and body of the response on `stream` (frames of other
    streams and connection frames are skipped)."""
    deadline = time.monotonic() + within
    buffered, block, body = b"", b"", b""
    while True:
        while len(buffered) < 9 or len(buffered) < 9 + int.from_bytes(buffered[:3], "big"):
            sock.settimeout(max(deadline - time.monotonic(), 0.01))
            data = sock.recv(65536)
            if not data:
                raise ConnectionError("connection closed before the response ended")
            buffered += data
        length = int.from_bytes(buffered[:3], "big")
        kind, flags, frame_stream = buffered[3], buffered[4], int.from_bytes(buffered[5:9], "big") & 0x7FFFFFFF
        payload, buffered = buffered[9:9 + length], buffered[9 + length:]
        if frame_stream != stream:
            continue
        if kind in (H2_HEADERS, H2_CONTINUATION):
            block += payload
        elif kind == H2_DATA:
            body += payload
        if flags & END_STREAM:
            return block, body
