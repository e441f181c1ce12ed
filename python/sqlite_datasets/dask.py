"""sqlite_datasets.dask - one SQL query over every shard of a dataset, as a
dask.dataframe with one partition per shard (or per split_rows range).

    from sqlite_datasets.dask import read_sql
    df = read_sql("SELECT shard, length(record) AS n FROM ds",
                  "tests/fixtures/upstream/bagz/concat@*.bagz")
    df.groupby("shard").n.sum().compute()

Each partition is a task that opens its own connection, creates a table
named `table` (default "ds") over its shard, attaches the databases of
`attach`, runs `sql` and returns a pandas DataFrame (.npy BLOB columns as
numpy arrays). rowid, shard and shard_index keep their whole-dataset values.
Any Dask scheduler runs the tasks: with no Client, Dask's local one; with a
distributed.Client, its cluster (every worker needs the extension: see
sqlite_datasets.extension_path).

Each task opens only its own shard's files: dataset_shards gives every
partition the options that open just that shard or range with the whole
dataset's numbering (open_options: shard, first_rowid, shard_index, rows,
rowid_step for interleaved bagz, an atlas shard's dictionary; see
src/core/row_window.h), added to the user's options.
"""
import json
import os
import sqlite3
import sys

import dask
import dask.dataframe as dd
import dask.system
import pandas as pd

from . import connect, npy_columns_to_numpy

__all__ = ["read_sql", "list_partitions", "split_options"]


def _quote(s):
    """A SQL string literal."""
    return "'" + str(s).replace("'", "''") + "'"


def _ident(s):
    """A SQL identifier."""
    return '"' + str(s).replace('"', '""') + '"'


def split_options(options):
    """'a=1, b="x,y"' -> ['a=1', 'b="x,y"']: the comma-separated options
    string split as the extension splits it (commas inside '...' or "..."
    do not separate), items trimmed, empty ones dropped."""
    items, cur, quote = [], [], None
    for ch in options or "":
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == ",":
            items.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    items.append("".join(cur).strip())
    return [i for i in items if i]


def _option_value(items, name):
    """The value of option `name` in split items (unquoted), or None."""
    for item in items:
        k, _, v = item.partition("=")
        if k.strip().strip("'\"") == name:
            return v.strip().strip("'\"")
    return None


def _with_option(options, name, value):
    """The options string with option `name` set to value (replacing
    any it had: the extension refuses an option given twice)."""
    items = [i for i in split_options(options)
             if i.partition("=")[0].strip().strip("'\"") != name]
    return ", ".join(items + ["%s=%s" % (name, value)])


def _absolute(path):
    """A plain relative path made absolute (workers may run elsewhere);
    shard specs with commas or a posix: prefix are left as given."""
    if "," in path or ":" in path or os.path.isabs(path):
        return path
    return os.path.abspath(path)


def list_partitions(path, options="", split_rows=None, conn=None):
    """The partitions read_sql makes: dicts with shard, path (the shard's
    file or folder), first_rowid, rows, shard_index and open_options (what
    opens only that partition, from dataset_shards)."""
    own = conn is None
    conn = conn or connect()
    try:
        items = split_options(options)
        if split_rows is not None:
            items.append("split_rows=%d" % int(split_rows))
        rows = conn.execute(
            "SELECT shard, path, first_rowid, rows, shard_index, open_options "
            "FROM dataset_shards(?, ?)", (path, ", ".join(items))).fetchall()
    finally:
        if own:
            conn.close()
    return [dict(shard=s, path=_absolute(p), first_rowid=f, rows=n, shard_index=i,
                 open_options=o) for s, p, f, n, i, o in rows]


def _create_table(conn, path, options, table, part):
    """Create temp table `table` over the partition's own files only (the
    shard's file or folder, with its open_options: the whole dataset's
    rowid, shard and shard_index); with part None, over the whole dataset
    at `path` (used for meta when the dataset has no partition)."""
    items = split_options(options)
    if part is not None:
        path = part["path"]
        items += split_options(part["open_options"])
    args = ", ".join([_quote(path)] + [_quote(o) for o in items])
    conn.execute("CREATE VIRTUAL TABLE temp.%s USING dataset(%s)" % (_ident(table), args))


def _task_slots():
    """How many tasks the scheduler read_sql is called under runs at once:
    the worker threads of the current distributed Client, else Dask's local
    scheduler's (num_workers, by default one per CPU)."""
    if "distributed" in sys.modules:  # (a Client needs it imported)
        from distributed import default_client
        try:
            return sum(default_client().nthreads().values()) or 1
        except ValueError:  # no Client
            pass
    return dask.config.get("num_workers", None) or dask.system.CPU_COUNT


def _takes_option(conn, path, options, part, name, value):
    """True when the dataset's module takes option `name`: the extension
    tells, as a CREATE over the first rows of one partition with
    name=value succeeds (a module refuses an option it does not know), so
    no list of formats is kept here."""
    probe = "__sqlite_datasets_probe"
    try:
        _create_table(conn, path, _with_option(options, name, value), probe,
                      _head_window(part))
    except sqlite3.Error:
        return False
    conn.execute("DROP TABLE temp.%s" % _ident(probe))
    return True


