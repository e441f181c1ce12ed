/* test_shards.c - formats/shards.c without SQLite: the listing of sharded
 * fixtures of every format against each reader's own counts, split_rows
 * ranges (first rows, interleaved rowids, range bytes from the limits of
 * an uncompressed bag written here), and errors naming the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "formats/atlas/atlas.h"
#include "formats/bagz/bagz.h"
#include "formats/datadings/datadings.h"
#include "formats/atlas/atlas_format.h"
#include "formats/bagz/bagz_format.h"
#include "formats/bcolz/bcolz_format.h"
#include "formats/datadings/datadings_format.h"
#include "formats/tfrecord/tfrecord_format.h"
#include "formats/tfrecord/tfrecord_set.h"
#include "formats/detect.h"
#include "formats/shards.h"

#define FIX "tests/fixtures/upstream/"

/* The five formats in the format table's order (vtab/format_table.c). */
static const ds_format_bytes *formats(size_t i) {
  static const ds_format_bytes *const all[] = {&ds_bcolz_format, &ds_atlas_format,
                                               &ds_tfrecord_format, &ds_datadings_format,
                                               &ds_bagz_format};
  return i < sizeof all / sizeof all[0] ? all[i] : NULL;
}

/* List `path`; NULL options = defaults. Fails the check on error. */
static int list(const char *path, const ds_shards_options *o, ds_shard_listing *l) {
  ds_detected d;
  ds_shards_options def = {0};
  char *err = NULL;
  int ok = ds_detect(path, formats, &d, &err) == 0 && ds_shards_list(path, &d, o ? o : &def, l, &err) == 0;
  if (!CHECK(ok)) check_note("    %s: %s\n", path, err);
  free(err);
  return ok;
}

static void bagz_concat(void) {
  ds_shard_listing l;
  if (!list(FIX "bagz/concat@4.bagz", NULL, &l)) return;
  bagz_options bo = {0};
  bagz_reader *r;
  char *err = NULL;
  if (CHECK(bagz_open(FIX "bagz/concat@4.bagz", &bo, &r, &err) == 0)) {
    CHECK(l.n == r->nshards && l.nshards == r->nshards && l.total_rows == bagz_count(r));
    for (size_t i = 0; i < l.n && i < r->nshards; i++) {
      CHECK(l.items[i].shard == i && l.items[i].rows == r->shards[i].count);
      CHECK(l.items[i].first_rowid == r->map.first[i]);
      CHECK(l.items[i].bytes == r->shards[i].data.size);
      CHECK_STR(l.items[i].path, r->shards[i].data.path);
    }
    bagz_close(r);
  }
  free(err);
  ds_shard_listing_free(&l);
}

static void bagz_interleaved_split(void) {
  ds_shards_options o = {2, BAGZ_LIMITS_TAIL, DS_LAYOUT_INTERLEAVED, 0, NULL};
  ds_shard_listing l;
  if (!list(FIX "bagz/inter@3.bagz", &o, &l)) return;
  uint64_t rows = 0;
  for (size_t i = 0; i < l.n; i++) {
    const ds_shard_entry *e = &l.items[i];
    CHECK(e->rows >= 1 && e->rows <= 2);
    CHECK(e->first_rowid == e->shard + e->shard_index * 3); /* row g: shard g % 3 */
    rows += e->rows;
  }
  CHECK(rows == l.total_rows && l.total_rows == 17 && l.layout == DS_LAYOUT_INTERLEAVED);
  ds_shard_listing_free(&l);
}

/* An uncompressed bag of records of 1, 2, ... 10 bytes. */
static void bag_range_bytes(void) {
  char dir[] = "/tmp/ds_shards_XXXXXX", path[64];
  if (!CHECK(mkdtemp(dir) != NULL)) return;
  snprintf(path, sizeof path, "%s/r.bag", dir);
  FILE *f = fopen(path, "wb");
  uint64_t end = 0;
  for (int i = 1; i <= 10; i++)
    for (int k = 0; k < i; k++) fputc('a', f);
  for (int i = 1; i <= 10; i++) {
    end += (uint64_t)i;
    fwrite(&end, 8, 1, f); /* little-endian host */
  }
  fclose(f);
  ds_shards_options o = {4, 0, 0, 0, NULL};
  ds_shard_listing l;
  if (list(path, &o, &l)) {
    CHECK(l.n == 3);
    if (l.n == 3) {
      CHECK(l.items[0].bytes == 1 + 2 + 3 + 4 && l.items[1].bytes == 5 + 6 + 7 + 8);
      CHECK(l.items[2].bytes == 9 + 10 && l.items[2].rows == 2 && l.items[2].first_rowid == 8);
    }
    ds_shard_listing_free(&l);
  }
  /* a limit past the records: an error naming the file */
  f = fopen(path, "r+b");
  uint64_t bad = 1000;
  fseek(f, -8 * 7, SEEK_END);
  fwrite(&bad, 8, 1, f);
  fclose(f);
  ds_detected d;
  char *err = NULL;
  CHECK(ds_detect(path, formats, &d, &err) == 0 && ds_shards_list(path, &d, &o, &l, &err) != 0);
  CHECK_CONTAINS(err, "r.bag");
  free(err);
  unlink(path);
  rmdir(dir);
}

