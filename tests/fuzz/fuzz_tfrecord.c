/* fuzz_tfrecord.c - libFuzzer harness for the TFRecord framing, the index
 * pass and the .idx sidecar check (src/formats/tfrecord/) without SQLite.
 *
 * Input: one option byte, then (bit 3) a u16 LE length and that many bytes
 * of .idx sidecar text, then the bytes of a TFRecord file.
 *   bits 0-1  compression: 0 auto, 1 none, 2 gzip, 3 zlib
 *   bit  2    skip the data CRCs (verify=false)
 *   bit  3    an .idx sidecar comes first
 *   bits 4-7  unused
 * The file is opened from memory; every record (at most MAX_RECORDS) is
 * read in order and touched; the index is built (or taken from the
 * sidecar when it is accepted) and records are read by number. Contract
 * checks (abort = finding): a failing call sets *err; records come
 * numbered 0, 1, ... at growing offsets, uncompressed ones inside the
 * input; a sequential read that ends cleanly and the index pass find the
 * same records at the same offsets; with skip_data_crc the index and the
 * sequential read stop at the same record; a record read by number equals
 * the one read in order; reads past the index are refused; an accepted
 * sidecar's records tile the file.
 *
 * Build: make fuzz. Run: tests/fuzz/run.sh SECONDS fuzz_tfrecord. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "formats/tfrecord/tfrecord.h"
#include "formats/tfrecord/tfrecord_crc.h"
#include "formats/tfrecord/tfrecord_frame.h"
#include "formats/tfrecord/tfrecord_idx.h"

#define MAX_RECORDS 10000
/* Records above this are refused (the limit logic is the same code as
 * for the 1 GiB default; a compressed bomb stays small). */
#define FUZZ_MAX_RECORD ((uint64_t)16 << 20)

#define FUZZ_HARNESS "fuzz_tfrecord"
#include "fuzz_common.h"
#define fail(what, g) fuzz_fail("%s (record %llu)", (what), (unsigned long long)(g))
#define expect_err(err, g) \
  fuzz_expect_err((err), "error without a message (record %llu)", (unsigned long long)(g))

