/* test_tfrecord_ahead.c - the index pass's read-ahead
 * (src/formats/tfrecord/tfrecord_ahead.c) over files written here, of
 * more windows than its ring has: every header's window holds the file's
 * bytes (headers that straddle a window's end, placed there on purpose,
 * too), in order and with forward jumps; an earlier window, an offset
 * before the start or past the end give 0; the index built with the
 * read-ahead equals the one built without it (offsets, count, the error
 * of the record where the records stop) for a good file, a damaged length
 * CRC in the 6th window, a file cut mid-record, a 3 MiB record in the
 * middle, a large first record (no read-ahead) and a file truncated after
 * it was opened (the helper's read fails); a read-ahead freed after one
 * window; no read-ahead for a thread allowed on one CPU only (its spin
 * would take the helper's time). Run under make tsan too: the helper thread and the walker share
 * the ring. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"
#include "formats/tfrecord/tfrecord.h"
#include "formats/tfrecord/tfrecord_ahead.h"
#include "formats/tfrecord/tfrecord_frame.h"

#define W ((uint64_t)1 << 20) /* the read-ahead's window */
#define MAXREC 40000

static char tmpdir[64];

/* A file's records: their lengths (set by the caller), offsets (set by
 * put) and bytes. */
typedef struct recs {
  size_t n, len[MAXREC];
  uint64_t off[MAXREC + 1];
} recs;

/* Byte j of record i. */
static uint8_t rec_byte(size_t i, size_t j) { return (uint8_t)(i * 131 + j * 7 + 3); }

/* Write r's records to path (r->off filled); 0 on success. */
static int put(const char *path, recs *r) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  uint64_t at = 0;
  for (size_t i = 0; i < r->n; i++) {
    size_t n = r->len[i];
    uint8_t *buf = malloc(n ? n : 1), h[TFR_HEADER], t[TFR_FOOTER];
    if (!buf) break;
    for (size_t j = 0; j < n; j++) buf[j] = rec_byte(i, j);
    tfr_frame_header(h, n);
    tfr_frame_footer(t, buf, n);
    r->off[i] = at;
    fwrite(h, 1, sizeof h, f);
    fwrite(buf, 1, n, f);
    fwrite(t, 1, sizeof t, f);
    free(buf);
    at += TFR_OVERHEAD + n;
  }
  r->off[r->n] = at;
  return fclose(f);
}

/* Records of varied lengths, and every 5th window's end straddled by a
 * header: it starts 1, 5, 11 or 12 bytes before the end of a window of a
 * read-ahead that starts after record 0. About `bytes` in all. */
static void lay_out(recs *r, uint64_t bytes) {
  size_t first = 300;
  uint64_t from = TFR_OVERHEAD + first, at = from;
  static const uint64_t before[] = {1, 5, 11, 12, 0};
  r->n = 0;
  r->len[r->n++] = first;
  for (uint64_t k = 1; at < bytes && r->n + 4000 < MAXREC; k++) {
    uint64_t target = from + k * W - before[k % 5];
    while (at + 2 * TFR_OVERHEAD + 900 < target) { /* the filler */
      size_t n = (r->n * 37) % 700 + 1;
      r->len[r->n++] = n;
      at += TFR_OVERHEAD + n;
    }
    size_t pad = (size_t)(target - at - TFR_OVERHEAD); /* ends where the header starts */
    r->len[r->n++] = pad;
    at += TFR_OVERHEAD + pad;
  }
}

