"""The per-address rate limits' windows in Redis (app/services/rate_limits.py): hp:hits:KEY."""

import secrets

from app.stores.redis.connection import Connection

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
SCRIPTS = {"hit": HIT}


class Limits(Connection):
    async def hit(self, key, limit, window, now, count):
        wait = await self.scripts["hit"](keys=[f"hp:hits:{key}"],
                                         args=[now, limit, window, "1" if count else "0", secrets.token_hex(8)])
        return float(wait)

    async def held(self, keys, window, now):
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.zcount(f"hp:hits:{key}", f"({now - window}", "+inf")
            return sum(await pipe.execute())
