"""aws-chunked request bodies, built by hand the way SDKs frame them.

Signed chunks (STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER]) chain each
chunk's signature from the previous one, starting at the seed signature of
the request headers; the optional trailer gets its own signature chained
from the final zero-length chunk. Unsigned trailers
(STREAMING-UNSIGNED-PAYLOAD-TRAILER) frame chunks without signatures.
"""

import base64
import zlib

from sigv4 import EMPTY_SHA256, Signature, hmac_hex, sha256_hex

SIGNED_PAYLOAD = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
SIGNED_PAYLOAD_TRAILER = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
UNSIGNED_PAYLOAD_TRAILER = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"


def crc32_base64(data: bytes) -> str:
    return base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()


def split(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def chunk_signature(seed: Signature, previous: str, chunk: bytes) -> str:
    string_to_sign = "\n".join(
        [
            "AWS4-HMAC-SHA256-PAYLOAD",
            seed.amz_date,
            seed.scope,
            previous,
            EMPTY_SHA256,
            sha256_hex(chunk),
        ]
    )
    return hmac_hex(seed.signing_key, string_to_sign)


def trailer_signature(seed: Signature, previous: str, canonical_trailer: str) -> str:
    string_to_sign = "\n".join(
        [
            "AWS4-HMAC-SHA256-TRAILER",
            seed.amz_date,
            seed.scope,
            previous,
            sha256_hex(canonical_trailer.encode()),
        ]
    )
    return hmac_hex(seed.signing_key, string_to_sign)


def signed_body(
    seed: Signature,
    chunks: list[bytes],
    trailers: dict | None = None,
    tamper_chunk: int | None = None,
    tamper_trailer_signature: bool = False,
) -> bytes:
    """Frames `chunks` with chained signatures, then the final empty chunk.

    `tamper_chunk` corrupts that chunk's signature (index into `chunks`);
    `tamper_trailer_signature` corrupts the trailer's signature.
    """
    out = bytearray()
    previous = seed.signature
    for index, chunk in enumerate(list(chunks) + [b""]):
        signature = chunk_signature(seed, previous, chunk)
        previous = signature
        if index == tamper_chunk:
            signature = flip_hex(signature)
        out += f"{len(chunk):x};chunk-signature={signature}\r\n".encode() + chunk + b"\r\n"
    if trailers is None:
        return bytes(out)
    # The final chunk's CRLF above already ends the chunk list; the trailer follows.
    out = out[:-2]
    canonical = "".join(f"{name}:{value}\n" for name, value in trailers.items())
    for name, value in trailers.items():
        out += f"{name}:{value}\r\n".encode()
    signature = trailer_signature(seed, previous, canonical)
    if tamper_trailer_signature:
        signature = flip_hex(signature)
    out += f"x-amz-trailer-signature:{signature}\r\n\r\n".encode()
    return bytes(out)


def unsigned_trailer_body(chunks: list[bytes], trailers: dict) -> bytes:
    out = bytearray()
    for chunk in chunks:
        out += f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    out += b"0\r\n"
    for name, value in trailers.items():
        out += f"{name}:{value}\r\n".encode()
    out += b"\r\n"
    return bytes(out)


def flip_hex(signature: str) -> str:
    last = "0" if signature[-1] != "0" else "1"
    return signature[:-1] + last
