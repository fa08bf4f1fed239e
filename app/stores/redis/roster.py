"""A class's students in Redis: who joins through the door, waits at it, is admitted or removed."""

from app.domain.lesson_steps import STEPS
from app.stores import Seat
from app.stores.redis.connection import Connection
from app.stores.redis.keys import KEYS_OF, MAX_ROUNDS, TOUCH, class_key

# ARGV[4] student, ARGV[5] token hash, ARGV[6] max students, ARGV[7] name ('' for none), ARGV[8] animal,
# ARGV[9] the address, ARGV[10] the name's key ('' for none). Returns {outcome, name}.
JOIN = TOUCH + """
if redis.call('EXISTS', prefix) == 0 then return {'missing', ''} end
local door = door_of()
if door == 'closed' then return {'locked', ''} end
if ARGV[10] ~= '' and redis.call('SISMEMBER', prefix .. ':refused', ARGV[10]) == 1 then
  redis.call('HINCRBY', prefix, 'refused_joins', 1)
  touch()  -- the teacher's page reads the count again
  return {'refused', ''}
end
local ever = redis.call('HLEN', prefix .. ':tokens')
if ever - redis.call('HLEN', prefix .. ':removed') >= tonumber(ARGV[6]) then return {'full', ''} end
local taken = {}
for _, n in ipairs(redis.call('HVALS', prefix .. ':students')) do taken[n] = true end
local name, shown_key = ARGV[7], ARGV[10]
if name == '' then
  local n = ever + 1
  name = ARGV[8] .. ' ' .. n
  while taken[name] do n = n + 1; name = ARGV[8] .. ' ' .. n end
elseif taken[name] then
  local k = 2
  while taken[ARGV[7] .. ' ' .. k] do k = k + 1 end
  name, shown_key = ARGV[7] .. ' ' .. k, ARGV[10] .. ' ' .. k
end
-- The keys a removal refuses: the name sent and the name shown ("{key} {k}").
if ARGV[10] ~= '' then redis.call('HSET', prefix .. ':keys', ARGV[4], cjson.encode({ARGV[10], shown_key})) end
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
    local keys = redis.call('HGET', prefix .. ':keys', student)
    if keys then redis.call('SADD', prefix .. ':refused', unpack(cjson.decode(keys))) end
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
SCRIPTS = {"join": JOIN, "remove": REMOVE, "admit": ADMIT, "roster": ROSTER}


class Roster(Connection):
    async def join(self, code, student, token_hash, name, key, animal, address, now, max_students):
        outcome, given = await self._call("join", code, now, student, token_hash, max_students, name or "", animal,
                                          address, key or "")
        return outcome, given

    async def _standing(self, code, student):
        """Where a student stands, or None: no such student."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hexists(f"{class_key(code)}:students", student)
            pipe.hexists(f"{class_key(code)}:removed", student)
            pipe.hexists(f"{class_key(code)}:waiting", student)
            seated, removed, waiting = await pipe.execute()
        if not seated:
            return None
        return "removed" if removed else "waiting" if waiting else "in"

    async def student(self, code, token_hash, now):
        student = await self.redis.hget(f"{class_key(code)}:tokens", token_hash)
        if student is None:
            return None
        standing = await self._standing(code, student)
        return None if standing is None else (student, standing)

    async def member(self, code, student, now):
        return await self._standing(code, student)

    async def roster(self, code, now):
        seats = await self.scripts["roster"](keys=[class_key(code)])
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
        return set(await self.redis.hkeys(f"{class_key(code)}:removed"))

    async def waiting(self, code):
        return set(await self.redis.hkeys(f"{class_key(code)}:waiting"))

    async def addresses(self, code):
        return set(await self.redis.smembers(f"{class_key(code)}:addresses"))
