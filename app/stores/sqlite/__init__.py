"""Classes in one SQLite file (WAL): every worker of the machine opens it, and it outlives restarts.

sqlite3 blocks, so each call runs in a worker thread; a write takes well under a millisecond. Writes
run in BEGIN IMMEDIATE transactions, which take the file's write lock at once: the check ("is this
step current?") and the change happen under one lock, whichever worker asks.

The store is one class, SqliteStore, written by concern: its connection and transactions (connection.py), the
tables (schema.py), a class's room and votes (rooms.py), its students and door (roster.py), its end and record
(results.py), and the rate limits' windows (limits.py).
"""

from app.stores.sqlite.limits import Limits
from app.stores.sqlite.results import Results
from app.stores.sqlite.rooms import Rooms
from app.stores.sqlite.roster import Roster


class SqliteStore(Rooms, Roster, Results, Limits):
    """The ClassStore (app/stores/__init__.py) on one SQLite file."""
