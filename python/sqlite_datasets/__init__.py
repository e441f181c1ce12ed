"""sqlite_datasets - the sqlite-datasets SQLite extension from Python.

    import sqlite_datasets as sd
    up = "tests/fixtures/upstream/"           # the checkout's bundled samples
    conn = sd.connect()                       # sqlite3 connection, extension loaded
    conn.execute(f"SELECT * FROM dataset_shards('{up}bagz/concat@*.bagz')").fetchall()
    df = sd.read_pandas(f"SELECT key, sample FROM datadings('{up}datadings/mid/mid.msgpack')",
                        conn)
    sd.copy(f"SELECT record FROM bagz('{up}bagz/mid.bagz') WHERE rowid % 10 = 0",
            "val.bagz", "bagz")               # published when copy returns, or an error

connect() returns a connection in autocommit mode (isolation_level=None),
as the sqlite3 shell is: a statement outside BEGIN ... COMMIT commits when
it ends, so a writer table publishes what an INSERT wrote without a
commit() call (a default sqlite3 connection would open a transaction that
close() silently rolls back). Group statements with `with
sd.transaction(conn):`.

The extension (datasets.so) is looked for, in order: the file named by the
environment variable SQLITE_DATASETS_EXTENSION; datasets.so inside this
package's folder (ship it there to workers that have no build); the
checkout's build/datasets.so (when the package is imported from a
checkout); the bare name "datasets", which the dynamic loader finds where
`make install` puts it. sqlite_datasets.dask fans queries out on Dask.
"""
import io
import os
import socket
import sqlite3
import threading

__all__ = ["connect", "transaction", "copy", "to_numpy", "read_pandas", "extension_path",
           "ExtensionNotFound"]

ENV = "SQLITE_DATASETS_EXTENSION"
_HERE = os.path.dirname(os.path.abspath(__file__))
_NPY_MAGIC = b"\x93NUMPY"
# Extension file -> a connection kept open that holds it loaded (see _keep_loaded).
_KEEP = {}
_KEEP_LOCK = threading.Lock()


class ExtensionNotFound(RuntimeError):
    """The sqlite-datasets extension could not be loaded on this machine."""


def _candidates():
    """Where the extension may be, in the order tried."""
    env = os.environ.get(ENV)
    if env:
        return [env]
    return [os.path.join(_HERE, "datasets.so"),
            os.path.join(os.path.dirname(os.path.dirname(_HERE)), "build", "datasets.so"),
            "datasets"]


def extension_path():
    """The extension file connect() will load: the first candidate that
    exists, else the bare name "datasets" for the dynamic loader."""
    for c in _candidates():
        if os.sep not in c or os.path.isfile(c):
            return c
    return "datasets"


def _keep_loaded(name):
    """Hold the extension loaded for the life of the process: SQLite
    unloads a library (dlclose) when the last connection that loaded it
    closes, and mapping it again costs tens of milliseconds a connection
    (sqlite_datasets.dask opens one per task). One extra in-memory
    connection per extension file, opened once."""
    with _KEEP_LOCK:
        if name in _KEEP:
            return
        keep = sqlite3.connect(":memory:", check_same_thread=False)
        try:
            keep.enable_load_extension(True)
            keep.load_extension(name)
            keep.enable_load_extension(False)
        except sqlite3.Error:
            keep.close()
            return
        _KEEP[name] = keep


def _load(conn):
    """Load the extension into conn, or raise ExtensionNotFound saying what
    was tried on which host."""
    if not hasattr(conn, "enable_load_extension"):
        raise ExtensionNotFound(
            "sqlite_datasets: this Python's sqlite3 module cannot load extensions "
            "(host %s); use Debian's /usr/bin/python3" % socket.gethostname())
    conn.enable_load_extension(True)
    tried = []
    try:
        for c in _candidates():
            if os.sep in c and not os.path.isfile(c):
                tried.append(c + " (no such file)")
                continue
            try:
                conn.load_extension(c)
                _keep_loaded(c)
                return
            except sqlite3.Error as e:
                tried.append("%s (%s)" % (c, e))
    finally:
        conn.enable_load_extension(False)
    raise ExtensionNotFound(
        "sqlite_datasets: the sqlite-datasets extension (datasets.so) is not on host %s: "
        "tried %s. Build it (make) or install it (make install) on every machine, "
        "or set %s to its path" % (socket.gethostname(), "; ".join(tried), ENV))


def connect(database=":memory:", **kwargs):
    """A sqlite3.Connection with the extension loaded (kwargs go to
    sqlite3.connect). Autocommit (isolation_level=None) unless kwargs say
    otherwise: every statement outside an explicit BEGIN commits when it
    ends, so what a writer table's INSERT wrote is published then, and a
    forgotten commit() loses nothing. Use transaction(conn) to group
    statements into one commit."""
    kwargs.setdefault("isolation_level", None)
    conn = sqlite3.connect(database, **kwargs)
    try:
        _load(conn)
    except Exception:
        conn.close()
        raise
    return conn


