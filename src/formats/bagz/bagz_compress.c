/* bagz_compress.c - per-record zstd frames, optionally on two threads in
 * order (see bagz_compress.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "core/common.h"
#include "formats/bagz/bagz_compress.h"

/* Batches of 256 KiB: the last one left when the rows end (compressed by
 * one thread while the other has nothing left) costs a few ms, not the
 * ~25 ms of a 1 MiB batch of small records. */
#define BATCH_BYTES ((size_t)256 << 10)
#define BATCH_ROWS 2048
#define NBATCH 8 /* the ring: memory stays at NBATCH batches */

/* Where a batch of the ring is. */
enum { B_FREE, B_FILLING, B_READY, B_CLAIMED, B_DONE };

/* Records gathered for one compression run, and their frames. */
typedef struct batch {
  ds_buf raw;          /* records back to back */
  size_t *lens;        /* raw length of each */
  size_t n, cap;
  uint64_t first_row;
  ds_buf out;          /* frames back to back */
  size_t *out_lens;
  char *err;           /* compression failure, names the row */
  int state;           /* B_* (under the mutex) */
} batch;

struct bagz_compressor {
  ZSTD_CDict *cdict;
  ZSTD_CCtx *cctx;       /* the caller's thread */
  bagz_emit_fn emit;
  void *ctx;
  int threads;
  batch b[NBATCH];
  int head;              /* oldest batch not yet emitted */
  int fill;              /* batch being filled */
  /* helper thread: compresses the oldest READY batch */
  ZSTD_CCtx *wcctx;
  pthread_t thread;
  int started, stop;
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

/* The oldest READY batch from head, or -1 (mutex held). */
static int oldest_ready(const bagz_compressor *c) {
  for (int k = 0; k < NBATCH; k++) {
    int i = (c->head + k) % NBATCH;
    if (c->b[i].state == B_READY) return i;
  }
  return -1;
}

/* With mu held: claim READY batch i, compress it without the lock with
 * cctx, mark it DONE and wake whoever waits for it. */
static void compress_claimed(bagz_compressor *c, int i, ZSTD_CCtx *cctx) {
  c->b[i].state = B_CLAIMED;
  pthread_mutex_unlock(&c->mu);
  char *e = NULL;
  if (compress_batch(cctx, c->cdict, &c->b[i], &e)) c->b[i].err = e;
  pthread_mutex_lock(&c->mu);
  c->b[i].state = B_DONE;
  pthread_cond_broadcast(&c->cv);
}

/* The helper thread: claim the oldest READY batch, compress it, mark it
 * DONE; sleep when there is none. */
static void *helper(void *arg) {
  bagz_compressor *c = arg;
  pthread_mutex_lock(&c->mu);
  for (;;) {
    int i = -1;
    while (!c->stop && (i = oldest_ready(c)) < 0) pthread_cond_wait(&c->cv, &c->mu);
    if (c->stop) break;
    compress_claimed(c, i, c->wcctx);
  }
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

/* Start the helper on first use. */
static int start_helper(bagz_compressor *c, char **err) {
  if (c->started) return 0;
  if (!(c->wcctx = ZSTD_createCCtx())) return ds_err(err, "out of memory");
  if (pthread_create(&c->thread, NULL, helper, c) != 0)
    return ds_err(err, "cannot start the compression thread");
  c->started = 1;
  return 0;
}

/* One step towards emitting batch head: emit it when DONE; else compress
 * the oldest READY batch here (it may be head or a later one); else wait
 * for the helper. `until_free`: stop once batch `want` is FREE; -1: until
 * every batch is emitted. */
static int make_room(bagz_compressor *c, int want, char **err) {
  int rc = 0;
  pthread_mutex_lock(&c->mu);
  for (;;) {
    if (want >= 0 ? c->b[want].state == B_FREE : c->b[c->head].state == B_FREE) break;
    batch *h = &c->b[c->head];
    if (h->state == B_DONE) {
      pthread_mutex_unlock(&c->mu);
      int e = emit_batch(c, h, rc ? NULL : err);
      if (e && rc == 0) rc = -1;
      pthread_mutex_lock(&c->mu);
      h->state = B_FREE;
      c->head = (c->head + 1) % NBATCH;
      continue;
    }
    int i = oldest_ready(c);
    if (i >= 0) { /* do the work rather than wait */
      compress_claimed(c, i, c->cctx);
      continue;
    }
    if (h->state == B_FILLING) break; /* nothing queued before it */
    pthread_cond_wait(&c->cv, &c->mu);
  }
  pthread_mutex_unlock(&c->mu);
  return rc;
}

/* The batch being filled is full: queue it, then make the next one free
 * (emitting, compressing here, or waiting as needed). */
static int batch_full(bagz_compressor *c, char **err) {
  if (start_helper(c, err)) return -1;
  pthread_mutex_lock(&c->mu);
  c->b[c->fill].state = B_READY;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
  int next = (c->fill + 1) % NBATCH;
  int rc = make_room(c, next, err);
  /* the helper reads every batch's state under the mutex: set it there */
  pthread_mutex_lock(&c->mu);
  c->fill = next;
  c->b[next].state = B_FILLING;
  pthread_mutex_unlock(&c->mu);
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
  c->b[0].state = B_FILLING;
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
    for (int i = 0; i < NBATCH; i++)
      while (c->b[i].state == B_CLAIMED) pthread_cond_wait(&c->cv, &c->mu);
    c->stop = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->thread, NULL);
  }
  for (int i = 0; i < NBATCH; i++) {
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
  batch *f = &c->b[c->fill];
  pthread_mutex_lock(&c->mu);
  if (f->n) f->state = B_READY; /* the partial batch goes too */
  else f->state = B_FREE;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
  int rc = make_room(c, -1, err);
  /* everything emitted: start filling at head again (the helper reads
   * the states under the mutex) */
  pthread_mutex_lock(&c->mu);
  c->fill = c->head;
  c->b[c->fill].state = B_FILLING;
  pthread_mutex_unlock(&c->mu);
  return rc;
}

void bagz_compressor_reset(bagz_compressor *c) {
  pthread_mutex_lock(&c->mu);
  /* First take every queued batch from the helper (it claims READY ones
   * only), then wait until it compresses none: waiting batch by batch
   * let it claim, while we waited, a READY batch already passed over,
   * which it then compressed while we emptied it, and marked DONE over
   * the batch the next statement fills (frames of dropped rows, out of
   * order, in the file). */
  for (int i = 0; i < NBATCH; i++)
    if (c->b[i].state == B_READY) c->b[i].state = B_FREE;
  for (;;) {
    int busy = 0;
    for (int i = 0; i < NBATCH; i++) busy |= c->b[i].state == B_CLAIMED;
    if (!busy) break;
    pthread_cond_wait(&c->cv, &c->mu);
  }
  for (int i = 0; i < NBATCH; i++) {
    c->b[i].n = c->b[i].raw.len = c->b[i].out.len = 0;
    free(c->b[i].err);
    c->b[i].err = NULL;
    c->b[i].state = B_FREE;
  }
  c->head = c->fill = 0;
  c->b[0].state = B_FILLING;
  pthread_mutex_unlock(&c->mu);
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
