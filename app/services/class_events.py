"""Each class's events, fanned out inside one process: one watcher task per class (not per student)
follows the store's changes and wakes every event stream of that class in this process.

A stream waits on its class's `changed` event, which the watcher replaces and sets after each new state:
waking 300 streams costs one set(), and a stream that was busy writing never misses the latest state.
"""

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator

from app.stores import ClassState, ClassStore

log = logging.getLogger("heads_positions")
RETRY_SECONDS = 1.0  # after the store failed (Redis restarting): try again, streams keep their last state


class Channel:
    def __init__(self, state: ClassState):
        self.state: ClassState | None = state  # None: the class is gone
        self.changed = asyncio.Event()
        self.listeners = 0
        self.task: asyncio.Task | None = None

    def publish(self, state: ClassState | None) -> None:
        self.state = state
        changed, self.changed = self.changed, asyncio.Event()
        changed.set()


class Broadcaster:
    def __init__(self, store: ClassStore):
        self.store = store
        self.channels: dict[str, Channel] = {}

    @contextlib.asynccontextmanager
    async def listen(self, code: str, state: ClassState) -> AsyncIterator[Channel]:
        """The class's channel, its watcher started by the first listener and stopped after the last."""
        channel = self.channels.get(code)
        if channel is None:
            channel = self.channels[code] = Channel(state)
            channel.task = asyncio.create_task(self._watch(code, channel))
        channel.listeners += 1
        try:
            yield channel
        finally:
            channel.listeners -= 1
            if channel.listeners == 0 and self.channels.get(code) is channel:
                del self.channels[code]
                channel.task.cancel()

    async def _watch(self, code: str, channel: Channel) -> None:
        while True:
            try:
                async for _ in self.store.changes(code):
                    state = await self.store.state(code, time.time())
                    if state is None or channel.state is None or state.version > channel.state.version:
                        channel.publish(state)
                    if state is None:
                        return
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the store went away for a while; the streams stay open
                log.exception("class %s: watching the store failed; retrying", code)
            await asyncio.sleep(RETRY_SECONDS)

    async def close(self) -> None:
        for channel in self.channels.values():
            channel.task.cancel()
        self.channels.clear()


def _event(state: ClassState | None) -> str:
    data = {"ended": True} if state is None else {
        "step": state.step, "revealed": state.revealed, "joined": state.joined, "answered": state.answered}
    return f"data: {json.dumps(data)}\n\n"


async def event_stream(broadcaster: Broadcaster, code: str, state: ClassState, teacher_view: bool,
                       keepalive: float) -> AsyncIterator[str]:
    """SSE text: the current state at once, then each change. A student's stream sends only a new step or
    reveal; the teacher's view (no student id) also sends each new join and answer, to update the counts."""
    yield f"retry: 1000\n{_event(state)}"  # the browser reconnects after 1 s, and lands on the current step
    sent = state
    async with broadcaster.listen(code, state) as channel:
        while True:
            changed = channel.changed
            now = channel.state
            if now is None:
                yield _event(None)
                return
            if now.version > sent.version and (
                    teacher_view or (now.step, now.revealed) != (sent.step, sent.revealed)):
                yield _event(now)
                sent = now
            try:
                await asyncio.wait_for(changed.wait(), keepalive)
            except asyncio.TimeoutError:
                yield ": keep-alive\n\n"  # a comment: proxies keep the connection, the browser ignores it
