/* datadings_key_hasher.c - a datadings writer's key hashes on a worker
 * thread (see datadings_key_hasher.h).
 *
 * Keys travel in a ring of NBATCH batches ([u32 length][bytes] back to
 * back). The writing thread fills one batch while the worker hashes the
 * others; a batch marked full belongs to the worker until it clears the
 * mark. The writer waits only when every batch is full. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/common.h"
#include "core/vfs.h"
#include "core/worker.h"
#include "formats/datadings/key_hash_state.h"
#include "formats/datadings/datadings.h"
#include "formats/datadings/datadings_key_hasher.h"
#include "formats/datadings/simplebloom.h"

#define NBATCH 4
#define BATCH_BYTES ((size_t)64 << 10)
#define OUT_KEYS 1024 /* records hashed before one spill write */

typedef struct batch {
  uint8_t *buf;
  size_t len, cap;
  int full; /* guarded by w.mu: queued for (or being hashed by) the worker */
} batch;

struct dd_key_hasher {
  ds_worker w;
  ds_afile *spill;
  batch b[NBATCH];
  int fill;     /* the batch the writer fills (writer only) */
  int next;     /* the batch the worker takes next (worker only) */
  char *error;  /* guarded by w.mu: the worker's first error */
  blake2s_state salted, plain; /* the two hashes' starting states */
  uint8_t out[OUT_KEYS * DD_HASH_RECORD]; /* the worker's records */
};

/* One key's record. */
static void hash_key(const dd_key_hasher *h, const uint8_t *k, size_t n,
                     uint8_t rec[DD_HASH_RECORD]) {
  uint64_t h1, h2;
  datadings_key_hash_from(&h->salted, k, n, rec);
  simplebloom_hashes_from(&h->plain, k, n, &h1, &h2);
  memcpy(rec + 8, &h1, 8);
  memcpy(rec + 16, &h2, 8);
}

/* Hash every key of b into the spill (the caller owns b and the spill). */
static int hash_batch(dd_key_hasher *h, const batch *b, char **err) {
  size_t pos = 0, nout = 0;
  while (pos < b->len) {
    size_t n = ds_le32(b->buf + pos);
    hash_key(h, b->buf + pos + 4, n, h->out + nout * DD_HASH_RECORD);
    pos += 4 + n;
    if (++nout == OUT_KEYS || pos >= b->len) {
      if (ds_afile_write(h->spill, h->out, nout * DD_HASH_RECORD, err)) return -1;
      nout = 0;
    }
  }
  return 0;
}

/* The worker: hash full batches in ring order until told to stop. */
static void *hasher_main(void *arg) {
  dd_key_hasher *h = arg;
  pthread_mutex_lock(&h->w.mu);
  for (;;) {
    while (!h->w.stop && !h->b[h->next].full) pthread_cond_wait(&h->w.cv, &h->w.mu);
    if (h->w.stop) break;
    batch *b = &h->b[h->next];
    int failed = h->error != NULL;
    pthread_mutex_unlock(&h->w.mu);
    char *e = NULL;
    if (!failed && hash_batch(h, b, &e) == 0) e = NULL;
    pthread_mutex_lock(&h->w.mu);
    if (e && !h->error) h->error = e;
    else free(e);
    b->len = 0;
    b->full = 0;
    h->next = (h->next + 1) % NBATCH;
    pthread_cond_broadcast(&h->w.cv);
  }
  pthread_mutex_unlock(&h->w.mu);
  return NULL;
}

dd_key_hasher *dd_key_hasher_start(ds_afile *spill) {
  dd_key_hasher *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  h->spill = spill;
  uint8_t salt[8];
  datadings_salt_for(0, salt);
  datadings_key_hash_init(salt, &h->salted);
  simplebloom_hash_init(&h->plain);
  ds_worker_start(&h->w, hasher_main, h);
  return h;
}

/* The worker's error as the caller's (-1), or 0. Under w.mu. */
static int take_error(dd_key_hasher *h, char **err) {
  if (!h->error) return 0;
  return ds_err(err, "%s", h->error);
}