/* The file's bytes (a malloc'd copy), size in *n. */
static uint8_t *slurp(const char *path, uint64_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *n = (uint64_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *p = malloc(*n ? *n : 1);
  if (p && fread(p, 1, *n, f) != *n) {
    free(p);
    p = NULL;
  }
  fclose(f);
  return p;
}

/* Open path uncompressed, reading ahead or not. */
static int open_file(const char *path, tfrecord_file *t, int ahead) {
  tfrecord_options o = {.compression = TFRECORD_NONE, .read_ahead = ahead};
  char *err = NULL;
  int rc = tfrecord_open(t, path, &o, &err);
  if (rc) check_note("    %s\n", err ? err : "?");
  free(err);
  return rc;
}

/* 1 when window w is the file's bytes (file) and holds the header at off. */
static int window_ok(const tfr_window *w, uint64_t off, const uint8_t *file, uint64_t size) {
  uint64_t end = (w->off + W + TFR_HEADER < size ? w->off + W + TFR_HEADER : size);
  return w->off <= off && off + TFR_HEADER <= w->off + w->len && w->len == end - w->off &&
         w->size == size && memcmp(w->data, file + w->off, (size_t)w->len) == 0;
}

/* Every header's window, in order; then jumps, going back, the edges. */
static void test_windows(const char *path, const recs *r) {
  uint64_t size = 0;
  uint8_t *file = slurp(path, &size);
  tfrecord_file t;
  if (!CHECK(file && open_file(path, &t, 1) == 0)) {
    free(file);
    return;
  }
  uint64_t from = r->off[1];
  tfr_ahead *a = tfr_ahead_start(&t.file, from, t.max_record);
  CHECK(a != NULL);
  size_t bad = 0, asked = 0, straddling = 0;
  tfr_window w;
  for (size_t i = 1; a && i < r->n; i++, asked++) {
    if (!tfr_ahead_window(a, r->off[i], &w) || !window_ok(&w, r->off[i], file, size)) bad++;
    uint64_t into = (r->off[i] - from) % W;
    straddling += into + TFR_HEADER > W;
  }
  check_note("    %zu of %zu headers without their window; %zu straddling\n", bad, asked,
             straddling);
  CHECK(asked + 1 == r->n && bad == 0 && straddling >= 4);
  if (a) {
    CHECK(tfr_ahead_window(a, r->off[1], &w) == 0); /* an earlier window */
    CHECK(tfr_ahead_window(a, size, &w) == 0);      /* past the end */
  }
  tfr_ahead_free(a);
  /* forward jumps of several windows (more than the ring) */
  a = tfr_ahead_start(&t.file, from, t.max_record);
  bad = 0;
  uint64_t jumps[] = {0, 1, 2 * W + 17, 7 * W + 3, 7 * W + 900, 8 * W - 12};
  for (size_t j = 0; a && j < sizeof jumps / sizeof *jumps; j++) {
    uint64_t off = from + jumps[j];
    if (off + TFR_HEADER > size) break;
    if (!tfr_ahead_window(a, off, &w) || !window_ok(&w, off, file, size)) bad++;
  }
  CHECK(a && bad == 0);
  CHECK(a && tfr_ahead_window(a, from - 1, &w) == 0); /* before the start */
  tfr_ahead_free(a);
  /* a thread allowed on one CPU only: none (this test's own affinity,
   * put back after) */
  cpu_set_t was, one;
  if (CHECK(sched_getaffinity(0, sizeof was, &was) == 0)) {
    int cpu = 0;
    while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &was)) cpu++;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
    a = tfr_ahead_start(&t.file, from, t.max_record);
    CHECK(a == NULL);
    tfr_ahead_free(a);
    CHECK(sched_setaffinity(0, sizeof was, &was) == 0);
    if (CPU_COUNT(&was) >= 2) CHECK((a = tfr_ahead_start(&t.file, from, t.max_record)) != NULL);
    tfr_ahead_free(a);
  }
  /* freed after one window, the helper in the middle of the ring */
  a = tfr_ahead_start(&t.file, from, t.max_record);
  CHECK(a && tfr_ahead_window(a, from, &w) == 1);
  tfr_ahead_free(a);
  tfrecord_close(&t);
  free(file);
}

/* Index path with the read-ahead and without: the same offsets, count and
 * tail error; `count` records, tail naming `what` (or none when NULL). */
static void same_index(const char *path, uint64_t count, const char *what, const char *label) {
  tfrecord_file a, b;
  char *err = NULL;
  if (!CHECK(open_file(path, &a, 1) == 0)) return;
  if (!CHECK(open_file(path, &b, 0) == 0)) {
    tfrecord_close(&a);
    return;
  }
  int ra = tfrecord_index(&a, &err), rb = tfrecord_index(&b, &err);
  check_note("    %s: read ahead %llu records (%s), without %llu (%s)\n", label,
             (unsigned long long)a.count, a.tail_err ? a.tail_err : "no error",
             (unsigned long long)b.count, b.tail_err ? b.tail_err : "no error");
  int same = ra == 0 && rb == 0 && a.count == count && b.count == count &&
             memcmp(a.offsets, b.offsets, (count + 1) * sizeof *a.offsets) == 0 &&
             !a.tail_err == !b.tail_err && (!a.tail_err || !strcmp(a.tail_err, b.tail_err)) &&
             (what ? a.tail_err && strstr(a.tail_err, what) && strstr(a.tail_err, path)
                   : !a.tail_err);
  CHECK_MSG(same, "%s", label);
  free(err);
  tfrecord_close(&a);
  tfrecord_close(&b);
}

