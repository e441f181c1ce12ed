-- bcolz.sql - example queries over bcolz ctables and carrays. Run from the
-- repository root:  sqlite3 -cmd '.load build/datasets' < sql/bcolz.sql
-- Paths point at the bundled upstream fixtures; use your own folders instead.

-- Peek: each row as a JSON object (table-valued form).
SELECT row FROM bcolz('tests/fixtures/upstream/bcolz/ctable_basic') LIMIT 2;

-- A named table: one typed column per ctable column, in the table's order.
CREATE VIRTUAL TABLE temp.basic USING bcolz('tests/fixtures/upstream/bcolz/ctable_basic');
SELECT id, x, flag, name, label, small FROM basic WHERE rowid BETWEEN 5 AND 7;

-- Aggregate one column: only its chunks are decompressed.
SELECT sum(small), min(small), max(small) FROM basic;
SELECT label, count(*) AS n FROM basic WHERE flag GROUP BY label ORDER BY n DESC, label LIMIT 3;

-- Comparisons are tested on the decompressed chunks of their column; other
-- columns are decompressed only for chunks with a match (late materialization).
SELECT id, x, small, name FROM basic WHERE x BETWEEN 50.5 AND 50.8 AND small < -100 AND rowid < 12000;
SELECT bcolz_decoded('tests/fixtures/upstream/bcolz/ctable_basic') AS decompressions;

-- describe(): per-column statistics computed in C over the chunks.
SELECT "column", dtype, count, nulls, min, max, sum, round(mean, 3) AS mean
FROM bcolz_stats('tests/fixtures/upstream/bcolz/ctable_basic');

-- User attributes of the table and of its columns (values are JSON).
SELECT name, value, "column" FROM bcolz_attrs('tests/fixtures/upstream/bcolz/ctable_basic');

-- A carray is one column called value; multi-element cells are .npy BLOBs.
CREATE VIRTUAL TABLE temp.f2d USING bcolz('tests/fixtures/upstream/bcolz/carray_2d_f32');
SELECT rowid, npy_shape(value) AS shape, npy_json(value) AS cell FROM f2d WHERE rowid < 2;

-- datetime64 cells are ISO-8601 text at the column's unit (NaT is NULL).
CREATE VIRTUAL TABLE temp.dt USING bcolz('tests/fixtures/upstream/bcolz/carray_datetime64_ns');
SELECT rowid, value FROM dt WHERE rowid < 3;
