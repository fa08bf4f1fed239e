"""Classes in Redis, for several replicas: any replica answers any request, and every change is
published on the class's channel, which each replica's one watcher per class listens to.

Every change is a Lua script, so its check and its write are one atomic step on the Redis server.
Keys, for class CODE: hp:class:CODE (hash: token_hash, step, revealed, version, locked),
hp:class:CODE:tokens (hash: student token's sha256 -> student), hp:class:CODE:a:STEP (hash: student ->
choice), hp:classes (sorted set: code -> when it expires, to count open classes), hp:made:ADDRESS
(sorted set: when that address made a class), and the channel hp:class:CODE:events. Every key of a
class expires after its lifetime: the idle time once a student joined, the shorter unjoined time before.
"""

import asyncio
from collections.abc import AsyncIterator

import redis.asyncio as redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from app.lesson_steps import STEPS
from app.stores import ClassState, CreationLimit, Lifetimes

LIVE = "hp:classes"
COALESCE_SECONDS = 0.05  # a burst of answers becomes one read of the state, not one per answer
COMMAND_CONNECTIONS = 32  # per process; a command takes well under a millisecond on the Redis server
POOL_WAIT_SECONDS = 20  # a request waits this long for a free connection before the store counts as down
SUBSCRIPTIONS = 10_000  # one per class watched in this process, at most HP_MAX_CLASSES

# Lua shared by the scripts: KEYS[1] is the class hash; ARGV[1] now, ARGV[2] idle seconds, ARGV[3] the
# lifetime before anyone joined.
TOUCH = f"""
local prefix = KEYS[1]
local function touch()
  local ttl = math.ceil(tonumber(ARGV[3]))
  if redis.call('HLEN', prefix .. ':tokens') > 0 then ttl = math.ceil(tonumber(ARGV[2])) end
  redis.call('EXPIRE', prefix, ttl)
  redis.call('EXPIRE', prefix .. ':tokens', ttl)
  for s = 1, {len(STEPS)} do redis.call('EXPIRE', prefix .. ':a:' .. s, ttl) end
  redis.call('ZADD', '{LIVE}', tonumber(ARGV[1]) + ttl, string.sub(prefix, 10))
  local v = redis.call('HINCRBY', prefix, 'version', 1)
  redis.call('PUBLISH', prefix .. ':events', v)
end
"""
# KEYS[2] the address's creations (or '' for none counted); ARGV[4] max classes, ARGV[5] token hash,
# ARGV[6] step, ARGV[7] classes per window, ARGV[8] window seconds. Returns {outcome, seconds to wait}.
CREATE = TOUCH + f"""
local made = KEYS[2]
local now = tonumber(ARGV[1])
if made ~= '' then
  redis.call('ZREMRANGEBYSCORE', made, '-inf', now - tonumber(ARGV[8]))
  if redis.call('ZCARD', made) >= tonumber(ARGV[7]) then
    local oldest = redis.call('ZRANGE', made, 0, 0, 'WITHSCORES')[2]
    return {{'limited', tostring(tonumber(oldest) + tonumber(ARGV[8]) - now)}}
  end
end
redis.call('ZREMRANGEBYSCORE', '{LIVE}', '-inf', now)
if redis.call('ZCARD', '{LIVE}') >= tonumber(ARGV[4]) then return {{'full', '0'}} end
if redis.call('EXISTS', prefix) == 1 then return {{'missing', '0'}} end
redis.call('HSET', prefix, 'token_hash', ARGV[5], 'step', ARGV[6], 'revealed', 0, 'version', 0, 'locked', 0)
touch()
if made ~= '' then
  redis.call('ZADD', made, now, ARGV[1] .. ':' .. string.sub(prefix, 10))
  redis.call('EXPIRE', made, math.ceil(tonumber(ARGV[8])))
end
return {{'ok', '0'}}
"""
# ARGV[4] field, ARGV[5] value (and optionally ARGV[6], ARGV[7] a second pair): set and touch.
CHANGE = TOUCH + """
if redis.call('EXISTS', prefix) == 0 then return 'missing' end
redis.call('HSET', prefix, ARGV[4], ARGV[5])
if ARGV[6] then redis.call('HSET', prefix, ARGV[6], ARGV[7]) end
touch()
return 'ok'
"""
# ARGV[4] student, ARGV[5] token hash, ARGV[6] max students.
JOIN = TOUCH + """
if redis.call('EXISTS', prefix) == 0 then return 'missing' end
if redis.call('HGET', prefix, 'locked') == '1' then return 'locked' end
if redis.call('HLEN', prefix .. ':tokens') >= tonumber(ARGV[6]) then return 'full' end
redis.call('HSET', prefix .. ':tokens', ARGV[5], ARGV[4])
touch()
return 'ok'
"""
# ARGV[4] student, ARGV[5] step, ARGV[6] choice. Returns {outcome, current step}.
ANSWER = TOUCH + """
if redis.call('EXISTS', prefix) == 0 then return {'missing', 0} end
local current = tonumber(redis.call('HGET', prefix, 'step'))
local answers = prefix .. ':a:' .. ARGV[5]
if redis.call('HGET', answers, ARGV[4]) == ARGV[6] then return {'ok', current} end
if current ~= tonumber(ARGV[5]) then return {'not_current', current} end
if redis.call('HGET', prefix, 'revealed') == '1' then return {'revealed', current} end
redis.call('HSET', answers, ARGV[4], ARGV[6])
touch()
return {'ok', current}
"""
STATE = """
local prefix = KEYS[1]
local fields = redis.call('HMGET', prefix, 'step', 'revealed', 'version', 'locked')
if not fields[1] then return false end
return {fields[1], fields[2], fields[3], redis.call('HLEN', prefix .. ':tokens'),
        redis.call('HLEN', prefix .. ':a:' .. fields[1]), fields[4] or '0'}
"""
END = """
local prefix = KEYS[1]
local existed = redis.call('DEL', prefix, prefix .. ':tokens', prefix .. ':students')
for s = 1, tonumber(ARGV[1]) do redis.call('DEL', prefix .. ':a:' .. s) end
redis.call('ZREM', KEYS[2], string.sub(prefix, 10))
redis.call('PUBLISH', prefix .. ':events', 'end')
if existed > 0 then return 'ok' end
return 'missing'
"""


