-- atlas.sql - example queries over torch-atlas-ds datasets. Run from the
-- repository root:  sqlite3 -cmd '.load build/datasets' < sql/atlas.sql
-- Paths point at the bundled upstream fixtures; use your own folders instead.

-- Peek: each example as JSON, with its shard and index inside the shard.
SELECT rowid, example, shard, shard_index FROM atlas('tests/fixtures/upstream/atlas/none') LIMIT 3;

-- A named table: dict examples give one typed column per key.
CREATE VIRTUAL TABLE temp.mid USING atlas('tests/fixtures/upstream/atlas/mid');
SELECT rowid, id, label, score, text, ok FROM mid WHERE rowid BETWEEN 8191 AND 8193;

-- Aggregate (every block is decompressed and unpickled once).
SELECT label, count(*) AS n, round(avg(score), 3) AS mean_score FROM mid GROUP BY label ORDER BY label LIMIT 3;

-- One shard only: the other shards' blocks are never read.
SELECT count(*), min(rowid), max(rowid) FROM mid WHERE shard = 1;

-- Bytes are BLOBs, lists and tuples JSON.
CREATE VIRTUAL TABLE temp.std USING atlas('tests/fixtures/upstream/atlas/standard');
SELECT id, name, hex(payload) AS payload, tags, pos FROM std WHERE rowid < 2;

-- numpy arrays are .npy BLOBs in columns (nested JSON lists inside `example`);
-- columns='...' picks keys by hand when examples differ.
CREATE VIRTUAL TABLE temp.arr USING atlas('tests/fixtures/upstream/atlas/types', columns='kind TEXT, u8_img BLOB');
SELECT kind, npy_dtype(u8_img) AS dtype, npy_shape(u8_img) AS shape, npy_sum(u8_img) AS total
FROM arr WHERE u8_img IS NOT NULL;

-- Objects outside the decoder's allow-list: an error by default, or a placeholder.
SELECT example FROM atlas('tests/fixtures/upstream/atlas/exotic', 'unsupported=placeholder') WHERE rowid IN (4, 6);
