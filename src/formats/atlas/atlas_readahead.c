/* atlas_readahead.c - two-thread block decoding for atlas scans (see
 * atlas_readahead.h).
 *
 * Block number b of the walk lives in slot b % NSLOTS. A block is claimed
 * (found by advancing the shared row iterator to the next distinct block;
 * rows of the block last claimed are passed over without locating them,
 * as the lock is held meanwhile) under the lock, decoded outside it, then
 * published. The worker claims blocks while the ring has room; once the
 * ring is full it sleeps until half of it is free again, so that on a
 * shared CPU it is not woken (a context switch) for every block. The
 * cursor never waits for the worker: when the block it needs is not
 * claimed yet it claims and decodes it itself; when the worker is still
 * decoding it, the cursor decodes the next unclaimed block meanwhile (no
 * work is lost), and only when the ring is full too (a worker that
 * another process has kept off the CPU can be late by a whole time slice)
 * decodes its own copy and leaves the worker's to be thrown away. So the
 * scan is never much slower than on one thread, and blocks still come in
 * order. Unlike bagz_readahead.c, the threads are not pinned to separate
 * CPUs: on the shared 2-CPU test machine, under load from other
 * processes, pinning made scans slower than one thread, and not pinning
 * about as fast. */
#include "formats/atlas/atlas_readahead.h"

#include <stdlib.h>
#include <string.h>

#include "core/worker.h"
#include "formats/atlas/atlas_decode.h"
#include "formats/atlas/atlas_scan_ahead.h"
#include "decoders/pickle_list.h"

#define NSLOTS 6

typedef struct slot {
  uint64_t seq;        /* which block of the walk the slot holds */
  int state;           /* 0 free, 1 claimed, 2 ready */
  int abandoned;       /* claimed, but the cursor went past it */
  size_t shard;
  uint64_t block;
  atlas_dblock *b;     /* decoded (reused from one block to the next) */
  char *err;           /* decoding failed */
} slot;

/* What one thread decodes with: the worker's own, or the cursor's
 * (borrowed: one set per thread is enough, and a second set on the
 * cursor's side would hold a second copy of the dictionary and a second
 * window on data.bin). */
typedef struct tools {
  ds_zstd_ctx *z;
  ds_view *in;         /* window on data.bin */
  ds_pickle_list *pl;
} tools;

/* The worker's own decoding tools. */
typedef struct own_tools {
  ds_zstd_ctx z;
  ds_view in;
  ds_pickle_list pl;
} own_tools;

struct atlas_readahead {
  const atlas_reader *r;
  ds_rowiter it;        /* shared: guarded by mu */
  size_t last_shard;    /* the block of the last row taken from it */
  uint64_t last_block;
  uint64_t last_lo, last_hi; /* that block's rows [lo, hi) */
  int walk_done;
  ds_scan_ahead ahead; /* remote shards' hints of the claims */
  uint64_t next_claim;  /* next block number to claim */
  uint64_t consumer;    /* block number the cursor reads */
  int holding;          /* the cursor holds slot consumer % NSLOTS */
  int idle;             /* the worker waits for free slots */
  ds_worker w;          /* the worker thread, its lock (mu) and stop flag */
  own_tools wown;       /* the worker's tools */
  tools tw, tc;         /* worker's (wown), cursor's (borrowed) */
  slot slots[NSLOTS];
};

/* With mu held: the next block of the walk into slot s as block number
 * seq; 0 when the walk is over. */
static int claim(atlas_readahead *ra, slot *s, uint64_t seq) {
  uint64_t g;
  while (!ra->walk_done) {
    if (!ds_rowiter_next(&ra->it, &g)) {
      ra->walk_done = 1;
      break;
    }
    if (g >= ra->last_lo && g < ra->last_hi) continue; /* same block (cheap: the lock is held) */
    size_t shard;
    uint64_t block, pos;
    atlas_locate(ra->r, g, &shard, &block, &pos);
    if (shard >= atlas_nshards(ra->r)) {
      ra->walk_done = 1;
      break;
    }
    if (shard == ra->last_shard && block == ra->last_block) continue;
    ra->last_shard = shard;
    ra->last_block = block;
    ra->last_lo = g - pos;
    ra->last_hi = ra->last_lo + atlas_block_examples(ra->r, shard, block);
    atlas_scan_ahead_block(&ra->ahead, ra->r, shard, block);
    s->seq = seq;
    s->state = 1;
    s->shard = shard;
    s->block = block;
    ra->next_claim = seq + 1;
    return 1;
  }
  return 0;
}

/* Without the lock: decode a claimed slot. */
static void fill(atlas_readahead *ra, slot *s, tools *t) {
  free(s->err);
  s->err = NULL;
  if (!s->b && !(s->b = atlas_dblock_new())) {
    s->err = strdup("out of memory");
    return;
  }
  atlas_decode_block(ra->r, t->z, t->in, t->pl, s->b, s->shard, s->block, UINT64_MAX, &s->err);
}

/* With mu held: slots were freed. The idle worker is woken only once
 * half the ring is free, so that it decodes several blocks per wake-up:
 * when both threads share one CPU, each wake-up is a context switch. */
