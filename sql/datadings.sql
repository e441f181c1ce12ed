-- datadings.sql - example queries over datadings datasets. Run from the
-- repository root:  sqlite3 -cmd '.load build/datasets' < sql/datadings.sql
-- Paths point at the bundled upstream fixtures; use your own files instead.

-- Peek: the index key and the whole sample as JSON (table-valued form).
SELECT key, sample FROM datadings('tests/fixtures/upstream/datadings/raw/raw.msgpack') LIMIT 3;

-- A named table: one typed column per top-level field of the first 100 samples.
CREATE VIRTUAL TABLE temp.basic USING datadings('tests/fixtures/upstream/datadings/basic/basic.msgpack');
SELECT key, i_small, text, npy_shape(image) AS image_shape, npy_mean(vec) AS vec_mean
FROM basic WHERE rowid BETWEEN 10 AND 12;

-- Look samples up by key: the Bloom filter and the key hashes answer,
-- the data file is read only for the sample returned.
SELECT rowid, key, flag FROM basic WHERE key IN ('basic-0042', 'basic-0199', 'no-such-key');

-- Aggregate a field.
CREATE VIRTUAL TABLE temp.mid USING datadings('tests/fixtures/upstream/datadings/mid/mid.msgpack');
SELECT c, count(*) AS samples, sum(n) AS total FROM mid GROUP BY c ORDER BY c LIMIT 3;

-- Join a metadata table on key: each key is looked up, no scan.
CREATE TEMP TABLE labels(key TEXT, label TEXT);
INSERT INTO labels VALUES ('m00005', 'cat'), ('m19999', 'dog'), ('m12345', 'bird');
SELECT l.label, m.rowid, m.n FROM labels l JOIN mid m ON m.key = l.key ORDER BY m.rowid;

-- Arrays come back as .npy BLOBs: look inside with the npy_* functions.
CREATE VIRTUAL TABLE temp.nd USING datadings('tests/fixtures/upstream/datadings/ndarrays/ndarrays.msgpack', columns='variant TEXT, a BLOB');
SELECT variant, npy_dtype(a) AS dtype, npy_shape(a) AS shape, npy_json(a) AS value
FROM nd WHERE rowid IN (4, 16, 17);

-- Check every file against the dataset's .md5.
SELECT file, ok FROM datadings_verify('tests/fixtures/upstream/datadings/basic/basic.msgpack');
