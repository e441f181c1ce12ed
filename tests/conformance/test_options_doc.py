"""test_options_doc.py - the option specs (core/option_spec.h), as
datasets_help() reports them, against the README's option tables and the
modules' "unknown option" messages (issue 21 section 2):
  - every option of each module has a row in the README's table for that
    module (or in its "every module" table), and every README row is an
    option of the module: a removed row or a new spec fails here;
  - the README's default and forms agree with the spec's, and so do the
    values of an option that takes a fixed list;
  - for each module and form (table-valued, CREATE, writer), the options
    listed by its "unknown option" error are exactly, and in order, those
    datasets_help() says that form takes.
Usage: test_options_doc.py BUILD_DIR"""
import os
import re
import sqlite3
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dstest import FIXTURES, Checker, connect, error_of, sql_quote  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = sys.argv[1]
C = Checker()
MODULES = ["bagz", "datadings", "atlas", "bcolz"]


def readme_tables():
    """{table name: {option: (takes, default, forms)}} of the tables after
    an <!-- options: NAME --> marker."""
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    tables = {}
    for m in re.finditer(r"<!-- options: ([a-z_ ]+) -->\n((?:\|.*\n)+)", text):
        rows = {}
        for line in m.group(2).splitlines()[2:]:
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            unquote = lambda c: c.replace("`", "").replace("\\|", "|")  # noqa: E731
            rows[unquote(cells[0])] = (unquote(cells[1]), unquote(cells[2]), cells[3])
        tables[m.group(1)] = rows
    return tables


def help_options(conn):
    """{module: [(option, takes, default, forms), ...]} in spec order."""
    out = {}
    for mod, name, value, takes, forms in conn.execute(
            "SELECT module, name, value, takes, forms FROM datasets_help() "
            "WHERE kind = 'option'"):
        out.setdefault(mod, []).append((name, takes, value or "", forms))
    return out


def check_readme(tables, spec):
    C.check("every module" in tables and all(m in tables for m in MODULES + ["dataset_shards"]),
            "README has the option tables", sorted(tables))
    for mod, opts in sorted(spec.items()):
        doc = dict(tables.get(mod, {}))
        if mod in MODULES:
            doc.update(tables.get("every module", {}))
        names = [o[0] for o in opts]
        C.eq(sorted(set(names) - set(doc)), [], mod + ": every option has a README row")
        C.eq(sorted(set(doc) - set(names)), [], mod + ": every README row is an option")
        for name, takes, default, forms in opts:
            if name not in doc:
                continue
            dtakes, ddefault, dforms = doc[name]
            C.eq((ddefault, dforms), (default, forms),
                 "%s: README default and forms of %s" % (mod, name))
            if "|" in takes:
                C.eq(dtakes, takes, "%s: README values of %s" % (mod, name))


def known_list(msg):
    m = re.search(r"known options: ([^)]*)\)", msg or "")
    return m.group(1).split(", ") if m else None


def check_messages(conn, spec, tmp):
    paths = {"bagz": os.path.join(FIXTURES, "bagz", "mid.bagz"),
             "datadings": os.path.join(FIXTURES, "datadings", "basic", "basic.msgpack"),
             "atlas": os.path.join(FIXTURES, "atlas", "none"),
             "bcolz": os.path.join(FIXTURES, "bcolz", "ctable_basic")}
    new = {"bagz": "new.bagz", "datadings": "new.msgpack", "atlas": "new_atlas",
           "bcolz": "new_bcolz"}
    for mod in MODULES:
        opts = spec[mod]
        want = {form: [n for n, _, _, forms in opts if form in forms.split(", ")]
                for form in ("table-valued", "CREATE", "writer")}
        path = sql_quote(paths[mod])
        target = sql_quote(os.path.join(tmp, new[mod]))
        got = {
            "table-valued": error_of(conn, "SELECT * FROM %s(%s, 'zz_nope=1')" % (mod, path)),
            "CREATE": error_of(conn, "CREATE VIRTUAL TABLE temp.p USING %s(%s, zz_nope=1)"
                               % (mod, path)),
            "writer": error_of(conn, "CREATE VIRTUAL TABLE temp.p USING %s(%s, mode=create, "
                               "zz_nope=1)" % (mod, target))}
        for form, msg in got.items():
            C.eq(known_list(msg), want[form], "%s, %s form: the known options listed" % (mod, form))
        C.check(not os.path.exists(os.path.join(tmp, new[mod])),
                mod + ": a writer refused for an unknown option wrote nothing")


conn = connect(BUILD)
spec = C.run(help_options, conn, name="datasets_help options") or {}
C.check(set(MODULES + ["dataset_shards"]) <= set(spec), "datasets_help lists every module's "
        "options", sorted(spec))
C.run(check_readme, readme_tables(), spec, name="README tables")
with tempfile.TemporaryDirectory() as tmp:
    C.run(check_messages, conn, spec, tmp, name="unknown option messages")
C.exit()
