"""Classes in Redis, for several replicas: any replica answers any request, and every change is
published on the class's channel, which each replica's one watcher per class listens to.

Every change is a Lua script, so its check and its write are one atomic step on the Redis server.
Keys, for class CODE: hp:class:CODE (hash: token_hash, step, revealed, version, door, door_chosen),
hp:class:CODE:tokens (hash: student token's sha256 -> student), hp:class:CODE:students (hash: student -> name),
hp:class:CODE:joined (sorted set: student -> when they joined), hp:class:CODE:removed (hash: student -> when the
teacher removed them), hp:class:CODE:waiting (hash: student -> when they came to the door, while they wait),
hp:class:CODE:addresses (set: the addresses students joined from, dropped at the end), hp:class:CODE:a:STEP (hash:
student -> choice in round 1; hp:class:CODE:a:STEP:2 in round 2), hp:class:CODE:times (hash: STEP:ROUND:student ->
when the answer kept was sent), hp:class:CODE:steps (hash: each step visited -> its rounds, and STEP:accepted -> the
verdict's right choices as JSON, kept at the reveal), hp:classes (sorted set: code -> when it expires, to count open
classes), and the channel hp:class:CODE:events. Every key of a class expires after its lifetime: the idle time once
a student joined, the shorter unjoined time before. "end" renames every key of the class to hp:ended:CODE..., kept
for the results' lifetime (HP_RESULTS_DAYS) or until the teacher deletes them: the record the teacher reads, and the
sign that the class ended rather than vanished. A rate limit's window is hp:hits:KEY (sorted set of event times),
which expires with its window.
"""

import asyncio
import json
import secrets
from collections.abc import AsyncIterator

import redis.asyncio as redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from app.domain.lesson_steps import STEPS
from app.stores import ClassRecord, ClassState, Lifetimes, Seat, StepRecord

LIVE = "hp:classes"
MAX_ROUNDS = 2  # app.services.classes.MAX_ROUNDS: the answer keys of every round are listed by it
COALESCE_SECONDS = 0.05  # a burst of answers becomes one read of the state, not one per answer
COMMAND_CONNECTIONS = 32  # per process; a command takes well under a millisecond on the Redis server
POOL_WAIT_SECONDS = 20  # a request waits this long for a free connection before the store counts as down
SUBSCRIPTIONS = 10_000  # one per class watched in this process, at most HP_MAX_CLASSES

