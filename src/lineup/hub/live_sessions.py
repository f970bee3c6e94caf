"""People's open sockets by session, so that ending a session ends its live updates too.

A socket registers a closer when it opens; signing out, changing the password or signing out
the other sessions calls the closers of the sessions that ended. This covers the sockets on
this node; a socket on another node of a cluster finds out when it next checks its session
(``lineup.hub.client_gateway``).
"""

from __future__ import annotations

from collections.abc import Callable

Closer = Callable[[], None]


class LiveSessions:
    __slots__ = ("_by_user",)

    def __init__(self) -> None:
        self._by_user: dict[str, dict[str, set[Closer]]] = {}

    def opened(self, user_id: str, session_id: str, close: Closer) -> Callable[[], None]:
        """Register a socket's closer; call what this returns when the socket ends."""
        self._by_user.setdefault(user_id, {}).setdefault(session_id, set()).add(close)

        def forget() -> None:
            sessions = self._by_user.get(user_id, {})
            closers = sessions.get(session_id)
            if closers is not None:
                closers.discard(close)
                if not closers:
                    del sessions[session_id]
            if not sessions:
                self._by_user.pop(user_id, None)

        return forget

    def count(self, user_id: str) -> int:
        """How many sockets of ``user_id`` are open on this node."""
        return sum(len(group) for group in self._by_user.get(user_id, {}).values())

    def ended(self, user_id: str, *, only: str | None = None, keep: str | None = None) -> int:
        """Close the sockets of ``user_id``'s ended sessions: ``only`` that one, or all but
        ``keep``. Returns how many sockets were told."""
        sessions = self._by_user.get(user_id, {})
        closers = [
            close
            for session_id, group in list(sessions.items())
            if (only is None or session_id == only) and session_id != keep
            for close in list(group)
        ]
        for close in closers:
            close()
        return len(closers)
