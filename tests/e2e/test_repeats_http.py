"""Repeated requests over real HTTP, on the README's one-worker server: an answer from app.repeats is
the route's answer byte for byte, header order included, however the request arrives."""

import socket
import time

import pytest

pytestmark = pytest.mark.e2e

BODY = '{"line_a": "床前明月光", "line_b": "光月明前床", "weights": "random", "seed": %d}'


def request(port: int, body: bytes, *headers: str, length: int | None = None) -> bytes:
    head = ["POST /api/compare HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json",
            f"Content-Length: {len(body) if length is None else length}", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def read_response(stream) -> tuple[bytes, list[tuple[bytes, bytes]], bytes]:
    """Status line, headers in order without the two that differ per request, and body."""
    status = stream.readline()
    headers = []
    while (line := stream.readline()) not in (b"\r\n", b""):
        name, _, value = line.rstrip(b"\r\n").partition(b":")
        headers.append((name.lower(), value.strip()))
    length = next(int(value) for name, value in headers if name == b"content-length")
    return status, [h for h in headers if h[0] not in (b"x-request-id", b"date")], stream.read(length)


def exchange(port: int, *requests: bytes) -> list[tuple]:
    """The requests written at once on one keep-alive connection (pipelined), and their answers."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
        conn.sendall(b"".join(requests))
        stream = conn.makefile("rb")
        return [read_response(stream) for _ in requests]


@pytest.mark.parametrize("encoding", ["identity", "gzip"])
def test_repeats_over_one_connection_match_the_first_answer(server_url, encoding):
    port = int(server_url.rsplit(":", 1)[1])
    body = (BODY % (101 if encoding == "gzip" else 100)).encode()  # new to the server: the first is computed
    accept = f"Accept-Encoding: {encoding}"
    first, *repeats = exchange(port, *[request(port, body, accept)] * 3)
    assert first[0].startswith(b"HTTP/1.1 200")
    assert ((b"content-encoding", b"gzip") in first[1]) == (encoding == "gzip")
    assert all(r == first for r in repeats)
    # Sent slowly, on a connection of its own: the headers, then the body in two pieces.
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
        for piece in (request(port, b"", accept, length=len(body)), body[:40], body[40:]):
            conn.sendall(piece)
            time.sleep(0.05)
        assert read_response(conn.makefile("rb")) == first


def test_expect_100_continue_and_a_body_cut_short(server_url, server_log):
    port = int(server_url.rsplit(":", 1)[1])
    log_before = len(server_log())
    body = (BODY % 102).encode()
    (answer,) = exchange(port, request(port, body))
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
        head = request(port, b"", "Expect: 100-continue", length=len(body))
        conn.sendall(head)
        stream = conn.makefile("rb")
        assert stream.readline().startswith(b"HTTP/1.1 100")
        assert stream.readline() == b"\r\n"
        conn.sendall(body)
        assert read_response(stream) == answer
    # The remembered body under a longer Content-Length, then the client leaves: it is not answered as the
    # remembered request (what FastAPI answers instead never reaches the closed socket), and the server
    # goes on with the same worker.
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
        conn.sendall(request(port, body, length=len(body) + 10))
        conn.shutdown(socket.SHUT_WR)
        assert conn.recv(1000) == b""
    (again,) = exchange(port, request(port, body))
    assert again == answer
    log = server_log()
    assert "Traceback" not in log[log_before:] and log.count("Started server process") == 1
