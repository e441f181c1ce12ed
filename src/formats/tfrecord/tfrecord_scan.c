/* tfrecord_scan.c - a TFRecord scan on two threads (see tfrecord_scan.h).
 *
 * Window w lives in slot w % TFR_SCAN_SLOTS. The helper plans each window
 * from the index (the records from where the last one ended, as many as
 * fit in TFR_SCAN_WINDOW bytes), reads it in one pread, checks its records
 * in order and publishes it under the lock with how many of them are
 * good; it fills a slot only when the cursor has released it, so a slot's
 * bytes are the helper's while it fills and the cursor's once ready, and
 * neither touches them under the lock. The cursor takes windows in order,
 * waiting for the one it needs, and releases each when its rows pass it. */
#include "formats/tfrecord/tfrecord_scan.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/worker.h"
#include "formats/tfrecord/tfrecord_frame.h"

typedef struct scan_slot {
  int ready;            /* guarded by mu: filled, not yet released */
  uint64_t first, end;  /* its records [first, end) */
  uint64_t ok_end;      /* [first, ok_end) read and checked; the rest are
                           left to the cursor (wrong, unreadable, too large) */
  uint64_t off;         /* where buf[0] is in the file: record first's start */
  uint8_t *buf;         /* TFR_SCAN_WINDOW bytes */
} scan_slot;

struct tfrecord_scan {
  tfrecord_scan_ready ready; /* first: tfrecord_scan_take reads it */
  const tfrecord_file *t;
  uint64_t hi;          /* the scan ends before this record */
  ds_worker w;          /* the helper, its lock (mu) and stop flag */
  uint64_t fill_rec;    /* the helper's: where its next window starts */
  uint64_t nfilled;     /* guarded by mu: windows published */
  int helper_done;      /* guarded by mu: every window is published */
  uint64_t consumer;    /* guarded by mu: the window the cursor is at */
  scan_slot *cur;       /* the cursor's: that window once ready, or NULL */
  uint64_t pos;         /* the cursor's: the last record asked for */
  scan_slot slots[TFR_SCAN_SLOTS];
};

int tfrecord_scan_fits(const tfrecord_file *t) {
  return t->indexed && t->compression == TFRECORD_NONE && !t->file.data &&
         t->file.vf.be == &ds_vfs_local;
}

/* Without the lock: plan the window from s->fill_rec, read it and check
 * its records; s->fill_rec moves past it. */
static void fill(tfrecord_scan *s, scan_slot *w) {
  const tfrecord_file *t = s->t;
  const uint64_t *o = t->offsets;
  uint64_t k = s->fill_rec, m = k;
  while (m < s->hi && o[m + 1] - o[k] <= TFR_SCAN_WINDOW) m++;
  w->first = w->ok_end = k;
  w->off = o[k];
  w->end = m > k ? m : k + 1; /* a record larger than a window: the cursor's */
  s->fill_rec = w->end;
  if (m == k) return;
  char *err = NULL;
  if (ds_file_read(&t->file, o[k], o[m] - o[k], w->buf, &err)) { /* the cursor says why */
    free(err);
    return;
  }
  uint64_t i = k;
  for (; i < m; i++) {
    const uint8_t *f = w->buf + (o[i] - o[k]);
    uint64_t len = o[i + 1] - o[i] - TFR_OVERHEAD, n;
    uint32_t stored, computed;
    if (tfr_frame_parse(f, &n, &stored, &computed) || n != len) break;
    if (!t->skip_data_crc &&
        tfr_frame_check(f + TFR_HEADER, (size_t)len, f + TFR_HEADER + len, &stored, &computed))
      break;
  }
  w->ok_end = i;
}

/* The helper: fill the next window whenever the ring has a free slot. */
static void *helper_main(void *arg) {
  tfrecord_scan *s = arg;
  pthread_mutex_lock(&s->w.mu);
  for (;;) {
    while (!s->w.stop && s->fill_rec < s->hi && s->nfilled - s->consumer >= TFR_SCAN_SLOTS)
      pthread_cond_wait(&s->w.cv, &s->w.mu);
    if (s->w.stop || s->fill_rec >= s->hi) break;
    scan_slot *w = &s->slots[s->nfilled % TFR_SCAN_SLOTS];
    pthread_mutex_unlock(&s->w.mu);
    fill(s, w);
    pthread_mutex_lock(&s->w.mu);
    w->ready = 1;
    s->nfilled++;
    pthread_cond_broadcast(&s->w.cv);
  }
  s->helper_done = 1;
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
  for (int k = 0; k < TFR_SCAN_SLOTS; k++)
    if (!(s->slots[k].buf = malloc(TFR_SCAN_WINDOW))) {
      for (int j = 0; j < k; j++) free(s->slots[j].buf);
      free(s);
      return NULL;
    }
  ds_worker_start(&s->w, helper_main, s);
  if (!s->w.running) {
    tfrecord_scan_free(s);
    return NULL;
  }
  return s;
}

/* The cursor's next window, waited for; NULL when there is none. */
static scan_slot *next_window(tfrecord_scan *s) {
  scan_slot *w = &s->slots[s->consumer % TFR_SCAN_SLOTS];
  pthread_mutex_lock(&s->w.mu);
  while (!w->ready && !(s->helper_done && s->nfilled == s->consumer))
    pthread_cond_wait(&s->w.cv, &s->w.mu);
  if (!w->ready) w = NULL;
  pthread_mutex_unlock(&s->w.mu);
  return w;
}

/* Give the cursor's window back to the helper. */
static void release(tfrecord_scan *s) {
  pthread_mutex_lock(&s->w.mu);
  s->cur->ready = 0;
  s->consumer++;
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
  const scan_slot *w = s->cur;
  s->ready = (tfrecord_scan_ready){w->buf, w->off, w->first, w->ok_end, s->t->offsets};
  if (tfrecord_scan_take(s, i, r)) return 0;
  return tfrecord_read_at(c, i, r, err);
}

void tfrecord_scan_free(tfrecord_scan *s) {
  if (!s) return;
  ds_worker_stop(&s->w);
  for (int k = 0; k < TFR_SCAN_SLOTS; k++) free(s->slots[k].buf);
  free(s);
}