/* Flip one bit of the byte at `at`. */
static void flip(const char *path, uint64_t at) {
  FILE *f = fopen(path, "r+b");
  if (!f) return;
  fseek(f, (long)at, SEEK_SET);
  int c = fgetc(f);
  fseek(f, (long)at, SEEK_SET);
  fputc(c ^ 0x10, f);
  fclose(f);
}

/* The first record past `past`. */
static size_t record_past(const recs *r, uint64_t past) {
  size_t i = 0;
  while (i < r->n && r->off[i] <= past) i++;
  return i;
}

static void test_indexes(const char *path, recs *r) {
  same_index(path, r->n, NULL, "a good file of straddled windows");
  /* the offsets equal the ones written */
  tfrecord_file t;
  char *err = NULL;
  if (CHECK(open_file(path, &t, 1) == 0)) {
    CHECK(tfrecord_index(&t, &err) == 0 && t.count == r->n &&
          memcmp(t.offsets, r->off, (r->n + 1) * sizeof *r->off) == 0);
    tfrecord_close(&t);
  }
  free(err);
  size_t k = record_past(r, 5 * W + 5000); /* the 6th window */
  flip(path, r->off[k] + 9);                /* its length CRC */
  char what[96];
  snprintf(what, sizeof what, "record %zu at offset %llu: length CRC", k,
           (unsigned long long)r->off[k]);
  same_index(path, k, what, "a damaged length CRC in the 6th window");
  flip(path, r->off[k] + 9);
  /* cut in the middle of a record of the 7th window */
  k = record_past(r, 6 * W + 100);
  CHECK(truncate(path, (off_t)(r->off[k] + 20)) == 0);
  snprintf(what, sizeof what, "record %zu at offset %llu", k, (unsigned long long)r->off[k]);
  same_index(path, k, what, "a file cut mid-record");
}

/* A file truncated after it was opened: the helper's reads past the new
 * end fail; the pass then reads on the slow way and says so. */
static void test_truncated_after_open(const char *path, const recs *r) {
  tfrecord_file a, b;
  char *err = NULL;
  if (!CHECK(open_file(path, &a, 1) == 0 && open_file(path, &b, 0) == 0)) return;
  size_t k = record_past(r, 4 * W + 10);
  CHECK(truncate(path, (off_t)(r->off[k] + 3)) == 0);
  int ra = tfrecord_index(&a, &err), rb = tfrecord_index(&b, &err);
  check_note("    %llu (%s) against %llu (%s)\n", (unsigned long long)a.count,
             a.tail_err ? a.tail_err : "-", (unsigned long long)b.count,
             b.tail_err ? b.tail_err : "-");
  CHECK(ra == 0 && rb == 0 && a.count == b.count && a.count <= k && a.count >= k - 1 &&
        a.tail_err && b.tail_err && !strcmp(a.tail_err, b.tail_err) &&
        strstr(a.tail_err, path) && strstr(a.tail_err, "offset"));
  free(err);
  tfrecord_close(&a);
  tfrecord_close(&b);
}

int main(void) {
  if (fx_temp_dir(tmpdir, sizeof tmpdir, "tfahead", __FILE__)) return 1;
  char path[128];
  snprintf(path, sizeof path, "%s/ahead.tfrecord", tmpdir);
  static recs r;
  lay_out(&r, 9 * W + 12345);
  if (CHECK(put(path, &r) == 0 && r.off[r.n] > 9 * W)) {
    test_windows(path, &r);
    test_indexes(path, &r);
  }
  /* a 3 MiB record in the middle: the walker jumps past the ring */
  lay_out(&r, 6 * W);
  r.len[r.n / 2] = (size_t)3 * W;
  if (CHECK(put(path, &r) == 0)) same_index(path, r.n, NULL, "a 3 MiB record in the middle");
  /* a first record of 100 KiB: no read-ahead, the same index */
  lay_out(&r, 6 * W);
  r.len[0] = 100 << 10;
  if (CHECK(put(path, &r) == 0)) same_index(path, r.n, NULL, "a 100 KiB first record");
  lay_out(&r, 9 * W);
  if (CHECK(put(path, &r) == 0)) test_truncated_after_open(path, &r);
  fx_remove_tree(tmpdir);
  return check_exit();
}