/* What the sequential read saw of each record. */
typedef struct seen {
  uint64_t off, len;
  uint32_t crc;
} seen;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  uint8_t sel = data[0];
  const uint8_t *p = data + 1;
  size_t n = size - 1;
  const uint8_t *idx = NULL;
  size_t nidx = 0;
  if (sel & 8) {
    if (n < 2) return 0;
    nidx = (size_t)(p[0] | p[1] << 8);
    if (nidx > n - 2) nidx = n - 2;
    idx = p + 2;
    p += 2 + nidx;
    n -= 2 + nidx;
  }
  tfrecord_options o = {.compression = (tfrecord_compression)(sel & 3),
                        .skip_data_crc = (sel >> 2) & 1,
                        .max_record = FUZZ_MAX_RECORD};
  tfrecord_file t;
  char *err = NULL;
  if (tfrecord_open_memory(&t, "fuzz.tfrecord", p, n, &o, &err)) {
    expect_err(&err, 0);
    return 0;
  }
  if (t.compression == TFRECORD_AUTO) fail("compression left at auto", 0);
  int plain = t.compression == TFRECORD_NONE;

  /* in order */
  seen *s = calloc(MAX_RECORDS, sizeof *s);
  if (!s) return 0;
  tfrecord_cursor c;
  tfrecord_rec r;
  if (tfrecord_cursor_init(&c, &t, &err)) fail("cursor init failed", 0);
  uint64_t k = 0, last_end = 0;
  int rc;
  while (k < MAX_RECORDS && (rc = tfrecord_next(&c, &r, &err)) == 1) {
    if (r.index != k) fail("record numbers out of order", k);
    if (r.offset != last_end) fail("a record does not start where the last ended", k);
    if (r.len && !r.data) fail("NULL record with a length", k);
    if (plain && r.len && (r.data < p || r.data + r.len > p + n))
      fail("record outside the input", k);
    fuzz_touch(r.data, r.len);
    s[k].off = r.offset;
    s[k].len = r.len;
    s[k].crc = tfr_crc32c(r.data, r.len);
    last_end = r.offset + TFR_OVERHEAD + r.len;
    if (plain && last_end > n) fail("a record ends past the input", k);
    k++;
  }
  int clean = k < MAX_RECORDS && rc == 0;
  if (k < MAX_RECORDS && rc < 0) expect_err(&err, k);
  tfrecord_cursor_free(&c);

  /* the index: the sidecar if it is accepted, else the pass */
  int from_idx = 0;
  if (idx) {
    if (tfrecord_idx_use(&t, "fuzz.idx", idx, nidx, &err) == 0) {
      from_idx = 1;
      if (!plain) fail("a sidecar accepted for a compressed file", 0);
      uint64_t end = 0;
      for (uint64_t i = 0; i < t.count; i++) {
        if (t.offsets[i] != end) fail("accepted sidecar: records do not tile", i);
        end += TFR_OVERHEAD + tfrecord_len(&t, i);
      }
      if (end != n) fail("accepted sidecar: records do not end at the file's end", 0);
      if (t.offsets[t.count] != end) fail("accepted sidecar: the end entry is not the end", 0);
    } else {
      expect_err(&err, 0);
      if (t.indexed) fail("a refused sidecar left an index", 0);
    }
  }
  if (!from_idx) {
    if (tfrecord_index(&t, &err)) {
      expect_err(&err, 0);
      goto out;
    }
    if (clean && (t.count != k || t.tail_err))
      fail("the index pass and a clean sequential read disagree", k);
    if (!clean && k < MAX_RECORDS && t.count < k)
      fail("the index pass found fewer records than a read", k);
    if (o.skip_data_crc && k < MAX_RECORDS && t.count != k)
      fail("without data CRCs the index and the read stop apart", k);
    for (uint64_t i = 0; i < t.count && i < k; i++)
      if (t.offsets[i] != s[i].off || tfrecord_len(&t, i) != s[i].len)
        fail("index offset or length differs from the read", i);
    if (t.tail_err && !*t.tail_err) fail("empty tail error", t.count);
    if (t.count && t.count <= k &&
        t.offsets[t.count] != s[t.count - 1].off + TFR_OVERHEAD + s[t.count - 1].len)
      fail("the index's end entry is not where its last record ends", t.count);
  }

  /* by number: forwards (compressed: no rewinds), then the last and the
   * first (one rewind) */
  if (tfrecord_cursor_init(&c, &t, &err)) fail("cursor init failed", 0);
  uint64_t lim = t.count < MAX_RECORDS ? t.count : MAX_RECORDS;
  for (uint64_t i = 0; i < lim; i++) {
    if (tfrecord_read_at(&c, i, &r, &err)) {
      expect_err(&err, i);
      if (!from_idx && o.skip_data_crc) fail("an indexed record failed to read", i);
      continue;
    }
    fuzz_touch(r.data, r.len);
    if (r.index != i) fail("read_at returned another record", i);
    if (!from_idx && i < k && (r.len != s[i].len || tfr_crc32c(r.data, r.len) != s[i].crc))
      fail("read_at differs from the read in order", i);
  }
  if (t.count > 0) {
    if (tfrecord_read_at(&c, t.count - 1, &r, &err)) expect_err(&err, t.count - 1);
    if (tfrecord_read_at(&c, 0, &r, &err)) expect_err(&err, 0);
  }
  if (tfrecord_read_at(&c, t.count, &r, &err) == 0)
    fail("read at the index's end succeeded", t.count);
  expect_err(&err, t.count);
  if (tfrecord_read_at(&c, t.count + 1, &r, &err) == 0)
    fail("read past the index's end succeeded", t.count + 1);
  expect_err(&err, t.count + 1);
  tfrecord_cursor_free(&c);
out:
  free(s);
  tfrecord_close(&t);
  return 0;
}
