"""A tiny PostgreSQL wire-protocol server that asks for a password and refuses it.

Real bytes on a real loopback socket: libpq negotiates (SSL/GSS requests answered
``N``), sends its startup packet, is asked for a cleartext password, sends it, and
receives the server's FATAL ``28P01`` error — exactly what a server with password
authentication does when the password is wrong. The password received is recorded,
so a test can prove it was sent and then look for it in error messages.
"""

from __future__ import annotations

import socket
import struct
import threading

__all__ = ["RefusingServer"]

_SSL_REQUEST = 80877103
_GSS_REQUEST = 80877104


def _recv_exact(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ConnectionError("client went away")
        data += chunk
    return data


class RefusingServer:
    """Listens on 127.0.0.1; every login attempt fails with a wrong-password error."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(8)
        self.port: int = self._sock.getsockname()[1]
        self.passwords: list[str] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with conn:
                try:
                    self._handle(conn)
                except (ConnectionError, OSError, struct.error):
                    pass

    def _handle(self, conn: socket.socket) -> None:
        while True:
            length, code = struct.unpack("!ii", _recv_exact(conn, 8))
            if code in (_SSL_REQUEST, _GSS_REQUEST):
                conn.sendall(b"N")
                continue
            _recv_exact(conn, length - 8)  # startup parameters
            break
        conn.sendall(b"R" + struct.pack("!ii", 8, 3))  # AuthenticationCleartextPassword
        kind = _recv_exact(conn, 1)
        (length,) = struct.unpack("!i", _recv_exact(conn, 4))
        body = _recv_exact(conn, length - 4)
        if kind == b"p":
            self.passwords.append(body.rstrip(b"\x00").decode())
        fields = b"".join(
            tag + text.encode() + b"\x00"
            for tag, text in (
                (b"S", "FATAL"),
                (b"V", "FATAL"),
                (b"C", "28P01"),
                (b"M", 'password authentication failed for user "alice"'),
            )
        )
        payload = fields + b"\x00"
        conn.sendall(b"E" + struct.pack("!i", len(payload) + 4) + payload)

    def close(self) -> None:
        """Stop listening."""
        self._sock.close()
