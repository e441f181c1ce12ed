/* tfrecord_writer.c - framing, and deflate through ISA-L (see
 * tfrecord_writer.h). Compressed, the framed bytes go through one
 * isal_zstream (gzip or zlib wrapper written by igzip) whose output is
 * appended to the file a buffer at a time. */
#include <stdlib.h>
#include <string.h>

#include <isa-l/igzip_lib.h>

#include "core/upper_vectors.h"
#include "formats/tfrecord/tfrecord_frame.h"
#include "formats/tfrecord/tfrecord_writer.h"

#define OUT_CHUNK ((size_t)256 << 10)

struct tfrecord_writer {
  ds_afile *out;
  tfrecord_compression c;
  uint64_t count;
  int finished;
  struct isal_zstream zs;
  uint8_t *level_buf;
  uint8_t *obuf; /* compressed output waiting to be appended */
};

/* Level buffer sizes ISA-L wants for levels 1-3. */
static uint32_t level_buf_size(int level) {
  switch (level) {
    case 1: return ISAL_DEF_LVL1_DEFAULT;
    case 2: return ISAL_DEF_LVL2_DEFAULT;
    case 3: return ISAL_DEF_LVL3_DEFAULT;
    default: return 0;
  }
}

int tfrecord_writer_new(ds_afile *out, tfrecord_compression c, int level,
                        tfrecord_writer **w, char **err) {
  *w = NULL;
  if (c != TFRECORD_NONE && c != TFRECORD_GZIP && c != TFRECORD_ZLIB)
    return ds_err(err, "%s: a writer's compression is none, gzip or zlib", out->path);
  if (level < 0) level = 1;
  if (level > ISAL_DEF_MAX_LEVEL)
    return ds_err(err, "%s: compression level %d: ISA-L's levels are 0 to %d",
                  out->path, level, ISAL_DEF_MAX_LEVEL);
  tfrecord_writer *x = calloc(1, sizeof *x);
  if (!x) return ds_err(err, "out of memory");
  x->out = out;
  x->c = c;
  if (c != TFRECORD_NONE) {
    uint32_t lb = level_buf_size(level);
    x->obuf = malloc(OUT_CHUNK);
    x->level_buf = lb ? malloc(lb) : NULL;
    if (!x->obuf || (lb && !x->level_buf)) {
      tfrecord_writer_free(x);
      return ds_err(err, "out of memory");
    }
    isal_deflate_init(&x->zs);
    x->zs.level = (uint32_t)level;
    x->zs.level_buf = x->level_buf;
    x->zs.level_buf_size = lb;
    x->zs.gzip_flag = c == TFRECORD_GZIP ? IGZIP_GZIP : IGZIP_ZLIB;
  }
  *w = x;
  return 0;
}

void tfrecord_writer_free(tfrecord_writer *w) {
  if (!w) return;
  free(w->level_buf);
  free(w->obuf);
  free(w);
}

uint64_t tfrecord_writer_count(const tfrecord_writer *w) { return w->count; }

/* Compress p[0..n) (end: the stream's last call) and append the output. */
static int deflate_some(tfrecord_writer *w, const uint8_t *p, size_t n, int end,
                        char **err) {
  do {
    size_t k = n > UINT32_MAX / 2 ? UINT32_MAX / 2 : n;
    w->zs.next_in = (uint8_t *)p;
    w->zs.avail_in = (uint32_t)k;
    w->zs.end_of_stream = end && k == n;
    do {
      w->zs.next_out = w->obuf;
      w->zs.avail_out = (uint32_t)OUT_CHUNK;
      int rc = isal_deflate(&w->zs);
      ds_clear_upper_vectors();
      if (rc != COMP_OK)
        return ds_err(err, "%s: compression failed (ISA-L error %d)", w->out->path, rc);
      size_t made = (size_t)(w->zs.next_out - w->obuf);
      if (made && ds_afile_write(w->out, w->obuf, made, err)) return -1;
    } while (w->zs.avail_in > 0 || w->zs.avail_out == 0 ||
             (w->zs.end_of_stream && w->zs.internal_state.state != ZSTATE_END));
    p += k;
    n -= k;
  } while (n > 0);
  return 0;
}

/* Append bytes to the file, through the compressor when there is one. */
static int emit(tfrecord_writer *w, const uint8_t *p, size_t n, char **err) {
  if (w->c == TFRECORD_NONE) return ds_afile_write(w->out, p, n, err);
  return deflate_some(w, p, n, 0, err);
}

int tfrecord_writer_add(tfrecord_writer *w, const uint8_t *p, size_t n, char **err) {
  if (w->finished) return ds_err(err, "%s: a record added after the end", w->out->path);
  uint8_t h[TFR_HEADER], f[TFR_FOOTER];
  tfr_frame_header(h, n);
  tfr_frame_footer(f, p, n);
  if (emit(w, h, sizeof h, err) || (n && emit(w, p, n, err)) ||
      emit(w, f, sizeof f, err))
    return -1;
  w->count++;
  return 0;
}

int tfrecord_writer_finish(tfrecord_writer *w, char **err) {
  if (w->finished) return 0;
  w->finished = 1;
  if (w->c == TFRECORD_NONE) return 0;
  return deflate_some(w, (const uint8_t *)"", 0, 1, err);
}
