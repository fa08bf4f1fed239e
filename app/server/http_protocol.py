"""uvicorn's HTTP protocol (httptools) with a deadline for receiving each request.

uvicorn bounds no request that is still arriving: timeout_keep_alive only runs between requests, and
every byte received cancels it. A client that sends its headers a byte a second would hold its
connection, and a file descriptor, for ever; enough of them reach the worker's open-file limit, and
then nobody else gets in. Here the head and body of each request must arrive within REQUEST_TIMEOUT
of its first byte (of the connection, for the first request), or the connection is closed.
"""

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

# The page's requests are under 1 KB and the largest body allowed is 64 KB: 10 s is room for a slow
# phone link, and a slow client then costs a connection for 10 s at most.
REQUEST_TIMEOUT = 10.0


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

    def _start_timer(self) -> None:
        self.request_timer = self.loop.call_later(REQUEST_TIMEOUT, self._too_slow)

    def _cancel_timer(self) -> None:
        if self.request_timer is not None:
            self.request_timer.cancel()
            self.request_timer = None

    def _too_slow(self) -> None:
        self.request_timer = None
        if not self.transport.is_closing():
            self.transport.close()
