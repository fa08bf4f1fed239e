"""A shutdown stops every class watcher, even one whose cancellation was lost on its way (Python 3.11's
asyncio.timeout, under which redis-py reads a subscription, can take a cancel for its own deadline): the slow tier
once hung for ever in test_classes's Redis teardown, a watcher still reading its subscription."""

import asyncio
import logging

from app.services.class_events import CLOSE_ROUND_SECONDS, CLOSE_ROUNDS, Broadcaster


class LosesCancels:
    """A store whose subscription reads on through its first `lost` cancellations, as the lost one did."""

    name = "fake"
    unavailable = (ConnectionError,)

    def __init__(self, lost: int):
        self.lost = lost
        self.cancels = 0

    async def changes(self, code):
        while True:
            try:
                await asyncio.Event().wait()  # a subscription with nothing to say
            except asyncio.CancelledError:
                self.cancels += 1
                if self.cancels > self.lost:
                    raise
        yield  # an async generator, as the stores' changes() are

    async def ping(self) -> None:
        return None


async def watched_then_closed(store: LosesCancels) -> Broadcaster:
    broadcaster = Broadcaster(store, heartbeat=60, stall=120)
    async with broadcaster.listen("ABCDEF", None):
        await asyncio.sleep(0.05)  # the watcher is reading
        await asyncio.wait_for(broadcaster.close(), CLOSE_ROUNDS * CLOSE_ROUND_SECONDS + 5)
    return broadcaster


def test_a_watcher_that_lost_its_cancellation_is_cancelled_again():
    store = LosesCancels(lost=1)
    asyncio.run(watched_then_closed(store))
    assert store.cancels == 2


def test_a_watcher_that_outlasts_every_round_does_not_hold_the_close(caplog):
    """close() returns after its rounds and says so; the event loop's own end cancels the watcher once more (a
    watcher that never stops would hold that too: no code can stop a coroutine that refuses to)."""
    store = LosesCancels(lost=CLOSE_ROUNDS)
    with caplog.at_level(logging.WARNING, logger="heads_positions"):
        asyncio.run(watched_then_closed(store))
    assert store.cancels == CLOSE_ROUNDS + 1
    assert "did not stop" in caplog.text
