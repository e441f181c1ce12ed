/* test_tfrecord_scan.c - the two-thread TFRecord scan
 * (src/formats/tfrecord/tfrecord_scan.c) over a file of several windows
 * written here: every record read back equal through tfrecord_scan_read
 * and tfrecord_scan_take, from the start and from the middle, with
 * forward jumps and a backward read (the cursor's own read); a record
 * larger than a window; a data CRC and a length CRC damaged in the 3rd
 * window fail with the same error as the one-thread read, after the
 * records before them; a scan freed in the middle, and a file truncated
 * under a scan (an error naming the file, no crash); records held past
 * the cursor's move (pinned) stay intact. Run under make tsan
 * too: the helper thread and the cursor share the ring. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"
#include "formats/tfrecord/tfrecord.h"
#include "formats/tfrecord/tfrecord_frame.h"
#include "formats/tfrecord/tfrecord_scan.h"

#define NREC 30000
#define BIG 12345 /* a record of 1.5 MiB: more than a window */

static char tmpdir[64];

/* Record i's length and its byte j. */
static size_t rec_len(size_t i) { return i == BIG ? (size_t)3 << 19 : (i * 37) % 400 + 1; }
static uint8_t rec_byte(size_t i, size_t j) { return (uint8_t)(i * 131 + j * 7); }

/* Write the file; off[0..NREC] the records' offsets (the last: the end). */
static int write_file(const char *path, uint64_t *off) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  uint8_t *buf = malloc(rec_len(BIG));
  uint64_t at = 0;
  for (size_t i = 0; buf && i < NREC; i++) {
    size_t n = rec_len(i);
    for (size_t j = 0; j < n; j++) buf[j] = rec_byte(i, j);
    uint8_t h[TFR_HEADER], t[TFR_FOOTER];
    tfr_frame_header(h, n);
    tfr_frame_footer(t, buf, n);
    off[i] = at;
    fwrite(h, 1, sizeof h, f);
    fwrite(buf, 1, n, f);
    fwrite(t, 1, sizeof t, f);
    at += TFR_OVERHEAD + n;
  }
  off[NREC] = at;
  free(buf);
  return fclose(f) == 0 && buf ? 0 : -1;
}

/* 1 when r is record i as written. */
static int same(const tfrecord_rec *r, size_t i) {
  if (r->index != i || r->len != rec_len(i)) return 0;
  for (size_t j = 0; j < r->len; j++)
    if (r->data[j] != rec_byte(i, j)) return 0;
  return 1;
}

/* Read records i.. of scan s (through c) until count or an error (in
 * *err); *bad += the records that are not as written. The record reached. */
static size_t scan_from(tfrecord_scan *s, tfrecord_cursor *c, size_t i, uint64_t count,
                        char **err, size_t *bad) {
  tfrecord_rec r;
  for (; s && i < count; i++) {
    if (tfrecord_scan_read(s, c, i, &r, err)) break;
    *bad += !same(&r, i);
  }
  return i;
}

/* Open and index path (the index pass, uncompressed). */
static int open_indexed(const char *path, tfrecord_file *t) {
  tfrecord_options o = {.compression = TFRECORD_NONE};
  char *err = NULL;
  int rc = tfrecord_open(t, path, &o, &err) || tfrecord_index(t, &err) ? -1 : 0;
  if (rc) check_note("    %s\n", err ? err : "?");
  free(err);
  return rc;
}