/* Hand the filling batch to the worker (hashed here without one) and move
 * to the next, waiting for it to be free. */
static int submit(dd_key_hasher *h, char **err) {
  batch *b = &h->b[h->fill];
  if (b->len == 0) return 0;
  if (!h->w.running) {
    int rc = hash_batch(h, b, err);
    b->len = 0;
    return rc;
  }
  pthread_mutex_lock(&h->w.mu);
  b->full = 1;
  pthread_cond_broadcast(&h->w.cv);
  h->fill = (h->fill + 1) % NBATCH;
  while (h->b[h->fill].full) pthread_cond_wait(&h->w.cv, &h->w.mu); /* never long */
  int rc = take_error(h, err);
  pthread_mutex_unlock(&h->w.mu);
  return rc;
}

int dd_key_hasher_add(dd_key_hasher *h, const uint8_t *k, size_t n, char **err) {
  batch *b = &h->b[h->fill];
  if (b->len && b->len + 4 + n > b->cap) {
    if (submit(h, err)) return -1;
    b = &h->b[h->fill];
  }
  if (b->len + 4 + n > b->cap) { /* an empty batch, or a big key */
    size_t cap = 4 + n > BATCH_BYTES ? 4 + n : BATCH_BYTES;
    uint8_t *p = realloc(b->buf, cap);
    if (!p) return ds_err(err, "out of memory for key hashes");
    b->buf = p;
    b->cap = cap;
  }
  uint8_t *q = b->buf + b->len;
  q[0] = (uint8_t)n;
  q[1] = (uint8_t)(n >> 8);
  q[2] = (uint8_t)(n >> 16);
  q[3] = (uint8_t)(n >> 24);
  memcpy(q + 4, k, n);
  b->len += 4 + n;
  return 0;
}

/* Submit the filling batch and wait until the worker has hashed all. */
static int drain(dd_key_hasher *h, char **err) {
  if (submit(h, err)) return -1;
  if (!h->w.running) return 0;
  pthread_mutex_lock(&h->w.mu);
  for (int i = 0; i < NBATCH; i++)
    while (h->b[i].full) pthread_cond_wait(&h->w.cv, &h->w.mu);
  int rc = take_error(h, err);
  pthread_mutex_unlock(&h->w.mu);
  return rc;
}

int dd_key_hasher_finish(dd_key_hasher *h, char **err) {
  return drain(h, err) || ds_afile_flush(h->spill, err) ? -1 : 0;
}

int dd_key_hasher_cut(dd_key_hasher *h, uint64_t keys, char **err) {
  if (drain(h, err)) return -1;
  return ds_afile_truncate(h->spill, keys * DD_HASH_RECORD, err);
}

void dd_key_hasher_stop(dd_key_hasher *h) {
  if (!h) return;
  ds_worker_stop(&h->w);
  for (int i = 0; i < NBATCH; i++) free(h->b[i].buf);
  free(h->error);
  free(h);
}

int dd_key_hasher_read(const ds_afile *spill, uint64_t first, uint64_t count,
                       dd_key_hashes *out, char **err) {
  uint8_t buf[OUT_KEYS * DD_HASH_RECORD];
  while (count > 0) {
    size_t m = count < OUT_KEYS ? (size_t)count : OUT_KEYS, want = m * DD_HASH_RECORD;
    off_t at = (off_t)(first * DD_HASH_RECORD);
    ssize_t r;
    do r = ds_vfs_pread_fd(spill->fd, buf, want, (uint64_t)at);
    while (r < 0 && errno == EINTR);
    if (r != (ssize_t)want)
      return ds_err(err, "%s: cannot read key hashes back at byte %llu: %s", spill->path,
                    (unsigned long long)at, r < 0 ? strerror(errno) : "short read");
    for (size_t i = 0; i < m; i++) {
      const uint8_t *rec = buf + i * DD_HASH_RECORD;
      memcpy(out[i].salted, rec, 8);
      memcpy(&out[i].h1, rec + 8, 8);
      memcpy(&out[i].h2, rec + 16, 8);
    }
    out += m;
    first += m;
    count -= m;
  }
  return 0;
}
