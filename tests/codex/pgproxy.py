"""A TCP relay in front of the test PostgreSQL server, to drop and restore it at will.

Real bytes both ways on loopback: a client connects to the relay's port and talks to
the real server through it. The relay can go down (every relayed connection is cut and
new ones are refused, as when the server stops), come back on the same port, and cut
a connection right after relaying a ``COMMIT`` from the client — so the server commits
but the client never hears back, exactly what a crash between commit and reply does.
Connect with ``sslmode=disable`` so the relay can see the ``COMMIT``.
"""

from __future__ import annotations

import socket
import threading
import time
from urllib.parse import urlsplit, urlunsplit

__all__ = ["Relay"]


class Relay:
    """Relays 127.0.0.1:``port`` to the server of ``url``."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self._target = (parts.hostname or "127.0.0.1", parts.port or 5432)
        self._url = parts
        self._lock = threading.Lock()
        self._conns: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self._cut_after_commit = threading.Event()
        self.commits_cut = 0
        probe = socket.create_server(("127.0.0.1", 0))
        self.port = int(probe.getsockname()[1])
        probe.close()
        self.up()

    def url(self, application_name: str) -> str:
        """The server's URL through the relay (no SSL, so COMMIT is visible)."""
        user = self._url.username or "postgres"
        netloc = f"{user}@127.0.0.1:{self.port}"
        query = f"sslmode=disable&application_name={application_name}"
        return urlunsplit(("postgresql", netloc, self._url.path or "/postgres", query, ""))

    def up(self) -> None:
        """Listen (again) on the relay's port."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        for _ in range(50):
            try:
                listener.bind(("127.0.0.1", self.port))
                break
            except OSError:
                time.sleep(0.1)
        listener.listen(16)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        """Refuse new connections and cut every relayed one (the server is gone)."""
        listener, self._listener = self._listener, None
        if listener is not None:
            _close(listener)  # shutdown wakes the thread blocked in accept()
        with self._lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            _close(conn)

    def cut_next_commit(self) -> None:
        """Cut the connection right after relaying the next COMMIT to the server."""
        self._cut_after_commit.set()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self._target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += [client, server]
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, upstream: bool) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if upstream and b"COMMIT\x00" in data and self._cut_after_commit.is_set():
                    self._cut_after_commit.clear()
                    self.commits_cut += 1
                    _close(source)  # the client will never hear the answer...
                    sink.sendall(data)  # ...though the server receives the COMMIT
                    time.sleep(0.3)  # and commits
                    break
                sink.sendall(data)
        except OSError:
            pass
        _close(source)
        _close(sink)


def _close(conn: socket.socket) -> None:
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    conn.close()
