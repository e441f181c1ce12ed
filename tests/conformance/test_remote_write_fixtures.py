"""test_remote_write_fixtures.py - every fixture of tests/fixtures/upstream
(bagz files and shard sets, datadings, atlas and bcolz folders) and of
tests/fixtures/tfrecord and tfexample, copied with each format's writer
(INSERT ... SELECT from the fixture) once to a local folder and once to
s3rver (s3://), then:
- botocore lists and GETs the objects: the same names as the local
  writer's files, each byte-identical;
- the local reader reads the downloaded files: the rows of the local copy;
- the extension reads the s3:// copy: the rows of the local copy;
- the few fixtures no writer can copy (a cut TFRecord file, a bad length
  CRC, an atlas pickle that contains itself: REFUSED) fail the same way to
  s3://, and nothing is left under their prefix; every other fixture is
  copied (with the options its format needs: a zstd dictionary, separate
  limits, writer=raw, verify=false for a bad data CRC).
Usage: test_remote_write_fixtures.py BUILD_DIR"""
import glob
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dstest  # noqa: E402
from dstest import Checker, connect, sql_quote, tree  # noqa: E402
from remote_servers import S3rver, s3rver_bin  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
BUILD = os.path.join(dstest.ROOT, BUILD) if not os.path.isabs(BUILD) else BUILD
FIX = os.path.join(dstest.ROOT, "tests", "fixtures")
UP = os.path.join(FIX, "upstream")
C = Checker()
TMP = tempfile.mkdtemp(prefix="ds_remote_write_fix_")
os.environ["TMPDIR"] = TMP  # the remote writers' staging folders


def bcolz_columns(name):
    """columns= of a bcolz fixture from its expected/*.json (as
    test_write_atlas_bcolz.py builds it), or None (upstream refused it)."""
    with open(os.path.join(UP, "bcolz", "expected", name + ".json")) as f:
        e = json.load(f)
    if "upstream_error" in e:
        return None, None

    def col_type(c):
        if c["dtype"] == "|O":
            return "object"
        shape = c.get("cell_shape") or []
        return ("(%s,)" % ",".join(str(d) for d in shape) if shape else "") + c["dtype"]
    names = e["names"] if e["kind"] == "ctable" else ["value"]
    spec = ", ".join("%s %s" % (n, col_type(c)) for n, c in zip(names, e["columns"]))
    return spec, e["columns"][0]["chunklen"]


# fixtures no writer can copy (their reads fail by design): both copies
# must fail, and nothing may be left under the s3:// prefix
REFUSED = {"tfrecord/bad_length_crc.tfrecord", "tfrecord/cut.tfrecord",
           "tfrecord/cut.gzip.tfrecord", "upstream/atlas/exotic"}


def cases():
    """(module, source spec relative to FIX, source options, target name,
    writer options, options to read the copy) of every fixture."""
    out = []
    dict_file = os.path.join(UP, "bagz", "dict_raw.txt")
    special = {  # reader, writer, copy reader options
        "dict.bagz": ("dictionary=" + dict_file, "level=3, dictionary=" + dict_file,
                      "dictionary=" + dict_file),
        "forced_none.bagz": ("compression=none", "compression=none", "compression=none"),
        "separate.bagz": ("limits=separate, compression=none",
                          "limits=separate, compression=none",
                          "limits=separate, compression=none")}
    for p in sorted(glob.glob(os.path.join(UP, "bagz", "*.bag*"))):
        name = os.path.basename(p)
        if name.startswith("limits.") or "-of-" in name:
            continue
        o = special.get(name, ("", "", ""))
        out.append(("bagz", "upstream/bagz/" + name, o[0], name, o[1], o[2]))
    out += [("bagz", "upstream/bagz/inter@3.bagz", "", "inter@3.bagz", "", ""),
            ("bagz", "upstream/bagz/concat@4.bagz", "", "concat@4.bagz", "", ""),
            ("bagz", "upstream/bagz/inter-00000-of-00003.bagz,upstream/bagz/concat@4.bagz", "",
             "mix.bagz", "", ""),
            ("bagz", "upstream/bagz/sepset@2.bagz", "limits=separate", "sepset@2.bagz",
             "limits=separate", "limits=separate"),
            ("bagz", "tfexample/examples.bagz", "", "examples.bagz", "", "")]
    for d in sorted(glob.glob(os.path.join(UP, "datadings", "*", ""))):
        for p in sorted(glob.glob(os.path.join(d, "*.msgpack"))):
            name = os.path.basename(p)
            # raw.msgpack: samples without their key, as upstream's RawWriter wrote them
            w = "writer=raw" if name == "raw.msgpack" else ""
            out.append(("datadings", os.path.relpath(p, FIX), "", name, w, ""))
    for p in sorted(glob.glob(os.path.join(FIX, "tfrecord", "*.tfrecord"))):
        name = os.path.basename(p)
        # a bad data CRC is copied as read with verify=false (the copy's CRCs are right)
        r = "verify=false" if name == "bad_data_crc.tfrecord" else ""
        out.append(("tfrecord", os.path.relpath(p, FIX), r, name, "", ""))
    for d in sorted(glob.glob(os.path.join(UP, "atlas", "*", ""))):
        name = os.path.basename(d.rstrip("/"))
        if name != "expected":
            out.append(("atlas", os.path.relpath(d.rstrip("/"), FIX), "unsupported=placeholder",
                        name + ".atlas", "", ""))
    for d in sorted(glob.glob(os.path.join(UP, "bcolz", "*", ""))):
        name = os.path.basename(d.rstrip("/"))
        if name == "expected" or not os.path.exists(
                os.path.join(UP, "bcolz", "expected", name + ".json")):
            continue
        spec, chunklen = bcolz_columns(name)
        if spec is None:  # upstream refused it: nothing to copy from
            continue
        out.append(("bcolz", os.path.relpath(d.rstrip("/"), FIX), "bytes=blob", name + ".bcolz",
                    "columns=%s, chunklen=%d" % (sql_quote(spec), chunklen), ""))
    return out