# Lua shared by the scripts: KEYS[1] is the class hash; ARGV[1] now, ARGV[2] idle seconds, ARGV[3] the
# lifetime before anyone joined.
# Every key of a class but its hash; the answers' keys are named by answers_at() alone (round 1's keep the name
# they had before rounds).
PARTS = "{':tokens', ':students', ':joined', ':removed', ':steps', ':times', ':waiting', ':addresses'}"
KEYS_OF = f"""
local prefix = KEYS[1]
local function answers_at(step, round)
  if tonumber(round or 1) == 1 then return prefix .. ':a:' .. step end
  return prefix .. ':a:' .. step .. ':' .. round
end
-- The field of an answer's time in the class's :times hash.
local function time_field(step, round, student)
  return step .. ':' .. (round or 1) .. ':' .. student
end
local function answer_keys()
  local keys = {{}}
  for s = 1, {len(STEPS)} do
    for r = 1, {MAX_ROUNDS} do keys[#keys + 1] = answers_at(s, r) end
  end
  return keys
end
local function class_keys()
  local keys = answer_keys()
  for _, part in ipairs({PARTS}) do keys[#keys + 1] = prefix .. part end
  return keys
end
-- The door; a class from before the door had three states kept a lock instead ('locked' = '1': closed).
local function door_of()
  local door, locked = unpack(redis.call('HMGET', prefix, 'door', 'locked'))
  if door then return door end
  if locked == '1' then return 'closed' end
  return 'open'
end
"""
TOUCH = KEYS_OF + f"""
local function touch()
  local ttl = math.ceil(tonumber(ARGV[3]))
  if redis.call('HLEN', prefix .. ':tokens') > 0 then ttl = math.ceil(tonumber(ARGV[2])) end
  redis.call('EXPIRE', prefix, ttl)
  for _, key in ipairs(class_keys()) do redis.call('EXPIRE', key, ttl) end
  redis.call('ZADD', '{LIVE}', tonumber(ARGV[1]) + ttl, string.sub(prefix, 10))
  local v = redis.call('HINCRBY', prefix, 'version', 1)
  redis.call('PUBLISH', prefix .. ':events', v)
end
"""
# ARGV[4] max classes, ARGV[5] token hash, ARGV[6] step.
CREATE = TOUCH + f"""
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', '{LIVE}', '-inf', now)
if redis.call('ZCARD', '{LIVE}') >= tonumber(ARGV[4]) then return 'full' end
if redis.call('EXISTS', prefix) == 1 then return 'missing' end
if redis.call('EXISTS', 'hp:ended:' .. string.sub(prefix, 10)) == 1 then return 'missing' end
redis.call('HSET', prefix, 'token_hash', ARGV[5], 'step', ARGV[6], 'revealed', 0, 'version', 0, 'door', 'open',
           'door_chosen', 0)
redis.call('HSET', prefix .. ':steps', ARGV[6], 1)
touch()
return 'ok'
"""
# ARGV[4], ARGV[5], ...: field and value pairs to set, then touch.
CHANGE = TOUCH + """
if redis.call('EXISTS', prefix) == 0 then return 'missing' end
for i = 4, #ARGV, 2 do redis.call('HSET', prefix, ARGV[i], ARGV[i + 1]) end
touch()
return 'ok'
"""
# ARGV[4] the step to move to.
STEP = TOUCH + """
if redis.call('EXISTS', prefix) == 0 then return 'missing' end
redis.call('HSET', prefix, 'step', ARGV[4], 'revealed', 0, 'round', 1)
redis.call('HSETNX', prefix .. ':steps', ARGV[4], 1)
touch()
return 'ok'
"""
# ARGV[4] the accepted choices as JSON, '' for none.
REVEAL = TOUCH + """
if redis.call('EXISTS', prefix) == 0 then return 'missing' end
redis.call('HSET', prefix, 'revealed', 1)
-- The first reveal: latecomers are no longer usual, so an open door asks (unless the teacher chose it).
if redis.call('HGET', prefix, 'door_chosen') ~= '1' and door_of() == 'open' then
  redis.call('HSET', prefix, 'door', 'ask')
end
redis.call('HSET', prefix, 'door_chosen', 1)
local accepted = redis.call('HGET', prefix, 'step') .. ':accepted'
if ARGV[4] == '' then redis.call('HDEL', prefix .. ':steps', accepted)
else redis.call('HSET', prefix .. ':steps', accepted, ARGV[4]) end
touch()
return 'ok'
"""
# ARGV[4] the most rounds. Returns {outcome, round}.
AGAIN = TOUCH + """
if redis.call('EXISTS', prefix) == 0 then return {'missing', 0} end
local round = tonumber(redis.call('HGET', prefix, 'round') or '1')
if redis.call('HGET', prefix, 'revealed') == '1' then return {'revealed', round} end
if round >= tonumber(ARGV[4]) then return {'full', round} end
redis.call('HSET', prefix, 'round', round + 1)
redis.call('HSET', prefix .. ':steps', redis.call('HGET', prefix, 'step'), round + 1)
touch()
return {'ok', round + 1}
"""
# ARGV[4] student, ARGV[5] token hash, ARGV[6] max students, ARGV[7] name ('' for none), ARGV[8] animal,
# ARGV[9] the address. Returns {outcome, name}.
JOIN = TOUCH + """
if redis.call('EXISTS', prefix) == 0 then return {'missing', ''} end
local door = door_of()
if door == 'closed' then return {'locked', ''} end
local ever = redis.call('HLEN', prefix .. ':tokens')
if ever - redis.call('HLEN', prefix .. ':removed') >= tonumber(ARGV[6]) then return {'full', ''} end
local taken = {}
for _, n in ipairs(redis.call('HVALS', prefix .. ':students')) do taken[n] = true end
local name = ARGV[7]
if name == '' then
  local n = ever + 1
  name = ARGV[8] .. ' ' .. n
  while taken[name] do n = n + 1; name = ARGV[8] .. ' ' .. n end
elseif taken[name] then
  local k = 2
  while taken[ARGV[7] .. ' ' .. k] do k = k + 1 end
  name = ARGV[7] .. ' ' .. k
end
redis.call('HSET', prefix .. ':tokens', ARGV[5], ARGV[4])
redis.call('HSET', prefix .. ':students', ARGV[4], name)
redis.call('ZADD', prefix .. ':joined', ARGV[1], ARGV[4])
redis.call('SADD', prefix .. ':addresses', ARGV[9])
if door == 'ask' then redis.call('HSET', prefix .. ':waiting', ARGV[4], ARGV[1]) end
touch()
if door == 'ask' then return {'waiting', name} end
return {'ok', name}
"""
# ARGV[4...] the students. Returns the ids removed, or false for no class.
REMOVE = TOUCH + """
if redis.call('EXISTS', prefix) == 0 then return false end
local gone = {}
for i = 4, #ARGV do
  local student = ARGV[i]
  if redis.call('HEXISTS', prefix .. ':students', student) == 1
      and redis.call('HSETNX', prefix .. ':removed', student, ARGV[1]) == 1 then
    gone[#gone + 1] = student
    redis.call('HDEL', prefix .. ':waiting', student)
    for _, key in ipairs(answer_keys()) do redis.call('HDEL', key, student) end
    for step = 1, {STEPS} do
      for round = 1, {MAX_ROUNDS} do redis.call('HDEL', prefix .. ':times', time_field(step, round, student)) end
    end
  end
end
if #gone > 0 then
  if door_of() == 'open' then redis.call('HSET', prefix, 'door', 'ask') end
  touch()
end
return gone
""".replace("{STEPS}", str(len(STEPS))).replace("{MAX_ROUNDS}", str(MAX_ROUNDS))
# ARGV[4] 'all' or 'ids', ARGV[5...] the students. Returns the ids admitted, in joining order, or false for no class.
ADMIT = TOUCH + """
if redis.call('EXISTS', prefix) == 0 then return false end
local asked = {}
for i = 5, #ARGV do asked[ARGV[i]] = true end
local admitted = {}
for _, student in ipairs(redis.call('ZRANGE', prefix .. ':joined', 0, -1)) do
  if (ARGV[4] == 'all' or asked[student]) and redis.call('HDEL', prefix .. ':waiting', student) == 1 then
    admitted[#admitted + 1] = student
  end
end
if #admitted > 0 then touch() end
return admitted
"""
# ARGV[4] student, ARGV[5] step, ARGV[6] choice. Returns {outcome, current step}.
ANSWER = TOUCH + """
if redis.call('EXISTS', prefix) == 0 then return {'missing', 0} end
local current = tonumber(redis.call('HGET', prefix, 'step'))
local round = redis.call('HGET', prefix, 'round') or '1'
local answers = answers_at(ARGV[5], round)
if redis.call('HEXISTS', prefix .. ':removed', ARGV[4]) == 1 then return {'removed', current} end
if redis.call('HEXISTS', prefix .. ':waiting', ARGV[4]) == 1 then return {'waiting', current} end
if redis.call('HGET', answers, ARGV[4]) == ARGV[6] then return {'ok', current} end
if current ~= tonumber(ARGV[5]) then
  -- A retry of an answer counted in any round of a step that has passed.
  for r = 1, {MAX_ROUNDS} do
    if redis.call('HGET', answers_at(ARGV[5], r), ARGV[4]) == ARGV[6] then return {'ok', current} end
  end
  return {'not_current', current}
end
if redis.call('HGET', prefix, 'revealed') == '1' then return {'revealed', current} end
redis.call('HSET', answers, ARGV[4], ARGV[6])
redis.call('HSET', prefix .. ':times', time_field(ARGV[5], round, ARGV[4]), ARGV[1])
touch()
return {'ok', current}
""".replace("{MAX_ROUNDS}", str(MAX_ROUNDS))
STATE = KEYS_OF + """
local fields = redis.call('HMGET', prefix, 'step', 'revealed', 'version', 'round')
if not fields[1] then return false end
local removed = redis.call('HLEN', prefix .. ':removed')
local waiting = redis.call('HLEN', prefix .. ':waiting')
return {fields[1], fields[2], fields[3], redis.call('HLEN', prefix .. ':tokens') - removed - waiting,
        redis.call('HLEN', answers_at(fields[1], fields[4])), door_of(), removed, fields[4] or '1', waiting}
"""
ROSTER = KEYS_OF + """
local step, round = unpack(redis.call('HMGET', prefix, 'step', 'round'))
if not step then return {} end
local joined = redis.call('ZRANGE', prefix .. ':joined', 0, -1, 'WITHSCORES')
local seats = {}
for i = 1, #joined, 2 do
  local student = joined[i]
  if redis.call('HEXISTS', prefix .. ':removed', student) == 0 then
    seats[#seats + 1] = {student, redis.call('HGET', prefix .. ':students', student) or '', joined[i + 1],
                         redis.call('HEXISTS', answers_at(step, round), student),
                         redis.call('HEXISTS', prefix .. ':waiting', student)}
  end
end
return seats
"""
# KEYS[1] the window, ARGV[1] now, ARGV[2] limit, ARGV[3] window seconds, ARGV[4] '1' to count, ARGV[5] a
# unique member. Returns the seconds to wait as a string ('0': counted, or under the limit).
HIT = """
local now, limit, window = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local held = redis.call('ZCARD', KEYS[1])
if held >= limit then
  local nth = redis.call('ZRANGE', KEYS[1], held - limit, held - limit, 'WITHSCORES')[2]
  return tostring(math.max(tonumber(nth) + window - now, 0.001))
end
if ARGV[4] == '1' then
  redis.call('ZADD', KEYS[1], now, ARGV[5])
  redis.call('EXPIRE', KEYS[1], math.ceil(window))
end
return '0'
"""
# KEYS[2] the live classes, ARGV[1] now, ARGV[2] how long the record is kept.
END = KEYS_OF + """
if redis.call('EXISTS', prefix) == 0 then return 'missing' end
redis.call('HSET', prefix, 'ended', ARGV[1])
redis.call('DEL', prefix .. ':addresses')  -- the students' addresses served the running class only
local ended = 'hp:ended:' .. string.sub(prefix, 10)
local keys = class_keys()
keys[#keys + 1] = prefix
for _, key in ipairs(keys) do
  if redis.call('EXISTS', key) == 1 then
    local kept = ended .. string.sub(key, #prefix + 1)
    redis.call('RENAME', key, kept)
    redis.call('EXPIRE', kept, math.ceil(tonumber(ARGV[2])))
  end
end
redis.call('ZREM', KEYS[2], string.sub(prefix, 10))
redis.call('PUBLISH', prefix .. ':events', 'end')
return 'ok'
"""
# Every key of an ended class's record (KEYS[1] hp:ended:CODE) deleted.
DELETE_RECORD = KEYS_OF + """
local function delete_record()
  for _, key in ipairs(class_keys()) do redis.call('DEL', key) end
  redis.call('DEL', prefix)
end
"""
# The record of a running class (KEYS[1] hp:class:CODE) or an ended one (hp:ended:CODE); ARGV[1] now, ARGV[2] how
# long a record is kept: one past its time is deleted, as its keys' expiry would (Redis's own clock) do. Returns
# {token hash, ended, steps (flat hash), students in joining order (flat: id, name), answers (flat: step, round,
# student, choice, time or '')}, or false.
RECORD = DELETE_RECORD + """
local token, ended = unpack(redis.call('HMGET', prefix, 'token_hash', 'ended'))
if not token then return false end
if ended and tonumber(ended) + tonumber(ARGV[2]) < tonumber(ARGV[1]) then
  delete_record()
  return false
end
local steps = redis.call('HGETALL', prefix .. ':steps')
local students = {}
local joined = redis.call('ZRANGE', prefix .. ':joined', 0, -1)
for _, student in ipairs(joined) do
  if redis.call('HEXISTS', prefix .. ':removed', student) == 0
      and redis.call('HEXISTS', prefix .. ':waiting', student) == 0 then
    students[#students + 1] = student
    students[#students + 1] = redis.call('HGET', prefix .. ':students', student) or ''
  end
end
local answers = {}
for i = 1, #steps, 2 do
  if not string.find(steps[i], ':') then
    for r = 1, tonumber(steps[i + 1]) do
      local found = redis.call('HGETALL', answers_at(steps[i], r))
      for j = 1, #found, 2 do
        answers[#answers + 1] = steps[i]; answers[#answers + 1] = r
        answers[#answers + 1] = found[j]; answers[#answers + 1] = found[j + 1]
        answers[#answers + 1] = redis.call('HGET', prefix .. ':times', time_field(steps[i], r, found[j])) or ''
      end
    end
  end
end
return {token, ended or '', steps, students, answers}
"""