/* Whole scans, from the start and from the middle with jumps. */
static void test_reads(const char *path, const uint64_t *off) {
  tfrecord_file t;
  if (!CHECK(open_indexed(path, &t) == 0)) return;
  CHECK(t.count == NREC && t.offsets[NREC] == off[NREC]);
  CHECK(tfrecord_scan_fits(&t));
  tfrecord_cursor c;
  char *err = NULL;
  CHECK(tfrecord_cursor_init(&c, &t, &err) == 0);
  tfrecord_scan *s = tfrecord_scan_start(&t, 0, NREC);
  CHECK(s != NULL);
  size_t bad = 0, taken = 0;
  tfrecord_rec r;
  for (size_t i = 0; s && i < NREC; i++) {
    if (tfrecord_scan_take(s, i, &r)) taken++;
    else if (tfrecord_scan_read(s, &c, i, &r, &err)) {
      bad++;
      break;
    }
    bad += !same(&r, i);
  }
  check_note("    %zu bad, %zu of %d taken inline, %s\n", bad, taken, NREC, err ? err : "");
  CHECK(s && bad == 0 && taken > NREC / 2);
  tfrecord_scan_free(s);
  /* from the middle: every 7th record, then one before the scan's start */
  s = tfrecord_scan_start(&t, 1000, NREC);
  bad = 0;
  for (size_t i = 1000; s && i < NREC; i += 7) {
    if (tfrecord_scan_read(s, &c, i, &r, &err) || !same(&r, i)) bad++;
  }
  if (s && (tfrecord_scan_read(s, &c, 500, &r, &err) || !same(&r, 500))) bad++;
  CHECK(s && bad == 0);
  tfrecord_scan_free(s);
  /* freed with the ring full and the helper waiting */
  s = tfrecord_scan_start(&t, 0, NREC);
  CHECK(s && tfrecord_scan_read(s, &c, 3, &r, &err) == 0 && same(&r, 3));
  usleep(20000);
  tfrecord_scan_free(s);
  free(err);
  tfrecord_cursor_free(&c);
  tfrecord_close(&t);
}

/* Records held past the cursor's move (tfrecord_scan_pin), as SQLite
 * holds the values it is handed: every record pinned until the next one
 * is (a register), record 5 to the end (an aggregate's bare column), and
 * the last one after the scan is freed. The held bytes stay the records
 * and the scan goes on (its slots get new blocks); ASan and LSan see that
 * every block is freed once, by the scan or by the last unpin. */
static void test_pins(const char *path) {
  tfrecord_file t;
  if (!CHECK(open_indexed(path, &t) == 0)) return;
  tfrecord_cursor c;
  char *err = NULL;
  CHECK(tfrecord_cursor_init(&c, &t, &err) == 0);
  tfrecord_scan *s = tfrecord_scan_start(&t, 0, NREC);
  tfrecord_rec r, r5 = {0}, last = {0};
  size_t bad = 0, pinned = 0, i = 0;
  for (; s && i < NREC; i++) {
    if (!tfrecord_scan_take(s, i, &r) && tfrecord_scan_read(s, &c, i, &r, &err)) break;
    bad += !same(&r, i);
    if (!tfrecord_scan_take(s, i, &r)) continue; /* the cursor's own read (BIG) */
    tfrecord_scan_pin(r.data);
    pinned++;
    if (last.data) tfrecord_scan_unpin((void *)last.data);
    last = r;
    if (i == 5) {
      tfrecord_scan_pin(r.data);
      r5 = r;
    }
  }
  check_note("    %zu read, %zu bad, %zu pinned, %s\n", i, bad, pinned, err ? err : "");
  CHECK(i == NREC && bad == 0 && pinned > NREC / 2);
  CHECK(r5.data && same(&r5, 5)); /* its window was passed long ago */
  tfrecord_scan_free(s);
  CHECK(last.data && same(&last, last.index) && r5.data && same(&r5, 5));
  if (last.data) tfrecord_scan_unpin((void *)last.data);
  if (r5.data) tfrecord_scan_unpin((void *)r5.data);
  free(err);
  tfrecord_cursor_free(&c);
  tfrecord_close(&t);
}

/* The first record past byte `past`. */
static size_t record_past(const uint64_t *off, uint64_t past) {
  size_t k = 0;
  while (k < NREC && off[k] <= past) k++;
  return k;
}

/* A scan over the file damaged at byte `at`: records before k read, k's
 * error the same as a one-thread read's, containing `what`. */
static void check_damaged(const char *path, const uint64_t *off, size_t k, const char *what) {
  tfrecord_file t;
  if (!CHECK(open_indexed(path, &t) == 0)) return;
  CHECK(t.count == NREC); /* the index pass does not read the data */
  tfrecord_cursor c, one;
  char *err = NULL, *err1 = NULL;
  tfrecord_rec r;
  tfrecord_cursor_init(&c, &t, &err);
  tfrecord_cursor_init(&one, &t, &err);
  tfrecord_scan *s = tfrecord_scan_start(&t, 0, t.count);
  size_t bad = 0, i = scan_from(s, &c, 0, t.count, &err, &bad);
  tfrecord_read_at(&one, k, &r, &err1);
  char want[512];
  snprintf(want, sizeof want, "%s: record %zu at offset %llu: %s", path, k,
           (unsigned long long)off[k], what);
  check_note("    stopped at %zu, %zu bad: %s\n    one thread: %s\n", i, bad,
             err ? err : "no error", err1 ? err1 : "no error");
  CHECK(s && i == k && bad == 0 && err && strstr(err, want) && err1 && strcmp(err, err1) == 0);
  tfrecord_scan_free(s);
  free(err);
  free(err1);
  tfrecord_cursor_free(&c);
  tfrecord_cursor_free(&one);
  tfrecord_close(&t);
}

