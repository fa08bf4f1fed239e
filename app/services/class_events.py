"""Each class's events, fanned out inside one process: one watcher task per class (not per student)
follows the store's changes and wakes every event stream of that class in this process.

A stream waits on its class's `changed` event, which the watcher replaces and sets after each new state:
waking 300 streams costs one set(), and a stream that was busy writing never misses the latest state.
While the store does not answer, the streams stay open and say so (an `outage` event); when it answers
again they send `back` and the class's state as it is then.
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
        self.outage = False  # the store does not answer
        self.changed = asyncio.Event()
        self.listeners = 0
        self.task: asyncio.Task | None = None

    def publish(self, state: ClassState | None, outage: bool = False) -> None:
        self.state = state
        self.outage = outage
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
                    if (state is None or channel.state is None or channel.outage
                            or state.version > channel.state.version):
                        channel.publish(state)
                    if state is None:
                        return
            except asyncio.CancelledError:
                raise
            except self.store.unavailable as error:  # logged once per class and outage, without a traceback
                if not channel.outage:
                    log.warning("class %s: the class store (%s) does not answer (%s); its streams wait",
                                code, self.store.name, error or type(error).__name__)
                    channel.publish(channel.state, outage=True)
            except Exception:  # noqa: BLE001 - anything else is a bug worth its traceback; the streams stay open
                log.exception("class %s: watching the store failed; retrying", code)
            await asyncio.sleep(RETRY_SECONDS)

    async def close(self) -> None:
        tasks = [channel.task for channel in self.channels.values()]
        for task in tasks:
            task.cancel()
        self.channels.clear()
        # Each watcher leaves its subscription before the store closes the connections under it.
        await asyncio.gather(*tasks, return_exceptions=True)


def _event(state: ClassState | None) -> str:
    data = {"ended": True} if state is None else {
        "step": state.step, "revealed": state.revealed, "joined": state.joined, "answered": state.answered,
        "locked": state.locked}
    return f"data: {json.dumps(data)}\n\n"


OUTAGE = 'event: outage\ndata: {"type": "class_store_unavailable"}\n\n'
BACK = 'event: back\ndata: {}\n\n'


async def event_stream(broadcaster: Broadcaster, code: str, state: ClassState, teacher_view: bool,
                       keepalive: float) -> AsyncIterator[str]:
    """SSE text: the current state at once, then each change. A student's stream sends only a new step or
    reveal; the teacher's view (no student) also sends each new join, answer and lock, to update the counts.
    Something is sent at least every `keepalive` seconds, whatever wakes the stream in between."""
    yield f"retry: 1000\n{_event(state)}"  # the browser reconnects after 1 s, and lands on the current step
    sent, outage = state, False
    last_write = time.monotonic()
    async with broadcaster.listen(code, state) as channel:
        while True:
            changed = channel.changed
            now = channel.state
            text = ""
            if channel.outage != outage:
                outage = channel.outage
                text = OUTAGE if outage else BACK
                if not outage and now is not None:
                    text += _event(now)
                    sent = now
            if not outage:
                if now is None:
                    yield text + _event(None)
                    return
                if now.version > sent.version and (
                        teacher_view or (now.step, now.revealed) != (sent.step, sent.revealed)):
                    text += _event(now)
                    sent = now
            if text:
                yield text
                last_write = time.monotonic()
            try:
                # Until the next change, or until the line has been silent for `keepalive` seconds: changes
                # a student's stream does not send (joins, answers) must not put the comment off.
                await asyncio.wait_for(changed.wait(), max(0.0, last_write + keepalive - time.monotonic()))
            except asyncio.TimeoutError:
                yield ": keep-alive\n\n"  # a comment: proxies keep the connection, the browser ignores it
                last_write = time.monotonic()
