/* bagz_readahead.c - two-thread record decompression for scans (see
 * bagz_readahead.h).
 *
 * The walk is cut into batches of up to BATCH_ROWS rows and a budget of
 * stored bytes. Batch b lives in slot b % NSLOTS. A batch is claimed (its
 * rows taken from the shared iterator and placed from the limits alone)
 * under the lock, then read and decompressed outside it, and published.
 * The worker claims batches while the ring has room; the cursor, when the
 * batch it needs is not ready, claims and decompresses the next unclaimed
 * one itself instead of waiting, so both cores work, and rows are still
 * handed out in order.
 *
 * Each thread reads a batch's records that lie back to back in one read
 * of exactly their bytes (no read-ahead: the next batch may be the other
 * thread's). A batch stops decompressing once BATCH_BYTES are out; the
 * rows it leaves are decompressed by the cursor when it gets there. The
 * stored-bytes budget follows the compression ratio seen so far, so that
 * a batch comes out near BATCH_BYTES and such leftovers stay rare.
 *
 * Memory: no record of more than AHEAD_MAX_RECORD bytes is decompressed
 * ahead (a batch's first row included), and a frame of no declared size
 * is decompressed with no more room than its batch has left: anything
 * larger is left for the cursor, which holds one record at a time as
 * without the read-ahead. So threads=2 holds at most the ring's few MiB
 * more than threads=1, whatever the records' sizes. */
#include "bagz_readahead.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/worker.h"
#include "formats/bagz/bagz_scan_ahead.h"

#define NSLOTS 6
#define BATCH_ROWS 1024
#define BATCH_BYTES (1u << 20)
/* Decompressed bytes the ready batches may hold before the threads stop
 * claiming more. A batch holds under BATCH_BYTES plus one record, so the
 * ring holds at most this plus the one or two batches being filled. */
#define RING_BYTES (4u << 20)
/* The largest record the read-ahead decompresses (larger: the cursor's). */
#define AHEAD_MAX_RECORD ((size_t)16 << 20)

/* Where a claimed row's record is stored. */
typedef struct row_place {
  size_t shard;
  uint64_t index, start, end;
  int ok; /* 0: its limits could not be read (fill reports why) */
} row_place;

typedef struct slot {
  uint64_t batch;       /* which batch the slot holds */
  int state;            /* 0 free, 1 claimed, 2 ready */
  uint64_t rows[BATCH_ROWS];
  row_place place[BATCH_ROWS];
  size_t nrows;         /* rows claimed */
  size_t ndone;         /* rows decompressed (the rest: error or left over) */
  uint64_t stored;      /* stored bytes of the rows decompressed */
  size_t off[BATCH_ROWS + 1];
  ds_buf data;          /* decompressed records, back to back */
  char *err;            /* error at row ndone (NULL: rows from ndone on
                           are left for the cursor) */
  int last;             /* the walk ended inside/after this batch */
} slot;

struct bagz_readahead {
  const bagz_reader *r;
  ds_rowiter it;        /* shared: guarded by mu */
  ds_scan_ahead ahead; /* remote shards' hints of the claims: guarded by mu */
  int walk_done;
  uint64_t next_claim;  /* next batch number to claim */
  uint64_t consumer;    /* batch the cursor is reading */
  size_t pos;           /* row position inside it */
  struct slot *cur;     /* its slot once ready (only the cursor releases
                           it, so its rows are read without the lock) */
  ds_worker w;           /* the worker thread, its lock (mu) and stop flag */
  uint64_t held;         /* bytes in ready slots not yet released: guarded by mu */
  uint64_t seen_in, seen_out; /* stored and decompressed bytes of the
                                 batches filled so far: guarded by mu */
  ds_zstd_ctx zworker, zcursor;
  bagz_io io_claim;      /* used under mu only */
  bagz_io io_worker, io_cursor;
  ds_buf tmp_worker, tmp_cursor;
  slot slots[NSLOTS];
};