/* Flip one byte of the file at `at`. */
static void flip(const char *path, uint64_t at) {
  int fd = open(path, O_RDWR);
  uint8_t b = 0;
  if (fd >= 0 && pread(fd, &b, 1, (off_t)at) == 1) {
    b ^= 0x20;
    CHECK(pwrite(fd, &b, 1, (off_t)at) == 1);
  }
  if (fd >= 0) close(fd);
}

static void test_damage(const char *path, const uint64_t *off) {
  size_t k = record_past(off, (uint64_t)2 * TFR_SCAN_WINDOW + 4000); /* the 3rd window */
  flip(path, off[k] + TFR_HEADER + 1);
  check_damaged(path, off, k, "data CRC mismatch");
  flip(path, off[k] + TFR_HEADER + 1); /* mended */
  /* the length CRC, found by the scan when the index came from elsewhere:
   * index first, then damage the file under the open table */
  size_t k2 = record_past(off, (uint64_t)2 * TFR_SCAN_WINDOW + 90000);
  tfrecord_file t;
  if (!CHECK(open_indexed(path, &t) == 0)) return;
  flip(path, off[k2] + 9);
  tfrecord_cursor c;
  char *err = NULL;
  tfrecord_cursor_init(&c, &t, &err);
  tfrecord_scan *s = tfrecord_scan_start(&t, 0, t.count);
  size_t bad = 0, i = scan_from(s, &c, 0, t.count, &err, &bad);
  char want[512];
  snprintf(want, sizeof want, "%s: record %zu at offset %llu: length CRC mismatch", path, k2,
           (unsigned long long)off[k2]);
  check_note("    stopped at %zu (want %zu), %zu bad: %s\n", i, k2, bad, err ? err : "no error");
  CHECK(s && i == k2 && bad == 0 && err && strstr(err, want));
  tfrecord_scan_free(s);
  free(err);
  tfrecord_cursor_free(&c);
  tfrecord_close(&t);
  flip(path, off[k2] + 9);
}

/* Truncated under a scan: an error naming the file, the rows before it. */
static void test_truncated(const char *path, const uint64_t *off) {
  tfrecord_file t;
  if (!CHECK(open_indexed(path, &t) == 0)) return;
  tfrecord_cursor c;
  char *err = NULL;
  tfrecord_rec r;
  tfrecord_cursor_init(&c, &t, &err);
  tfrecord_scan *s = tfrecord_scan_start(&t, 0, t.count);
  size_t i = 0, bad = 0;
  CHECK(s && tfrecord_scan_read(s, &c, 0, &r, &err) == 0);
  CHECK(truncate(path, (off_t)off[NREC / 2]) == 0);
  i = scan_from(s, &c, i, t.count, &err, &bad);
  check_note("    stopped at %zu, %zu bad: %s\n", i, bad, err ? err : "no error");
  CHECK(s && i > 0 && i <= NREC / 2 && bad == 0 && err && strstr(err, path) &&
        strstr(err, "offset"));
  tfrecord_scan_free(s);
  free(err);
  tfrecord_cursor_free(&c);
  tfrecord_close(&t);
}

int main(void) {
  if (fx_temp_dir(tmpdir, sizeof tmpdir, "tfscan", __FILE__)) return 1;
  char path[128];
  snprintf(path, sizeof path, "%s/scan.tfrecord", tmpdir);
  uint64_t *off = malloc((NREC + 1) * sizeof *off);
  if (CHECK(off && write_file(path, off) == 0 && off[NREC] > 5 * TFR_SCAN_WINDOW)) {
    test_reads(path, off);
    test_pins(path);
    test_damage(path, off);
    test_truncated(path, off);
  }
  free(off);
  fx_remove_tree(tmpdir);
  return check_exit();
}
