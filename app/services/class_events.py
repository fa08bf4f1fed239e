"""Each class's events, fanned out inside one process: one watcher task per class (not per student)
follows the store's changes and wakes every event stream of that class in this process.

A stream waits on its class's `changed` event, which the watcher replaces and sets after each new state:
waking 300 streams costs one set(), and a stream that was busy writing never misses the latest state.
While the store does not answer, the streams stay open and say so (an `outage` event); when it answers
again they send `back` and the class's state as it is then.

A store can also stop answering without an error: a Redis paused (SIGSTOP) or a SQLite file held locked leave a
subscription or a poll waiting in silence. So while any class is watched, one heartbeat per process pings the
store every `heartbeat` seconds (HP_CLASS_HEARTBEAT_SECONDS, 1 s); a ping unanswered for `stall` seconds
(HP_CLASS_STALL_SECONDS, 2.5 s), or refused, puts every channel in outage, and the first answer after it sends each
channel's state again. Local pings take milliseconds, even with 300 students answering; with the defaults an outage
reaches every stream within about 3.5 s (issue 30 asks for 5).
"""

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator

import anyio

from app.stores import ClassState, ClassStore, Standing

log = logging.getLogger("heads_positions")
RETRY_SECONDS = 1.0  # after the store failed (Redis restarting): try again, streams keep their last state
CLOSE_ROUNDS = 5  # cancellations sent to a watcher at shutdown, CLOSE_ROUND_SECONDS apart (see Broadcaster.close)
CLOSE_ROUND_SECONDS = 0.5


class Channel:
    def __init__(self, state: ClassState):
        self.state: ClassState | None = state  # None: the class is gone
        self.ended = False  # gone with an end record (the teacher ended it), not lost
        self.outage = False  # the store does not answer
        self.changed = asyncio.Event()
        self.listeners = 0
        self.task: asyncio.Task | None = None
        self.removed: set[str] = set()  # the students the teacher removed, read when state.removed grows
        self.removed_count = 0
        # The students waiting at the door, read when the counts they move change; None until first read, so a
        # waiting student's stream does not take an unread set for an admission.
        self.waiting: set[str] | None = None
        self.waiting_counts: tuple[int, int, int] | None = None
        self.waiting_version = -1  # the class's version the set is true for

    def publish(self, state: ClassState | None, outage: bool = False, ended: bool = False) -> None:
        self.state = state
        self.ended = ended
        self.outage = outage
        changed, self.changed = self.changed, asyncio.Event()
        changed.set()


class Broadcaster:
    def __init__(self, store: ClassStore, heartbeat: float, stall: float):
        self.store = store
        self.heartbeat_seconds, self.stall_seconds = heartbeat, stall
        self.channels: dict[str, Channel] = {}
        self.heartbeat: asyncio.Task | None = None
        self.down = False  # the heartbeat found the store silent or refusing

    @contextlib.asynccontextmanager
    async def listen(self, code: str, state: ClassState) -> AsyncIterator[Channel]:
        """The class's channel, its watcher started by the first listener and stopped after the last."""
        channel = self.channels.get(code)
        if channel is None:
            channel = self.channels[code] = Channel(state)
            channel.task = asyncio.create_task(self._watch(code, channel))
            if self.heartbeat is None or self.heartbeat.done():
                self.heartbeat = asyncio.create_task(self._heartbeat())
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
                    if state is not None and state.removed != channel.removed_count:
                        channel.removed = await self.store.removed(code)
                        channel.removed_count = state.removed
                    # An admission moves a student from waiting to joined, a refusal to removed, a new one at
                    # the door adds to waiting: the set is read again when any of the three moved.
                    # Each change of the set moves the three (removed and, without removals, joined only grow),
                    # so while they stand still the set read before is true for this version too.
                    if state is not None:
                        if (state.waiting, state.joined, state.removed) != channel.waiting_counts:
                            channel.waiting = await self.store.waiting(code)
                            channel.waiting_counts = (state.waiting, state.joined, state.removed)
                        channel.waiting_version = state.version
                    if (state is None or channel.state is None or channel.outage
                            or state.version > channel.state.version):
                        channel.publish(state, ended=state is None and await self.store.ended(code))
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

    async def _heartbeat(self) -> None:
        """Ping the store while any class is watched; one ping at a time, so a stalled store is not sent a queue
        of them (a SQLite ping waits its turn on the store's one connection)."""
        loop = asyncio.get_running_loop()
        ping, sent = None, 0.0
        while self.channels:
            if ping is None:
                ping, sent = asyncio.ensure_future(self.store.ping()), loop.time()
            await asyncio.wait({ping}, timeout=self.heartbeat_seconds)
            if ping.done():
                error = ping.exception()
                ping = None
                if error is None:
                    await self._answered()
                elif isinstance(error, self.store.unavailable):
                    self._silent(error)
                else:  # a bug worth its traceback; the heartbeat goes on
                    log.error("pinging the class store failed", exc_info=error)
                await asyncio.sleep(self.heartbeat_seconds)
            elif loop.time() - sent > self.stall_seconds:
                self._silent(TimeoutError(f"no answer to a ping for {self.stall_seconds:g} s"))
        if ping is not None:
            ping.cancel()

    def _silent(self, error: BaseException) -> None:
        if not self.down:
            log.warning("the class store (%s) does not answer (%s); the class streams wait", self.store.name, error)
        self.down = True
        for channel in self.channels.values():
            if not channel.outage:
                channel.publish(channel.state, outage=True)

    async def _answered(self) -> None:
        """After a silence: each channel's state as it is now. A watcher waiting on a poll or a subscription
        that lived through the pause would only speak at the next change."""
        if not self.down:
            return
        self.down = False
        for code, channel in list(self.channels.items()):
            if channel.outage:
                try:
                    state = await self.store.state(code, time.time())
                    channel.publish(state, ended=state is None and await self.store.ended(code))
                except self.store.unavailable:
                    channel.publish(channel.state, outage=True)
                    self.down = True

    async def close(self) -> None:
        """Stop every watcher and the heartbeat, each leaving its subscription before the store closes the
        connections under it. A cancellation can be lost: Python 3.11's asyncio.timeout, under which redis-py reads
        a subscription, takes a cancel that lands as its own deadline passes for that deadline, and the watcher
        reads on; a shutdown once waited for it for ever (the slow tier hung in test_classes on Redis). So each
        round cancels again what still runs, and after CLOSE_ROUNDS the shutdown goes on without it."""
        pending = {channel.task for channel in self.channels.values()}
        if self.heartbeat is not None:
            pending.add(self.heartbeat)
        self.channels.clear()
        for _ in range(CLOSE_ROUNDS):
            if not pending:
                return
            for task in pending:
                task.cancel()
            done, pending = await asyncio.wait(pending, timeout=CLOSE_ROUND_SECONDS)
            for task in done:
                if not task.cancelled():
                    task.exception()  # retrieved: a watcher's error at shutdown is no news
        if pending:
            log.warning("%d class watchers did not stop within %g s; shutting down without them", len(pending),
                        CLOSE_ROUNDS * CLOSE_ROUND_SECONDS)