def _one_thread_each(options, nparts, takes_threads):
    """Options with threads=1 when partitions alone keep every worker
    thread busy (at least as many partitions as task slots): a scan's
    second decoding thread (threads=2, the default of the formats that
    decode ahead) would then compete with another task for the same CPUs.
    The user's own threads= is kept, and formats without the option
    (takes_threads(), asked only when it matters, says False) are left
    alone."""
    if _option_value(split_options(options), "threads"):
        return options
    if nparts < 2 or nparts < _task_slots() or not takes_threads():
        return options
    return _with_option(options, "threads", 1)


def _sql_ident(name):
    """name as a double-quoted SQL identifier (as columns= takes it)."""
    return '"' + name.replace('"', '""') + '"'


def _first_fields(conn, table, options):
    """The field names of the samples of temp table `table` but "key" in
    first-seen order over the first `infer` samples (default 100), as the
    CREATE form infers its columns (before it renames clashes such as
    rowid -> rowid_2)."""
    infer = _option_value(split_options(options), "infer") or "100"
    fields = {}
    for (sample,) in conn.execute("SELECT sample FROM temp.%s LIMIT ?" % _ident(table),
                                  (int(infer),)):
        obj = json.loads(sample) if sample else None
        if isinstance(obj, dict):
            for k in obj:
                fields.setdefault(k, None)
    fields.pop("key", None)  # the table's first column, whatever columns= says
    return list(fields)


def _pinned_columns(conn, path, options):
    """Options that give every task the whole dataset's columns: a table
    whose columns are its samples' fields, inferred from a file's first
    samples, shows each sample as the HIDDEN column `sample` (its first
    column is the key: datadings), so a shard opened alone could see
    other fields; the fields inferred over the whole dataset, with the
    types the whole dataset's table declares, are passed as
    columns='"field" TYPE, ...' (quoted: a field may hold commas or
    spaces), unless the user gave columns. The table renames fields that
    clash (rowid, names equal ignoring case) the same way every time.
    Which tables those are, the extension tells (their columns), not a
    list of formats."""
    if _option_value(split_options(options), "columns"):
        return options
    whole = "__sqlite_datasets_whole"
    args = ", ".join([_quote(path)] + [_quote(o) for o in split_options(options)])
    conn.execute("CREATE VIRTUAL TABLE temp.%s USING dataset(%s)" % (_ident(whole), args))
    try:
        xinfo = conn.execute("SELECT cid, name, type, hidden FROM pragma_table_xinfo(?)",
                             (whole,)).fetchall()
        if not any(name == "sample" and hidden for _, name, _, hidden in xinfo):
            return options
        cols = [(name, t) for cid, name, t, hidden in xinfo if not hidden and cid > 0]
        fields = _first_fields(conn, whole, options)
    finally:
        conn.execute("DROP TABLE temp.%s" % _ident(whole))
    if len(fields) != len(cols):
        raise RuntimeError("sqlite_datasets.dask: %s: the table has %d sample columns but the "
                           "first samples have %d fields (%r); pass columns= yourself"
                           % (path, len(cols), len(fields), fields[:20]))
    spec = ", ".join(("%s %s" % (_sql_ident(f), t)).strip() for f, (_, t) in zip(fields, cols))
    return ", ".join(split_options(options) + ["columns=" + _quote(spec)])


def _attach(conn, attach):
    for name, db in (attach or {}).items():
        conn.execute("ATTACH DATABASE ? AS %s" % _ident(name), (db,))


_DTYPES = (("INT", "int64"), ("CHAR", "object"), ("CLOB", "object"), ("TEXT", "object"),
           ("BLOB", "object"), ("REAL", "float64"), ("FLOA", "float64"), ("DOUB", "float64"))


def _dtype(decltype):
    """pandas dtype for a declared type, by SQLite's affinity rules (no
    type, BLOB and NUMERIC: object)."""
    t = (decltype or "").upper()
    for needle, dtype in _DTYPES:
        if needle in t:
            return dtype
    return "object"


def _declared_types(conn, sql):
    """The result columns' names and declared types ('' for an expression),
    from a zero-row run (LIMIT 0 reads nothing)."""
    conn.execute("DROP TABLE IF EXISTS temp.__sqlite_datasets_meta")
    conn.execute("CREATE TEMP TABLE __sqlite_datasets_meta AS SELECT * FROM (%s) LIMIT 0" % sql)
    types = [t for (t,) in conn.execute(
        "SELECT type FROM pragma_table_info('__sqlite_datasets_meta')")]
    conn.execute("DROP TABLE temp.__sqlite_datasets_meta")
    names = [d[0] for d in conn.execute("SELECT * FROM (%s) LIMIT 0" % sql).description]
    return names, types


