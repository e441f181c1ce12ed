/* bagz_readahead.c - two-thread record decompression for scans (see
 * bagz_readahead.h).
 *
 * The walk is cut into batches of up to BATCH_ROWS rows / BATCH_BYTES
 * decompressed bytes. Batch b lives in slot b % NSLOTS. A batch is claimed
 * (its rows taken from the shared iterator) under the lock, decompressed
 * outside it, then published. The worker claims batches while the ring has
 * room; the cursor, when the batch it needs is not ready, claims and
 * decompresses the next unclaimed one itself instead of waiting, so both
 * cores work, and rows are still handed out in order. */
#include "bagz_readahead.h"

#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/worker.h"

#define NSLOTS 6
#define BATCH_ROWS 1024
#define BATCH_BYTES (1u << 20)
/* Decompressed bytes the ready batches may hold before the threads stop
 * claiming more: a batch is cut at BATCH_BYTES of *expected* output, and a
 * frame that declares no size counts as a whole batch, so with records of
 * any size the ring holds at most this plus the one or two batches being
 * read and filled (one record each when records are huge). */
#define RING_BYTES (4u << 20)

typedef struct slot {
  uint64_t batch;       /* which batch the slot holds */
  int state;            /* 0 free, 1 claimed, 2 ready */
  uint64_t rows[BATCH_ROWS];
  size_t nrows;         /* rows claimed */
  size_t ndone;         /* rows decompressed (fewer after an error) */
  size_t off[BATCH_ROWS + 1];
  ds_buf data;          /* decompressed records, back to back */
  char *err;            /* error at row ndone */
  int last;             /* the walk ended inside/after this batch */
} slot;

/* What one thread decompresses with. */
typedef struct tools {
  ds_zstd_ctx z;
  bagz_io io;
  ds_buf tmp;           /* records after a batch's first */
} tools;

struct bagz_readahead {
  const bagz_reader *r;
  ds_rowiter it;        /* shared: guarded by mu */
  int walk_done;
  uint64_t next_claim;  /* next batch number to claim */
  uint64_t consumer;    /* batch the cursor is reading */
  size_t pos;           /* row position inside it */
  ds_worker w;          /* the worker thread, its lock (mu) and stop flag */
  uint64_t held;         /* bytes in ready slots not yet released: guarded by mu */
  bagz_io io_claim;      /* used under mu only */
  tools tw, tc;          /* worker's, cursor's */
  slot slots[NSLOTS];
};

/* Expected decompressed size of row g: the frame's declared content size,
 * else a whole batch (so it travels alone). Errors are left for fill()
 * to report. */
static uint64_t expected_size(const bagz_reader *r, bagz_io *io, uint64_t g) {
  size_t shard;
  uint64_t idx;
  const uint8_t *p;
  size_t n;
  char *err = NULL;
  if (g >= bagz_count(r)) return 0;
  ds_shard_map_locate(&r->map, g, &shard, &idx);
  if (bagz_stored(r, io, shard, idx, &p, &n, &err)) {
    free(err);
    return 0;
  }
  if (!r->shards[shard].zstd || n == 0) return n;
  uint64_t declared = ds_zstd_content_size(p, n);
  return declared ? declared : BATCH_BYTES;
}

/* With mu held: take the next rows of the walk into the slot for batch b,
 * up to BATCH_ROWS rows or about BATCH_BYTES of output. */
static void claim(bagz_readahead *ra, slot *s, uint64_t b) {
  s->batch = b;
  s->state = 1;
  s->nrows = s->ndone = 0;
  s->last = 0;
  uint64_t g, bytes = 0;
  while (s->nrows < BATCH_ROWS && bytes < BATCH_BYTES && !ra->walk_done) {
    if (!ds_rowiter_next(&ra->it, &g)) {
      ra->walk_done = 1;
      break;
    }
    s->rows[s->nrows++] = g;
    bytes += expected_size(ra->r, &ra->io_claim, g);
  }
  if (ra->walk_done) s->last = 1;
  ra->next_claim = b + 1;
}

/* Without the lock: decompress a claimed slot's rows with one thread's
 * tools. The first record goes straight into the slot (a huge record is
 * never held twice); the others through the tools' tmp. */
static void fill(bagz_readahead *ra, slot *s, tools *t) {
  ds_buf *tmp = &t->tmp;
  s->data.len = 0;
  s->off[0] = 0;
  free(s->err);
  s->err = NULL;
  for (size_t i = 0; i < s->nrows; i++) {
    const uint8_t *p;
    size_t n;
    ds_buf *out = i == 0 ? &s->data : tmp;
    out->max = tmp->max;
    int rc = bagz_read(ra->r, &t->z, &t->io, s->rows[i], out, &p, &n, &s->err);
    s->data.max = 0;
    if (rc) break;
    int in_place = i == 0 && n > 0 && p == s->data.data; /* decompressed there */
    if (i == 0 && !in_place) s->data.len = 0;
    if (!in_place && ds_buf_append(&s->data, p, n)) {
      ds_err(&s->err, "out of memory");
      break;
    }
    s->off[i + 1] = s->data.len;
    s->ndone = i + 1;
  }
  if (tmp->cap > 4 * (size_t)BATCH_BYTES) ds_buf_free(tmp); /* max stays */
}

