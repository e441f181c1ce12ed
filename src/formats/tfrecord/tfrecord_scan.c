/* tfrecord_scan.c - a TFRecord scan on two threads (see tfrecord_scan.h).
 *
 * Window w lives in slot w % TFR_SCAN_SLOTS. Whenever a slot is free, the
 * helper plans the next window from the index (the records from where the
 * last one ended, as many as fit in TFR_SCAN_WINDOW bytes), publishes the
 * plan (nstarted), reads the window in one pread and publishes that
 * (state). The windows' records are checked in batches of
 * TFR_SCAN_BATCH, each claimed from its window's `claim` counter: by the
 * helper when the ring is full (the earliest unclaimed batch ahead of
 * the cursor), and by the cursor when the batch of the record it is at is
 * not checked yet (it checks the window's next unclaimed one instead of
 * waiting). A checked batch publishes how many of its records are good
 * (good[b]); the rest of the batch is left to the cursor's own read,
 * which gives the error. So the CRC work goes to whichever thread has
 * time. The cursor waits only for its window's pread (asleep on the
 * condition variable, which the helper broadcasts only while `waiting`)
 * or for a batch the helper is checking (a short spin first). A slot's
 * plan and bytes are the helper's until published and read-only after,
 * until the cursor releases the slot; the helper, asleep when the ring is
 * full and no batch is left to check, is woken once half of the ring is
 * free again.
 *
 * A window's bytes are a block (scan_block) that the values handed out
 * with tfrecord_scan_pin hold too. The cursor hands a window it has moved
 * past back to the helper once no value holds its block; the last
 * record's value usually lets go at the next row, so the window before
 * the cursor's is normally handed back one window later. A block still
 * held when the cursor is a whole window further on (SQLite keeps a value,
 * e.g. an aggregate's bare column) is left to its holders (orphan: the
 * last unpin frees it) and the helper gives the slot a new block. */
#include "formats/tfrecord/tfrecord_scan.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/worker.h"
#include "formats/tfrecord/tfrecord_frame.h"

/* Records checked by one claim. */
#define TFR_SCAN_BATCH 32
/* Batches a window can have (records are at least TFR_OVERHEAD bytes). */
#define TFR_SCAN_MAXB (TFR_SCAN_WINDOW / TFR_OVERHEAD / TFR_SCAN_BATCH + 1)
/* How long the cursor spins for the helper's batch before it sleeps (ns). */
#define TFR_SCAN_SPIN_NS 20000
/* Blocks are aligned to this (more than a block's size), so that a record's
 * address gives its block's head. */
#define TFR_SCAN_ALIGN ((uintptr_t)2 << 20)
/* Where a block's bytes start after its head (a cache line). */
#define TFR_SCAN_HEAD 64

/* The head of a window's block; TFR_SCAN_WINDOW bytes follow at
 * TFR_SCAN_HEAD. Its fields are the statement's thread's (the cursor,
 * tfrecord_scan_pin and _unpin): the helper only reads into the bytes. */
typedef struct scan_block {
  long refs;  /* values handed out and not let go */
  int orphan; /* the ring has let go: the last unpin frees it */
} scan_block;

enum { SLOT_PLANNED, SLOT_READ, SLOT_UNREAD };

typedef struct scan_slot {
  uint64_t first, end;  /* its records [first, end); the plan */
  uint64_t m;           /* [first, m) are read (m == first: a record larger
                           than a window, the cursor's) */
  uint64_t off;         /* where buf[0] is in the file: record first's start */
  uint32_t nb;          /* batches of [first, m) */
  atomic_int state;     /* SLOT_READ: the bytes are there; SLOT_UNREAD: the
                           read failed, every record is the cursor's */
  atomic_uint claim;    /* the next batch to check */
  atomic_uchar good[TFR_SCAN_MAXB]; /* batch b checked: 1 + its good records
                                       (the first ones), 0: not yet */
  scan_block *blk;      /* its block (NULL: none could be had; the window
                           is then left unread) */
  uint8_t *buf;         /* blk's TFR_SCAN_WINDOW bytes */
  int replace;          /* blk is orphaned: the helper's next plan for the
                           slot takes a new one (set by the cursor before
                           it hands the slot back) */
} scan_slot;

