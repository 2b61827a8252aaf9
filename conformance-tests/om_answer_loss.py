"""A TCP proxy in front of an Ozone Manager's gRPC port that can lose an answer.

The gateway reaches the OM through it (`--om 127.0.0.1:<proxy port>`). Armed
with an OM command type (36 CommitKey, 46 CommitMultipartUpload, 47
CompleteMultipartUpload, ...), the proxy watches the HTTP/2 frames the
gateway sends; the first request of that type is passed on to the OM, which
carries it out, but from then on nothing the OM sends back on that
connection reaches the gateway, and after `hold` seconds the connection is
closed. That is exactly what a crashed OM or a broken network looks like to
a client whose command was applied: no answer, and no way to know.

Only the framing is parsed (9-byte frame headers, DATA frames, the 5-byte
gRPC message prefix); the OMRequest's first field is its cmdType, which
prost and protobuf-java both write first.
"""

import asyncio
import threading

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA_FRAME = 0
PADDED = 0x8


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


class RequestWatcher:
    """Follows one client-to-server HTTP/2 byte stream; says when a request
    of the armed command type has been seen."""

    def __init__(self):
        self.buffer = bytearray()
        self.preface_seen = False

    def feed(self, data: bytes, wanted: bytes | None) -> bool:
        """Takes the next bytes; whether a request of type `wanted` (a
        varint) was among them. Every byte must pass through here, armed or
        not, to keep the framing in step."""
        self.buffer += data
        if not self.preface_seen:
            if len(self.buffer) < len(PREFACE):
                return False
            del self.buffer[: len(PREFACE)]
            self.preface_seen = True
        found = False
        while len(self.buffer) >= 9:
            length = int.from_bytes(self.buffer[0:3], "big")
            if len(self.buffer) < 9 + length:
                break
            kind, flags = self.buffer[3], self.buffer[4]
            payload = bytes(self.buffer[9: 9 + length])
            del self.buffer[: 9 + length]
            if kind != DATA_FRAME or not payload:
                continue
            if flags & PADDED:
                payload = payload[1: len(payload) - payload[0]]
            # gRPC: 1 byte compressed flag, 4 bytes length, then the OMRequest,
            # whose first field is cmdType (field 1, varint).
            if wanted and len(payload) > 5 and payload[5:].startswith(b"\x08" + wanted):
                found = True
        return found


class AnswerLossProxy:
    """Listens on a free loopback port and forwards to `target` (host, port)."""

    def __init__(self, target: tuple[str, int], hold: float = 1.5):
        self.target = target
        self.hold = hold
        self.armed: bytes | None = None
        self.lost = threading.Event()
        self.loop = asyncio.new_event_loop()
        self.port = 0
        started = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(started,), daemon=True)
        self.thread.start()
        started.wait(10)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def arm(self, command_type: int) -> None:
        """Loses the answer to the next request of this OM command type."""
        self.lost.clear()
        self.loop.call_soon_threadsafe(setattr, self, "armed", varint(command_type))

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    def _run(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        started.set()
        self.loop.run_forever()

    async def _serve(self, client_reader, client_writer) -> None:
        try:
            om_reader, om_writer = await asyncio.open_connection(*self.target)
        except OSError:
            client_writer.close()
            return
        cut = asyncio.Event()
        watcher = RequestWatcher()

        async def requests():
            while data := await client_reader.read(65536):
                om_writer.write(data)
                await om_writer.drain()
                if watcher.feed(data, self.armed):
                    self.armed = None
                    cut.set()
            om_writer.close()

        async def answers():
            while data := await om_reader.read(65536):
                if cut.is_set():
                    continue
                client_writer.write(data)
                await client_writer.drain()
            client_writer.close()

        async def lose_after_hold():
            await cut.wait()
            await asyncio.sleep(self.hold)
            self.lost.set()
            client_writer.close()
            om_writer.close()

        tasks = [asyncio.ensure_future(t()) for t in (requests, answers, lose_after_hold)]
        # Whatever ends first (either side closing, or the cut) ends both.
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            task.cancel()
        for writer in (client_writer, om_writer):
            writer.close()