static void datadings_glob(void) {
  const char *p = FIX "datadings/sharded/part-*.msgpack";
  ds_shard_listing l;
  datadings_reader *r;
  char *err = NULL;
  if (!list(p, NULL, &l)) return;
  if (CHECK(datadings_open(p, &r, &err) == 0)) {
    uint64_t first = 0;
    CHECK(l.n == datadings_nshards(r));
    for (size_t i = 0; i < l.n; i++) {
      CHECK(l.items[i].rows == datadings_shard_count(r, i) && l.items[i].first_rowid == first);
      CHECK_STR(l.items[i].path, datadings_shard_path(r, i));
      first += l.items[i].rows;
    }
    datadings_close(r);
  }
  free(err);
  ds_shard_listing_free(&l);
}

static void atlas_root(void) {
  const char *p = FIX "atlas/many_shards";
  ds_shard_listing l;
  atlas_reader *r;
  char *err = NULL;
  ds_shards_options o = {3, 0, 0, 0, NULL};
  if (!list(p, &o, &l)) return;
  if (CHECK(atlas_open(p, &r, &err) == 0)) {
    uint64_t rows = 0;
    for (size_t i = 0; i < l.n; i++) {
      const ds_shard_entry *e = &l.items[i];
      CHECK(e->first_rowid == atlas_shard_first(r, e->shard) + e->shard_index);
      CHECK(e->bytes > 0 && e->bytes <= atlas_data_size(r, e->shard));
      rows += e->rows;
    }
    CHECK(rows == atlas_count(r) && l.nshards == atlas_nshards(r));
    atlas_close(r);
  }
  free(err);
  ds_shard_listing_free(&l);
}

static void bcolz_split(void) {
  ds_shards_options o = {7000, 0, 0, 0, NULL};
  ds_shard_listing l;
  if (!list(FIX "bcolz/ctable_basic", &o, &l)) return;
  CHECK(l.nshards == 1 && l.total_rows == 50000 && l.n == 8);
  for (size_t i = 0; i < l.n; i++)
    CHECK(l.items[i].shard == 0 && l.items[i].first_rowid == 7000 * i &&
          l.items[i].shard_index == 7000 * i && l.items[i].bytes > 0);
  ds_shard_listing_free(&l);
}

/* tfrecord: a comma list of three files, rows from the index, the bytes
 * of a split range of the uncompressed file from its offsets. */
static void tfrecord_list(void) {
  const char *spec = "tests/fixtures/tfrecord/examples.tfrecord,"
                     "tests/fixtures/tfrecord/examples.gzip.tfrecord,"
                     "tests/fixtures/tfrecord/cut.tfrecord";
  ds_shards_options o = {0};
  o.split_rows = 5;
  ds_shard_listing l;
  if (!list(spec, &o, &l)) return;
  tfrecord_set s;
  tfrecord_options to = {.compression = TFRECORD_AUTO};
  char *err = NULL;
  if (CHECK(tfrecord_set_open(&s, spec, &to, 1, &err) == 0)) {
    if (CHECK(tfrecord_set_index(&s, &err) == 0)) {
      CHECK(l.nshards == 3 && l.total_rows == s.map.total && s.map.total == 12 + 12 + 8);
      /* 12 rows by 5: 3 ranges a shard; the cut file 8 rows: 2 */
      CHECK(l.n == 3 + 3 + 2);
      const tfrecord_file *t = &s.files[0];
      if (CHECK(l.n >= 2)) {
        CHECK(l.items[0].shard == 0 && l.items[0].first_rowid == 0 && l.items[0].rows == 5);
        CHECK(l.items[0].bytes == t->offsets[5] - t->offsets[0]);
        CHECK(l.items[1].bytes == t->offsets[10] - t->offsets[5]);
      }
      if (CHECK(l.n == 8)) {
        CHECK(l.items[6].shard == 2 && l.items[6].first_rowid == 24);
        CHECK_STR(l.items[7].path, "tests/fixtures/tfrecord/cut.tfrecord");
      }
    }
    tfrecord_set_close(&s);
  }
  free(err);
  ds_shard_listing_free(&l);
}

int main(void) {
  bagz_concat();
  bagz_interleaved_split();
  bag_range_bytes();
  datadings_glob();
  atlas_root();
  bcolz_split();
  tfrecord_list();
  return check_exit();
}