class transaction:
    """`with transaction(conn):` runs the block in one transaction: BEGIN,
    then COMMIT when the block ends (writer tables publish then), or
    ROLLBACK when it raises (nothing is published). Works whatever conn's
    isolation_level; refused inside a transaction already open, whose
    COMMIT belongs to its owner."""

    def __init__(self, conn):
        self.conn = conn

    def __enter__(self):
        if self.conn.in_transaction:
            raise sqlite3.OperationalError(
                "sqlite_datasets.transaction: a transaction is already open on this "
                "connection; commit or roll it back first")
        self.conn.execute("BEGIN")
        return self.conn

    def __exit__(self, kind, value, tb):
        if kind is None:
            self.conn.execute("COMMIT")
        elif self.conn.in_transaction:
            self.conn.execute("ROLLBACK")
        return False


def _sql_literal(text):
    """text as an SQL string literal."""
    return "'" + str(text).replace("'", "''") + "'"


def copy(select_sql, target, format, conn=None, mode="create", params=None, **options):
    """Write the rows of select_sql (its result columns named as the writer
    table's: record for bagz; key and raw, sample or fields for datadings;
    ...) as a new dataset `target` of `format` ("bagz",
    "datadings", "atlas", "bcolz", "tfrecord"), with mode= and the format's writing
    options (copy(sql, "x@*.bagz", "bagz", rows_per_shard=1000)); commits,
    so the dataset is published when copy returns, and returns the number
    of rows written. On any error nothing is published and the error is
    raised. conn defaults to a new connection (closed afterwards); a given
    conn must not be inside a transaction."""
    if format not in ("bagz", "datadings", "atlas", "bcolz", "tfrecord"):
        raise ValueError("sqlite_datasets.copy: format must be bagz, datadings, atlas, "
                         "bcolz or tfrecord, not %r" % (format,))
    own = conn is None
    conn = conn or connect()
    name = "__sqlite_datasets_copy_%d" % id(conn)
    args = [_sql_literal(os.fspath(target)), _sql_literal("mode=%s" % mode)]
    args += [_sql_literal("%s=%s" % (k, v)) for k, v in options.items()]
    try:
        conn.execute('CREATE VIRTUAL TABLE temp."%s" USING %s(%s)' % (name, format, ", ".join(args)))
        try:
            select_sql = select_sql.strip().rstrip(";")
            cur = conn.execute("SELECT * FROM (%s) LIMIT 0" % select_sql, params or ())
            cols = ", ".join('"%s"' % d[0].replace('"', '""') for d in cur.description)
            with transaction(conn):
                cur = conn.execute('INSERT INTO temp."%s"(%s) SELECT * FROM (%s)'
                                   % (name, cols, select_sql), params or ())
                written = cur.rowcount
        finally:
            conn.execute('DROP TABLE temp."%s"' % name)
    finally:
        if own:
            conn.close()
    return written


def to_numpy(blob):
    """A .npy BLOB (npy_* functions, bcolz array cells, ...) as a numpy
    array; None stays None. Object arrays (pickles) are refused, and so is
    anything that is not an .npy BLOB (ValueError saying so)."""
    if blob is None:
        return None
    data = bytes(blob)
    if data[:6] != _NPY_MAGIC:
        raise ValueError("sqlite_datasets.to_numpy: not an .npy BLOB (%d bytes starting %r; "
                         "an .npy BLOB starts with b'\\x93NUMPY')" % (len(data), data[:8]))
    import numpy
    return numpy.load(io.BytesIO(data), allow_pickle=False)


def _is_npy_column(values):
    """True when every non-null value is a .npy BLOB (and one exists)."""
    seen = False
    for v in values:
        if v is None:
            continue
        if not isinstance(v, (bytes, bytearray, memoryview)) or bytes(v[:6]) != _NPY_MAGIC:
            return False
        seen = True
    return seen


def npy_columns_to_numpy(df):
    """Turn every column of df whose values are all .npy BLOBs into numpy
    arrays (in place; returns df)."""
    for i in range(df.shape[1]):
        col = df.iloc[:, i]
        if col.dtype == object and _is_npy_column(col):
            import pandas
            df.isetitem(i, pandas.Series([to_numpy(v) for v in col], index=df.index,
                                         dtype=object, name=col.name))
    return df


def read_pandas(sql, conn, params=None):
    """Run sql on conn into a pandas DataFrame; .npy BLOB columns become
    numpy arrays."""
    import pandas
    cur = conn.execute(sql, params or ())
    names = [d[0] for d in cur.description] if cur.description else []
    df = pandas.DataFrame.from_records(cur.fetchall(), columns=names)
    return npy_columns_to_numpy(df)
