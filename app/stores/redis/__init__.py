"""Classes in Redis, for several replicas: any replica answers any request, and every change is
published on the class's channel, which each replica's one watcher per class listens to.

Every change is a Lua script, so its check and its write are one atomic step on the Redis server.
Keys, for class CODE: hp:class:CODE (hash: token_hash, step, revealed, version, door, door_chosen, refused_joins),
hp:class:CODE:tokens (hash: student token's sha256 -> student), hp:class:CODE:students (hash: student -> name),
hp:class:CODE:joined (sorted set: student -> when they joined), hp:class:CODE:removed (hash: student -> when the
teacher removed them), hp:class:CODE:waiting (hash: student -> when they came to the door, while they wait),
hp:class:CODE:addresses (set: the addresses students joined from, dropped at the end), hp:class:CODE:keys (hash:
student -> the JSON pair of keys of the name they sent and the name shown, app.domain.class_names.name_key),
hp:class:CODE:refused (set: the keys of the names of the students the teacher removed), hp:class:CODE:a:STEP (hash:
student -> choice in round 1; hp:class:CODE:a:STEP:2 in round 2), hp:class:CODE:times (hash: STEP:ROUND:student ->
when the answer kept was sent), hp:class:CODE:steps (hash: each step visited -> its rounds, and STEP:accepted -> the
verdict's right choices as JSON, kept at the reveal), hp:classes (sorted set: code -> when it expires, to count open
classes), and the channel hp:class:CODE:events. Every key of a class expires after its lifetime: the idle time once
a student joined, the shorter unjoined time before. "end" renames every key of the class to hp:ended:CODE..., kept
for the results' lifetime (HP_RESULTS_DAYS) or until the teacher deletes them: the record the teacher reads, and the
sign that the class ended rather than vanished. A rate limit's window is hp:hits:KEY (sorted set of event times),
which expires with its window.

The store is one class, RedisStore, written by concern: its connections, scripts and watch (connection.py), the
keys' names and the Lua they share (keys.py), a class's room and votes (rooms.py), its students and door
(roster.py), its end and record (results.py), and the rate limits' windows (limits.py).
"""

from app.stores.redis import limits, results, rooms, roster


class RedisStore(rooms.Rooms, roster.Roster, results.Results, limits.Limits):
    """The ClassStore (app/stores/__init__.py) on Redis."""
    SCRIPTS = {**rooms.SCRIPTS, **roster.SCRIPTS, **results.SCRIPTS, **limits.SCRIPTS}