/* With mu held: the stored bytes a batch may take, so that it decompresses
 * to about BATCH_BYTES at the ratio seen so far (an eighth of that before
 * any batch is filled); never more than BATCH_BYTES, so one read stays
 * bounded too. */
static uint64_t stored_budget(const bagz_readahead *ra) {
  if (ra->seen_out == 0) return BATCH_BYTES / 8;
  double b = (double)BATCH_BYTES * 0.875 * (double)ra->seen_in / (double)ra->seen_out;
  if (b > BATCH_BYTES) return BATCH_BYTES;
  return b < 1 ? 1 : (uint64_t)b; /* a batch takes at least one row anyway */
}

/* With mu held: take the next rows of the walk into the slot for batch b
 * and place each from its limits, up to BATCH_ROWS rows or the stored
 * budget. */
static void claim(bagz_readahead *ra, slot *s, uint64_t b) {
  s->batch = b;
  s->state = 1;
  s->nrows = s->ndone = 0;
  s->last = 0;
  uint64_t g, stored = 0, budget = stored_budget(ra);
  while (s->nrows < BATCH_ROWS && stored < budget && !ra->walk_done) {
    if (!ds_rowiter_next(&ra->it, &g)) {
      ra->walk_done = 1;
      break;
    }
    row_place *pl = &s->place[s->nrows];
    s->rows[s->nrows++] = g;
    char *err = NULL;
    pl->ok = 0;
    if (g >= bagz_count(ra->r)) continue;
    ds_shard_map_locate(&ra->r->map, g, &pl->shard, &pl->index);
    bagz_scan_ahead_row(&ra->ahead, ra->r, pl->shard, pl->index);
    pl->ok = bagz_stored_range(ra->r, &ra->io_claim, pl->shard, pl->index, &pl->start,
                               &pl->end, &err) == 0;
    free(err);
    if (pl->ok) stored += pl->end - pl->start;
  }
  if (ra->walk_done) s->last = 1;
  ra->next_claim = b + 1;
}

/* Rows i.. of the slot whose records lie back to back in one shard: the
 * index one past the last. */
static size_t run_end(const slot *s, size_t i) {
  size_t k = i + 1;
  while (k < s->nrows && s->place[k].ok && s->place[k].shard == s->place[i].shard &&
         s->place[k].start == s->place[k - 1].end)
    k++;
  return k;
}

/* The stored bytes of rows [i, k) of the slot, back to back in one shard,
 * in one read through io (an error goes to s->err). */
static int read_run(bagz_readahead *ra, slot *s, size_t i, size_t k, bagz_io *io,
                    const uint8_t **span) {
  const row_place *a = &s->place[i];
  return bagz_read_span(ra->r, io, a->shard, a->index, s->rows[i], a->start,
                        s->place[k - 1].end, span, &s->err);
}

/* The size row i of the slot will have, when known before decompressing:
 * the stored size of a raw record, the declared size of a frame; 0 for a
 * frame that declares none. */
static uint64_t known_size(const bagz_readahead *ra, const slot *s, size_t i,
                           const uint8_t *rec, size_t len) {
  if (!ra->r->shards[s->place[i].shard].zstd || len == 0) return len;
  return ds_zstd_content_size(rec, len);
}

/* Decompress row i of the slot from its stored bytes and append it. The
 * first record and frames that declare their size are decompressed
 * straight into the slot (its end reserved first, so nothing moves: a
 * huge record is never held twice); frames of no declared size go through
 * tmp. Past BATCH_BYTES (the first row goes in up to AHEAD_MAX_RECORD) a
 * row is left for the cursor, found before decompressing when the frame
 * declares its size, else by decompressing with only that much room (a
 * failure there leaves the row too: the cursor decompresses it with the
 * query's own cap and reports a real error). Returns 1 when added, 0 when
 * left, -1 on error (s->err). */