static void wake(atlas_readahead *ra) {
  if (ra->idle && (ra->w.stop || ra->next_claim - ra->consumer <= NSLOTS / 2))
    pthread_cond_signal(&ra->w.cv);
}

/* With mu held: claim block seq, decode it without the lock, publish it
 * (or free the slot when the cursor abandoned it meanwhile). 0 when the
 * walk is over. The slot must be free. */
static int claim_and_fill(atlas_readahead *ra, uint64_t seq, tools *t) {
  slot *s = &ra->slots[seq % NSLOTS];
  if (!claim(ra, s, seq)) return 0;
  pthread_mutex_unlock(&ra->w.mu);
  fill(ra, s, t);
  pthread_mutex_lock(&ra->w.mu);
  s->state = s->abandoned ? 0 : 2;
  if (s->abandoned) wake(ra);
  s->abandoned = 0;
  return 1;
}

/* With mu held: the slot for the next block to claim is free and within
 * the ring. */
static int can_claim(const atlas_readahead *ra) {
  return !ra->walk_done && ra->next_claim - ra->consumer < NSLOTS &&
         ra->slots[ra->next_claim % NSLOTS].state == 0;
}

static void *worker_main(void *arg) {
  atlas_readahead *ra = arg;
  pthread_mutex_lock(&ra->w.mu);
  for (;;) {
    while (!ra->w.stop && !ra->walk_done && !can_claim(ra)) {
      ra->idle = 1;
      pthread_cond_wait(&ra->w.cv, &ra->w.mu);
      ra->idle = 0;
    }
    if (ra->w.stop || ra->walk_done || !claim_and_fill(ra, ra->next_claim, &ra->tw)) break;
  }
  pthread_mutex_unlock(&ra->w.mu);
  return NULL;
}

int atlas_readahead_start(const atlas_reader *r, const ds_rowiter *it, size_t shard,
                          uint64_t block, uint64_t max_value_bytes, ds_zstd_ctx *cz,
                          ds_view *cin, ds_pickle_list *cpl, atlas_readahead **out,
                          char **err) {
  *out = NULL;
  atlas_readahead *ra = calloc(1, sizeof *ra);
  if (!ra) return ds_err(err, "out of memory");
  ra->r = r;
  ra->it = *it;
  ra->last_shard = shard;
  ra->last_block = block;
  ds_scan_ahead_init(&ra->ahead, it->rs);
  ds_zstd_ctx_init(&ra->wown.z, NULL);
  ra->wown.z.contiguous = 1; /* codec.h */
  ra->wown.z.max_out = max_value_bytes;
  ra->tw = (tools){&ra->wown.z, &ra->wown.in, &ra->wown.pl};
  ra->tc = (tools){cz, cin, cpl};
  ds_worker_start(&ra->w, worker_main, ra);
  *out = ra;
  return 0;
}

/* 1 when block (sa, ba) comes before (sb, bb) in a walk. */
static int before(size_t sa, uint64_t ba, size_t sb, uint64_t bb) {
  return sa < sb || (sa == sb && ba < bb);
}

int atlas_readahead_get(atlas_readahead *ra, size_t shard, uint64_t block,
                        atlas_dblock **b, char **err) {
  pthread_mutex_lock(&ra->w.mu);
  int rc = 0;
  for (;;) {
    if (ra->holding) { /* the cursor is done with the block it holds */
      ra->slots[ra->consumer % NSLOTS].state = 0;
      ra->consumer++;
      ra->holding = 0;
      wake(ra);
    }
    uint64_t seq = ra->consumer;
    slot *s = &ra->slots[seq % NSLOTS];
    if (ra->next_claim == seq) { /* not claimed yet: decode it here */
      if (!can_claim(ra) || !claim_and_fill(ra, seq, &ra->tc)) break;
      continue;
    }
    /* claimed (seq < next_claim): s holds it */
    if (before(shard, block, s->shard, s->block)) break; /* not in the walk */
    if (s->state == 1 && can_claim(ra)) { /* the worker is still decoding it: */
      claim_and_fill(ra, ra->next_claim, &ra->tc); /* decode a later block meanwhile */
      continue;
    }
    if (s->state == 1) { /* still decoding, and the ring is full: go past it */
      s->abandoned = 1;
      ra->consumer++;
      wake(ra);
      if (s->shard == shard && s->block == block) break; /* decode a copy */
      continue;
    }
    ra->holding = 1;
    if (s->shard != shard || s->block != block) continue; /* skipped: drop it */
    if (s->err) {
      free(*err);
      *err = strdup(s->err);
      rc = -1;
    } else {
      *b = s->b;
      rc = 1;
    }
    break;
  }
  pthread_mutex_unlock(&ra->w.mu);
  return rc;
}

void atlas_readahead_free(atlas_readahead *ra) {
  if (!ra) return;
  ds_worker_stop(&ra->w);
  for (int i = 0; i < NSLOTS; i++) {
    atlas_dblock_free(ra->slots[i].b);
    free(ra->slots[i].err);
  }
  ds_zstd_ctx_free(&ra->wown.z);
  ds_view_free(&ra->wown.in);
  ds_pickle_list_free(&ra->wown.pl);
  free(ra);
}