def source(module, spec, opts):
    """The fixture's absolute spec (each comma element)."""
    return ",".join(os.path.join(FIX, e) for e in spec.split(","))


def copy(module, src, sopts, target, wopts):
    """Copy the fixture to target with the module's writer; None, or the
    error text."""
    c = connect(BUILD)
    try:
        c.execute("CREATE VIRTUAL TABLE temp.s USING %s(%s%s)"
                  % (module, sql_quote(src), (", " + sopts) if sopts else ""))
        c.execute("CREATE VIRTUAL TABLE temp.w USING %s(%s, mode=create%s)"
                  % (module, sql_quote(target), (", " + wopts) if wopts else ""))
        cols = {"bagz": "record", "tfrecord": "record", "datadings": "key, raw",
                "atlas": "example"}.get(module)
        if cols:
            c.execute("INSERT INTO w(%s) SELECT %s FROM s" % (cols, cols))
        else:
            c.execute("INSERT INTO w SELECT * FROM s")
        c.commit()
        return None
    except Exception as e:  # noqa: BLE001 - compared with the other copy
        return str(e)
    finally:
        c.close()


def rows(module, spec, opts=""):
    """Every row (all columns, rowid first) of a dataset, or the error."""
    c = connect(BUILD)
    try:
        c.execute("CREATE VIRTUAL TABLE temp.r USING %s(%s%s)"
                  % (module, sql_quote(spec), (", " + opts) if opts else ""))
        return [tuple(r) for r in c.execute("SELECT rowid, * FROM r ORDER BY rowid")]
    except Exception as e:  # noqa: BLE001
        return "error: %s" % e
    finally:
        c.close()


def downloaded(cl, prefix, into):
    """Every object under prefix/ (botocore), written under into/: {rel: bytes}."""
    got = {}
    token = None
    while True:
        kw = {"Bucket": "bkt", "Prefix": prefix + "/"}
        if token:
            kw["ContinuationToken"] = token
        page = cl.list_objects_v2(**kw)
        for o in page.get("Contents", []):
            rel = o["Key"][len(prefix) + 1:]
            got[rel] = cl.get_object(Bucket="bkt", Key=o["Key"])["Body"].read()
            p = os.path.join(into, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(got[rel])
        if not page.get("IsTruncated"):
            return got
        token = page["NextContinuationToken"]


def main():
    if not s3rver_bin():
        print("SKIP s3rver is not installed (tools/deps.sh test)")
        return
    cs = cases()
    copied = {}
    with S3rver() as s:
        for k in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
            os.environ.pop(k, None)
        os.environ.update(AWS_ENDPOINT_URL=s.endpoint, AWS_ACCESS_KEY_ID="S3RVER",
                          AWS_SECRET_ACCESS_KEY="S3RVER", AWS_REGION="us-east-1",
                          AWS_CONFIG_FILE="/nonexistent",
                          AWS_SHARED_CREDENTIALS_FILE="/nonexistent")
        cl = s.client()
        for i, (module, spec, sopts, name, wopts, ro) in enumerate(cs):
            tag = "%s %s" % (module, spec)
            src = source(module, spec, sopts)
            local_dir = os.path.join(TMP, "local%d" % i)
            os.makedirs(local_dir)
            prefix = "c%d" % i
            e_local = copy(module, src, sopts, os.path.join(local_dir, name), wopts)
            e_remote = copy(module, src, sopts, "s3://bkt/%s/%s" % (prefix, name), wopts)
            got_dir = os.path.join(TMP, "got%d" % i)
            os.makedirs(got_dir)
            got = downloaded(cl, prefix, got_dir)
            if spec in REFUSED:
                C.check(e_local is not None and e_remote is not None,
                        "%s: refused by design, locally and to s3://" % tag,
                        "local: %s; s3: %s" % (e_local, e_remote))
                C.eq(sorted(got), [], "%s: ... and nothing is under its prefix" % tag)
                continue
            C.eq(e_local, None, "%s: copied locally" % tag)
            C.eq(e_remote, None, "%s: copied to s3://" % tag)
            want = tree(local_dir)
            C.eq(sorted(got), sorted(want), "%s: botocore lists the local writer's file names"
                 % tag)
            C.check(got == want, "%s: every object byte-identical to the local writer's file"
                    % tag)
            want_rows = rows(module, os.path.join(local_dir, name), ro)
            C.check(not isinstance(want_rows, str), "%s: the local copy reads" % tag, want_rows)
            C.check(rows(module, os.path.join(got_dir, name), ro) == want_rows,
                    "%s: the local reader reads the downloaded objects: the same rows" % tag)
            C.check(rows(module, "s3://bkt/%s/%s" % (prefix, name), ro) == want_rows,
                    "%s: the extension reads the s3:// copy: the same rows" % tag)
            copied[module] = copied.get(module, 0) + 1
    per = {}
    for module, spec, *_ in cs:
        if spec not in REFUSED:
            per[module] = per.get(module, 0) + 1
    for module in ("bagz", "datadings", "tfrecord", "atlas", "bcolz"):
        C.check(per.get(module, 0) > 0 and copied.get(module, 0) == per[module],
                "%s: every fixture copied (%d of %d; %d refused by design, checked above)"
                % (module, copied.get(module, 0), per.get(module, 0),
                   sum(1 for m, sp, *_ in cs if m == module and sp in REFUSED)))

main()
shutil.rmtree(TMP, ignore_errors=True)
C.exit()