static int add_row(bagz_readahead *ra, slot *s, size_t i, const uint8_t *rec,
                   ds_zstd_ctx *z, ds_buf *tmp) {
  const row_place *pl = &s->place[i];
  size_t len = (size_t)(pl->end - pl->start);
  uint64_t want = i > 0 ? known_size(ra, s, i, rec, len) : 0;
  if (i > 0 && s->data.len + want > BATCH_BYTES) return 0;
  int zstd = ra->r->shards[pl->shard].zstd && len > 0;
  ds_buf at = {0}, *out = tmp;
  if (i == 0) {
    out = &s->data;
  } else if (zstd && want > 0) {
    if (ds_buf_reserve(&s->data, s->data.len + (size_t)want)) {
      ds_err(&s->err, "out of memory");
      return -1;
    }
    at.data = s->data.data + s->data.len; /* the slot's free end */
    at.cap = s->data.cap - s->data.len;
    out = &at;
  }
  size_t base = s->data.len, max = out->max;
  /* the room this row may take here (a buffer's max counts from its start;
   * `at` already holds the declared size: no limit of its own) */
  size_t room = i == 0 ? AHEAD_MAX_RECORD : BATCH_BYTES - s->data.len;
  size_t lim = out == &at ? 0 : out == &s->data ? base + room : room;
  out->max = tmp->max && (!lim || tmp->max < lim) ? tmp->max : lim;
  const uint8_t *p;
  size_t n;
  int rc = bagz_decode(ra->r, z, pl->shard, pl->index, s->rows[i], pl->start, rec, len,
                       out, &p, &n, &s->err);
  out->max = max;
  if (rc && lim && (!tmp->max || lim < tmp->max)) { /* maybe only too large here */
    free(s->err);
    s->err = NULL;
    return 0;
  }
  if (rc) return -1;
  if (i > 0 && s->data.len + n > BATCH_BYTES) return 0; /* a frame of no declared size */
  if (zstd && out != tmp) {
    s->data.len = base + n; /* decompressed in place */
  } else if (ds_buf_append(&s->data, p, n)) {
    ds_err(&s->err, "out of memory");
    return -1;
  }
  s->off[i + 1] = s->data.len;
  s->stored += len;
  s->ndone = i + 1;
  return 1;
}

/* Without the lock: read and decompress a claimed slot's rows, each run of
 * back-to-back records in one read, until BATCH_BYTES are out. */
static void fill(bagz_readahead *ra, slot *s, ds_zstd_ctx *z, bagz_io *io,
                 ds_buf *tmp) {
  s->data.len = 0;
  s->off[0] = 0;
  s->stored = 0;
  free(s->err);
  s->err = NULL;
  size_t i = 0;
  while (i < s->nrows) {
    if (!s->place[i].ok) { /* read it the plain way for its error */
      const uint8_t *p;
      size_t n;
      if (bagz_read(ra->r, z, io, s->rows[i], tmp, &p, &n, &s->err) == 0)
        ds_err(&s->err, "row %llu: its limits changed while read",
               (unsigned long long)s->rows[i]);
      break;
    }
    size_t k = run_end(s, i);
    const uint8_t *span;
    if (read_run(ra, s, i, k, io, &span)) {
      /* (the file changed?) the rows from here are left for the cursor,
       * whose reads one by one name the first record that cannot be read */
      free(s->err);
      s->err = NULL;
      break;
    }
    uint64_t base = s->place[i].start;
    int rc = 1;
    for (; i < k && rc == 1; i++)
      rc = add_row(ra, s, i, span + (s->place[i].start - base), z, tmp);
    if (rc != 1) break;
  }
  if (tmp->cap > 4 * (size_t)BATCH_BYTES) ds_buf_free(tmp); /* max stays */
}