def _event(state: ClassState | None, ended: bool = True, waiting: bool = False) -> str:
    """The state, or once the class is gone: {"ended": true} when the teacher ended it, {"lost": true} when it
    vanished without an end (a store emptied by a restart without persistence, or a class expired). To a student
    waiting at the door, the state says "waiting": true."""
    gone = {"ended": True} if ended else {"lost": True}
    data = gone if state is None else {
        "step": state.step, "round": state.round, "revealed": state.revealed, "joined": state.joined,
        "answered": state.answered, "door": state.door, "locked": state.locked}
    if waiting and state is not None:
        data["waiting"] = True
    return f"data: {json.dumps(data)}\n\n"


REMOVED = 'data: {"removed": true}\n\n'
OUTAGE = 'event: outage\ndata: {"type": "class_store_unavailable"}\n\n'
BACK = 'event: back\ndata: {}\n\n'


async def event_stream(broadcaster: Broadcaster, code: str, state: ClassState, teacher_view: bool,
                       keepalive: float, student: str | None = None,
                       standing: Standing | None = None) -> AsyncIterator[str]:
    """SSE text: the current state at once, then each change. A student's stream sends only a new step, round or
    reveal; the teacher's view (no student) also sends each new join, answer and door, to update the counts.
    The stream of `student` (an id of the class, `standing` where they stood when it opened) says "waiting" while
    they wait at the door and sends the state once admitted; it ends with {"removed": true} once the teacher
    removes (or refuses) them. Something is sent at least every `keepalive` seconds, whatever wakes the stream in
    between."""
    if standing == "removed":
        yield f"retry: 1000\n{REMOVED}"
        return
    waiting = standing == "waiting"
    # the browser reconnects after 1 s, and lands on the current step
    yield f"retry: 1000\n{_event(state, waiting=waiting)}"
    sent, outage = state, False
    last_write = time.monotonic()
    async with broadcaster.listen(code, state) as channel:
        while True:
            changed = channel.changed
            now = channel.state
            text = ""
            if channel.outage != outage:
                outage = channel.outage
                # A class gone during the outage is not "back": its stream says only that it is gone (below).
                text = OUTAGE if outage else BACK if now is not None else ""
                if not outage and now is not None:
                    text += _event(now, waiting=waiting)
                    sent = now
            if student is not None and student in channel.removed:
                yield text + REMOVED
                return
            if not outage:
                if now is None:
                    yield text + _event(None, channel.ended)
                    return
                admitted = (waiting and channel.waiting is not None and channel.waiting_version >= state.version
                            and student not in channel.waiting)
                if admitted or (now.version > sent.version and (
                        teacher_view or (now.step, now.round, now.revealed) != (sent.step, sent.round, sent.revealed))):
                    waiting = waiting and not admitted
                    text += _event(now, waiting=waiting)
                    sent = now
            if text:
                yield text
                last_write = time.monotonic()
            # Until the next change, or until the line has been silent for `keepalive` seconds: changes
            # a student's stream does not send (joins, answers) must not put the comment off. Not asyncio.wait_for:
            # on Python 3.11, a stream cancelled (its worker stopping) just as a change came would lose the
            # cancellation there and live on, sending a comment every `keepalive` seconds to nobody.
            with anyio.move_on_after(max(0.0, last_write + keepalive - time.monotonic())) as silence:
                await changed.wait()
            if silence.cancelled_caught:
                yield ": keep-alive\n\n"  # a comment: proxies keep the connection, the browser ignores it
                last_write = time.monotonic()
