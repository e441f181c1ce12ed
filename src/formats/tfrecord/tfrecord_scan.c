/* tfrecord_scan.c - a TFRecord scan on two threads (see tfrecord_scan.h).
 *
 * Window w lives in slot w % TFR_SCAN_SLOTS. The helper plans each window
 * from the index (the records from where the last one ended, as many as
 * fit in TFR_SCAN_WINDOW bytes) when a slot is free, publishes the plan
 * (nstarted), reads the window in one pread and checks its records in
 * order, publishing after every TFR_SCAN_BATCH of them how many are good
 * (ok_end) and at the end that the count is final (done). So the cursor
 * follows the helper's checks batch by batch instead of waiting for whole
 * windows. A cursor that catches up sleeps on the condition variable until
 * the helper is TFR_SCAN_LEAD records ahead (or done with the window): one
 * sleep and one wake-up per stretch, not one per batch or window; the
 * helper looks at `waiting` and `want` after each publication and takes
 * the lock only to wake it. A slot's plan and bytes are the helper's until
 * published and the cursor's to read after (the helper writes no byte
 * below ok_end); the cursor releases a slot when its rows pass it, and the
 * helper, which sleeps when the ring is full, is woken once half of the
 * ring is free again (one wake-up per half ring, not per window). */
#include "formats/tfrecord/tfrecord_scan.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/worker.h"
#include "formats/tfrecord/tfrecord_frame.h"

/* Records checked between two publications of a window's progress. */
#define TFR_SCAN_BATCH 32
/* A cursor that caught up with the helper sleeps until the helper is this
 * many records ahead (or done with the window). */
#define TFR_SCAN_LEAD 512

typedef struct scan_slot {
  uint64_t first, end;     /* its records [first, end); the plan */
  uint64_t off;            /* where buf[0] is in the file: record first's start */
  atomic_uint_fast64_t ok_end; /* [first, ok_end) read and checked so far */
  atomic_int done;         /* ok_end is final: the rest are left to the
                              cursor (wrong, unreadable, too large) */
  uint8_t *buf;            /* TFR_SCAN_WINDOW bytes */
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
  atomic_uint_fast64_t want; /* ... until the records before this are
                                published (or a window is started or done) */
  int helper_waits;     /* guarded by mu: the helper sleeps for a free slot */
  uint64_t consumer;    /* guarded by mu: the window the cursor is at */
  scan_slot *cur;       /* the cursor's: that window once started, or NULL */
  uint64_t pos;         /* the cursor's: the last record asked for */
  scan_slot slots[TFR_SCAN_SLOTS];
};

int tfrecord_scan_fits(const tfrecord_file *t) {
  return t->indexed && t->compression == TFRECORD_NONE && !t->file.data &&
         t->file.vf.be == &ds_vfs_local;
}

/* The helper: wake the cursor if it sleeps and (unless `any`: a window
 * started or done) waits for records before `ok`. */
static void wake_cursor(tfrecord_scan *s, int any, uint64_t ok) {
  if (!atomic_load(&s->waiting) || (!any && ok < atomic_load(&s->want))) return;
  pthread_mutex_lock(&s->w.mu);
  pthread_cond_broadcast(&s->w.cv);
  pthread_mutex_unlock(&s->w.mu);
}

/* The helper: plan the window from s->fill_rec into w (s->fill_rec moves
 * past it); m is where its read records end (m == w->first: none, the
 * record is larger than a window). */
static uint64_t plan(tfrecord_scan *s, scan_slot *w) {
  const uint64_t *o = s->t->offsets;
  uint64_t k = s->fill_rec, m = k;
  while (m < s->hi && o[m + 1] - o[k] <= TFR_SCAN_WINDOW) m++;
  w->first = k;
  w->off = o[k];
  w->end = m > k ? m : k + 1; /* a record larger than a window: the cursor's */
  atomic_store_explicit(&w->ok_end, k, memory_order_relaxed);
  atomic_store_explicit(&w->done, 0, memory_order_relaxed);
  s->fill_rec = w->end;
  return m;
}

/* The helper: read w's records [w->first, m) and check them, publishing
 * the good ones batch by batch; then done. */
static void fill(tfrecord_scan *s, scan_slot *w, uint64_t m) {
  const tfrecord_file *t = s->t;
  const uint64_t *o = t->offsets;
  uint64_t k = w->first, i = k;
  char *err = NULL;
  if (m > k && ds_file_read(&t->file, o[k], o[m] - o[k], w->buf, &err)) /* the cursor says why */
    m = k;
  free(err);
  for (; i < m; i++) {
    const uint8_t *f = w->buf + (o[i] - o[k]);
    uint64_t len = o[i + 1] - o[i] - TFR_OVERHEAD, n;
    uint32_t stored, computed;
    if (tfr_frame_parse(f, &n, &stored, &computed) || n != len) break;
    if (!t->skip_data_crc &&
        tfr_frame_check(f + TFR_HEADER, (size_t)len, f + TFR_HEADER + len, &stored, &computed))
      break;
    if ((i + 1 - k) % TFR_SCAN_BATCH == 0) {
      atomic_store(&w->ok_end, i + 1);
      wake_cursor(s, 0, i + 1);
    }
  }
  atomic_store(&w->ok_end, i);
  atomic_store(&w->done, 1);
  wake_cursor(s, 1, i);
}

