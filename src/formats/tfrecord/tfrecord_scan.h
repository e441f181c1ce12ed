/* tfrecord_scan.h - a scan of an indexed, uncompressed, local TFRecord
 * file on two threads (threads=2): a helper thread reads the records
 * ahead in windows of whole records, and the records are checked (the
 * length CRC, the length against the index, the data CRC unless
 * verify=false) in batches that either thread takes: the helper those
 * of windows the cursor has not reached, the cursor those of its window
 * that are not checked yet when it gets there (so the CRC work goes to
 * whichever thread has time; the reads are the helper's). The cursor's
 * thread hands out the records of checked batches, pointing into the
 * window (no copy).
 *
 * Memory: a ring of TFR_SCAN_SLOTS windows of at most TFR_SCAN_WINDOW
 * bytes each (4 x 1 MiB) per scanning cursor, whatever the file's size,
 * filled up to TFR_SCAN_TARGET bytes (so that a window is still in the
 * cache when it is checked and handed out) unless one record needs more.
 * A record larger than a window is not read ahead. The records handed
 * out can be held past the cursor's next move (tfrecord_scan_pin): a
 * window's bytes go when the last of them is let go (such a window's slot
 * gets new bytes).
 *
 * Errors are those of the one-thread path, from the same code: a record
 * a batch finds wrong (a CRC, a length the index does not agree with),
 * a read that fails (the file shrank or went away), or a record too large
 * for a window is left to the cursor, which reads it itself through its
 * tfrecord_cursor (tfrecord_read_at) and so gets the error naming the
 * file, the record and the offset, or the record. The records before it
 * come from the windows. Knows no SQLite. */
#ifndef DS_TFRECORD_SCAN_H
#define DS_TFRECORD_SCAN_H

#include <stdint.h>

#include "formats/tfrecord/tfrecord.h"
#include "formats/tfrecord/tfrecord_frame.h"

#define TFR_SCAN_SLOTS 4
#define TFR_SCAN_WINDOW ((uint64_t)1 << 20)
#define TFR_SCAN_TARGET ((uint64_t)1 << 18)

typedef struct tfrecord_scan tfrecord_scan;

/* The head of every tfrecord_scan: the good records of the window the
 * cursor is at, for tfrecord_scan_take (set by tfrecord_scan_read). */
typedef struct tfrecord_scan_ready {
  const uint8_t *buf;      /* the window: buf[0] is byte `off` of the file */
  uint64_t off;
  uint64_t lo, hi;         /* its records [lo, hi) are read and checked */
  const uint64_t *offsets; /* the file's index */
} tfrecord_scan_ready;

/* 1 when t can be scanned so: indexed, uncompressed, streamed from a
 * local file (remote files keep their own read-ahead; files in memory
 * have nothing to read). */
int tfrecord_scan_fits(const tfrecord_file *t);

/* Start reading records [lo, hi) of t (hi <= t->count) ahead on a helper
 * thread. NULL when out of memory or no thread can be had: the caller
 * reads alone. t must outlive the scan. */
tfrecord_scan *tfrecord_scan_start(const tfrecord_file *t, uint64_t lo, uint64_t hi);

/* Record i of the scan's file: from a window when it was read and
 * checked (its batch checked here if no thread has yet; i at or after
 * the scan's last record: an earlier one cannot come from it), else read
 * through c (tfrecord_read_at, with its errors). 0 with *r (valid until the next call), or -1 with *err. */
int tfrecord_scan_read(tfrecord_scan *s, tfrecord_cursor *c, uint64_t i, tfrecord_rec *r,
                       char **err);

/* tfrecord_scan_read's fast path, inline: 1 with *r when record i is one
 * of the good records of the cursor's window, else 0 (ask
 * tfrecord_scan_read). */
static inline int tfrecord_scan_take(const tfrecord_scan *s, uint64_t i, tfrecord_rec *r) {
  const tfrecord_scan_ready *w = (const tfrecord_scan_ready *)s;
  if (i < w->lo || i >= w->hi) return 0;
  const uint64_t *o = w->offsets;
  r->data = w->buf + (o[i] - w->off) + TFR_HEADER;
  r->len = (size_t)(o[i + 1] - o[i] - TFR_OVERHEAD);
  r->index = i;
  r->offset = o[i];
  return 1;
}

/* Hold the bytes of a record handed out by tfrecord_scan_take (p: its
 * data; a record of at least one byte) until tfrecord_scan_unpin(p), also
 * after the cursor moves on and after tfrecord_scan_free. Pins and unpins
 * happen on the thread that uses the scan's cursor (or one after it). */
void tfrecord_scan_pin(const uint8_t *p);

/* Let go of a pin; a destructor for the pinned data (void * for it). */
void tfrecord_scan_unpin(void *p);

/* Stop the helper and free everything. NULL is fine. */
void tfrecord_scan_free(tfrecord_scan *s);

#endif
