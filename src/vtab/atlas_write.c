/* atlas_write.c - INSERT INTO an atlas CREATE-form table:
 *
 *   CREATE VIRTUAL TABLE temp.a USING atlas('train_atlas', mode=create,
 *       block_size=64, strategy=2, shard_size=100000, columns='label INTEGER, image BLOB');
 *   INSERT INTO a(label, image) SELECT label, image FROM train;
 *   INSERT INTO a(example) SELECT example FROM atlas('other_atlas');
 *
 * Each row is one example, in insertion order: the JSON of the HIDDEN
 * `example` column when given, else a dict of the declared columns (NULL
 * columns left out), or without columns= the `value` column itself.
 * Options as upstream's AtlasDatasetWriter names them: block_size,
 * strategy (0 none, 1 zstd, 2 shared dictionary, 3 per-shard), level,
 * dict_size (a fraction), shard_size; and threads (2: frames with a
 * dictionary are made on a helper thread too). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "formats/atlas/atlas.h"
#include "formats/atlas/atlas_replay.h"
#include "formats/atlas/atlas_writer.h"
#include "vtab/atlas_options.h"
#include "vtab/atlas_write.h"
#include "vtab/dir_table_write.h"

/* Defaults as formats/atlas/atlas_writer.c's atlas_write_defaults (and
 * upstream's AtlasDatasetWriter). */
#define WRITER_INT(name_, field, lo, hi, d, text)                                     \
  {.name = name_, .forms = DS_FORM_WRITER, .kind = DS_OPT_INT, .min = lo, .max = hi, \
   .def = d, .help = text, .at = offsetof(atlas_write_opts, field)}
const ds_opt_spec atlas_write_specs[] = {
    WRITER_INT("block_size", block_size, 1, INT64_MAX, 64, "examples in each block"),
    WRITER_INT("strategy", strategy, 0, 3, ATLAS_SHARED_DICTIONARY,
               "0 none, 1 zstd, 2 zstd with a shared dictionary, 3 per-shard dictionaries"),
    WRITER_INT("level", level, -131072, 22, 3, "the zstd level"),
    {.name = "dict_size", .forms = DS_FORM_WRITER, .kind = DS_OPT_FRACTION, .def_real = 0.01,
     .help = "the dictionary's size as a fraction of the samples it is trained on",
     .at = offsetof(atlas_write_opts, dict_size)},
    WRITER_INT("shard_size", shard_size, 1, INT64_MAX, 100000, "examples in each shard"),
    {0}};

/* The format's writer for core/staged_dir. */
static int fmt_open(const char *dir, const void *cfg, void **w, char **err) {
  return atlas_writer_open(dir, cfg, (atlas_writer **)w, err);
}
static int fmt_add(void *w, const ds_value *v, char **err) { return atlas_writer_add(w, v, err); }
static uint64_t fmt_count(const void *w) { return atlas_writer_count(w); }
static int fmt_truncate(void *w, uint64_t n, char **err) { return atlas_writer_truncate(w, n, err); }
static int fmt_finish(void *w, char **err) { return atlas_writer_finish(w, err); }
static void fmt_free(void *w) { atlas_writer_free(w); }
static int fmt_replay(void *w, const char *dir, char **err) {
  return atlas_each_example(dir, fmt_add, w, err);
}

static const ds_dir_format atlas_dir_format = {"atlas", fmt_open, fmt_add, fmt_count,
                                               fmt_truncate, fmt_finish, fmt_free,
                                               fmt_replay, atlas_write_is_own};

int atlas_table_write_open(const char *path, const ds_options *o, const atlas_write_opts *v,
                           int64_t threads, int mode, ds_table_writer **out, char **err) {
  atlas_write_options *wo = malloc(sizeof *wo);
  if (!wo) return ds_err(err, "out of memory");
  atlas_write_defaults(wo);
  wo->sync = 0; /* the stage fsyncs the whole tree before the commit */
  wo->block_size = (uint64_t)v->block_size;
  wo->shard_size = (uint64_t)v->shard_size;
  wo->strategy = (int)v->strategy;
  wo->level = (int)v->level;
  wo->dict_size = v->dict_size;
  wo->threads = (int)threads;
  if (atlas_write_check(wo, err)) {
    free(wo);
    ds_err_prefix(err, path);
    return -1;
  }
  return ds_dir_write_open(path, o, mode, ds_atlas_option_groups, &atlas_dir_format, wo,
                           free, out, err);
}

int atlas_table_write_row(ds_table_writer *tw, const ds_schema *s, int dict,
                          sqlite3_value **cols, sqlite3_value *example,
                          uint64_t row, char **err) {
  ds_arena a = {0};
  ds_value ex;
  int rc = 0;
  if (sqlite3_value_type(example) != SQLITE_NULL) {
    if (sqlite3_value_type(example) != SQLITE_TEXT)
      rc = ds_err(err, "example %llu: `example` must be JSON text", (unsigned long long)row);
    else
      rc = ds_value_from_json((const char *)sqlite3_value_text(example),
                              (size_t)sqlite3_value_bytes(example), &a, &ex, err);
  } else if (!dict) {
    rc = ds_dir_write_value(cols[0], s->n && ds_dir_write_json_column(&s->cols[0]),
                            s->n ? s->cols[0].decl : DS_DECL_NONE, &a, &ex, err);
    if (rc && s->n) ds_err_prefix(err, s->cols[0].name);
  } else {
    ds_value *kv = ds_arena_get(&a, 2 * (s->n ? s->n : 1) * sizeof *kv, err);
    size_t n = 0;
    rc = kv ? 0 : -1;
    for (size_t i = 0; i < s->n && rc == 0; i++) {
      if (sqlite3_value_type(cols[i]) == SQLITE_NULL) continue;
      memset(&kv[2 * n], 0, sizeof kv[2 * n]);
      kv[2 * n].type = DS_V_TEXT;
      kv[2 * n].u.s.p = (const uint8_t *)s->cols[i].field;
      kv[2 * n].u.s.n = s->cols[i].field_len;
      rc = ds_dir_write_value(cols[i], ds_dir_write_json_column(&s->cols[i]), s->cols[i].decl,
                              &a, &kv[2 * n + 1], err);
      if (rc) ds_err_prefix(err, s->cols[i].name);
      n++;
    }
    memset(&ex, 0, sizeof ex);
    ex.type = DS_V_MAP;
    ex.u.list.items = kv;
    ex.u.list.n = n;
  }
  if (rc == 0) rc = ds_staged_dir_add(ds_dir_write_target(tw), &ex, err);
  if (rc) {
    char where[48];
    snprintf(where, sizeof where, "example %llu", (unsigned long long)row);
    ds_err_prefix(err, where);
  }
  ds_arena_free(&a);
  return rc;
}