struct tfrecord_scan {
  tfrecord_scan_ready ready; /* first: tfrecord_scan_take reads it */
  const tfrecord_file *t;
  uint64_t hi;          /* the scan ends before this record */
  ds_worker w;          /* the helper, its lock (mu) and stop flag */
  uint64_t fill_rec;    /* the helper's: where its next window starts */
  atomic_uint_fast64_t nstarted; /* windows planned (and published) */
  atomic_int helper_done; /* no window will be started any more */
  atomic_int waiting;   /* the cursor sleeps (or is going to) on w.cv */
  int helper_waits;     /* guarded by mu: the helper sleeps for a free slot */
  uint64_t consumer;    /* guarded by mu: windows handed back (the cursor
                           writes it) */
  uint64_t passed;      /* the cursor's: windows it has moved past (the
                           one it is at); consumer is passed or passed - 1 */
  scan_slot *cur;       /* the cursor's: that window once started, or NULL */
  uint64_t pos;         /* the cursor's: the last record asked for */
  scan_slot slots[TFR_SCAN_SLOTS];
};

/* A new block, its head zeroed; NULL when out of memory. */
static scan_block *block_new(void) {
  void *p = NULL;
  if (posix_memalign(&p, TFR_SCAN_ALIGN, TFR_SCAN_HEAD + TFR_SCAN_WINDOW)) return NULL;
  memset(p, 0, sizeof(scan_block));
  return p;
}

/* The block whose bytes p points into. */
static scan_block *block_of(const void *p) {
  return (scan_block *)((uintptr_t)p & ~(TFR_SCAN_ALIGN - 1));
}

/* The ring lets go of b: freed now, or by the last unpin when held. */
static void block_drop(scan_block *b) {
  if (!b) return;
  if (b->refs)
    b->orphan = 1;
  else
    free(b);
}

void tfrecord_scan_pin(const uint8_t *p) {
  block_of(p)->refs++;
}

void tfrecord_scan_unpin(void *p) {
  scan_block *b = block_of(p);
  if (--b->refs == 0 && b->orphan) free(b);
}

int tfrecord_scan_fits(const tfrecord_file *t) {
  return t->indexed && t->compression == TFRECORD_NONE && !t->file.data &&
         t->file.vf.be == &ds_vfs_local;
}

/* The helper: wake the cursor if it sleeps (after a publication). */
static void wake_cursor(tfrecord_scan *s) {
  if (!atomic_load(&s->waiting)) return;
  pthread_mutex_lock(&s->w.mu);
  pthread_cond_broadcast(&s->w.cv);
  pthread_mutex_unlock(&s->w.mu);
}

/* Either thread: claim the next unchecked batch of w (read) and check it
 * (good[b]: 1 + how many of its first records are good); 0 when none is
 * left. */
static int check_batch(tfrecord_scan *s, scan_slot *w) {
  unsigned b = atomic_load(&w->claim);
  if (b >= w->nb || (b = atomic_fetch_add(&w->claim, 1)) >= w->nb) return 0;
  const tfrecord_file *t = s->t;
  const uint64_t *o = t->offsets;
  uint64_t k = w->first + (uint64_t)b * TFR_SCAN_BATCH, i = k;
  uint64_t e = k + TFR_SCAN_BATCH < w->m ? k + TFR_SCAN_BATCH : w->m;
  for (; i < e; i++) {
    const uint8_t *f = w->buf + (o[i] - w->off);
    uint64_t len = o[i + 1] - o[i] - TFR_OVERHEAD, n;
    uint32_t stored, computed;
    if (tfr_frame_parse(f, &n, &stored, &computed) || n != len) break;
    if (!t->skip_data_crc &&
        tfr_frame_check(f + TFR_HEADER, (size_t)len, f + TFR_HEADER + len, &stored, &computed))
      break;
  }
  atomic_store(&w->good[b], (unsigned char)(1 + (i - k)));
  return 1;
}

/* The helper: plan the window from s->fill_rec into w (s->fill_rec moves
 * past it), nothing read or checked yet: records up to TFR_SCAN_TARGET
 * bytes, or one up to TFR_SCAN_WINDOW; none when w has no block. */
static void plan(tfrecord_scan *s, scan_slot *w) {
  const uint64_t *o = s->t->offsets;
  uint64_t k = s->fill_rec, m = k;
  if (w->replace || !w->blk) { /* the old block is its holders' now */
    w->blk = block_new();
    w->buf = w->blk ? (uint8_t *)w->blk + TFR_SCAN_HEAD : NULL;
    w->replace = 0;
  }
  uint64_t cap = w->blk ? TFR_SCAN_WINDOW : 0;
  while (m < s->hi && o[m + 1] - o[k] <= (m > k ? TFR_SCAN_TARGET : cap)) m++;
  w->first = k;
  w->m = m;
  w->off = o[k];
  w->end = m > k ? m : k + 1; /* a record larger than a window: the cursor's */
  w->nb = (uint32_t)((m - k + TFR_SCAN_BATCH - 1) / TFR_SCAN_BATCH);
  atomic_store_explicit(&w->state, SLOT_PLANNED, memory_order_relaxed);
  atomic_store_explicit(&w->claim, 0, memory_order_relaxed);
  for (uint32_t b = 0; b < w->nb; b++) atomic_store_explicit(&w->good[b], 0, memory_order_relaxed);
  s->fill_rec = w->end;
}