def _value_dtype(values):
    """pandas dtype of a column holding these Python values (None for no
    clue: every value NULL)."""
    kinds = set(type(v) for v in values if v is not None)
    if not kinds:
        return None
    if kinds == {int}:
        return "float64" if None in values else "int64"
    if kinds <= {int, float}:
        return "float64"
    return "object"


# Rows of the first partition the query runs over to type its expression
# columns (a GROUP BY over a whole shard would cost a shard's scan).
HEAD_ROWS = 1000


def _head_window(part):
    """The first HEAD_ROWS rows of partition part (itself when smaller)."""
    if part is None or part["rows"] <= HEAD_ROWS:
        return part
    return dict(part, rows=HEAD_ROWS,
                open_options=_with_option(part["open_options"], "rows", HEAD_ROWS))


def _untyped_dtypes(conn, sql, untyped):
    """dtypes of the result columns `untyped` (indexes), from their first 5
    non-NULL values in the query's rows, read in order and no further than
    needed (None where a column is NULL throughout)."""
    seen = {i: [] for i in untyped}
    had_null = {i: False for i in untyped}
    cur = conn.execute(sql)
    while any(len(v) < 5 for v in seen.values()):
        rows = cur.fetchmany(256)
        if not rows:
            break
        for r in rows:
            for i in untyped:
                if r[i] is None:
                    had_null[i] = True
                elif len(seen[i]) < 5:
                    seen[i].append(r[i])
    cur.close()
    return {i: _value_dtype(seen[i] + ([None] if had_null[i] else [])) for i in untyped}


def _infer_meta(conn, sql, path, options, table, attach, parts):
    """An empty DataFrame with the query's columns: names and declared
    types from a zero-row run; a column without a declared type (an
    expression such as length(record)) takes the type of its first 5
    non-NULL values (float64 when NULLs come with integers), as dask's own
    read_sql types by values, in the query over the first HEAD_ROWS rows
    of the first non-empty partition, or over that whole partition when
    those give such a column no value (object when it is NULL
    throughout)."""
    _attach(conn, attach)
    first = next((p for p in parts if p["rows"]), parts[0] if parts else None)
    window = _head_window(first)
    _create_table(conn, path, options, table, window)
    names, types = _declared_types(conn, sql)
    dtypes = [_dtype(t) if t else None for t in types]
    untyped = [i for i, d in enumerate(dtypes) if d is None]
    if untyped and first is not None and first["rows"]:
        found = _untyped_dtypes(conn, sql, untyped)
        if window is not first and any(found[i] is None for i in untyped):
            conn.execute("DROP TABLE temp.%s" % _ident(table))
            _create_table(conn, path, options, table, first)
            found = _untyped_dtypes(conn, sql, untyped)
        for i in untyped:
            dtypes[i] = found[i]
    for i in untyped:
        dtypes[i] = dtypes[i] or "object"
    return pd.DataFrame({i: pd.Series([], dtype=d) for i, d in enumerate(dtypes)}
                        ).set_axis(names, axis=1)


class ShardQuery:
    """The task of one partition: open the shard, run the query, return a
    DataFrame (picklable: Dask ships it to workers)."""

    def __init__(self, sql, path, options, table, attach, meta):
        self.sql, self.path, self.options = sql, path, options
        self.table, self.attach, self.meta = table, attach, meta

    def __call__(self, part):
        conn = connect()
        try:
            _attach(conn, self.attach)
            _create_table(conn, self.path, self.options, self.table, part)
            cur = conn.execute(self.sql)
            names = [d[0] for d in cur.description]
            rows = cur.fetchall()
        finally:
            conn.close()
        if not rows:
            return self.meta.copy()
        return npy_columns_to_numpy(pd.DataFrame.from_records(rows, columns=names))


def read_sql(sql, path, options="", table="ds", split_rows=None, meta=None, attach=None):
    """`sql` over every shard of the dataset at `path`, as a
    dask.dataframe.DataFrame with one partition per shard (or per range of
    at most split_rows rows). `options` are the format module's options
    ('name=value, ...'); `attach` maps schema names to SQLite database files
    attached in every task ({"meta": "meta.db"}); `meta` (an empty
    DataFrame) overrides the columns and dtypes found by running the query
    with LIMIT 0 (and LIMIT 5 on the first partition for columns that are
    expressions: see _infer_meta)."""
    sql = sql.strip().rstrip(";")
    path = _absolute(path)
    attach = {k: _absolute(v) for k, v in (attach or {}).items()}
    conn = connect()
    try:
        parts = list_partitions(path, options, split_rows, conn)
        options = _pinned_columns(conn, path, options)
        first = next((p for p in parts if p["rows"]), parts[0] if parts else None)
        options = _one_thread_each(
            options, len(parts),
            lambda: _takes_option(conn, path, options, first, "threads", 1))
        if meta is None:
            meta = _infer_meta(conn, sql, path, options, table, attach, parts)
    finally:
        conn.close()
    func = ShardQuery(sql, path, options, table, attach, meta)
    return dd.from_map(func, parts, meta=meta, label="sqlite-datasets-read-sql",
                       enforce_metadata=False)
