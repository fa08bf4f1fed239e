"""Join links a phone can open. A teacher who opened the page at http://127.0.0.1:8000 would put that
address in the QR code, and no phone reaches it. When the page is on a loopback address of this very
machine, the links are made for each of the machine's other addresses on which this server answers;
if it answers on none (it listens on 127.0.0.1 only, the default), the page is told so and can say how
to start it for a classroom (--host 0.0.0.0)."""

import asyncio
import contextlib
import ipaddress
import socket
import struct
import sys

from starlette.requests import Request

CONNECT_SECONDS = 0.3  # a connection to one of this machine's own addresses answers at once, or never
SIOCGIFADDR = 0x8915  # Linux: an interface's IPv4 address


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() in ("localhost", "localhost.localdomain") or host.lower().endswith(".localhost"):
        return True
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    return False


def _interface_addresses() -> set[str]:
    """This machine's IPv4 addresses: every interface's (Linux), its name's, and the one it routes out by."""
    found = set()
    if sys.platform.startswith("linux"):
        import fcntl

        for _, name in socket.if_nameindex():
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s, contextlib.suppress(OSError):
                packed = fcntl.ioctl(s.fileno(), SIOCGIFADDR, struct.pack("256s", name.encode()[:15]))
                found.add(socket.inet_ntoa(packed[20:24]))
    with contextlib.suppress(OSError):
        found.update(info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s, contextlib.suppress(OSError):
        s.connect(("192.0.2.1", 9))  # a documentation address: nothing is sent, the route picks our address
        found.add(s.getsockname()[0])
    return found


def phone_addresses() -> list[str]:
    """The addresses a phone on the same network might reach: not loopback, not link-local."""
    usable = []
    for address in _interface_addresses():
        ip = ipaddress.ip_address(address)
        if not (ip.is_loopback or ip.is_link_local or ip.is_unspecified):
            usable.append(address)
    return sorted(usable, key=lambda a: ipaddress.ip_address(a))


async def _answers(address: str, port: int) -> bool:
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(address, port), CONNECT_SECONDS)
    except (OSError, asyncio.TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


async def join_links(request: Request, code: str, key: str) -> tuple[str, list[str], bool]:
    """(join_url as the page sees it, links phones can open, whether the page is on a loopback address). Each
    link carries the class's join key (`key`), so a phone that opens it is never held by wrong codes.

    The links are join_url itself unless the page is on loopback. Then: only when the request came over
    loopback too (the teacher's browser is on this machine, not in front of a container's port mapping),
    one link per address of this machine on which this server's port answers."""
    page_url = request.url_for("lesson_page").include_query_params(**{"class": code, "key": key})
    join_url = str(page_url)
    if not is_loopback(page_url.hostname):
        return join_url, [join_url], False
    client = request.client.host if request.client else None
    server = request.scope.get("server")
    if not is_loopback(client) or not server:
        return join_url, [], True
    port = server[1]
    addresses = phone_addresses()
    reachable = await asyncio.gather(*(_answers(address, port) for address in addresses))
    links = [str(page_url.replace(netloc=f"{address}:{port}"))  # the port that answered
             for address, ok in zip(addresses, reachable) if ok]
    return join_url, links, True
