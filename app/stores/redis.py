"""Classes in Redis, for several replicas: any replica answers any request, and every change is
published on the class's channel, which each replica's one watcher per class listens to.

Every change is a Lua script, so its check and its write are one atomic step on the Redis server.
Keys, for class CODE: hp:class:CODE (hash: token_hash, step, revealed, version), hp:class:CODE:students
(set), hp:class:CODE:a:STEP (hash: student -> choice), hp:classes (sorted set: code -> last activity,
to count open classes), and the channel hp:class:CODE:events. Every key expires after the idle time.
"""

import asyncio
from collections.abc import AsyncIterator

import redis.asyncio as redis

from app.lesson_steps import STEPS
from app.stores import ClassState

LIVE = "hp:classes"
COALESCE_SECONDS = 0.05  # a burst of answers becomes one read of the state, not one per answer

# Lua shared by the scripts: KEYS[1] is the class hash; ARGV[1] now, ARGV[2] idle seconds.
TOUCH = f"""
local prefix = KEYS[1]
local function touch()
  local ttl = math.ceil(tonumber(ARGV[2]))
  redis.call('EXPIRE', prefix, ttl)
  redis.call('EXPIRE', prefix .. ':students', ttl)
  for s = 1, {len(STEPS)} do redis.call('EXPIRE', prefix .. ':a:' .. s, ttl) end
  redis.call('ZADD', '{LIVE}', ARGV[1], string.sub(prefix, 10))
  local v = redis.call('HINCRBY', prefix, 'version', 1)
  redis.call('PUBLISH', prefix .. ':events', v)
end
"""
# ARGV[3] max classes, ARGV[4] token hash, ARGV[5] step.
CREATE = TOUCH + f"""
redis.call('ZREMRANGEBYSCORE', '{LIVE}', '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
if redis.call('ZCARD', '{LIVE}') >= tonumber(ARGV[3]) then return 'full' end
if redis.call('EXISTS', prefix) == 1 then return 'missing' end
redis.call('HSET', prefix, 'token_hash', ARGV[4], 'step', ARGV[5], 'revealed', 0, 'version', 0)
touch()
return 'ok'
"""
SET_STEP = TOUCH + """
if redis.call('EXISTS', prefix) == 0 then return 'missing' end
redis.call('HSET', prefix, 'step', ARGV[3], 'revealed', 0)
touch()
return 'ok'
"""
REVEAL = TOUCH + """
if redis.call('EXISTS', prefix) == 0 then return 'missing' end
redis.call('HSET', prefix, 'revealed', 1)
touch()
return 'ok'
"""
# ARGV[3] student, ARGV[4] max students. Returns 'ok' or 'full' (the student is in, or the class is full).
JOIN_FN = """
local function join()
  if redis.call('SISMEMBER', prefix .. ':students', ARGV[3]) == 1 then return 'ok' end
  if redis.call('SCARD', prefix .. ':students') >= tonumber(ARGV[4]) then return 'full' end
  redis.call('SADD', prefix .. ':students', ARGV[3])
  return 'ok'
end
"""
JOIN = TOUCH + JOIN_FN + """
if redis.call('EXISTS', prefix) == 0 then return 'missing' end
local joined = join()
if joined == 'ok' then touch() end
return joined
"""
# ARGV[5] step, ARGV[6] choice. Returns {outcome, current step}.
ANSWER = TOUCH + JOIN_FN + """
if redis.call('EXISTS', prefix) == 0 then return {'missing', 0} end
local current = tonumber(redis.call('HGET', prefix, 'step'))
if current ~= tonumber(ARGV[5]) then return {'not_current', current} end
if redis.call('HGET', prefix, 'revealed') == '1' then return {'revealed', current} end
local joined = join()
if joined ~= 'ok' then return {joined, current} end
redis.call('HSET', prefix .. ':a:' .. current, ARGV[3], ARGV[6])
touch()
return {'ok', current}
"""
STATE = """
local prefix = KEYS[1]
local fields = redis.call('HMGET', prefix, 'step', 'revealed', 'version')
if not fields[1] then return false end
return {fields[1], fields[2], fields[3], redis.call('SCARD', prefix .. ':students'),
        redis.call('HLEN', prefix .. ':a:' .. fields[1])}
"""
END = """
local prefix = KEYS[1]
local existed = redis.call('DEL', prefix, prefix .. ':students')
for s = 1, tonumber(ARGV[1]) do redis.call('DEL', prefix .. ':a:' .. s) end
redis.call('ZREM', KEYS[2], string.sub(prefix, 10))
redis.call('PUBLISH', prefix .. ':events', 'end')
if existed > 0 then return 'ok' end
return 'missing'
"""


def _key(code: str) -> str:
    return f"hp:class:{code}"  # 9 characters before the code: string.sub(prefix, 10) in the scripts


class RedisStore:
    def __init__(self, url: str, idle_seconds: float):
        self.redis = redis.Redis.from_url(url, decode_responses=True)
        self.idle = idle_seconds
        scripts = {"create": CREATE, "set_step": SET_STEP, "reveal": REVEAL, "join": JOIN, "answer": ANSWER,
                   "state": STATE, "end": END}
        self.scripts = {name: self.redis.register_script(text) for name, text in scripts.items()}

    async def _call(self, name: str, code: str, now: float, *args):
        return await self.scripts[name](keys=[_key(code)], args=[now, self.idle, *args])

    async def create(self, code, token_hash, step, now, max_classes):
        return await self._call("create", code, now, max_classes, token_hash, step)

    async def token_hash(self, code, now):
        return await self.redis.hget(_key(code), "token_hash")

    async def state(self, code, now):
        found = await self.scripts["state"](keys=[_key(code)])
        if not found:
            return None
        step, revealed, version, joined, answered = found
        return ClassState(step=int(step), revealed=revealed == "1", joined=int(joined), answered=int(answered),
                          version=int(version))

    async def set_step(self, code, step, now):
        return await self._call("set_step", code, now, step)

    async def reveal(self, code, now):
        return await self._call("reveal", code, now)

    async def end(self, code):
        return await self.scripts["end"](keys=[_key(code), LIVE], args=[len(STEPS)])

    async def join(self, code, student, now, max_students):
        return await self._call("join", code, now, student, max_students)

    async def answer(self, code, student, step, choice, now, max_students):
        outcome, current = await self._call("answer", code, now, student, max_students, step, choice)
        return outcome, int(current)

    async def counts(self, code, step):
        choices = await self.redis.hvals(f"{_key(code)}:a:{step}")
        counts: dict[str, int] = {}
        for choice in choices:
            counts[choice] = counts.get(choice, 0) + 1
        return counts

    async def changes(self, code) -> AsyncIterator[None]:
        pubsub = self.redis.pubsub()
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

    async def close(self) -> None:
        await self.redis.aclose()
