"""A class's room in Redis: it is made, moves from step to step, reveals, votes again, and keeps its answers."""

import json

from app.domain.lesson_steps import STEPS
from app.stores import ClassState
from app.stores.redis.connection import Connection
from app.stores.redis.keys import KEYS_OF, LIVE, MAX_ROUNDS, TOUCH, answers_key, class_key

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
local fields = redis.call('HMGET', prefix, 'step', 'revealed', 'version', 'round', 'refused_joins')
if not fields[1] then return false end
local removed = redis.call('HLEN', prefix .. ':removed')
local waiting = redis.call('HLEN', prefix .. ':waiting')
return {fields[1], fields[2], fields[3], redis.call('HLEN', prefix .. ':tokens') - removed - waiting,
        redis.call('HLEN', answers_at(fields[1], fields[4])), door_of(), removed, fields[4] or '1', waiting,
        fields[5] or '0'}
"""
SCRIPTS = {"create": CREATE, "change": CHANGE, "step": STEP, "reveal": REVEAL, "again": AGAIN, "answer": ANSWER,
           "state": STATE}


class Rooms(Connection):
    async def create(self, code, token_hash, step, now, max_classes):
        return await self._call("create", code, now, max_classes, token_hash, step)

    async def token_hash(self, code, now):
        return await self.redis.hget(class_key(code), "token_hash")

    async def state(self, code, now):
        found = await self.scripts["state"](keys=[class_key(code)])
        if not found:
            return None
        step, revealed, version, joined, answered, door, removed, round_, waiting, refused_joins = found
        return ClassState(step=int(step), revealed=revealed == "1", joined=int(joined), answered=int(answered),
                          version=int(version), door=door, removed=int(removed), round=int(round_),
                          waiting=int(waiting), refused_joins=int(refused_joins))

    async def set_step(self, code, step, now):
        return await self._call("step", code, now, step)

    async def reveal(self, code, accepted, now):
        return await self._call("reveal", code, now, "" if accepted is None else json.dumps(accepted))

    async def again(self, code, max_rounds, now):
        outcome, round_ = await self._call("again", code, now, max_rounds)
        return outcome, int(round_)

    async def set_door(self, code, door, now):
        return await self._call("change", code, now, "door", door, "door_chosen", 1)

    async def answer(self, code, student, step, choice, now):
        outcome, current = await self._call("answer", code, now, student, step, choice)
        return outcome, int(current)

    async def answers_of(self, code, student):
        async with self.redis.pipeline(transaction=False) as pipe:
            for step in range(1, len(STEPS) + 1):
                for round_ in range(1, MAX_ROUNDS + 1):
                    pipe.hget(answers_key(code, step, round_), student)
            found = await pipe.execute()
        answers = {}
        for n, choice in enumerate(found):  # the last round's answer of each step
            if choice is not None:
                answers[n // MAX_ROUNDS + 1] = choice
        return answers

    async def counts(self, code, step, round_):
        choices = await self.redis.hvals(answers_key(code, step, round_))
        counts: dict[str, int] = {}
        for choice in choices:
            counts[choice] = counts.get(choice, 0) + 1
        return counts