/* The helper: read w's records and publish them. */
static void fill(tfrecord_scan *s, scan_slot *w) {
  char *err = NULL;
  int ok = w->m == w->first ||
           ds_file_read(&s->t->file, w->off, s->t->offsets[w->m] - w->off, w->buf, &err) == 0;
  free(err); /* the cursor says why */
  atomic_store(&w->state, ok && w->blk ? SLOT_READ : SLOT_UNREAD);
  wake_cursor(s);
}

/* The helper: check one unclaimed batch of the earliest read window
 * [from, n) that has one; 0 when none has. */
static int help_check(tfrecord_scan *s, uint64_t from, uint64_t n) {
  for (uint64_t k = from; k < n; k++) {
    scan_slot *w = &s->slots[k % TFR_SCAN_SLOTS];
    if (atomic_load(&w->state) == SLOT_READ && check_batch(s, w)) return 1;
  }
  return 0;
}

/* The helper: read the next window whenever the ring has a free slot,
 * else check a batch the cursor has not come to; asleep when there is
 * neither, until half of the ring is free. */
static void *helper_main(void *arg) {
  tfrecord_scan *s = arg;
  pthread_mutex_lock(&s->w.mu);
  while (!s->w.stop) {
    uint64_t n = atomic_load_explicit(&s->nstarted, memory_order_relaxed), from = s->consumer;
    int room = n - from < TFR_SCAN_SLOTS;
    pthread_mutex_unlock(&s->w.mu);
    if (s->fill_rec < s->hi && room) {
      scan_slot *w = &s->slots[n % TFR_SCAN_SLOTS];
      plan(s, w);
      atomic_store(&s->nstarted, n + 1); /* the plan is the cursor's to read */
      wake_cursor(s);
      fill(s, w);
    } else if (help_check(s, from, n)) {
      wake_cursor(s);
    } else if (s->fill_rec >= s->hi) {
      pthread_mutex_lock(&s->w.mu);
      break; /* all read; the cursor checks what is left */
    } else {
      pthread_mutex_lock(&s->w.mu);
      while (!s->w.stop && n - s->consumer >= TFR_SCAN_SLOTS) {
        s->helper_waits = 1;
        pthread_cond_wait(&s->w.cv, &s->w.mu);
      }
      s->helper_waits = 0;
      continue;
    }
    pthread_mutex_lock(&s->w.mu);
  }
  atomic_store(&s->helper_done, 1);
  pthread_cond_broadcast(&s->w.cv);
  pthread_mutex_unlock(&s->w.mu);
  return NULL;
}

tfrecord_scan *tfrecord_scan_start(const tfrecord_file *t, uint64_t lo, uint64_t hi) {
  if (!tfrecord_scan_fits(t) || lo >= hi || hi > t->count) return NULL;
  tfrecord_scan *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->t = t;
  s->hi = hi;
  s->fill_rec = s->pos = lo;
  atomic_init(&s->nstarted, 0);
  atomic_init(&s->helper_done, 0);
  atomic_init(&s->waiting, 0);
  for (int k = 0; k < TFR_SCAN_SLOTS; k++) {
    atomic_init(&s->slots[k].state, SLOT_PLANNED);
    atomic_init(&s->slots[k].claim, 0);
    if (!(s->slots[k].blk = block_new())) {
      for (int j = 0; j < k; j++) free(s->slots[j].blk);
      free(s);
      return NULL;
    }
    s->slots[k].buf = (uint8_t *)s->slots[k].blk + TFR_SCAN_HEAD;
  }
  ds_worker_start(&s->w, helper_main, s);
  if (!s->w.running) {
    tfrecord_scan_free(s);
    return NULL;
  }
  return s;
}

/* The cursor's condition while it waits in window `win` (slot w): the
 * window started (any) or, for batch b, read (b < 0) or b checked; or no
 * window will come. */
static int arrived(tfrecord_scan *s, uint64_t win, scan_slot *w, int any, long b) {
  if (atomic_load(&s->nstarted) <= win) return atomic_load(&s->helper_done);
  if (any) return 1;
  if (atomic_load(&w->state) == SLOT_PLANNED) return 0;
  return b < 0 || atomic_load(&w->good[b]) != 0;
}

/* Nanoseconds of CLOCK_MONOTONIC. */
static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The cursor: wait until arrived(); for a batch the helper is checking a
 * short spin first (the helper is at it unless it lost its CPU), then
 * asleep on the condition variable. */
