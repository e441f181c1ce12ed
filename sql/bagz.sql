-- bagz.sql - example queries over bagz files. Run from the repository root:
--   sqlite3 -cmd '.load build/datasets' < sql/bagz.sql
-- Paths point at the bundled upstream fixtures; use your own files instead.

-- Peek at the first records (table-valued form: no CREATE needed).
SELECT rowid, shard, shard_index, length(record) AS len, hex(substr(record, 1, 8)) AS head
FROM bagz('tests/fixtures/upstream/bagz/zstd.bagz') LIMIT 5;

-- A helper table of 100 rows for drawing random numbers.
CREATE TEMP TABLE generate_rowids AS
  WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99) SELECT i FROM n;

-- A named table over a shard set; @* finds the shard count on disk.
CREATE VIRTUAL TABLE temp.concat USING bagz('tests/fixtures/upstream/bagz/concat@*.bagz');

-- Count per shard (reads only the limits: nothing is decompressed).
SELECT shard, count(*) AS records FROM concat GROUP BY shard;

-- A random sample of 3 records: draw rowids, then look only those up.
SELECT rowid, length(record) AS len FROM concat
WHERE rowid IN (SELECT abs(random()) % (SELECT count(*) FROM concat)
                FROM generate_rowids LIMIT 3);

-- A reproducible sample: order by a hash of the rowid instead.
SELECT rowid, length(record) AS len FROM concat
ORDER BY (rowid * 2654435761) % 4294967296 LIMIT 3;

-- Join with a metadata table of record ids.
CREATE TEMP TABLE labels(record_id INTEGER PRIMARY KEY, label TEXT);
INSERT INTO labels VALUES (0, 'cat'), (9, 'dog'), (16, 'bird');
SELECT l.label, c.shard, c.shard_index, length(c.record) AS len
FROM labels l JOIN concat c ON c.rowid = l.record_id;

-- Every row whose record equals some bytes (upstream's MultiIndex).
SELECT group_concat(rowid) AS rows
FROM bagz('tests/fixtures/upstream/bagz/keys.bag') WHERE record = CAST('banana' AS BLOB);

-- Newest first, page 2: ORDER BY rowid DESC with LIMIT/OFFSET is pushed down.
SELECT rowid, length(record) AS len
FROM bagz('tests/fixtures/upstream/bagz/mid.bagz') ORDER BY rowid DESC LIMIT 5 OFFSET 5;

-- Files written with separate limits, or compression the name does not say.
SELECT count(*) FROM bagz('tests/fixtures/upstream/bagz/separate.bagz', 'limits=separate');
SELECT CAST(record AS TEXT) FROM bagz('tests/fixtures/upstream/bagz/forced_zstd.bag', 'compression=zstd');
SELECT count(*) FROM bagz('tests/fixtures/upstream/bagz/dict.bagz',
                          'dictionary=tests/fixtures/upstream/bagz/dict_raw.txt');