/* The helper: fill the next window whenever the ring has a free slot. */
static void *helper_main(void *arg) {
  tfrecord_scan *s = arg;
  pthread_mutex_lock(&s->w.mu);
  for (;;) {
    uint64_t n = atomic_load_explicit(&s->nstarted, memory_order_relaxed);
    while (!s->w.stop && s->fill_rec < s->hi && n - s->consumer >= TFR_SCAN_SLOTS) {
      s->helper_waits = 1;
      pthread_cond_wait(&s->w.cv, &s->w.mu);
    }
    s->helper_waits = 0;
    if (s->w.stop || s->fill_rec >= s->hi) break;
    pthread_mutex_unlock(&s->w.mu);
    scan_slot *w = &s->slots[n % TFR_SCAN_SLOTS];
    uint64_t m = plan(s, w);
    atomic_store(&s->nstarted, n + 1); /* the plan is the cursor's to read */
    wake_cursor(s, 1, 0);
    fill(s, w, m);
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
  atomic_init(&s->want, 0);
  for (int k = 0; k < TFR_SCAN_SLOTS; k++) {
    atomic_init(&s->slots[k].ok_end, 0);
    atomic_init(&s->slots[k].done, 0);
    if (!(s->slots[k].buf = malloc(TFR_SCAN_WINDOW))) {
      for (int j = 0; j < k; j++) free(s->slots[j].buf);
      free(s);
      return NULL;
    }
  }
  ds_worker_start(&s->w, helper_main, s);
  if (!s->w.running) {
    tfrecord_scan_free(s);
    return NULL;
  }
  return s;
}

/* The cursor's condition while it waits for window `win` (in slot w):
 * the window is started and (unless any is true) its records before
 * `want` are published or the window done; or no window will come. */
static int arrived(tfrecord_scan *s, uint64_t win, const scan_slot *w, int any, uint64_t want) {
  if (atomic_load(&s->nstarted) <= win) return atomic_load(&s->helper_done);
  return any || atomic_load(&w->done) || want <= atomic_load(&w->ok_end);
}

/* The cursor: wait until arrived() for record i (any: the window's
 * start). Asleep, it waits until the helper is TFR_SCAN_LEAD records
 * ahead (or the window done), so that it sleeps once per stretch the
 * helper is ahead of it, not once per batch. */
static void wait_for(tfrecord_scan *s, uint64_t win, const scan_slot *w, int any, uint64_t i) {
  if (arrived(s, win, w, any, i + 1)) return;
  uint64_t want = i + 1;
  if (!any && atomic_load(&s->nstarted) > win)
    want = i + TFR_SCAN_LEAD < w->end ? i + TFR_SCAN_LEAD : w->end;
  pthread_mutex_lock(&s->w.mu);
  atomic_store(&s->want, want);
  atomic_store(&s->waiting, 1);
  while (!arrived(s, win, w, any, want)) pthread_cond_wait(&s->w.cv, &s->w.mu);
  atomic_store(&s->waiting, 0);
  pthread_mutex_unlock(&s->w.mu);
}

/* The cursor's next window once started; NULL when there is none. */
static scan_slot *next_window(tfrecord_scan *s) {
  uint64_t win = s->consumer; /* only the cursor writes it */
  scan_slot *w = &s->slots[win % TFR_SCAN_SLOTS];
  wait_for(s, win, w, 1, 0);
  return atomic_load(&s->nstarted) > win ? w : NULL;
}

/* Give the cursor's window back to the helper; wake the helper when it
 * sleeps and half of the ring is free. */
static void release(tfrecord_scan *s) {
  pthread_mutex_lock(&s->w.mu);
  s->consumer++;
  if (s->helper_waits &&
      atomic_load(&s->nstarted) - s->consumer <= TFR_SCAN_SLOTS / 2)
    pthread_cond_broadcast(&s->w.cv);
  pthread_mutex_unlock(&s->w.mu);
  s->cur = NULL;
  s->ready.lo = s->ready.hi = 0;
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
  wait_for(s, s->consumer, w, 0, i);
  s->ready = (tfrecord_scan_ready){w->buf, w->off, w->first, atomic_load(&w->ok_end),
                                   s->t->offsets};
  if (tfrecord_scan_take(s, i, r)) return 0;
  return tfrecord_read_at(c, i, r, err);
}

void tfrecord_scan_free(tfrecord_scan *s) {
  if (!s) return;
  ds_worker_stop(&s->w);
  for (int k = 0; k < TFR_SCAN_SLOTS; k++) free(s->slots[k].buf);
  free(s);
}
