-- demo.sql - what `make demo` runs: a first look at bundled bagz datasets
-- (the upstream-written fixtures in tests/fixtures/upstream/bagz).
.print '== how many records, and how big, in a 50,000-record zstd bag'
SELECT count(*) AS records, sum(length(record)) AS bytes,
       sum(length(record) = 0) AS empty
FROM bagz('tests/fixtures/upstream/bagz/mid.bagz');

.print ''
.print '== peek: a rowid range of a 4-shard set, with shard and index inside it'
SELECT rowid, shard, shard_index, length(record) AS len,
       CAST(substr(record, 1, instr(record, x'7c') - 1) AS TEXT) AS label,
       hex(substr(record, instr(record, x'7c') + 1, 4)) AS payload_head
FROM bagz('tests/fixtures/upstream/bagz/concat@4.bagz')
WHERE rowid BETWEEN 6 AND 13;

.print ''
.print '== a named table over an interleaved shard set: records per shard'
CREATE VIRTUAL TABLE temp.inter USING bagz('tests/fixtures/upstream/bagz/inter@*.bagz', layout=interleaved);
SELECT shard, count(*) AS records FROM inter GROUP BY shard;

.print ''
.print '== look records up by content (every match, like bagz.MultiIndex)'
SELECT rowid, CAST(record AS TEXT) AS record
FROM bagz('tests/fixtures/upstream/bagz/keys.bag')
WHERE record IN (CAST('apple' AS BLOB), CAST('cherry' AS BLOB));

.print ''
.print '== join with a metadata table of record ids'
CREATE TEMP TABLE picks(id INTEGER PRIMARY KEY, why TEXT);
INSERT INTO picks VALUES (3, 'an empty one'), (1234, 'spot check'), (49999, 'last');
SELECT p.why, p.id, length(m.record) AS len, CAST(m.record AS TEXT) AS record
FROM picks p JOIN bagz('tests/fixtures/upstream/bagz/mid.bagz') m ON m.rowid = p.id;

.print ''
.print '== datadings: typed columns inferred from the samples, looked up by key'
CREATE VIRTUAL TABLE temp.basic USING datadings('tests/fixtures/upstream/datadings/basic/basic.msgpack');
SELECT key, i_small, text, npy_shape(image) AS image_shape, z AS complex
FROM basic WHERE key IN ('basic-0001', 'basic-0147');

.print ''
.print '== datadings: a join on key (each key is looked up through the Bloom filter and key hashes)'
CREATE TEMP TABLE wanted(key TEXT, why TEXT);
INSERT INTO wanted VALUES ('m00005', 'key 5'), ('m19999', 'last key'), ('x', 'absent');
CREATE VIRTUAL TABLE temp.mid USING datadings('tests/fixtures/upstream/datadings/mid/mid.msgpack');
SELECT w.why, m.rowid, m.n, m.c FROM wanted w JOIN mid m ON m.key = w.key;

.print ''
.print '== any format: dataset_info detects it and describes it'
SELECT property, value FROM dataset_info('tests/fixtures/upstream/atlas/mid')
WHERE property IN ('format', 'rows', 'shards', 'compression', 'block_size');
