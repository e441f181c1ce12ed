/* tfrecord_ahead.c - the index pass's read-ahead (see tfrecord_ahead.h).
 *
 * Window n is the file bytes [from + n W, from + (n + 1) W + TFR_HEADER),
 * cut at the end of the file, in slot n % TFR_AHEAD_SLOTS. The walker
 * asks for windows in order; asking for window k releases every window
 * before k (consumer = k). The helper reads window n = max(nread,
 * consumer) when n - consumer < TFR_AHEAD_SLOTS (so never the walker's
 * slot), publishes it (nread = n + 1) and sleeps when the ring is full;
 * a read that fails ends it (failed). The walker spins for a window being
 * read (TFR_AHEAD_SPIN_NS) before it sleeps on the condition variable;
 * every shared field is written under the worker's lock. */
#include "formats/tfrecord/tfrecord_ahead.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "core/worker.h"
#include "formats/tfrecord/tfrecord_frame.h"

#define TFR_AHEAD_WINDOW ((uint64_t)1 << 20)
#define TFR_AHEAD_SLOTS 4
/* How long the walker spins for a window before it sleeps (ns). A spin
 * the length of a window's read (~90 us) made the pass 1.1x faster on one
 * day and 1.7x slower on another (a spinning CPU can slow the one that
 * copies, when the two share a core): 20 us, as tfrecord_scan.c. */
#define TFR_AHEAD_SPIN_NS 20000

struct tfr_ahead {
  const ds_file *f;
  uint64_t max_record;
  uint64_t from, nwin;        /* window n starts at from + n W; nwin of them */
  ds_worker w;                /* the helper, its lock and stop flag */
  atomic_uint_fast64_t nread; /* window nread - 1 is the last published
                                 (written under mu) */
  uint64_t consumer;          /* mu: the walker's window */
  atomic_int failed;          /* a read failed, or the helper ended: nothing
                                 more is read (written under mu) */
  int walker_waits, helper_waits; /* mu: asleep on w.cv */
  uint8_t *buf[TFR_AHEAD_SLOTS];
};

/* Window n's start and length. */
static uint64_t win_start(const tfr_ahead *a, uint64_t n) { return a->from + n * TFR_AHEAD_WINDOW; }
static uint64_t win_len(const tfr_ahead *a, uint64_t n) {
  uint64_t s = win_start(a, n), e = s + TFR_AHEAD_WINDOW + TFR_HEADER;
  return (e < a->f->size ? e : a->f->size) - s;
}

/* The helper: read the windows the ring has room for, in order. */
static void *helper_main(void *arg) {
  tfr_ahead *a = arg;
  pthread_mutex_lock(&a->w.mu);
  while (!a->w.stop && !atomic_load(&a->failed)) {
    uint64_t n = atomic_load(&a->nread);
    if (n < a->consumer) n = a->consumer;
    if (n >= a->nwin) break;
    if (n - a->consumer >= TFR_AHEAD_SLOTS) {
      a->helper_waits = 1;
      pthread_cond_wait(&a->w.cv, &a->w.mu);
      a->helper_waits = 0;
      continue;
    }
    pthread_mutex_unlock(&a->w.mu);
    char *err = NULL;
    int ok = ds_file_read(a->f, win_start(a, n), win_len(a, n),
                          a->buf[n % TFR_AHEAD_SLOTS], &err) == 0;
    free(err); /* the walker's slow read says why */
    pthread_mutex_lock(&a->w.mu);
    if (ok)
      atomic_store(&a->nread, n + 1);
    else
      atomic_store(&a->failed, 1);
    if (a->walker_waits) pthread_cond_broadcast(&a->w.cv);
  }
  atomic_store(&a->failed, 1); /* nothing more comes: a waiting walker gives up */
  if (a->walker_waits) pthread_cond_broadcast(&a->w.cv);
  pthread_mutex_unlock(&a->w.mu);
  return NULL;
}

tfr_ahead *tfr_ahead_start(const ds_file *f, uint64_t from, uint64_t max_record) {
  /* on one CPU the walker's spin would take the helper's time: 89 against
   * 49 ms a pass of TF-1's file, threads=2 against 1, both pinned */
  if (f->data || f->vf.be != &ds_vfs_local || from >= f->size || ds_worker_cpus() < 2)
    return NULL;
  tfr_ahead *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  a->f = f;
  a->max_record = max_record;
  a->from = from;
  atomic_init(&a->nread, 0);
  atomic_init(&a->failed, 0);
  a->nwin = (f->size - from + TFR_AHEAD_WINDOW - 1) / TFR_AHEAD_WINDOW;
  for (int k = 0; k < TFR_AHEAD_SLOTS; k++)
    if (!(a->buf[k] = malloc(TFR_AHEAD_WINDOW + TFR_HEADER))) {
      for (int j = 0; j < k; j++) free(a->buf[j]);
      free(a);
      return NULL;
    }
  ds_worker_start(&a->w, helper_main, a);
  if (!a->w.running) {
    tfr_ahead_free(a);
    return NULL;
  }
  return a;
}

/* Window k is read, or will never be. */
static int settled(tfr_ahead *a, uint64_t k) {
  return atomic_load(&a->nread) > k || atomic_load(&a->failed);
}

/* Nanoseconds of CLOCK_MONOTONIC. */
static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int tfr_ahead_window(tfr_ahead *a, uint64_t off, tfr_window *w) {
  if (off < a->from || off + TFR_HEADER > a->f->size) return 0;
  uint64_t k = (off - a->from) / TFR_AHEAD_WINDOW;
  if (k >= a->nwin) return 0;
  pthread_mutex_lock(&a->w.mu);
  int ok = k >= a->consumer;
  if (ok && k > a->consumer) {
    a->consumer = k;
    if (a->helper_waits) pthread_cond_broadcast(&a->w.cv);
  }
  pthread_mutex_unlock(&a->w.mu);
  if (!ok) return 0;
  /* the window's read is under way: a spin, then asleep */
  uint64_t t0 = settled(a, k) ? 0 : now_ns();
  for (int n = 1; !settled(a, k); n++) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (n % 64 == 0 && now_ns() - t0 > TFR_AHEAD_SPIN_NS) {
      pthread_mutex_lock(&a->w.mu);
      while (!settled(a, k)) {
        a->walker_waits = 1;
        pthread_cond_wait(&a->w.cv, &a->w.mu);
        a->walker_waits = 0;
      }
      pthread_mutex_unlock(&a->w.mu);
    }
  }
  if (atomic_load(&a->nread) <= k) return 0;
  *w = (tfr_window){a->buf[k % TFR_AHEAD_SLOTS], win_start(a, k), win_len(a, k),
                    a->f->size, a->max_record};
  return 1;
}

void tfr_ahead_free(tfr_ahead *a) {
  if (!a) return;
  ds_worker_stop(&a->w);
  for (int k = 0; k < TFR_AHEAD_SLOTS; k++) free(a->buf[k]);
  free(a);
}