# KEYS[1] hp:ended:CODE, KEYS[2] hp:class:CODE (a running class's). Returns 'ok', 'running' or 'missing'.
DELETE = DELETE_RECORD + """
if redis.call('EXISTS', KEYS[2]) == 1 then return 'running' end
if redis.call('EXISTS', prefix) == 0 then return 'missing' end
delete_record()
return 'ok'
"""


def _key(code: str) -> str:
    return f"hp:class:{code}"  # 9 characters before the code: string.sub(prefix, 10) in the scripts


def _ended_key(code: str) -> str:
    return f"hp:ended:{code}"  # 9 characters too: the END script names it from the class's key


def _answers_at(code: str, step: int, round_: int) -> str:
    """As answers_at() in the scripts."""
    return f"{_key(code)}:a:{step}" if round_ == 1 else f"{_key(code)}:a:{step}:{round_}"


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
        scripts = {"create": CREATE, "change": CHANGE, "join": JOIN, "answer": ANSWER, "state": STATE, "end": END,
                   "remove": REMOVE, "roster": ROSTER, "hit": HIT, "again": AGAIN, "step": STEP, "reveal": REVEAL,
                   "record": RECORD, "delete": DELETE, "admit": ADMIT}
        self.scripts = {name: self.redis.register_script(text) for name, text in scripts.items()}

    async def _call(self, name: str, code: str, now: float, *args, keys: tuple = ()):
        return await self.scripts[name](keys=[_key(code), *keys],
                                        args=[now, self.lifetimes.idle, self.lifetimes.unjoined, *args])

    async def create(self, code, token_hash, step, now, max_classes):
        return await self._call("create", code, now, max_classes, token_hash, step)

    async def token_hash(self, code, now):
        return await self.redis.hget(_key(code), "token_hash")

    async def state(self, code, now):
        found = await self.scripts["state"](keys=[_key(code)])
        if not found:
            return None
        step, revealed, version, joined, answered, door, removed, round_, waiting = found
        return ClassState(step=int(step), revealed=revealed == "1", joined=int(joined), answered=int(answered),
                          version=int(version), door=door, removed=int(removed), round=int(round_),
                          waiting=int(waiting))

    async def set_step(self, code, step, now):
        return await self._call("step", code, now, step)

    async def reveal(self, code, accepted, now):
        return await self._call("reveal", code, now, "" if accepted is None else json.dumps(accepted))

    async def again(self, code, max_rounds, now):
        outcome, round_ = await self._call("again", code, now, max_rounds)
        return outcome, int(round_)

    async def set_door(self, code, door, now):
        return await self._call("change", code, now, "door", door, "door_chosen", 1)

    async def end(self, code, now):
        return await self.scripts["end"](keys=[_key(code), LIVE], args=[now, self.lifetimes.results])

    async def ended(self, code):
        return bool(await self.redis.exists(_ended_key(code)))

    async def record(self, code, now):
        for key in (_key(code), _ended_key(code)):
            found = await self.scripts["record"](keys=[key], args=[now, self.lifetimes.results])
            if found:
                break
        else:
            return None
        token, ended, steps, students, answers = found
        fields = dict(zip(steps[::2], steps[1::2], strict=True))
        kept = {int(step): StepRecord(int(rounds), json.loads(fields[f"{step}:accepted"])
                                      if f"{step}:accepted" in fields else None)
                for step, rounds in fields.items() if ":" not in step}
        return ClassRecord(token_hash=token, ended_at=float(ended) if ended else None, steps=dict(sorted(kept.items())),
                           students=dict(zip(students[::2], students[1::2], strict=True)),
                           answers=[(int(answers[i]), int(answers[i + 1]), answers[i + 2], answers[i + 3],
                                     float(answers[i + 4]) if answers[i + 4] else None)
                                    for i in range(0, len(answers), 5)])

    async def delete(self, code, now):
        return await self.scripts["delete"](keys=[_ended_key(code), _key(code)])

    async def join(self, code, student, token_hash, name, animal, address, now, max_students):
        outcome, given = await self._call("join", code, now, student, token_hash, max_students, name or "", animal,
                                          address)
        return outcome, given

    async def _standing(self, code, student):
        """Where a student stands, or None: no such student."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hexists(f"{_key(code)}:students", student)
            pipe.hexists(f"{_key(code)}:removed", student)
            pipe.hexists(f"{_key(code)}:waiting", student)
            seated, removed, waiting = await pipe.execute()
        if not seated:
            return None
        return "removed" if removed else "waiting" if waiting else "in"

    async def student(self, code, token_hash, now):
        student = await self.redis.hget(f"{_key(code)}:tokens", token_hash)
        if student is None:
            return None
        standing = await self._standing(code, student)
        return None if standing is None else (student, standing)

    async def member(self, code, student, now):
        return await self._standing(code, student)

    async def roster(self, code, now):
        seats = await self.scripts["roster"](keys=[_key(code)])
        return [Seat(student, name, float(joined_at), bool(answered), bool(waiting))
                for student, name, joined_at, answered, waiting in seats]

    async def admit(self, code, students, now):
        how = ("all",) if students is None else ("ids", *students)
        admitted = await self._call("admit", code, now, *how)
        return None if admitted is None else list(admitted)

    async def remove(self, code, students, now):
        gone = await self._call("remove", code, now, *students)
        return None if gone is None else list(gone)

    async def removed(self, code):
        return set(await self.redis.hkeys(f"{_key(code)}:removed"))

    async def waiting(self, code):
        return set(await self.redis.hkeys(f"{_key(code)}:waiting"))

    async def addresses(self, code):
        return set(await self.redis.smembers(f"{_key(code)}:addresses"))

    async def answer(self, code, student, step, choice, now):
        outcome, current = await self._call("answer", code, now, student, step, choice)
        return outcome, int(current)

    async def answers_of(self, code, student):
        async with self.redis.pipeline(transaction=False) as pipe:
            for step in range(1, len(STEPS) + 1):
                for round_ in range(1, MAX_ROUNDS + 1):
                    pipe.hget(_answers_at(code, step, round_), student)
            found = await pipe.execute()
        answers = {}
        for n, choice in enumerate(found):  # the last round's answer of each step
            if choice is not None:
                answers[n // MAX_ROUNDS + 1] = choice
        return answers

    async def counts(self, code, step, round_):
        choices = await self.redis.hvals(_answers_at(code, step, round_))
        counts: dict[str, int] = {}
        for choice in choices:
            counts[choice] = counts.get(choice, 0) + 1
        return counts

    async def hit(self, key, limit, window, now, count):
        wait = await self.scripts["hit"](keys=[f"hp:hits:{key}"],
                                         args=[now, limit, window, "1" if count else "0", secrets.token_hex(8)])
        return float(wait)

    async def held(self, keys, window, now):
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.zcount(f"hp:hits:{key}", f"({now - window}", "+inf")
            return sum(await pipe.execute())

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
