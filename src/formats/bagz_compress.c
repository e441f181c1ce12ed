/* bagz_compress.c - per-record zstd frames, optionally on two threads in
 * order (see bagz_compress.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "core/common.h"
#include "formats/bagz_compress.h"

#define BATCH_BYTES ((size_t)1 << 20)
#define BATCH_ROWS 8192

/* Records gathered for one compression run, and their frames. */
typedef struct batch {
  ds_buf raw;          /* records back to back */
  size_t *lens;        /* raw length of each */
  size_t n, cap;
  uint64_t first_row;
  ds_buf out;          /* frames back to back */
  size_t *out_lens;
  char *err;           /* compression failure, names the row */
} batch;

struct bagz_compressor {
  ZSTD_CDict *cdict;
  ZSTD_CCtx *cctx;       /* the caller's thread */
  bagz_emit_fn emit;
  void *ctx;
  int threads;
  batch b[2];
  int fill;              /* batch being filled */
  /* helper thread */
  ZSTD_CCtx *wcctx;
  pthread_t thread;
  int started, stop;
  int pending;           /* b[0] handed to the helper, not yet collected */
  int done;              /* the helper finished b[0] */
  pthread_mutex_t mu;
  pthread_cond_t cv;
};

/* One frame for p[0..n) into out (appended); 0-byte records stay empty. */
static int frame(ZSTD_CCtx *cctx, const ZSTD_CDict *cdict, uint64_t row,
                 const uint8_t *p, size_t n, ds_buf *out, size_t *len,
                 char **err) {
  *len = 0;
  if (n == 0) return 0;
  size_t bound = ZSTD_compressBound(n);
  if (ds_buf_reserve(out, out->len + bound))
    return ds_err(err, "record %llu: out of memory", (unsigned long long)row);
  size_t r = ZSTD_compress_usingCDict(cctx, out->data + out->len, bound, p, n,
                                      cdict);
  if (ZSTD_isError(r))
    return ds_err(err, "record %llu: zstd: %s", (unsigned long long)row,
                  ZSTD_getErrorName(r));
  out->len += r;
  *len = r;
  return 0;
}

/* Compress every record of a batch into its out buffer. */
static int compress_batch(ZSTD_CCtx *cctx, const ZSTD_CDict *cdict, batch *b,
                          char **err) {
  b->out.len = 0;
  size_t off = 0;
  for (size_t i = 0; i < b->n; i++) {
    if (frame(cctx, cdict, b->first_row + i, b->raw.data + off, b->lens[i],
              &b->out, &b->out_lens[i], err))
      return -1;
    off += b->lens[i];
  }
  return 0;
}

/* Emit a compressed batch in order and empty it. */
static int emit_batch(bagz_compressor *c, batch *b, char **err) {
  size_t off = 0;
  int rc = 0;
  if (b->err) {
    rc = ds_err(err, "%s", b->err);
    free(b->err);
    b->err = NULL;
  }
  for (size_t i = 0; i < b->n && rc == 0; i++) {
    rc = c->emit(c->ctx, b->out.data + off, b->out_lens[i], err);
    off += b->out_lens[i];
  }
  b->n = 0;
  b->raw.len = 0;
  b->out.len = 0;
  return rc;
}

/* The helper thread: compress b[0] whenever it is handed over. */
static void *helper(void *arg) {
  bagz_compressor *c = arg;
  pthread_mutex_lock(&c->mu);
  for (;;) {
    while (!c->stop && !(c->pending && !c->done)) pthread_cond_wait(&c->cv, &c->mu);
    if (c->stop) break;
    pthread_mutex_unlock(&c->mu);
    char *e = NULL;
    if (compress_batch(c->wcctx, c->cdict, &c->b[0], &e)) c->b[0].err = e;
    pthread_mutex_lock(&c->mu);
    c->done = 1;
    pthread_cond_broadcast(&c->cv);
  }
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

/* Wait for the helper's batch and emit it. */
static int collect(bagz_compressor *c, char **err) {
  if (!c->pending) return 0;
  pthread_mutex_lock(&c->mu);
  while (!c->done) pthread_cond_wait(&c->cv, &c->mu);
  c->pending = 0;
  c->done = 0;
  pthread_mutex_unlock(&c->mu);
  return emit_batch(c, &c->b[0], err);
}

/* Hand b[0] to the helper (starting it on first use). */
static int hand_over(bagz_compressor *c, char **err) {
  if (!c->started) {
    if (!(c->wcctx = ZSTD_createCCtx())) return ds_err(err, "out of memory");
    if (pthread_create(&c->thread, NULL, helper, c) != 0)
      return ds_err(err, "cannot start the compression thread");
    c->started = 1;
  }
  pthread_mutex_lock(&c->mu);
  c->pending = 1;
  c->done = 0;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
  return 0;
}

/* The batch being filled is full: b[0] goes to the helper; b[1] is
 * compressed here, then both are emitted in order. */
static int batch_full(bagz_compressor *c, char **err) {
  if (c->fill == 0) {
    c->fill = 1;
    return hand_over(c, err);
  }
  c->fill = 0;
  batch *b = &c->b[1];
  int rc = compress_batch(c->cctx, c->cdict, b, err);
  if (collect(c, rc ? NULL : err) && rc == 0) rc = -1;
  if (rc == 0) rc = emit_batch(c, b, err);
  else b->n = b->raw.len = 0;
  return rc;
}

int bagz_compressor_new(int level, const uint8_t *dict, size_t dict_len,
                        int threads, bagz_emit_fn emit, void *ctx,
                        bagz_compressor **out, char **err) {
  bagz_compressor *c = calloc(1, sizeof *c);
  if (!c) return ds_err(err, "out of memory");
  c->emit = emit;
  c->ctx = ctx;
  c->threads = threads >= 2 ? 2 : 1;
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  c->cctx = ZSTD_createCCtx();
  c->cdict = ZSTD_createCDict(dict ? dict : (const uint8_t *)"", dict ? dict_len : 0,
                              level);
  if (!c->cctx || !c->cdict) {
    bagz_compressor_free(c);
    return ds_err(err, "zstd: cannot create a compression context at level %d",
                  level);
  }
  *out = c;
  return 0;
}

void bagz_compressor_free(bagz_compressor *c) {
  if (!c) return;
  if (c->started) {
    pthread_mutex_lock(&c->mu);
    while (c->pending && !c->done) pthread_cond_wait(&c->cv, &c->mu);
    c->stop = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->thread, NULL);
  }
  for (int i = 0; i < 2; i++) {
    ds_buf_free(&c->b[i].raw);
    ds_buf_free(&c->b[i].out);
    free(c->b[i].lens);
    free(c->b[i].out_lens);
    free(c->b[i].err);
  }
  pthread_mutex_destroy(&c->mu);
  pthread_cond_destroy(&c->cv);
  ZSTD_freeCCtx(c->cctx);
  ZSTD_freeCCtx(c->wcctx);
  ZSTD_freeCDict(c->cdict);
  free(c);
}

