/* bagz_writer.c - bagz's framing for the sharded writer (see
 * bagz_writer.h and formats/sharded_writer.h).
 *
 * Every staging shard is two files while it is written: its records, and
 * its limits (u64 LE end offsets, the side file), as upstream's writer
 * keeps them. At prepare the limits are appended to the records (tail) or
 * published as `limits.<name>` (separate). With threads = 2 records are
 * compressed on a second thread (bagz_compress.h) and written to the
 * shard current when they come back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mapped_file.h"
#include "formats/bagz/bagz_compress.h"
#include "formats/bagz/bagz_writer.h"

/* The format's state in its sharded_writer. */
typedef struct bz_fmt {
  sharded_writer *w;
  bagz_writer_options o;
  uint8_t *dict;
  bagz_compressor *comp; /* zstd, or NULL: records stored */
} bz_fmt;

int bagz_writer_target(const char *spec, char **dir, char **key, char **err) {
  return sharded_writer_target("bagz", spec, dir, key, err);
}

/* "dir/limits.<name>" for a records file path (also of a glob pattern). */
static char *limits_path(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return ds_strf("limits.%s", path);
  return ds_strf("%.*slimits.%s", (int)(slash - path + 1), path, slash + 1);
}

/* Append v as a u64 little-endian limit. */
static int put_limit(ds_afile *f, uint64_t v, char **err) {
  uint8_t le[8];
  for (int k = 0; k < 8; k++) le[k] = (uint8_t)(v >> (8 * k));
  return ds_afile_write(f, le, 8, err);
}

/* Append one stored record to the current shard (the compressor's
 * output too). */
static int put_stored(void *ctx, const uint8_t *p, size_t n, char **err) {
  bz_fmt *f = ctx;
  sw_shard *s = sharded_writer_current(f->w);
  if (ds_afile_write(s->data, p, n, err) || put_limit(s->side, s->data->size, err))
    return -1;
  s->count++;
  return 0;
}

/* sharded_writer_ops.add: compressed (perhaps on the second thread) or stored. */
static int add(void *fmt, sw_shard *cur, uint64_t row, const uint8_t *p, size_t n,
               char **err) {
  bz_fmt *f = fmt;
  (void)cur;
  if (f->comp) return bagz_compressor_add(f->comp, row, p, n, err);
  return put_stored(f, p, n, err);
}

/* sharded_writer_ops.drain / reset: the compressor's queue. */
static int drain(void *fmt, char **err) {
  bz_fmt *f = fmt;
  return f->comp ? bagz_compressor_drain(f->comp, err) : 0;
}
static void reset(void *fmt) {
  bz_fmt *f = fmt;
  if (f->comp) bagz_compressor_reset(f->comp);
}

/* sharded_writer_ops.copy_back: published shard p (records, then limits
 * rebased by the current size) onto the end of staging shard s. */
static int copy_back(void *fmt, sw_shard *s, const sw_pub *p, char **err) {
  (void)fmt;
  uint64_t base = s->data->size;
  if (ds_afile_copy_from(s->data, p->path, 0, p->size, err)) return -1;
  ds_file lf;
  const char *lsrc = p->side_path ? p->side_path : p->path;
  uint64_t loff = p->side_path ? 0 : p->size;
  if (ds_file_open(&lf, lsrc, err)) return -1;
  int rc = 0;
  for (uint64_t i = 0; i < p->count && rc == 0; i++) {
    uint64_t v;
    rc = ds_file_u64le(&lf, loff + 8 * i, &v, err);
    if (rc == 0) rc = put_limit(s->side, v + base, err);
  }
  ds_file_close(&lf);
  s->count += p->count;
  return rc;
}

/* A staging shard being split: its limits, and where the last part ended. */
typedef struct bz_split {
  ds_file lf;
  uint64_t end;
} bz_split;

/* sharded_writer_ops.split_open: the limits of staging shard src. */
static int split_open(void *fmt, const sw_shard *src, void **ix, uint64_t *total,
                      char **err) {
  (void)fmt;
  bz_split *sp = calloc(1, sizeof *sp);
  if (!sp) return ds_err(err, "out of memory");
  if (ds_file_open(&sp->lf, src->side->path, err)) {
    free(sp);
    return -1;
  }
  *ix = sp;
  *total = src->count;
  return 0;
}

