"""sqlite_datasets - the sqlite-datasets SQLite extension from Python.

    import sqlite_datasets as sd
    conn = sd.connect()                       # sqlite3 connection, extension loaded
    conn.execute("SELECT * FROM dataset_shards('train@*.bagz')").fetchall()
    df = sd.read_pandas("SELECT key, image FROM datadings('t.msgpack')", conn)

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

__all__ = ["connect", "to_numpy", "read_pandas", "extension_path", "ExtensionNotFound"]

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
    sqlite3.connect)."""
    conn = sqlite3.connect(database, **kwargs)
    try:
        _load(conn)
    except Exception:
        conn.close()
        raise
    return conn


def to_numpy(blob):
    """A .npy BLOB (npy_* functions, bcolz array cells, ...) as a numpy
    array; None stays None. Object arrays (pickles) are refused."""
    if blob is None:
        return None
    import numpy
    return numpy.load(io.BytesIO(bytes(blob)), allow_pickle=False)


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
