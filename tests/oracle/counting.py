"""A loopback model server's answerer that counts the requests it holds at once."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from tests.oracle.servers import Recorded, Reply, oa_completion, oa_stream_events, sse


@dataclass
class InFlight:
    """Answers OpenAI-compatible chat requests (streamed or not) and counts them.

    Each request is held until ``crowd`` requests are in flight together, or at most
    ``hold`` seconds, then answered: so unbounded clients meet (``most`` reaches
    ``crowd``) and bounded ones are merely slowed down. ``most`` is the largest number
    of requests the server held at once; ``seen`` how many it answered.
    """

    crowd: int = 3
    hold: float = 0.4
    most: int = 0
    seen: int = 0
    now: int = 0
    _lock: threading.Condition = field(default_factory=threading.Condition)

    def __call__(self, request: Recorded) -> Reply:
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
            self._lock.notify_all()
            self._lock.wait_for(lambda: self.now >= self.crowd, timeout=self.hold)
            self.now -= 1
            self.seen += 1
        if request.json.get("stream"):
            return sse(oa_stream_events(["an ", "answer"]))
        return oa_completion("an answer")
