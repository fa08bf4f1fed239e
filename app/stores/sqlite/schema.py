"""The SQLite store's tables, the columns and migrations of older files, and the SQL its queries share."""

import sqlite3

SCHEMA = """
CREATE TABLE IF NOT EXISTS classes (
    code TEXT PRIMARY KEY, token_hash TEXT NOT NULL, step INTEGER NOT NULL, revealed INTEGER NOT NULL,
    version INTEGER NOT NULL, touched REAL NOT NULL, door TEXT NOT NULL DEFAULT 'open',
    door_chosen INTEGER NOT NULL DEFAULT 0, round INTEGER NOT NULL DEFAULT 1, ended_at REAL,
    refused_joins INTEGER NOT NULL DEFAULT 0);
-- Every step the class visited: how many rounds it opened, and the choices its verdict accepted (JSON) at the
-- reveal.
CREATE TABLE IF NOT EXISTS visits (
    code TEXT NOT NULL REFERENCES classes ON DELETE CASCADE, step INTEGER NOT NULL, rounds INTEGER NOT NULL DEFAULT 1,
    accepted TEXT, PRIMARY KEY (code, step));
CREATE TABLE IF NOT EXISTS students (
    code TEXT NOT NULL REFERENCES classes ON DELETE CASCADE, student TEXT NOT NULL, token_hash TEXT,
    name TEXT, joined_at REAL, removed_at REAL, waiting INTEGER NOT NULL DEFAULT 0, address TEXT,
    name_key TEXT, shown_key TEXT, PRIMARY KEY (code, student));
CREATE TABLE IF NOT EXISTS answers (
    code TEXT NOT NULL REFERENCES classes ON DELETE CASCADE, step INTEGER NOT NULL, student TEXT NOT NULL,
    choice TEXT NOT NULL, round INTEGER NOT NULL DEFAULT 1, answered_at REAL, PRIMARY KEY (code, step, round, student));
-- Rate limits' events (app/services/rate_limits.py): each row leaves when its window has passed.
CREATE TABLE IF NOT EXISTS hits (key TEXT NOT NULL, at REAL NOT NULL, until REAL NOT NULL);
CREATE INDEX IF NOT EXISTS hits_by_key ON hits (key, at);
CREATE INDEX IF NOT EXISTS hits_by_end ON hits (until);
DROP TABLE IF EXISTS creations;
"""
# Columns added since the first classes.db: a file from before gets them on start (its classes keep going;
# its students, who hold no token, join again).
ADDED_COLUMNS = [("classes", "round", "INTEGER NOT NULL DEFAULT 1"), ("students", "token_hash", "TEXT"),
                 ("students", "name", "TEXT"), ("students", "joined_at", "REAL"), ("students", "removed_at", "REAL"),
                 ("classes", "ended_at", "REAL"), ("answers", "answered_at", "REAL"),
                 ("classes", "door", "TEXT NOT NULL DEFAULT 'open'"),
                 ("classes", "door_chosen", "INTEGER NOT NULL DEFAULT 0"),
                 ("students", "waiting", "INTEGER NOT NULL DEFAULT 0"), ("students", "address", "TEXT"),
                 ("students", "name_key", "TEXT"), ("students", "shown_key", "TEXT"),
                 ("classes", "refused_joins", "INTEGER NOT NULL DEFAULT 0")]
# A file from before the door had three states kept a lock (locked = 1): its door is closed, as the teacher chose.
DOOR_FROM_LOCK = "UPDATE classes SET door = 'closed', door_chosen = 1 WHERE locked = 1"
# Answers before rounds were keyed (code, step, student): the table is made again with the round in its key,
# each answer in round 1.
ANSWERS_WITH_ROUNDS = """
CREATE TABLE answers_by_round (
    code TEXT NOT NULL REFERENCES classes ON DELETE CASCADE, step INTEGER NOT NULL, student TEXT NOT NULL,
    choice TEXT NOT NULL, round INTEGER NOT NULL DEFAULT 1, PRIMARY KEY (code, step, round, student));
INSERT INTO answers_by_round (code, step, student, choice) SELECT code, step, student, choice FROM answers;
DROP TABLE answers;
ALTER TABLE answers_by_round RENAME TO answers;
"""
INDEXES = "CREATE INDEX IF NOT EXISTS students_by_token ON students (code, token_hash);"
# Where a student stands (app.stores.Standing), from their row.
STANDING = "CASE WHEN removed_at IS NOT NULL THEN 'removed' WHEN waiting = 1 THEN 'waiting' ELSE 'in' END"
# A class lives while touched within the idle time, and within the shorter time while nobody joined, until the
# teacher ends it; then its record stays until :kept_cut.
LIVELY = ("touched >= :idle_cut AND (touched >= :unjoined_cut OR "
          "EXISTS (SELECT 1 FROM students s WHERE s.code = classes.code))")
ALIVE = f"ended_at IS NULL AND {LIVELY}"
KEPT = f"(({ALIVE}) OR (ended_at IS NOT NULL AND ended_at >= :kept_cut))"


def set_up(db: sqlite3.Connection) -> None:
    """Make the tables of a new file, or bring an older file's up to date (its classes keep going)."""
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")  # WAL: a power cut may lose the last commits, never the file
    db.execute("PRAGMA foreign_keys=ON")
    db.executescript(SCHEMA)
    if "round" not in {row[1] for row in db.execute("PRAGMA table_info(answers)")}:
        db.executescript(f"BEGIN; {ANSWERS_WITH_ROUNDS} COMMIT;")
    before = {row[1] for row in db.execute("PRAGMA table_info(classes)")}
    for table, column, kind in ADDED_COLUMNS:
        if column not in {row[1] for row in db.execute(f"PRAGMA table_info({table})")}:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
    if "locked" in before and "door" not in before:
        db.execute(DOOR_FROM_LOCK)
    db.executescript(INDEXES)