/* sharded_writer_ops.split_part: the part's limits, rebased to its start. */
static int split_part(void *ix, uint64_t start, uint64_t count, sw_shard *dst,
                      uint64_t *from, uint64_t *to, char **err) {
  bz_split *sp = ix;
  uint64_t end = sp->end;
  for (uint64_t i = 0; i < count; i++)
    if (ds_file_u64le(&sp->lf, 8 * (start + i), &end, err) ||
        put_limit(dst->side, end - sp->end, err))
      return -1;
  *from = sp->end;
  *to = sp->end = end;
  return 0;
}

static void split_close(void *ix) {
  bz_split *sp = ix;
  if (sp) ds_file_close(&sp->lf);
  free(sp);
}

/* sharded_writer_ops.finish: the limits go to `limits.<name>` (separate)
 * or onto the records' end (tail). */
static int finish(void *fmt, ds_stage *stage, sw_shard *s, size_t k, sw_pub *p,
                  ds_afile **out, char **err) {
  bz_fmt *f = fmt;
  (void)k;
  *out = s->data;
  if (f->o.limits == BAGZ_LIMITS_SEPARATE) {
    if (!(p->side_path = limits_path(p->path))) return ds_err(err, "out of memory");
    return ds_stage_final(stage, s->side->path, p->side_path, err);
  }
  int parked = s->data->fd < 0;
  if (ds_afile_flush(s->side, err) || ds_stage_unpark(s->data, err) ||
      ds_afile_copy_from(s->data, s->side->path, 0, s->side->size, err) ||
      (parked && ds_stage_park(s->data, err)))
    return -1;
  return 0;
}

/* sharded_writer_ops.init: the dictionary (copied, or read from its
 * file) and the compressor. */
static int init(void *fmt, sharded_writer *w, char **err) {
  bz_fmt *f = fmt;
  const bagz_writer_options *o = &f->o;
  f->w = w;
  ds_file df = {0};
  int rc = 0;
  if (!o->dictionary && o->dictionary_path &&
      (rc = ds_file_load(&df, o->dictionary_path, err)) == 0) {
    f->o.dictionary = df.size ? df.data : (const uint8_t *)"";
    f->o.dictionary_len = df.size;
  }
  if (rc == 0 && f->o.dictionary) {
    size_t dn = f->o.dictionary_len;
    if (!(f->dict = malloc(dn ? dn : 1))) rc = ds_err(err, "out of memory");
    else memcpy(f->dict, f->o.dictionary, dn);
    f->o.dictionary = f->dict;
  }
  if (df.path) ds_file_close(&df);
  if (rc == 0 && o->zstd)
    rc = bagz_compressor_new(o->level, f->dict, f->o.dictionary_len, o->threads,
                             put_stored, f, &f->comp, err);
  return rc;
}

static void fmt_free(void *fmt) {
  bz_fmt *f = fmt;
  bagz_compressor_free(f->comp);
  free(f->dict);
  free(f);
}

/* sharded_writer_ops.data_published: a shard's records file is what is
 * published (the limits appended to it, or beside it). */
static int data_published(void *fmt) {
  (void)fmt;
  return 1;
}

static const sharded_writer_ops bagz_ops = {
    .name = "bagz", .side_label = "limits", .star_needs_rows = 0,
    .side_path = limits_path, .init = init, .add = add, .drain = drain, .reset = reset,
    .copy_back = copy_back, .split_open = split_open, .split_part = split_part,
    .split_close = split_close, .finish = finish, .data_published = data_published,
    .free = fmt_free};

int bagz_writer_open(ds_stage *stage, const char *spec, const bagz_writer_options *o,
                     sharded_writer **out, char **err) {
  *out = NULL;
  bz_fmt *f = calloc(1, sizeof *f);
  if (!f) return ds_err(err, "out of memory");
  f->o = *o;
  if (f->o.threads < 1) f->o.threads = 1;
  return sharded_writer_open(stage, spec, o->rows_per_shard, &bagz_ops, f, out, err);
}
