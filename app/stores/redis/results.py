"""A class's end in Redis, and the record it leaves the teacher until Lifetimes.results has passed."""

import json

from app.stores import ClassRecord, StepRecord
from app.stores.redis.connection import Connection
from app.stores.redis.keys import KEYS_OF, LIVE, class_key, ended_key

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
SCRIPTS = {"end": END, "record": RECORD, "delete": DELETE}


class Results(Connection):
    async def end(self, code, now):
        return await self.scripts["end"](keys=[class_key(code), LIVE], args=[now, self.lifetimes.results])

    async def ended(self, code):
        return bool(await self.redis.exists(ended_key(code)))

    async def record(self, code, now):
        for key in (class_key(code), ended_key(code)):
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
        return await self.scripts["delete"](keys=[ended_key(code), class_key(code)])