/* With mu held: publish a filled slot. */
static void publish(bagz_readahead *ra, slot *s) {
  s->state = 2;
  ra->held += s->data.len;
  ra->seen_in += s->stored;
  ra->seen_out += s->data.len;
  pthread_cond_broadcast(&ra->w.cv);
}

/* With mu held: claim batch `b`, fill it without the lock with the
 * calling thread's context, file windows and buffer, publish it. */
static void claim_and_fill(bagz_readahead *ra, uint64_t b, ds_zstd_ctx *z, bagz_io *io,
                           ds_buf *tmp) {
  slot *s = &ra->slots[b % NSLOTS];
  claim(ra, s, b);
  pthread_mutex_unlock(&ra->w.mu);
  fill(ra, s, z, io, tmp);
  pthread_mutex_lock(&ra->w.mu);
  publish(ra, s);
}

static void *worker_main(void *arg) {
  bagz_readahead *ra = arg;
  pthread_mutex_lock(&ra->w.mu);
  for (;;) {
    while (!ra->w.stop && !ra->walk_done &&
           (ra->next_claim - ra->consumer >= NSLOTS || ra->held > RING_BYTES))
      pthread_cond_wait(&ra->w.cv, &ra->w.mu);
    if (ra->w.stop || ra->walk_done) break;
    claim_and_fill(ra, ra->next_claim, &ra->zworker, &ra->io_worker, &ra->tmp_worker);
  }
  pthread_mutex_unlock(&ra->w.mu);
  return NULL;
}

int bagz_readahead_start(const bagz_reader *r, const ds_rowset *rs,
                         uint64_t max_value_bytes, bagz_readahead **out, char **err) {
  *out = NULL;
  bagz_readahead *ra = calloc(1, sizeof *ra);
  if (!ra) return ds_err(err, "out of memory");
  ra->r = r;
  ds_rowiter_init(&ra->it, rs);
  bagz_scan_ahead_init(&ra->ahead, r, rs);
  ds_zstd_ctx_init(&ra->zworker, r->dict);
  ds_zstd_ctx_init(&ra->zcursor, r->dict);
  ra->tmp_worker.max = ra->tmp_cursor.max = (size_t)max_value_bytes;
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
      claim_and_fill(ra, b, &ra->zcursor, &ra->io_cursor, &ra->tmp_cursor);
    } else if (!ra->walk_done && ra->next_claim - ra->consumer < NSLOTS &&
               ra->held <= RING_BYTES) {
      claim_and_fill(ra, ra->next_claim, &ra->zcursor, &ra->io_cursor, &ra->tmp_cursor);
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
    slot *s = ra->cur ? ra->cur : (ra->cur = current_slot(ra));
    if (!s) return 0;
    if (ra->pos < s->nrows) {
      size_t i = ra->pos;
      if (i >= s->ndone && s->err) {
        free(*err);
        *err = strdup(s->err);
        return -1;
      }
      ra->pos++;
      *g = s->rows[i];
      if (i >= s->ndone) /* left over: decompress it here */
        return bagz_read(ra->r, &ra->zcursor, &ra->io_cursor, *g, &ra->tmp_cursor, p, n,
                         err) ? -1 : 1;
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
    ra->cur = NULL;
    pthread_cond_broadcast(&ra->w.cv);
    pthread_mutex_unlock(&ra->w.mu);
  }
}

void bagz_readahead_free(bagz_readahead *ra) {
  if (!ra) return;
  ds_worker_stop(&ra->w);
  for (int i = 0; i < NSLOTS; i++) {
    ds_buf_free(&ra->slots[i].data);
    free(ra->slots[i].err);
  }
  ds_zstd_ctx_free(&ra->zworker);
  ds_zstd_ctx_free(&ra->zcursor);
  ds_buf_free(&ra->tmp_worker);
  ds_buf_free(&ra->tmp_cursor);
  bagz_io_free(&ra->io_claim);
  bagz_io_free(&ra->io_worker);
  bagz_io_free(&ra->io_cursor);
  free(ra);
}
