/* tfrecord_staged.c - TFRecord's framing for the sharded writer (see
 * tfrecord_staged.h and formats/sharded_writer.h). Staging shards hold
 * framed uncompressed records; a name@N split cuts them at the record
 * boundaries the reader's own index pass finds; prepare compresses them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/tfrecord/tfrecord_frame.h"
#include "formats/tfrecord/tfrecord_staged.h"
#include "formats/tfrecord/tfrecord_writer.h"

int tfrecord_staged_target(const char *spec, char **dir, char **key, char **err) {
  return sharded_writer_target("tfrecord", spec, dir, key, err);
}

/* Append one framed record to staging shard s. */
static int put_framed(sw_shard *s, const uint8_t *p, size_t n, char **err) {
  uint8_t h[TFR_HEADER], f[TFR_FOOTER];
  tfr_frame_header(h, n);
  tfr_frame_footer(f, p, n);
  if (ds_afile_write(s->data, h, sizeof h, err) ||
      (n && ds_afile_write(s->data, p, n, err)) ||
      ds_afile_write(s->data, f, sizeof f, err))
    return -1;
  s->count++;
  return 0;
}

/* sharded_writer_ops.add: framed; errors name the record. */
static int add(void *fmt, sw_shard *cur, uint64_t row, const uint8_t *p, size_t n,
               char **err) {
  (void)fmt;
  if (put_framed(cur, p, n, err) == 0) return 0;
  char where[48];
  snprintf(where, sizeof where, "record %llu", (unsigned long long)row);
  ds_err_prefix(err, where);
  return -1;
}

/* sharded_writer_ops.copy_back: published file p's records onto the end
 * of staging shard s (uncompressed: its bytes; compressed: decompressed
 * and re-framed). */
static int copy_back(void *fmt, sw_shard *s, const sw_pub *p, char **err) {
  const tfrecord_staged_options *o = fmt;
  tfrecord_file t;
  tfrecord_options ro = {.compression = o->compression};
  if (tfrecord_open(&t, p->path, &ro, err)) return -1;
  int rc = 0;
  if (t.compression == TFRECORD_NONE) {
    rc = ds_afile_copy_from(s->data, p->path, 0, t.file.size, err);
    s->count += p->count;
  } else {
    tfrecord_cursor c;
    tfrecord_rec r;
    rc = tfrecord_cursor_init(&c, &t, err);
    int got = 0;
    while (rc == 0 && (got = tfrecord_next(&c, &r, err)) == 1)
      rc = put_framed(s, r.data, r.len, err);
    if (got < 0) rc = -1;
    tfrecord_cursor_free(&c);
  }
  tfrecord_close(&t);
  return rc;
}

/* sharded_writer_ops.split_open: staging shard src indexed by the reader. */
static int split_open(void *fmt, const sw_shard *src, void **ix, uint64_t *total,
                      char **err) {
  (void)fmt;
  tfrecord_file *t = calloc(1, sizeof *t);
  tfrecord_options ro = {.compression = TFRECORD_NONE};
  if (!t) return ds_err(err, "out of memory");
  if (tfrecord_open(t, src->data->path, &ro, err)) {
    free(t);
    return -1;
  }
  *ix = t;
  int rc = tfrecord_index(t, err);
  if (rc == 0 && t->tail_err) rc = ds_err(err, "%s", t->tail_err);
  *total = t->count;
  return rc;
}

/* sharded_writer_ops.split_part: the bytes of records [start, start + count). */
static int split_part(void *ix, uint64_t start, uint64_t count, sw_shard *dst,
                      uint64_t *from, uint64_t *to, char **err) {
  const tfrecord_file *t = ix;
  (void)dst;
  (void)err;
  if (count == 0) return 0;
  *from = t->offsets[start];
  *to = start + count < t->count ? t->offsets[start + count] : t->file.size;
  return 0;
}

static void split_close(void *ix) {
  if (!ix) return;
  tfrecord_close(ix);
  free(ix);
}

/* sharded_writer_ops.finish: the file published for staging shard s: the
 * shard itself, or its records compressed into a new temporary (*out). */
static int finish(void *fmt, ds_stage *stage, sw_shard *s, size_t k, sw_pub *p,
                  ds_afile **out, char **err) {
  const tfrecord_staged_options *o = fmt;
  ds_afile *f = s->data;
  (void)p;
  *out = f;
  if (ds_stage_unpark(f, err) || ds_afile_flush(f, err)) return -1;
  if (o->compression == TFRECORD_NONE) return ds_stage_park(f, err);
  char label[48];
  snprintf(label, sizeof label, "shard%zu.%s", k, tfrecord_compression_name(o->compression));
  if (ds_stage_file(stage, label, out, err)) return -1;
  tfrecord_writer *enc = NULL;
  tfrecord_file t;
  tfrecord_options ro = {.compression = TFRECORD_NONE, .skip_data_crc = 1};
  if (tfrecord_open(&t, f->path, &ro, err)) return -1;
  tfrecord_cursor c;
  tfrecord_rec r;
  int rc = tfrecord_writer_new(*out, o->compression, o->level, &enc, err);
  if (rc == 0) rc = tfrecord_cursor_init(&c, &t, err);
  if (rc == 0) {
    int got;
    while ((got = tfrecord_next(&c, &r, err)) == 1)
      if (tfrecord_writer_add(enc, r.data, r.len, err)) break;
    rc = got == 0 ? tfrecord_writer_finish(enc, err) : -1;
    tfrecord_cursor_free(&c);
  }
  tfrecord_writer_free(enc);
  tfrecord_close(&t);
  if (rc == 0) rc = ds_stage_park(f, err) || ds_stage_park(*out, err) ? -1 : 0;
  return rc;
}

/* sharded_writer_ops.data_published: the shard itself, uncompressed. */
static int data_published(void *fmt) {
  const tfrecord_staged_options *o = fmt;
  return o->compression == TFRECORD_NONE;
}

static const sharded_writer_ops tfrecord_ops = {
    .name = "tfrecord", .side_label = NULL, .star_needs_rows = 1, .add = add,
    .copy_back = copy_back, .split_open = split_open, .split_part = split_part,
    .split_close = split_close, .finish = finish, .data_published = data_published,
    .free = free};

int tfrecord_staged_open(ds_stage *stage, const char *spec,
                         const tfrecord_staged_options *o, sharded_writer **out,
                         char **err) {
  *out = NULL;
  tfrecord_staged_options *f = malloc(sizeof *f);
  if (!f) return ds_err(err, "out of memory");
  *f = *o;
  if (f->compression == TFRECORD_AUTO) f->compression = TFRECORD_NONE;
  return sharded_writer_open(stage, spec, o->rows_per_shard, &tfrecord_ops, f, out, err);
}
