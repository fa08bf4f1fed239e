"""The Redis store's connections (a bounded pool for commands, one subscription per watched class), its
scripts, and the watch on a class's channel that every replica's class_events reads."""

import asyncio
import contextlib
from collections.abc import AsyncIterator

import redis.asyncio as redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from app.stores import Lifetimes
from app.stores.redis.keys import class_key

COALESCE_SECONDS = 0.05  # a burst of answers becomes one read of the state, not one per answer
COMMAND_CONNECTIONS = 32  # per process; a command takes well under a millisecond on the Redis server
POOL_WAIT_SECONDS = 20  # a request waits this long for a free connection before the store counts as down
CLOSE_SECONDS = 2  # a subscription's close; see changes()
SUBSCRIPTIONS = 10_000  # one per class watched in this process, at most HP_MAX_CLASSES


class Connection:
    name = "redis"
    # Refused, reset or timed out; BusyLoadingError (a Redis still reading its append-only file) is a
    # ConnectionError too.
    unavailable = (RedisConnectionError, RedisTimeoutError, OSError)
    SCRIPTS: dict[str, str] = {}  # name -> Lua text, of every part of the store (RedisStore sets them all)

    def __init__(self, url: str, lifetimes: Lifetimes):
        # Timeouts: a Redis that is gone must cost a request a few seconds at most, not hang it.
        timeouts = {"socket_connect_timeout": 2, "socket_timeout": 5}
        # Commands share a bounded pool and wait their turn for a connection: 300 students joining at once
        # made 300 connections, and redis-py's default pool refused the 101st (MaxConnectionsError).
        pool = redis.BlockingConnectionPool.from_url(url, decode_responses=True, max_connections=COMMAND_CONNECTIONS,
                                                     timeout=POOL_WAIT_SECONDS, **timeouts)
        self.redis = redis.Redis(connection_pool=pool)
        # Each watched class holds one subscription's connection for as long as it is watched: a pool of
        # their own, so they never take the commands' connections.
        self.subscriber = redis.Redis.from_url(url, decode_responses=True, max_connections=SUBSCRIPTIONS, **timeouts)
        self.lifetimes = lifetimes
        self.scripts = {name: self.redis.register_script(text) for name, text in self.SCRIPTS.items()}

    async def _call(self, name: str, code: str, now: float, *args, keys: tuple = ()):
        return await self.scripts[name](keys=[class_key(code), *keys],
                                        args=[now, self.lifetimes.idle, self.lifetimes.unjoined, *args])

    async def changes(self, code) -> AsyncIterator[None]:
        pubsub = self.subscriber.pubsub()
        await pubsub.subscribe(f"{class_key(code)}:events")
        try:
            yield  # subscribed first, then read: no change falls between the two
            while True:
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=30)
                if message is None:
                    continue
                await asyncio.sleep(COALESCE_SECONDS)
                ended = message["data"] == "end"
                while (more := await pubsub.get_message(ignore_subscribe_messages=True, timeout=0)) is not None:
                    ended = ended or more["data"] == "end"
                yield
                if ended:
                    return
        finally:
            # A watcher cancelled as the worker stops closes its subscription after the store's close may have
            # dropped the client under it; that close once waited for ever (a test's shutdown hung in asyncio's
            # final cancellation of the tasks left). Bounded: the connection goes with its client anyway.
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(pubsub.aclose(), CLOSE_SECONDS)

    async def ping(self) -> None:
        await self.redis.ping()

    async def close(self) -> None:
        await self.subscriber.aclose()
        await self.redis.aclose()
        await self.redis.connection_pool.disconnect()