/* With mu held: claim batch `b`, fill it without the lock with one
 * thread's tools, publish it. */
static void claim_and_fill(bagz_readahead *ra, uint64_t b, tools *t) {
  slot *s = &ra->slots[b % NSLOTS];
  claim(ra, s, b);
  pthread_mutex_unlock(&ra->w.mu);
  fill(ra, s, t);
  pthread_mutex_lock(&ra->w.mu);
  s->state = 2;
  ra->held += s->data.len;
  pthread_cond_broadcast(&ra->w.cv);
}

/* The worker thread: claims and fills batches while the ring has room. */
static void *worker_main(void *arg) {
  bagz_readahead *ra = arg;
  pthread_mutex_lock(&ra->w.mu);
  for (;;) {
    while (!ra->w.stop && !ra->walk_done &&
           (ra->next_claim - ra->consumer >= NSLOTS || ra->held > RING_BYTES))
      pthread_cond_wait(&ra->w.cv, &ra->w.mu);
    if (ra->w.stop || ra->walk_done) break;
    claim_and_fill(ra, ra->next_claim, &ra->tw);
  }
  pthread_mutex_unlock(&ra->w.mu);
  return NULL;
}

int bagz_readahead_start(const bagz_reader *r, const ds_rowset *rs,
                         uint64_t max_value, bagz_readahead **out, char **err) {
  *out = NULL;
  bagz_readahead *ra = calloc(1, sizeof *ra);
  if (!ra) return ds_err(err, "out of memory");
  ra->r = r;
  ds_rowiter_init(&ra->it, rs);
  ds_zstd_ctx_init(&ra->tw.z, r->dict);
  ds_zstd_ctx_init(&ra->tc.z, r->dict);
  ra->tw.tmp.max = ra->tc.tmp.max = (size_t)max_value;
  ds_worker_start(&ra->w, worker_main, ra);
  *out = ra;
  return 0;
}

/* The slot of the consumer's batch. While the worker is still filling it,
 * the cursor does not sit idle: it claims and fills a later batch itself,
 * so both cores decompress. */
static slot *current_slot(bagz_readahead *ra) {
  uint64_t b = ra->consumer;
  slot *s = &ra->slots[b % NSLOTS];
  pthread_mutex_lock(&ra->w.mu);
  for (;;) {
    if (s->state == 2 && s->batch == b) break;
    if (ra->next_claim == b) {
      if (ra->walk_done) {
        pthread_mutex_unlock(&ra->w.mu);
        return NULL;
      }
      claim_and_fill(ra, b, &ra->tc);
    } else if (!ra->walk_done && ra->next_claim - ra->consumer < NSLOTS &&
               ra->held <= RING_BYTES) {
      claim_and_fill(ra, ra->next_claim, &ra->tc);
    } else {
      pthread_cond_wait(&ra->w.cv, &ra->w.mu);
    }
  }
  pthread_mutex_unlock(&ra->w.mu);
  return s;
}

int bagz_readahead_next(bagz_readahead *ra, uint64_t *g, const uint8_t **p,
                        size_t *n, char **err) {
  for (;;) {
    slot *s = current_slot(ra);
    if (!s) return 0;
    if (ra->pos < s->nrows) {
      size_t i = ra->pos;
      if (i >= s->ndone) {
        free(*err);
        *err = s->err ? strdup(s->err) : strdup("read-ahead failed");
        return -1;
      }
      ra->pos++;
      *g = s->rows[i];
      *p = s->data.data ? s->data.data + s->off[i] : (const uint8_t *)"";
      *n = s->off[i + 1] - s->off[i];
      return 1;
    }
    if (s->last) return 0;
    /* release the slot and move on */
    pthread_mutex_lock(&ra->w.mu);
    s->state = 0;
    ra->held -= s->data.len;
    if (s->data.cap > 4 * (size_t)BATCH_BYTES) ds_buf_free(&s->data);
    ra->consumer++;
    ra->pos = 0;
    pthread_cond_broadcast(&ra->w.cv);
    pthread_mutex_unlock(&ra->w.mu);
  }
}

/* Free one thread's tools. */
static void free_tools(tools *t) {
  ds_zstd_ctx_free(&t->z);
  bagz_io_free(&t->io);
  ds_buf_free(&t->tmp);
}

void bagz_readahead_free(bagz_readahead *ra) {
  if (!ra) return;
  ds_worker_stop(&ra->w);
  for (int i = 0; i < NSLOTS; i++) {
    ds_buf_free(&ra->slots[i].data);
    free(ra->slots[i].err);
  }
  free_tools(&ra->tw);
  free_tools(&ra->tc);
  bagz_io_free(&ra->io_claim);
  free(ra);
}
