"""The names of a class's keys in Redis, in Python and in the Lua every script of the store starts with
(KEYS_OF, and TOUCH for the scripts that change a class)."""

from app.domain.lesson_steps import STEPS

LIVE = "hp:classes"
MAX_ROUNDS = 2  # app.services.classes.MAX_ROUNDS: the answer keys of every round are listed by it

# Lua shared by the scripts: KEYS[1] is the class hash; ARGV[1] now, ARGV[2] idle seconds, ARGV[3] the
# lifetime before anyone joined.
# Every key of a class but its hash; the answers' keys are named by answers_at() alone (round 1's keep the name
# they had before rounds).
PARTS = ("{':tokens', ':students', ':joined', ':removed', ':steps', ':times', ':waiting', ':addresses', ':keys', "
         "':refused'}")
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


def class_key(code: str) -> str:
    return f"hp:class:{code}"  # 9 characters before the code: string.sub(prefix, 10) in the scripts


def ended_key(code: str) -> str:
    return f"hp:ended:{code}"  # 9 characters too: the END script names it from the class's key


def answers_key(code: str, step: int, round_: int) -> str:
    """As answers_at() in the scripts."""
    return f"{class_key(code)}:a:{step}" if round_ == 1 else f"{class_key(code)}:a:{step}:{round_}"