static void wait_for(tfrecord_scan *s, uint64_t win, scan_slot *w, int any, long b) {
  if (arrived(s, win, w, any, b)) return;
  if (b >= 0) {
    uint64_t t0 = now_ns();
    for (int n = 1;; n++) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      if (arrived(s, win, w, any, b)) return;
      if (n % 64 == 0 && now_ns() - t0 > TFR_SCAN_SPIN_NS) break;
    }
  }
  pthread_mutex_lock(&s->w.mu);
  atomic_store(&s->waiting, 1);
  while (!arrived(s, win, w, any, b)) pthread_cond_wait(&s->w.cv, &s->w.mu);
  atomic_store(&s->waiting, 0);
  pthread_mutex_unlock(&s->w.mu);
}

/* The cursor's next window once started; NULL when there is none. */
static scan_slot *next_window(tfrecord_scan *s) {
  uint64_t win = s->passed;
  scan_slot *w = &s->slots[win % TFR_SCAN_SLOTS];
  wait_for(s, win, w, 1, -1);
  return atomic_load(&s->nstarted) > win ? w : NULL;
}

/* The cursor moves past its window: hand back to the helper the windows
 * passed whose blocks no value holds (one held a whole window after it
 * was passed is orphaned and its slot marked for a new block); wake the
 * helper when it sleeps and half of the ring is free. */
static void release(tfrecord_scan *s) {
  s->passed++;
  uint64_t back = s->consumer; /* only the cursor writes it */
  for (; back < s->passed; back++) {
    scan_slot *w = &s->slots[back % TFR_SCAN_SLOTS];
    if (w->blk && w->blk->refs) {
      if (s->passed - back < 2) break; /* the row after it lets go, as a rule */
      /* no batch may be claimed from now on, and the claimed ones are
         checked (the helper reads the block until then) */
      unsigned claimed = atomic_exchange(&w->claim, w->nb);
      for (unsigned b = 0; b < claimed && b < w->nb; b++) wait_for(s, back, w, 0, (long)b);
      w->blk->orphan = 1;
      w->replace = 1;
    }
  }
  if (back != s->consumer) {
    pthread_mutex_lock(&s->w.mu);
    s->consumer = back;
    if (s->helper_waits && atomic_load(&s->nstarted) - s->consumer <= TFR_SCAN_SLOTS / 2)
      pthread_cond_broadcast(&s->w.cv);
    pthread_mutex_unlock(&s->w.mu);
  }
  s->cur = NULL;
  s->ready.lo = s->ready.hi = 0;
}

/* The cursor: record i of window w (i in [first, m), the window read) is
 * checked, by the helper or here; 1 when it is good, with s->ready
 * covering it and the good records after it that are checked. */
static int locate(tfrecord_scan *s, scan_slot *w, uint64_t i) {
  uint32_t b = (uint32_t)((i - w->first) / TFR_SCAN_BATCH);
  unsigned g;
  while (!(g = atomic_load(&w->good[b])))
    if (!check_batch(s, w)) wait_for(s, s->passed, w, 0, b); /* the helper's */
  uint64_t k = w->first + (uint64_t)b * TFR_SCAN_BATCH, hi = k + g - 1;
  if (i >= hi) return 0;
  /* a whole batch: the next checked ones follow */
  while (hi == k + TFR_SCAN_BATCH && ++b < w->nb && (g = atomic_load(&w->good[b]))) {
    k += TFR_SCAN_BATCH;
    hi = k + g - 1;
  }
  s->ready = (tfrecord_scan_ready){w->buf, w->off, w->first, hi < w->m ? hi : w->m,
                                   s->t->offsets};
  return 1;
}

int tfrecord_scan_read(tfrecord_scan *s, tfrecord_cursor *c, uint64_t i, tfrecord_rec *r,
                       char **err) {
  if (i < s->pos || i >= s->hi) return tfrecord_read_at(c, i, r, err);
  s->pos = i;
  for (;;) {
    if (!s->cur && !(s->cur = next_window(s))) return tfrecord_read_at(c, i, r, err);
    if (i < s->cur->end) break;
    release(s);
  }
  scan_slot *w = s->cur;
  wait_for(s, s->passed, w, 0, -1); /* the read */
  if (atomic_load(&w->state) == SLOT_READ && i < w->m && locate(s, w, i) &&
      tfrecord_scan_take(s, i, r))
    return 0;
  return tfrecord_read_at(c, i, r, err);
}

void tfrecord_scan_free(tfrecord_scan *s) {
  if (!s) return;
  ds_worker_stop(&s->w);
  for (int k = 0; k < TFR_SCAN_SLOTS; k++)
    if (!s->slots[k].replace) block_drop(s->slots[k].blk); /* else orphaned already */
  free(s);
}