def _key(code: str) -> str:
    return f"hp:class:{code}"  # 9 characters before the code: string.sub(prefix, 10) in the scripts


class RedisStore:
    name = "redis"
    # Refused, reset or timed out; BusyLoadingError (a Redis still reading its append-only file) is a
    # ConnectionError too.
    unavailable = (RedisConnectionError, RedisTimeoutError, OSError)

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
        scripts = {"create": CREATE, "change": CHANGE, "join": JOIN, "answer": ANSWER, "state": STATE, "end": END}
        self.scripts = {name: self.redis.register_script(text) for name, text in scripts.items()}

    async def _call(self, name: str, code: str, now: float, *args, keys: tuple = ()):
        return await self.scripts[name](keys=[_key(code), *keys],
                                        args=[now, self.lifetimes.idle, self.lifetimes.unjoined, *args])

    async def create(self, code, token_hash, step, now, max_classes, address, limit: CreationLimit):
        made = f"hp:made:{address}" if address is not None else ""
        outcome, wait = await self._call("create", code, now, max_classes, token_hash, step, limit.per_window,
                                         limit.window, keys=(made,))
        return outcome, float(wait)

    async def token_hash(self, code, now):
        return await self.redis.hget(_key(code), "token_hash")

    async def state(self, code, now):
        found = await self.scripts["state"](keys=[_key(code)])
        if not found:
            return None
        step, revealed, version, joined, answered, locked = found
        return ClassState(step=int(step), revealed=revealed == "1", joined=int(joined), answered=int(answered),
                          version=int(version), locked=locked == "1")

    async def set_step(self, code, step, now):
        return await self._call("change", code, now, "step", step, "revealed", 0)

    async def reveal(self, code, now):
        return await self._call("change", code, now, "revealed", 1)

    async def set_locked(self, code, locked, now):
        return await self._call("change", code, now, "locked", int(locked))

    async def end(self, code):
        return await self.scripts["end"](keys=[_key(code), LIVE], args=[len(STEPS)])

    async def join(self, code, student, token_hash, now, max_students):
        return await self._call("join", code, now, student, token_hash, max_students)

    async def student(self, code, token_hash, now):
        return await self.redis.hget(f"{_key(code)}:tokens", token_hash)

    async def answer(self, code, student, step, choice, now):
        outcome, current = await self._call("answer", code, now, student, step, choice)
        return outcome, int(current)

    async def answers_of(self, code, student):
        async with self.redis.pipeline(transaction=False) as pipe:
            for step in range(1, len(STEPS) + 1):
                pipe.hget(f"{_key(code)}:a:{step}", student)
            found = await pipe.execute()
        return {step: choice for step, choice in enumerate(found, 1) if choice is not None}

    async def counts(self, code, step):
        choices = await self.redis.hvals(f"{_key(code)}:a:{step}")
        counts: dict[str, int] = {}
        for choice in choices:
            counts[choice] = counts.get(choice, 0) + 1
        return counts

    async def changes(self, code) -> AsyncIterator[None]:
        pubsub = self.subscriber.pubsub()
        await pubsub.subscribe(f"{_key(code)}:events")
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
            await pubsub.aclose()

    async def ping(self) -> None:
        await self.redis.ping()

    async def close(self) -> None:
        await self.subscriber.aclose()
        await self.redis.aclose()
        await self.redis.connection_pool.disconnect()
