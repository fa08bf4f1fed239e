"""uvicorn's HTTP protocol (httptools) with a deadline for receiving each request, and a class's event
streams closed when the worker stops.

uvicorn bounds no request that is still arriving: timeout_keep_alive only runs between requests, and
every byte received cancels it. A client that sends its headers a byte a second would hold its
connection, and a file descriptor, for ever; enough of them reach the worker's open-file limit, and
then nobody else gets in. Here the head and body of each request must arrive within HP_REQUEST_TIMEOUT_SECONDS
(10 s) of its first byte (of the connection, for the first request), or the connection is closed.

A stopping worker (SIGTERM: a restart, Docker's stop) answers the requests in hand before it exits, for at most
uvicorn's graceful timeout (5 s), and then cancels them. A class's event stream never ends by itself: it held
every stop for the whole 5 s, in which no screen heard anything, and its cancellation was logged as a
traceback. It is closed at once instead, and the browser reconnects after its retry (1 s), to the next worker.
"""

from functools import cache

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from app.settings import Settings

EVENTS_PATH = "/events"  # GET /api/classes/{code}/events (app/routes/classes.py)


class RequestDeadlineProtocol(HttpToolsProtocol):
    request_timer = None

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._start_timer()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self.request_timer is None:  # a later request on a kept-alive connection
            self._start_timer()

    def on_message_complete(self) -> None:
        self._cancel_timer()
        super().on_message_complete()

    def connection_lost(self, exc) -> None:
        self._cancel_timer()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete and cycle.scope["path"].endswith(EVENTS_PATH):
            self.transport.close()  # connection_lost tells the app: the stream's response ends
            return
        super().shutdown()

    def _start_timer(self) -> None:
        self.request_timer = self.loop.call_later(request_timeout(), self._too_slow)

    def _cancel_timer(self) -> None:
        if self.request_timer is not None:
            self.request_timer.cancel()
            self.request_timer = None

    def _too_slow(self) -> None:
        self.request_timer = None
        if not self.transport.is_closing():
            self.transport.close()


@cache
def request_timeout() -> float:
    """Seconds, read once per worker. The page's requests are under 1 KB and the largest body allowed is 64 KB:
    the default 10 s is room for a slow phone link, and a slow client then costs a connection for 10 s at most."""
    return Settings().request_timeout_seconds
