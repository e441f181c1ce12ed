"""test_directonly.py - issue 11 item 7: no function or table that touches
files runs from a view or a trigger stored in a database file. A crafted
database holds a view and a trigger over each of them (table-valued forms,
CREATE-form tables, bcolz_decoded); opened with the extension loaded, every
one is refused with SQLite's "unsafe use" while the same query typed
directly works. A TEMP view (the user's own) still works.
Usage: test_directonly.py BUILD_DIR"""
import os
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import FIXTURES, Checker, sql_quote  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
C = Checker()
TMP = tempfile.TemporaryDirectory(prefix="directonly-")

BAGZ = os.path.join(FIXTURES, "bagz", "mid.bagz")
DD = os.path.join(FIXTURES, "datadings", "mid", "mid.msgpack")
ATLAS = os.path.join(FIXTURES, "atlas", "mid")
BCOLZ = os.path.join(FIXTURES, "bcolz", "ctable_basic")

# name -> a query that touches files
QUERIES = {
    "bagz": "SELECT count(*) FROM bagz(%s)" % sql_quote(BAGZ),
    "datadings": "SELECT count(*) FROM datadings(%s)" % sql_quote(DD),
    "atlas": "SELECT count(*) FROM atlas(%s)" % sql_quote(ATLAS),
    "bcolz": "SELECT count(*) FROM bcolz(%s)" % sql_quote(BCOLZ),
    "dataset_info": "SELECT count(*) FROM dataset_info(%s)" % sql_quote(BAGZ),
    "datadings_verify": "SELECT count(*) FROM datadings_verify(%s)" % sql_quote(DD),
    "bcolz_attrs": "SELECT count(*) FROM bcolz_attrs(%s)" % sql_quote(BCOLZ),
    "bcolz_stats": "SELECT count(*) FROM bcolz_stats(%s)" % sql_quote(BCOLZ),
    "dataset_shards": "SELECT count(*) FROM dataset_shards(%s)" % sql_quote(BAGZ),
    "bcolz_decoded": "SELECT bcolz_decoded(%s)" % sql_quote(BCOLZ),
    "create_bagz": "SELECT count(*) FROM t_bagz",
    "create_datadings": "SELECT count(*) FROM t_datadings",
    "create_atlas": "SELECT count(*) FROM t_atlas",
    "create_bcolz": "SELECT count(*) FROM t_bcolz",
    "create_dataset": "SELECT count(*) FROM t_dataset",
}
TABLES = {
    "t_bagz": "bagz(%s)" % sql_quote(BAGZ),
    "t_datadings": "datadings(%s)" % sql_quote(DD),
    "t_atlas": "atlas(%s)" % sql_quote(ATLAS),
    "t_bcolz": "bcolz(%s)" % sql_quote(BCOLZ),
    "t_dataset": "dataset(%s)" % sql_quote(BAGZ),
}


def load(conn):
    conn.enable_load_extension(True)
    conn.load_extension(os.path.join(BUILD, "datasets"))


def craft(path):
    """The hostile database: tables, views and triggers over every query."""
    conn = sqlite3.connect(path)
    load(conn)
    for name, using in TABLES.items():
        conn.execute("CREATE VIRTUAL TABLE %s USING %s" % (name, using))
    for name, q in QUERIES.items():
        conn.execute("CREATE VIEW v_%s AS %s" % (name, q))
        conn.execute("CREATE TABLE log_%s(x)" % name)
        conn.execute("CREATE TRIGGER tr_%s AFTER INSERT ON log_%s BEGIN %s; END"
                     % (name, name, q))
    conn.commit()
    conn.close()


def refused(fn):
    """'' when fn() raises an unsafe-use error, else what happened."""
    try:
        fn()
    except sqlite3.Error as e:
        return "" if "unsafe use of" in str(e) else "other error: %s" % e
    return "ran"


db = os.path.join(TMP.name, "crafted.db")
craft(db)
conn = sqlite3.connect(db, isolation_level=None)
load(conn)
for name, q in QUERIES.items():
    try:
        direct = conn.execute(q).fetchone()[0]
    except sqlite3.Error as e:
        direct = e
    C.check(not isinstance(direct, Exception), "direct query works: " + name, direct)
    got = refused(lambda: conn.execute("SELECT * FROM v_%s" % name).fetchall())
    C.check(got == "", "view refused: " + name, got)
    got = refused(lambda: conn.execute("INSERT INTO log_%s VALUES (1)" % name))
    C.check(got == "", "trigger refused: " + name, got)

# The user's own TEMP view is trusted.
conn.execute("CREATE TEMP VIEW tv AS %s" % QUERIES["bcolz_decoded"])
C.check(conn.execute("SELECT * FROM tv").fetchone()[0] is not None,
        "a TEMP view over bcolz_decoded works")
conn.execute("CREATE TEMP VIEW tv2 AS %s" % QUERIES["bagz"])
C.check(conn.execute("SELECT * FROM tv2").fetchone()[0] > 0,
        "a TEMP view over bagz() works")
conn.close()
C.exit()