/* Queue one record in the batch being filled. */
static int queue(batch *b, uint64_t row, const uint8_t *p, size_t n, char **err) {
  if (b->n == b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 256;
    size_t *l = realloc(b->lens, cap * sizeof *l);
    if (l) b->lens = l;
    size_t *o = l ? realloc(b->out_lens, cap * sizeof *o) : NULL;
    if (!o) return ds_err(err, "record %llu: out of memory", (unsigned long long)row);
    b->out_lens = o;
    b->cap = cap;
  }
  if (b->n == 0) b->first_row = row;
  if (ds_buf_append(&b->raw, p, n))
    return ds_err(err, "record %llu: out of memory", (unsigned long long)row);
  b->lens[b->n++] = n;
  return 0;
}

int bagz_compressor_add(bagz_compressor *c, uint64_t row, const uint8_t *p,
                        size_t n, char **err) {
  if (c->threads == 1) {
    batch *b = &c->b[0];
    size_t len;
    b->out.len = 0;
    if (frame(c->cctx, c->cdict, row, p, n, &b->out, &len, err)) return -1;
    return c->emit(c->ctx, b->out.data, len, err);
  }
  batch *b = &c->b[c->fill];
  if (queue(b, row, p, n, err)) return -1;
  if (b->raw.len >= BATCH_BYTES || b->n >= BATCH_ROWS) return batch_full(c, err);
  return 0;
}

int bagz_compressor_drain(bagz_compressor *c, char **err) {
  if (c->threads == 1) return 0;
  int rc = collect(c, err);
  batch *b = &c->b[1];
  if (c->fill == 0) b = &c->b[0]; /* b[0] still being filled, not handed over */
  if (rc == 0 && b->n) {
    rc = compress_batch(c->cctx, c->cdict, b, err);
    if (rc == 0) rc = emit_batch(c, b, err);
  }
  b->n = b->raw.len = 0;
  c->fill = 0;
  return rc;
}

void bagz_compressor_reset(bagz_compressor *c) {
  if (c->threads == 2) {
    pthread_mutex_lock(&c->mu);
    while (c->pending && !c->done) pthread_cond_wait(&c->cv, &c->mu);
    c->pending = c->done = 0;
    pthread_mutex_unlock(&c->mu);
  }
  for (int i = 0; i < 2; i++) {
    c->b[i].n = c->b[i].raw.len = c->b[i].out.len = 0;
    free(c->b[i].err);
    c->b[i].err = NULL;
  }
  c->fill = 0;
}

int bagz_compress_one(int level, const uint8_t *dict, size_t dict_len,
                      const uint8_t *p, size_t n, uint8_t **out,
                      size_t *out_len, char **err) {
  ZSTD_CCtx *cctx = ZSTD_createCCtx();
  ZSTD_CDict *cd = ZSTD_createCDict(dict ? dict : (const uint8_t *)"",
                                    dict ? dict_len : 0, level);
  ds_buf b = {0};
  int rc = cctx && cd ? frame(cctx, cd, 0, p, n, &b, out_len, err)
                      : ds_err(err, "zstd: cannot create a context");
  ZSTD_freeCCtx(cctx);
  ZSTD_freeCDict(cd);
  if (rc) ds_buf_free(&b);
  else *out = b.data;
  return rc;
}
