"""Who may hold the server's plain HTTP connections (`/`, `/v1/info`, `/healthz`, `/v1/record`).

A slow client opens a connection and never finishes its request's headers;
the header deadline (`streaming.local_server.HANDSHAKE_TIMEOUT_S`) drops it,
and meanwhile it holds a place. With places handed out first come, first
served, a crowd of them holds them all: on loopback every client is
127.0.0.1, so a per-address cap of 64 was a global cap of 64, and 600 slow
clients from ten addresses kept `/` answering 503 for as long as they kept
coming back. The rule of the `Room` instead:

- at most `limit` connections are open, and an address's fair share is
  `limit` divided by the addresses holding connections (no share applies
  while one address holds them all: a share means something only where
  addresses differ), never less than `per_client`;
- a new connection past the cap, or past its address's share, takes the
  place of a connection that is still waiting for a request's headers: its
  own address's oldest when it is over its share, else the oldest of the
  address holding the most. A connection whose request is being answered is
  never taken. So slow clients crowd out only each other and other idle
  connections, and a client that sends its request at once is answered at
  once, whatever the crowd;
- a connection whose client does not read what it asked for (its writes
  paused: the send queue full, `streaming.local_server.WRITE_TIMEOUT_S`
  running) gives its place like a waiting one, before any of those: 520
  clients that pipelined GETs and never read held every place with a
  request in progress and took the server down. A connection whose place
  is given away is aborted (reset), never drained;
- when every place holds a request in progress, `reserve` more connections
  are let in to answer `/healthz` only (the health check always answers);
  past those, 503 as the connection opens. A reserve place is kept for a
  request whose headers are in: a new connection takes the place of the
  oldest one on the reserve still waiting for its headers (which must come
  within `streaming.local_server.RESERVE_HEAD_TIMEOUT_S`) of the address
  with the most such, so silent connections hold the reserve no more than
  waiting ones hold the places (issue 57 row 4: 30 silent connections held
  all 8 and `/healthz` was 503 for a minute), and a crowd that reconnects
  as fast as its connections are closed takes its own places, not a health
  check's whose headers the server has yet to read.
"""

from __future__ import annotations

from collections import Counter
from itertools import chain


class Room:
    def __init__(self, limit: int, per_client: int, reserve: int):
        self.limit, self.per_client, self.reserve = limit, per_client, reserve
        self.hosts: dict[object, str | None] = {}  # connection -> its address, for every connection in a place
        self.waiting: dict[object, None] = {}  # connections waiting for a request's headers, oldest first
        self.stalled: dict[object, None] = {}  # connections whose client reads none of its answer, oldest first
        # connections let in past the cap, for /healthz only, oldest first: whether a request's headers are in
        self.reserved: dict[object, bool] = {}
        self.reserve_hosts: dict[object, str | None] = {}  # each of those: its address
        self.taken = 0  # connections whose place was given to a newer one

    def share(self, host: str | None) -> int:
        """The most connections one address may hold while others hold some too."""
        addresses = len(set(self.hosts.values()) | {host})
        return self.limit if addresses <= 1 else max(self.per_client, self.limit // addresses)

    def arrive(self, connection, host: str | None) -> tuple[str, object | None]:
        """Where a new connection goes: ("in" or "reserve", a connection whose place it takes, or None), or
        ("busy", None). The caller closes the one whose place is taken."""
        held = Counter(self.hosts.values())
        over_share = held[host] >= self.share(host)
        victim = None
        if over_share or len(self.hosts) >= self.limit:
            victim = self._oldest_waiting(host if over_share else held.most_common(1)[0][0])
            if victim is None and not over_share:
                victim = next(self._givers(), None)  # the biggest address is all busy: any idle one
            if victim is None:
                return self._on_reserve(connection, host)
            self.leave(victim)
            self.taken += 1
        self.hosts[connection] = host
        self.waiting[connection] = None
        return "in", victim

    def _on_reserve(self, connection, host: str | None) -> tuple[str, object | None]:
        """A reserve place if one is free, else the place of the oldest on the reserve still waiting for its
        request's headers, of the address with the most such (returned, to be closed), else busy."""
        victim = None
        if len(self.reserved) >= self.reserve:
            unheard = [c for c, heard in self.reserved.items() if not heard]
            if not unheard:
                return "busy", None
            biggest = Counter(self.reserve_hosts[c] for c in unheard).most_common(1)[0][0]
            victim = next(c for c in unheard if self.reserve_hosts[c] == biggest)
            self.leave(victim)
            self.taken += 1
        self.reserved[connection] = False
        self.reserve_hosts[connection] = host
        return "reserve", victim

    def _givers(self):
        """The connections that may give their places: stalled ones first, then waiting ones, oldest first."""
        return chain(self.stalled, (c for c in self.waiting if c not in self.stalled))

    def _oldest_waiting(self, host: str | None):
        return next((c for c in self._givers() if self.hosts.get(c) == host), None)

    def stall(self, connection) -> None:
        """Its client reads none of what it is sent (its writes paused): its place may be given away."""
        if connection in self.hosts:
            self.stalled[connection] = None

    def unstall(self, connection) -> None:
        """Its client reads again."""
        self.stalled.pop(connection, None)

    def requested(self, connection) -> None:
        """A request's headers are in: its connection is answered, and keeps its place meanwhile."""
        self.waiting.pop(connection, None)
        if connection in self.reserved:
            self.reserved[connection] = True

    def answered(self, connection) -> None:
        """A response is complete: the kept-alive connection waits for its next request (the newest)."""
        if connection in self.hosts:
            self.waiting[connection] = None
        elif connection in self.reserved:
            self.reserved[connection] = False

    def leave(self, connection) -> None:
        self.hosts.pop(connection, None)
        self.waiting.pop(connection, None)
        self.stalled.pop(connection, None)
        self.reserved.pop(connection, None)
        self.reserve_hosts.pop(connection, None)

    def is_reserved(self, connection) -> bool:
        return connection in self.reserved
