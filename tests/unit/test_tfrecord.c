/* test_tfrecord.c - the TFRecord bytes level (src/formats/tfrecord/):
 * CRC-32C against RFC 3720's vectors, every fixture of
 * tests/fixtures/tfrecord/ (written by make_fixtures.py with
 * python3-crc32c, python3-protobuf and Python's gzip / zlib) read equal to
 * its expected/<file>.json, the damaged ones failing with the file, record
 * and offset after their intact records, the index pass equal to a
 * sequential read (on the fixtures and on every prefix of one), the .idx
 * sidecar accepted and refused, the writer byte-identical to the
 * uncompressed fixture and read back (by us and by Python's gzip / zlib)
 * compressed, and the fuzz inputs of tests/fuzz/regressions/tfrecord
 * replayed through the reader. */
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"
#include "core/append_file.h"
#include "core/cancel.h"
#include "formats/tfrecord/tfrecord.h"
#include "formats/tfrecord/tfrecord_crc.h"
#include "formats/tfrecord/tfrecord_frame.h"
#include "formats/tfrecord/tfrecord_idx.h"
#include "formats/tfrecord/tfrecord_inflate.h"
#include "formats/tfrecord/tfrecord_set.h"
#include "formats/tfrecord/tfrecord_staged.h"
#include "formats/tfrecord/tfrecord_writer.h"

#define FIX "tests/fixtures/tfrecord/"
#define REGS "tests/fuzz/regressions/tfrecord"

/* ------------------------------------------------------------------ */
/* Helpers                                                              */

/* The records of an expected JSON as bytes: recs[i], lens[i]. */
typedef struct expected {
  json_t *j;
  size_t n;
  uint8_t **recs;
  size_t *lens;
  const char *compression;
  uint64_t indexed;
  json_t *error; /* NULL or {"record", "offset", "what"} */
} expected;

static int hexval(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int load_expected(const char *name, expected *e) {
  memset(e, 0, sizeof *e);
  char path[512];
  snprintf(path, sizeof path, FIX "expected/%s.json", name);
  json_error_t je;
  e->j = json_load_file(path, 0, &je);
  if (!e->j) {
    check_note("    %s: %s\n", path, je.text);
    return -1;
  }
  json_t *recs = json_object_get(e->j, "records");
  e->n = json_array_size(recs);
  e->recs = calloc(e->n + 1, sizeof *e->recs);
  e->lens = calloc(e->n + 1, sizeof *e->lens);
  for (size_t i = 0; i < e->n; i++) {
    const char *h = json_string_value(json_array_get(recs, i));
    size_t hl = h ? strlen(h) : 0;
    e->lens[i] = hl / 2;
    e->recs[i] = malloc(hl / 2 + 1);
    for (size_t k = 0; k < hl / 2; k++)
      e->recs[i][k] = (uint8_t)(hexval(h[2 * k]) << 4 | hexval(h[2 * k + 1]));
  }
  e->compression = json_string_value(json_object_get(e->j, "compression"));
  e->indexed = (uint64_t)json_integer_value(json_object_get(e->j, "indexed"));
  e->error = json_object_get(e->j, "error");
  if (json_is_null(e->error)) e->error = NULL;
  return 0;
}

static void free_expected(expected *e) {
  for (size_t i = 0; i < e->n; i++) free(e->recs[i]);
  free(e->recs);
  free(e->lens);
  json_decref(e->j);
}

static int same_rec(const tfrecord_rec *r, const expected *e, size_t i) {
  return i < e->n && r->len == e->lens[i] &&
         (r->len == 0 || memcmp(r->data, e->recs[i], r->len) == 0);
}

/* "record <k> at offset <off>" of an expected error. */
static void error_place(const json_t *error, char *out, size_t n) {
  snprintf(out, n, "record %lld at offset %lld",
           (long long)json_integer_value(json_object_get(error, "record")),
           (long long)json_integer_value(json_object_get(error, "offset")));
}

/* ------------------------------------------------------------------ */
/* CRC                                                                  */

/* CRC-32C bit by bit (reflected polynomial 0x82f63b78): the reference
 * for every length, whichever path tfr_crc32c takes for it. */
static uint32_t crc_bitwise(const uint8_t *p, size_t n) {
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < n; i++) {
    crc ^= p[i];
    for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
  }
  return ~crc;
}

static void test_crc(void) {
  /* every length from 0 to 300 at two alignments: the short paths (the
   * CPU's instruction, ISA-L's table) and ISA-L's folding agree */
  static uint8_t ramp[320];
  for (size_t i = 0; i < sizeof ramp; i++) ramp[i] = (uint8_t)(i * 37 + 11);
  int same = 1;
  for (size_t n = 0; n <= 300; n++)
    for (size_t at = 0; at < 2; at++)
      if (tfr_crc32c(ramp + at, n) != crc_bitwise(ramp + at, n)) same = 0;
  CHECK(same);
  uint8_t zeros[32] = {0}, ones[32], inc[32], dec[32];
  memset(ones, 0xff, sizeof ones);
  for (int i = 0; i < 32; i++) {
    inc[i] = (uint8_t)i;
    dec[i] = (uint8_t)(31 - i);
  }
  /* RFC 3720 B.4 */
  CHECK(tfr_crc32c(zeros, 32) == 0x8a9136aau);
  CHECK(tfr_crc32c(ones, 32) == 0x62a8ab43u);
  CHECK(tfr_crc32c(inc, 32) == 0x46dd794eu);
  CHECK(tfr_crc32c(dec, 32) == 0x113fdb5cu);
  static const uint8_t read10[48] = {
      0x01, 0xc0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
      0x14, 0, 0, 0, 0, 0, 0x04, 0, 0, 0, 0, 0x14, 0, 0, 0, 0x18,
      0x28, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0};
  CHECK(tfr_crc32c(read10, sizeof read10) == 0xd9963a56u);
  CHECK(tfr_crc32c("", 0) == 0);
  /* the "123456789" check value of CRC-32C */
  CHECK(tfr_crc32c("123456789", 9) == 0xe3069283u);
  /* masking: TensorFlow's definition, and unmask undoes it */
  uint32_t c = 0x12345678u;
  CHECK(tfr_mask(c) == (((c >> 15) | (c << 17)) + 0xa282ead8u));
  CHECK(tfr_unmask(tfr_mask(c)) == c);
  CHECK(tfr_unmask(tfr_mask(0xffffffffu)) == 0xffffffffu);
  /* a header made by the framing parses back, one flipped bit does not */
  uint8_t h[TFR_HEADER];
  tfr_frame_header(h, 1234567);
  uint64_t n;
  uint32_t s, cc;
  CHECK(tfr_frame_parse(h, &n, &s, &cc) == 0 && n == 1234567);
  h[3] ^= 4;
  CHECK(tfr_frame_parse(h, &n, &s, &cc) == -1 && s != cc);
}

/* ------------------------------------------------------------------ */
/* Fixtures                                                             */

static const char *FIXTURES[] = {
    "examples.tfrecord", "examples.gzip.tfrecord", "examples.zlib.tfrecord",
    "examples.multi.tfrecord", "empty.tfrecord", "bad_length_crc.tfrecord",
    "bad_data_crc.tfrecord", "cut.tfrecord", "cut.gzip.tfrecord"};
#define NFIX (sizeof FIXTURES / sizeof *FIXTURES)

static tfrecord_compression compression_of(const char *name) {
  return !name ? TFRECORD_AUTO
         : strcmp(name, "gzip") == 0 ? TFRECORD_GZIP
         : strcmp(name, "zlib") == 0 ? TFRECORD_ZLIB
                                     : TFRECORD_NONE;
}

/* Read path sequentially with options o and compare with e. */
static void sequential(const char *path, const tfrecord_options *o, const expected *e,
                       const char *how) {
  tfrecord_file t;
  char *err = NULL;
  int rc = tfrecord_open(&t, path, o, &err);
  CHECK_MSG(rc == 0, "%s (%s): open: %s", path, how, err ? err : "");
  if (rc) {
    free(err);
    return;
  }
  CHECK_STR(tfrecord_compression_name(t.compression), e->compression);
  tfrecord_cursor c;
  CHECK(tfrecord_cursor_init(&c, &t, &err) == 0);
  size_t i = 0, bad = 0;
  tfrecord_rec r;
  while ((rc = tfrecord_next(&c, &r, &err)) == 1) {
    if (!same_rec(&r, e, i) || r.index != i) bad++;
    i++;
  }
  check_note("    %s (%s): %zu records, %zu differ\n", path, how, i, bad);
  CHECK(i == e->n && bad == 0);
  if (e->error) {
    char place[96];
    error_place(e->error, place, sizeof place);
    CHECK_MSG(rc == -1, "%s (%s): ends with an error", path, how);
    CHECK_CONTAINS(err, path);
    CHECK_CONTAINS(err, place);
    CHECK_CONTAINS(err, json_string_value(json_object_get(e->error, "what")));
  } else {
    CHECK_MSG(rc == 0, "%s (%s): clean end; got %s", path, how, err ? err : "");
  }
  free(err);
  tfrecord_cursor_free(&c);
  tfrecord_close(&t);
}

/* Index path; compare the index with e and read every record by number,
 * backwards (compressed: a rewind per record) and forwards. */
static void indexed(const char *path, const expected *e) {
  tfrecord_file t;
  char *err = NULL;
  if (tfrecord_open(&t, path, NULL, &err)) {
    CHECK_MSG(0, "%s: open: %s", path, err);
    free(err);
    return;
  }
  CHECK(tfrecord_index(&t, &err) == 0);
  check_note("    %s: indexed %llu, want %llu\n", path, (unsigned long long)t.count,
             (unsigned long long)e->indexed);
  CHECK(t.count == e->indexed);
  /* the index pass stops where the headers stop: at a length CRC or a cut */
  int header_error = e->error && e->indexed == e->n;
  CHECK_MSG(header_error ? t.tail_err != NULL : t.tail_err == NULL, "%s: tail_err %s",
            path, t.tail_err ? t.tail_err : "(none)");
  if (header_error && t.tail_err) {
    char place[96];
    error_place(e->error, place, sizeof place);
    CHECK_CONTAINS(t.tail_err, place);
  }
  tfrecord_cursor c;
  CHECK(tfrecord_cursor_init(&c, &t, &err) == 0);
  size_t bad = 0, failed = 0;
  tfrecord_rec r;
  for (uint64_t k = t.count; k-- > 0;) {
    int rc = tfrecord_read_at(&c, k, &r, &err);
    if (k < e->n) bad += rc != 0 || !same_rec(&r, e, k) || r.offset != t.offsets[k];
    else failed += rc != 0; /* past a bad data CRC: read only when intact */
    free(err);
    err = NULL;
  }
  for (uint64_t k = 0; k < t.count && k < e->n; k++) {
    int rc = tfrecord_read_at(&c, k, &r, &err);
    bad += rc != 0 || !same_rec(&r, e, k);
    free(err);
    err = NULL;
  }
  check_note("    %s: %zu records differ by number, %zu past the expected fail\n", path,
             bad, failed);
  CHECK(bad == 0 && failed == (e->indexed > e->n ? 1 : 0));
  /* record `count`: the tail error, or past the end */
  CHECK(tfrecord_read_at(&c, t.count, &r, &err) == -1);
  CHECK_CONTAINS(err, header_error ? "record" : "past the last record");
  free(err);
  err = NULL;
  CHECK(tfrecord_read_at(&c, t.count + 1, &r, &err) == -1);
  CHECK_CONTAINS(err, "past the last record");
  free(err);
  tfrecord_cursor_free(&c);
  tfrecord_close(&t);
}

static void test_fixtures(void) {
  for (size_t f = 0; f < NFIX; f++) {
    expected e;
    CHECK(load_expected(FIXTURES[f], &e) == 0);
    if (!e.j) continue;
    char path[512];
    snprintf(path, sizeof path, FIX "%s", FIXTURES[f]);
    sequential(path, NULL, &e, "detected");
    tfrecord_options o = {.compression = compression_of(e.compression)};
    sequential(path, &o, &e, "given");
    indexed(path, &e);
    free_expected(&e);
  }
  /* the empty file: no records, nothing to index */
  {
    tfrecord_file t;
    char *err = NULL;
    CHECK(tfrecord_open(&t, FIX "empty.tfrecord", NULL, &err) == 0);
    CHECK(tfrecord_index(&t, &err) == 0 && t.count == 0 && !t.tail_err);
    tfrecord_close(&t);
    /* given as gzip or zlib: an empty stream, no records (the fuzzer's
     * crash-empty-gzip-null-offset) */
    for (int comp = TFRECORD_GZIP; comp <= TFRECORD_ZLIB; comp++) {
      tfrecord_options o = {.compression = (tfrecord_compression)comp};
      tfrecord_cursor c;
      tfrecord_rec r;
      CHECK(tfrecord_open(&t, FIX "empty.tfrecord", &o, &err) == 0);
      CHECK(tfrecord_cursor_init(&c, &t, &err) == 0);
      CHECK(tfrecord_next(&c, &r, &err) == 0);
      CHECK(tfrecord_index(&t, &err) == 0 && t.count == 0 && !t.tail_err);
      tfrecord_cursor_free(&c);
      tfrecord_close(&t);
    }
  }
}

/* verify=false: the damaged data CRC is not looked at; every record of
 * bad_data_crc reads, equal to examples.tfrecord's (only a CRC differs). */
static void test_skip_data_crc(void) {
  expected e;
  CHECK(load_expected("examples.tfrecord", &e) == 0);
  tfrecord_options o = {.skip_data_crc = 1};
  expected alt = e;
  alt.compression = "none";
  sequential(FIX "bad_data_crc.tfrecord", &o, &alt, "verify=false");
  /* and the length CRCs are still checked */
  expected bl;
  CHECK(load_expected("bad_length_crc.tfrecord", &bl) == 0);
  sequential(FIX "bad_length_crc.tfrecord", &o, &bl, "verify=false");
  free_expected(&bl);
  free_expected(&e);
}

/* A compression given wrongly fails on record 0 (it is not silently
 * read as something else). */
static void test_wrong_compression(void) {
  tfrecord_options o = {.compression = TFRECORD_GZIP};
  tfrecord_file t;
  char *err = NULL;
  CHECK(tfrecord_open(&t, FIX "examples.tfrecord", &o, &err) == 0);
  tfrecord_cursor c;
  tfrecord_rec r;
  CHECK(tfrecord_cursor_init(&c, &t, &err) == 0);
  CHECK(tfrecord_next(&c, &r, &err) == -1);
  CHECK_CONTAINS(err, "record 0 at offset 0");
  CHECK_CONTAINS(err, "gzip");
  free(err);
  tfrecord_cursor_free(&c);
  tfrecord_close(&t);
  o.compression = TFRECORD_NONE;
  err = NULL;
  CHECK(tfrecord_open(&t, FIX "examples.zlib.tfrecord", &o, &err) == 0);
  CHECK(tfrecord_cursor_init(&c, &t, &err) == 0);
  CHECK(tfrecord_next(&c, &r, &err) == -1);
  CHECK_CONTAINS(err, "length CRC mismatch");
  free(err);
  tfrecord_cursor_free(&c);
  tfrecord_close(&t);
}

/* Every prefix of examples.tfrecord (and of its gzip form): the index
 * pass finds exactly the records a sequential read returns, and both stop
 * at the same place. */
static void prefixes(const char *path) {
  size_t n;
  uint8_t *b = fx_slurp(path, &n);
  CHECK(b != NULL);
  size_t mismatched = 0, cut_ok = 0, cuts = 0;
  for (size_t len = 0; b && len <= n; len++) {
    tfrecord_file t;
    char *err = NULL;
    tfrecord_options o = {.compression = strstr(path, "gzip") ? TFRECORD_GZIP
                                                              : TFRECORD_NONE};
    if (tfrecord_open_memory(&t, "prefix", b, len, &o, &err)) {
      mismatched++;
      free(err);
      continue;
    }
    tfrecord_cursor c;
    tfrecord_rec r;
    uint64_t seq = 0;
    int rc = -1;
    if (tfrecord_cursor_init(&c, &t, &err) == 0)
      while ((rc = tfrecord_next(&c, &r, &err)) == 1) seq++;
    char *seq_err = err;
    err = NULL;
    if (tfrecord_index(&t, &err) || t.count != seq || (rc == 0) != (t.tail_err == NULL))
      mismatched++;
    if (rc == -1) {
      cuts++;
      cut_ok += seq_err && strstr(seq_err, "prefix: record ") &&
                (strstr(seq_err, "cut short") != NULL);
    }
    free(seq_err);
    free(err);
    tfrecord_cursor_free(&c);
    tfrecord_close(&t);
  }
  check_note("    %s: %zu of %zu prefixes: index != sequential\n", path, mismatched, n + 1);
  CHECK(mismatched == 0);
  check_note("    %s: %zu of %zu cut prefixes say 'cut short'\n", path, cut_ok, cuts);
  CHECK(cuts > 0 && cut_ok == cuts);
  free(b);
}

static void test_prefixes(void) {
  prefixes(FIX "examples.tfrecord");
  prefixes(FIX "examples.gzip.tfrecord");
}

/* ------------------------------------------------------------------ */
/* .idx sidecar                                                         */

/* tfrecord_idx_use of text on a fresh open of path: its rc, *err kept. */
static int idx_text(const char *path, const char *text, tfrecord_file *t, char **err) {
  if (tfrecord_open(t, path, NULL, err)) return -2;
  return tfrecord_idx_use(t, "test.idx", (const uint8_t *)text, strlen(text), err);
}

static void test_idx(void) {
  tfrecord_file a, b;
  char *err = NULL;
  /* the fixture's sidecar: accepted, equal to the index pass */
  CHECK(tfrecord_open(&a, FIX "examples.tfrecord", NULL, &err) == 0);
  char *ip = tfrecord_idx_path(FIX "examples.tfrecord");
  CHECK_STR(ip, FIX "examples.tfrecord.idx");
  int rc = tfrecord_idx_load(&a, ip, &err);
  CHECK_MSG(rc == 0, "idx refused: %s", err ? err : "");
  free(ip);
  CHECK(tfrecord_open(&b, FIX "examples.tfrecord", NULL, &err) == 0);
  CHECK(tfrecord_index(&b, &err) == 0);
  CHECK(a.indexed && a.count == b.count && a.count == 12);
  int same = a.count == b.count;
  for (uint64_t i = 0; same && i < a.count; i++)
    same = a.offsets[i] == b.offsets[i] && tfrecord_len(&a, i) == tfrecord_len(&b, i);
  CHECK(same);
  /* records by number through the sidecar's index */
  expected e;
  CHECK(load_expected("examples.tfrecord", &e) == 0);
  tfrecord_cursor c;
  tfrecord_rec r;
  CHECK(tfrecord_cursor_init(&c, &a, &err) == 0);
  size_t bad = 0;
  for (uint64_t k = a.count; k-- > 0;)
    bad += tfrecord_read_at(&c, k, &r, &err) != 0 || !same_rec(&r, &e, k);
  CHECK(bad == 0);
  tfrecord_cursor_free(&c);
  free_expected(&e);
  /* no sidecar: 1, nothing changed */
  tfrecord_file t;
  CHECK(tfrecord_open(&t, FIX "cut.tfrecord", NULL, &err) == 0);
  CHECK(tfrecord_idx_load(&t, FIX "cut.tfrecord.idx", &err) == 1 && !t.indexed);
  /* another file's sidecar: its records run past the end */
  CHECK(tfrecord_idx_load(&t, FIX "examples.tfrecord.idx", &err) == -1 && !t.indexed);
  CHECK_CONTAINS(err, "runs past the end");
  tfrecord_close(&t);
  /* a compressed file refuses any sidecar */
  CHECK(tfrecord_open(&t, FIX "examples.gzip.tfrecord", NULL, &err) == 0);
  CHECK(tfrecord_idx_load(&t, FIX "examples.tfrecord.idx", &err) == -1);
  CHECK_CONTAINS(err, "uncompressed files only");
  tfrecord_close(&t);

  /* hand-made sidecars for examples.tfrecord (a.offsets are right) */
  ds_buf good = {0};
  for (uint64_t i = 0; i < a.count; i++)
    ds_buf_printf(&good, "%llu %llu\n", (unsigned long long)a.offsets[i],
                  (unsigned long long)(tfrecord_len(&a, i) + TFR_OVERHEAD));
  ds_buf_append(&good, "", 1);
  char *text = (char *)good.data;
  CHECK(idx_text(FIX "examples.tfrecord", text, &t, &err) == 0 && t.count == 12);
  tfrecord_close(&t);
  /* CRLF line ends and a missing last newline are fine */
  ds_buf crlf = {0};
  for (uint64_t i = 0; i < a.count; i++)
    ds_buf_printf(&crlf, "%llu %llu%s", (unsigned long long)a.offsets[i],
                  (unsigned long long)(tfrecord_len(&a, i) + TFR_OVERHEAD),
                  i + 1 < a.count ? "\r\n" : "");
  ds_buf_append(&crlf, "", 1);
  CHECK(idx_text(FIX "examples.tfrecord", (char *)crlf.data, &t, &err) == 0 &&
        t.count == 12);
  tfrecord_close(&t);
  ds_buf_free(&crlf);
  /* one line left out: the offsets do not follow each other */
  char *nl = strchr(text, '\n');
  char *drop = ds_strf("%.*s%s", (int)(nl - text + 1), text, strchr(nl + 1, '\n') + 1);
  CHECK(idx_text(FIX "examples.tfrecord", drop, &t, &err) == -1 && !t.indexed);
  CHECK_CONTAINS(err, "test.idx: line 2: offset");
  tfrecord_close(&t);
  free(drop);
  /* the last line left out: the records end before the file does */
  size_t len = strlen(text);
  char *last = text + len - 1;
  while (last > text && last[-1] != '\n') last--;
  char *trunc = ds_strf("%.*s", (int)(last - text), text);
  CHECK(idx_text(FIX "examples.tfrecord", trunc, &t, &err) == -1);
  CHECK_CONTAINS(err, "its records end at offset");
  tfrecord_close(&t);
  free(trunc);
  /* not numbers */
  CHECK(idx_text(FIX "examples.tfrecord", "0 x\n", &t, &err) == -1);
  CHECK_CONTAINS(err, "line 1: not \"<offset> <size>\"");
  tfrecord_close(&t);
  /* a record smaller than a frame */
  CHECK(idx_text(FIX "examples.tfrecord", "0 8\n", &t, &err) == -1);
  CHECK_CONTAINS(err, "at least 16");
  tfrecord_close(&t);
  /* chained and summing to the size, but not where the records are: two
   * records swapped in size (first and last headers are checked) */
  ds_buf swapped = {0};
  uint64_t s0 = tfrecord_len(&a, 0) + TFR_OVERHEAD, s1 = tfrecord_len(&a, 1) + TFR_OVERHEAD;
  CHECK(s0 != s1);
  ds_buf_printf(&swapped, "0 %llu\n%llu %llu\n", (unsigned long long)s1,
                (unsigned long long)s1, (unsigned long long)s0);
  for (uint64_t i = 2; i < a.count; i++)
    ds_buf_printf(&swapped, "%llu %llu\n", (unsigned long long)a.offsets[i],
                  (unsigned long long)(tfrecord_len(&a, i) + TFR_OVERHEAD));
  ds_buf_append(&swapped, "", 1);
  CHECK(idx_text(FIX "examples.tfrecord", (char *)swapped.data, &t, &err) == -1);
  CHECK_CONTAINS(err, "line 1: the record at offset 0");
  tfrecord_close(&t);
  ds_buf_free(&swapped);
  /* records 1 and 2 swapped in size: the first and last headers agree, so
   * the sidecar is taken; reading record 1 or 2 then fails (the header
   * disagrees with the sidecar), records 0 and 3 read */
  ds_buf mid = {0};
  uint64_t m1 = tfrecord_len(&a, 1) + TFR_OVERHEAD, m2 = tfrecord_len(&a, 2) + TFR_OVERHEAD;
  CHECK(m1 != m2);
  for (uint64_t i = 0; i < a.count; i++) {
    uint64_t off = i == 2 ? a.offsets[1] + m2 : a.offsets[i];
    uint64_t sz = i == 1 ? m2 : i == 2 ? m1 : tfrecord_len(&a, i) + TFR_OVERHEAD;
    ds_buf_printf(&mid, "%llu %llu\n", (unsigned long long)off, (unsigned long long)sz);
  }
  ds_buf_append(&mid, "", 1);
  CHECK(idx_text(FIX "examples.tfrecord", (char *)mid.data, &t, &err) == 0);
  CHECK(tfrecord_cursor_init(&c, &t, &err) == 0);
  CHECK(tfrecord_read_at(&c, 1, &r, &err) == -1);
  CHECK_CONTAINS(err, "record 1 at offset");
  CHECK_CONTAINS(err, "the index");
  CHECK(tfrecord_read_at(&c, 2, &r, &err) == -1);
  CHECK_CONTAINS(err, "record 2 at offset");
  CHECK_CONTAINS(err, "length CRC mismatch");
  CHECK(tfrecord_read_at(&c, 3, &r, &err) == 0 && r.len == tfrecord_len(&a, 3));
  CHECK(tfrecord_read_at(&c, 0, &r, &err) == 0 && r.len == tfrecord_len(&a, 0));
  tfrecord_cursor_free(&c);
  tfrecord_close(&t);
  ds_buf_free(&mid);
  ds_buf_free(&good);
  free(err);
  tfrecord_close(&a);
  tfrecord_close(&b);
}

/* ------------------------------------------------------------------ */
/* Writer                                                               */

static char tmpdir[64];

/* A ds_afile on a new file dir/name. */
static int open_out(ds_afile *f, const char *name) {
  memset(f, 0, sizeof *f);
  f->path = ds_strf("%s/%s", tmpdir, name);
  f->fd = open(f->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  return f->fd >= 0 ? 0 : -1;
}

static void close_out(ds_afile *f) {
  if (f->fd >= 0) close(f->fd);
  free(f->path);
  free(f->buf);
}

/* Write e's records with compression c (level) to name; 0 ok. */
static int write_records(const char *name, const expected *e, tfrecord_compression c,
                         int level, char **path) {
  ds_afile f;
  char *err = NULL;
  if (open_out(&f, name)) return -1;
  tfrecord_writer *w = NULL;
  int rc = tfrecord_writer_new(&f, c, level, &w, &err);
  for (size_t i = 0; rc == 0 && i < e->n; i++)
    rc = tfrecord_writer_add(w, e->recs[i], e->lens[i], &err);
  if (rc == 0 && w) rc = tfrecord_writer_finish(w, &err);
  if (rc == 0 && w && tfrecord_writer_count(w) != e->n) rc = -1;
  if (rc == 0) rc = ds_afile_flush(&f, &err);
  if (rc) check_note("    %s: %s\n", name, err ? err : "count");
  free(err);
  tfrecord_writer_free(w);
  *path = strdup(f.path);
  close_out(&f);
  return rc;
}

/* Python's gzip / zlib module decompresses `path` into `out`; 0 ok. */
static int python_inflate(const char *path, const char *out, const char *mod) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "/usr/bin/python3 -c 'import sys, %s; d = open(sys.argv[1], \"rb\").read(); "
           "open(sys.argv[2], \"wb\").write(%s.decompress(d))' '%s' '%s'",
           mod, mod, path, out);
  return system(cmd);
}

static void test_writer(void) {
  expected e;
  CHECK(load_expected("examples.tfrecord", &e) == 0);
  char *path = NULL;
  /* uncompressed: the fixture's bytes exactly */
  CHECK(write_records("copy.tfrecord", &e, TFRECORD_NONE, -1, &path) == 0);
  CHECK(fx_same_file(path, FIX "examples.tfrecord"));
  free(path);
  /* gzip and zlib at every level: read back by us (detected) and by
   * Python (the decompressed bytes are the uncompressed fixture) */
  const struct {
    tfrecord_compression c;
    const char *mod, *name;
  } kinds[] = {{TFRECORD_GZIP, "gzip", "gzip"}, {TFRECORD_ZLIB, "zlib", "zlib"}};
  for (int k = 0; k < 2; k++)
    for (int level = 0; level <= 3; level++) {
      char name[64], raw[600];
      snprintf(name, sizeof name, "w%d.%s.tfrecord", level, kinds[k].name);
      CHECK(write_records(name, &e, kinds[k].c, level, &path) == 0);
      expected alt = e;
      alt.compression = kinds[k].name;
      sequential(path, NULL, &alt, name);
      snprintf(raw, sizeof raw, "%s.raw", path);
      CHECK(python_inflate(path, raw, kinds[k].mod) == 0);
      CHECK(fx_same_file(raw, FIX "examples.tfrecord"));
      free(path);
    }
  /* an unsupported level is refused */
  ds_afile f;
  tfrecord_writer *w;
  char *err = NULL;
  CHECK(open_out(&f, "bad-level") == 0);
  CHECK(tfrecord_writer_new(&f, TFRECORD_GZIP, 9, &w, &err) == -1);
  CHECK_CONTAINS(err, "levels are 0 to");
  free(err);
  close_out(&f);
  free_expected(&e);
}

/* Records large enough to span many 64 KiB pieces of the streams, an
 * empty one between them: gzip written, indexed, read by number. */
static void test_big_records(void) {
  expected e = {0};
  size_t sizes[] = {300000, 0, 70000, 1, 1 << 20};
  e.n = sizeof sizes / sizeof *sizes;
  e.recs = calloc(e.n, sizeof *e.recs);
  e.lens = calloc(e.n, sizeof *e.lens);
  uint32_t x = 12345;
  for (size_t i = 0; i < e.n; i++) {
    e.lens[i] = sizes[i];
    e.recs[i] = malloc(sizes[i] + 1);
    for (size_t k = 0; k < sizes[i]; k++) {
      x = x * 1103515245u + 12345u;
      e.recs[i][k] = (uint8_t)(k % 7 ? x >> 24 : 'a'); /* partly compressible */
    }
  }
  for (int comp = 0; comp < 3; comp++) {
    tfrecord_compression c = comp == 0 ? TFRECORD_NONE : comp == 1 ? TFRECORD_GZIP
                                                                  : TFRECORD_ZLIB;
    char name[64], *path = NULL;
    snprintf(name, sizeof name, "big.%s", tfrecord_compression_name(c));
    CHECK(write_records(name, &e, c, 1, &path) == 0);
    e.compression = tfrecord_compression_name(c);
    e.indexed = e.n;
    sequential(path, NULL, &e, name);
    indexed(path, &e);
    free(path);
  }
  for (size_t i = 0; i < e.n; i++) free(e.recs[i]);
  free(e.recs);
  free(e.lens);
}

/* A record longer than max_record fails with the limit named, the
 * records before it read. */
static void test_max_record(void) {
  expected e;
  CHECK(load_expected("examples.tfrecord", &e) == 0);
  /* records grow with their number (their caption does): the limit at
   * record 1's length lets records 0 and 1 through */
  CHECK(e.n > 3 && e.lens[0] <= e.lens[1] && e.lens[2] > e.lens[1]);
  tfrecord_options o = {.max_record = e.lens[1]};
  tfrecord_file t;
  char *err = NULL;
  CHECK(tfrecord_open(&t, FIX "examples.tfrecord", &o, &err) == 0);
  tfrecord_cursor c;
  tfrecord_rec r;
  CHECK(tfrecord_cursor_init(&c, &t, &err) == 0);
  uint64_t n = 0;
  int rc;
  while ((rc = tfrecord_next(&c, &r, &err)) == 1) n++;
  CHECK(rc == -1 && n == 2);
  char want[64];
  snprintf(want, sizeof want, "max_value_bytes=%zu", e.lens[1]);
  CHECK_CONTAINS(err, want);
  CHECK_CONTAINS(err, "record 2 at offset");
  free(err);
  tfrecord_cursor_free(&c);
  tfrecord_close(&t);
  free_expected(&e);
}

/* tfrecord_probe: every fixture that starts with an intact record says
 * yes, detected or given its compression; the empty file, a damaged
 * first header, other bytes (plain or gzip'd) say no. */
static void test_probe(void) {
  static const struct {
    const char *file;
    int yes;
  } cases[] = {{"examples.tfrecord", 1}, {"examples.gzip.tfrecord", 1},
               {"examples.zlib.tfrecord", 1}, {"examples.multi.tfrecord", 1},
               {"cut.tfrecord", 1}, {"cut.gzip.tfrecord", 1}, {"bad_data_crc.tfrecord", 1},
               {"empty.tfrecord", 0}, {"examples.tfrecord.idx", 0}, {"make_fixtures.py", 0}};
  size_t wrong = 0;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char path[512];
    snprintf(path, sizeof path, FIX "%s", cases[i].file);
    tfrecord_file t;
    char *err = NULL;
    if (tfrecord_open(&t, path, NULL, &err)) {
      check_note("    %s: %s\n", path, err);
      free(err);
      wrong++;
      continue;
    }
    if (tfrecord_probe(&t) != cases[i].yes) {
      check_note("    %s: probe says %d\n", path, !cases[i].yes);
      wrong++;
    }
    tfrecord_close(&t);
  }
  CHECK(wrong == 0);
  /* record 0's header damaged; gzip'd text */
  size_t n;
  uint8_t *b = fx_slurp(FIX "examples.tfrecord", &n);
  CHECK(b && n > 12);
  if (b) {
    b[9] ^= 1;
    tfrecord_file t;
    char *err = NULL;
    CHECK(tfrecord_open_memory(&t, "damaged", b, n, NULL, &err) == 0);
    CHECK(tfrecord_probe(&t) == 0);
    tfrecord_close(&t);
  }
  free(b);
  static const uint8_t gz_text[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00,
                                    0x00, 0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x57,
                                    0x28, 0xcf, 0x2f, 0xca, 0x49, 0xe1, 0x02, 0x00,
                                    0x2d, 0x3b, 0x08, 0xaf, 0x0c, 0x00, 0x00, 0x00};
  tfrecord_file t;
  char *err = NULL;
  CHECK(tfrecord_open_memory(&t, "hello.gz", gz_text, sizeof gz_text, NULL, &err) == 0);
  CHECK(t.compression == TFRECORD_GZIP && tfrecord_probe(&t) == 0);
  /* (the bytes are good gzip: "hello world\n" reads back) */
  tfrecord_cursor c;
  CHECK(tfrecord_cursor_init(&c, &t, &err) == 0);
  const uint8_t *p;
  size_t got;
  CHECK(tfr_inflate_read(c.z, 12, &p, &got, &err) == 0 && got == 12 &&
        memcmp(p, "hello world\n", 12) == 0);
  tfrecord_cursor_free(&c);
  tfrecord_close(&t);
}

/* A cancel callback that always says stop. */
static int always_stop(void *ctx) {
  (*(int *)ctx)++;
  return 1;
}

/* The index pass over many records gives up when its cancel scope says
 * stop (leaving no index), and completes without one. */
static void test_cancel(void) {
  expected e = {0};
  e.n = 300000;
  e.recs = calloc(e.n, sizeof *e.recs);
  e.lens = calloc(e.n, sizeof *e.lens);
  uint8_t one = 7;
  for (size_t i = 0; i < e.n; i++) {
    e.recs[i] = &one;
    e.lens[i] = i % 2;
  }
  char *path = NULL;
  CHECK(write_records("many.tfrecord", &e, TFRECORD_NONE, -1, &path) == 0);
  tfrecord_file t;
  char *err = NULL;
  CHECK(tfrecord_open(&t, path, NULL, &err) == 0);
  ds_cancel_scope sc;
  int asked = 0;
  ds_cancel_begin(&sc, always_stop, &asked);
  int rc = tfrecord_index(&t, &err);
  int hit = ds_cancel_end(&sc);
  check_note("    rc %d, asked %d, hit %d\n", rc, asked, hit);
  CHECK(rc == -1 && hit && asked > 0 && !t.indexed);
  CHECK_STR(err, DS_CANCEL_MSG);
  CHECK(tfrecord_index(&t, &err) == 0 && t.indexed && t.count == e.n);
  tfrecord_close(&t);
  free(path);
  free(err);
  free(e.recs);
  free(e.lens);
}

/* ------------------------------------------------------------------ */
/* Sets of files                                                        */

/* Read every row of set s: how many equal exp (rows[i] of parts in
 * order), and the errors of the rest in errs (joined). */
static void read_set(tfrecord_set *s, const expected *parts, size_t nparts,
                     size_t *same, size_t *failed, ds_buf *errs) {
  tfrecord_cursor *cs = calloc(s->n, sizeof *cs);
  *same = *failed = 0;
  uint64_t g = 0;
  for (size_t p = 0; p < nparts; p++) {
    uint64_t rows = tfrecord_set_rows(s, p);
    for (uint64_t i = 0; i < rows; i++, g++) {
      tfrecord_rec r;
      char *err = NULL;
      if (tfrecord_set_read(s, cs, g, &r, &err)) {
        (*failed)++;
        ds_buf_printf(errs, "%s\n", err);
      } else if (same_rec(&r, &parts[p], i)) {
        (*same)++;
      }
      free(err);
    }
  }
  for (size_t i = 0; i < s->n; i++) tfrecord_cursor_free(&cs[i]);
  free(cs);
}

static void test_set(void) {
  expected parts[3];
  CHECK(load_expected("examples.tfrecord", &parts[0]) == 0);
  CHECK(load_expected("cut.tfrecord", &parts[1]) == 0);
  CHECK(load_expected("examples.gzip.tfrecord", &parts[2]) == 0);
  tfrecord_set s;
  char *err = NULL;
  /* a comma list: 12 rows, 7 + the cut one, 12 from gzip */
  int rc = tfrecord_set_open(&s, FIX "examples.tfrecord," FIX "cut.tfrecord," FIX
                                     "examples.gzip.tfrecord",
                             NULL, 1, &err);
  CHECK_MSG(rc == 0, "open: %s", err ? err : "");
  if (rc == 0) {
    CHECK(s.n == 3);
    CHECK(tfrecord_set_index(&s, &err) == 0);
    CHECK(s.map.total == 12 + 8 + 12);
    size_t same, failed;
    ds_buf errs = {0};
    read_set(&s, parts, 3, &same, &failed, &errs);
    ds_buf_append(&errs, "", 1);
    check_note("    %zu same, %zu failed: %s\n", same, failed, (char *)errs.data);
    CHECK(same == 31 && failed == 1);
    CHECK_CONTAINS((char *)errs.data, FIX "cut.tfrecord: record 7 at offset");
    ds_buf_free(&errs);
    /* past the end */
    tfrecord_cursor cs[3] = {{0}};
    tfrecord_rec r;
    CHECK(tfrecord_set_read(&s, cs, 32, &r, &err) == -1);
    CHECK_CONTAINS(err, "past the last record");
    tfrecord_set_close(&s);
  }
  /* a missing file of a list */
  CHECK(tfrecord_set_open(&s, FIX "examples.tfrecord," FIX "nope.tfrecord", NULL, 1,
                          &err) == -1);
  CHECK_CONTAINS(err, "nope.tfrecord");

  /* name@2 written by our writer, read back as the set */
  char *paths[2] = {NULL, NULL};
  for (int i = 0; i < 2; i++) {
    char name[64];
    snprintf(name, sizeof name, "sh-%05d-of-00002.tfrecord", i);
    CHECK(write_records(name, &parts[i == 0 ? 0 : 2], i ? TFRECORD_ZLIB : TFRECORD_NONE,
                        1, &paths[i]) == 0);
  }
  char *spec = ds_strf("%s/sh@2.tfrecord", tmpdir);
  CHECK(tfrecord_set_open(&s, spec, NULL, 1, &err) == 0);
  CHECK(s.n == 2 && tfrecord_set_index(&s, &err) == 0 && s.map.total == 24);
  size_t same, failed;
  ds_buf errs = {0};
  expected two[2] = {parts[0], parts[2]};
  read_set(&s, two, 2, &same, &failed, &errs);
  CHECK(same == 24 && failed == 0);
  ds_buf_free(&errs);
  tfrecord_set_close(&s);
  free(spec);

  /* use_idx: a sidecar whose middle lies (records 1 and 2 swapped in
   * size) is used when asked for (row 1 then fails), not otherwise */
  tfrecord_file a;
  CHECK(tfrecord_open(&a, paths[0], NULL, &err) == 0 && tfrecord_index(&a, &err) == 0);
  char *ip = tfrecord_idx_path(paths[0]);
  FILE *f = fopen(ip, "w");
  uint64_t m1 = tfrecord_len(&a, 1) + TFR_OVERHEAD, m2 = tfrecord_len(&a, 2) + TFR_OVERHEAD;
  for (uint64_t i = 0; f && i < a.count; i++)
    fprintf(f, "%llu %llu\n",
            (unsigned long long)(i == 2 ? a.offsets[1] + m2 : a.offsets[i]),
            (unsigned long long)(i == 1 ? m2 : i == 2 ? m1 : tfrecord_len(&a, i) + TFR_OVERHEAD));
  if (f) fclose(f);
  tfrecord_close(&a);
  for (int use = 0; use < 2; use++) {
    CHECK(tfrecord_set_open(&s, paths[0], NULL, use, &err) == 0);
    CHECK(tfrecord_set_index(&s, &err) == 0 && s.map.total == 12);
    ds_buf e2 = {0};
    read_set(&s, parts, 1, &same, &failed, &e2);
    check_note("    use_idx=%d: %zu same, %zu failed\n", use, same, failed);
    CHECK(use ? failed == 2 && same == 10 : failed == 0 && same == 12);
    ds_buf_free(&e2);
    tfrecord_set_close(&s);
  }
  free(ip);
  free(paths[0]);
  free(paths[1]);
  free(err);
  for (int i = 0; i < 3; i++) free_expected(&parts[i]);
}

/* ------------------------------------------------------------------ */
/* Staged writing                                                       */

/* A staged writer on spec (its stage in *stage), or NULL with a note. */
static sharded_writer *staged(const char *spec, ds_stage_mode mode,
                               const tfrecord_staged_options *o, ds_stage **stage,
                               char **err) {
  char *dir = NULL, *key = NULL;
  sharded_writer *w = NULL;
  *stage = NULL;
  if (tfrecord_staged_target(spec, &dir, &key, err) == 0 &&
      ds_stage_open(dir, key, mode, stage, err) == 0 &&
      tfrecord_staged_open(*stage, spec, o, &w, err) != 0) {
    ds_stage_close(*stage);
    *stage = NULL;
  }
  free(dir);
  free(key);
  return w;
}

/* Add records [from, to) of e. */
static int add_range(sharded_writer *w, const expected *e, size_t from, size_t to,
                     char **err) {
  for (size_t i = from; i < to; i++)
    if (sharded_writer_add(w, e->recs[i], e->lens[i], err)) return -1;
  return 0;
}

/* Read spec as a set: 1 when its rows are e's records, in order. */
static int set_equals(const char *spec, const expected *e) {
  tfrecord_set s;
  char *err = NULL;
  if (tfrecord_set_open(&s, spec, NULL, 0, &err) || tfrecord_set_index(&s, &err)) {
    check_note("    %s: %s\n", spec, err ? err : "");
    free(err);
    return 0;
  }
  size_t same, failed;
  ds_buf errs = {0};
  int ok = s.map.total == e->n;
  if (ok) {
    expected one = *e;
    /* every shard's rows come from e in order: read through the set */
    tfrecord_cursor *cs = calloc(s.n, sizeof *cs);
    same = failed = 0;
    for (uint64_t g = 0; g < s.map.total; g++) {
      tfrecord_rec r;
      if (tfrecord_set_read(&s, cs, g, &r, &err)) failed++;
      else same += same_rec(&r, &one, g);
      free(err);
      err = NULL;
    }
    for (size_t i = 0; i < s.n; i++) tfrecord_cursor_free(&cs[i]);
    free(cs);
    ok = same == e->n && failed == 0;
  }
  if (!ok) check_note("    %s: %llu rows, want %zu\n", spec, (unsigned long long)s.map.total, e->n);
  ds_buf_free(&errs);
  tfrecord_set_close(&s);
  return ok;
}

static void test_staged(void) {
  expected e;
  CHECK(load_expected("examples.tfrecord", &e) == 0);
  char *err = NULL;
  ds_stage *st;
  tfrecord_staged_options o = {.compression = TFRECORD_NONE, .level = -1};

  /* one file: nothing at the target before publish; then the fixture's
   * bytes exactly, with a savepoint rolled back on the way */
  char *plain = ds_strf("%s/one.tfrecord", tmpdir);
  sharded_writer *w = staged(plain, DS_STAGE_CREATE, &o, &st, &err);
  CHECK_MSG(w != NULL, "open: %s", err ? err : "");
  if (w) {
    void *m = NULL;
    CHECK(add_range(w, &e, 0, 5, &err) == 0);
    CHECK(sharded_writer_mark(w, &m, &err) == 0);
    CHECK(add_range(w, &e, 5, 9, &err) == 0); /* rolled back */
    CHECK(sharded_writer_rollback_to(w, m, &err) == 0);
    free(m);
    CHECK(sharded_writer_count(w) == 5);
    CHECK(add_range(w, &e, 5, e.n, &err) == 0);
    CHECK(!ds_path_exists(plain, NULL));
    CHECK(sharded_writer_prepare(w, &err) == 0);
    CHECK(sharded_writer_publish(w, &err) == 0);
    CHECK(fx_same_file(plain, FIX "examples.tfrecord"));
    CHECK_STR(sharded_writer_published_spec(w), plain);
    /* a second transaction continues the file; an aborted one changes nothing */
    CHECK(add_range(w, &e, 0, 2, &err) == 0);
    sharded_writer_abort(w);
    CHECK(fx_same_file(plain, FIX "examples.tfrecord"));
    sharded_writer_close(w);
    ds_stage_close(st);
  }
  /* mode=create over it: refused, naming it */
  w = staged(plain, DS_STAGE_CREATE, &o, &st, &err);
  CHECK(w == NULL);
  CHECK_CONTAINS(err, "one.tfrecord");

  /* gzip in two transactions (6 + 6): read back equal, and Python's gzip
   * gives the fixture's bytes */
  for (int k = 0; k < 2; k++) {
    tfrecord_staged_options oz = {.compression = k ? TFRECORD_ZLIB : TFRECORD_GZIP,
                                  .level = 2};
    char *zp = ds_strf("%s/two.%s.tfrecord", tmpdir, k ? "zlib" : "gzip");
    w = staged(zp, DS_STAGE_CREATE, &oz, &st, &err);
    CHECK(w != NULL);
    if (w) {
      CHECK(add_range(w, &e, 0, 6, &err) == 0);
      CHECK(sharded_writer_prepare(w, &err) == 0 && sharded_writer_publish(w, &err) == 0);
      CHECK(add_range(w, &e, 6, e.n, &err) == 0);
      CHECK(sharded_writer_prepare(w, &err) == 0 && sharded_writer_publish(w, &err) == 0);
      CHECK(sharded_writer_count(w) == e.n);
      sharded_writer_close(w);
      ds_stage_close(st);
      expected alt = e;
      alt.compression = k ? "zlib" : "gzip";
      sequential(zp, NULL, &alt, "staged");
      char *raw = ds_strf("%s.raw", zp);
      CHECK(python_inflate(zp, raw, k ? "zlib" : "gzip") == 0);
      CHECK(fx_same_file(raw, FIX "examples.tfrecord"));
      free(raw);
    }
    free(zp);
  }

  /* name@* with rows_per_shard=5: 12 records in 3 shards of 5, 5, 2 */
  tfrecord_staged_options os = {.compression = TFRECORD_NONE, .rows_per_shard = 5};
  char *star = ds_strf("%s/st@*.tfrecord", tmpdir);
  w = staged(star, DS_STAGE_CREATE, &os, &st, &err);
  CHECK(w != NULL);
  if (w) {
    CHECK(add_range(w, &e, 0, e.n, &err) == 0);
    CHECK(sharded_writer_prepare(w, &err) == 0 && sharded_writer_publish(w, &err) == 0);
    char *want = ds_strf("%s/st@3.tfrecord", tmpdir);
    CHECK_STR(sharded_writer_published_spec(w), want);
    free(want);
    sharded_writer_close(w);
    ds_stage_close(st);
    CHECK(set_equals(star, &e));
    char *s2 = ds_strf("%s/st-00002-of-00003.tfrecord", tmpdir);
    tfrecord_file t;
    CHECK(tfrecord_open(&t, s2, NULL, &err) == 0 && tfrecord_index(&t, &err) == 0 &&
          t.count == 2);
    tfrecord_close(&t);
    free(s2);
  }
  free(star);

  /* name@3 without rows_per_shard: split 4, 4, 4; gzip; mode=replace
   * over it again with 7 records: 3, 2, 2 */
  for (int round = 0; round < 2; round++) {
    tfrecord_staged_options og = {.compression = TFRECORD_GZIP, .level = 1};
    char *three = ds_strf("%s/th@3.tfrecord", tmpdir);
    w = staged(three, round ? DS_STAGE_REPLACE : DS_STAGE_CREATE, &og, &st, &err);
    CHECK_MSG(w != NULL, "th@3 round %d: %s", round, err ? err : "");
    if (w) {
      size_t n = round ? 7 : e.n;
      CHECK(add_range(w, &e, 0, n, &err) == 0);
      CHECK(sharded_writer_prepare(w, &err) == 0 && sharded_writer_publish(w, &err) == 0);
      sharded_writer_close(w);
      ds_stage_close(st);
      expected part = e;
      part.n = n;
      CHECK(set_equals(three, &part));
      char *s1 = ds_strf("%s/th-00001-of-00003.tfrecord", tmpdir);
      tfrecord_file t;
      CHECK(tfrecord_open(&t, s1, NULL, &err) == 0 && tfrecord_index(&t, &err) == 0 &&
            t.count == (round ? 2 : 4) && t.compression == TFRECORD_GZIP);
      tfrecord_close(&t);
      free(s1);
    }
    free(three);
  }

  /* name@2 with rows_per_shard=5: the 11th record has no shard */
  tfrecord_staged_options of = {.compression = TFRECORD_NONE, .rows_per_shard = 5};
  char *two = ds_strf("%s/full@2.tfrecord", tmpdir);
  w = staged(two, DS_STAGE_CREATE, &of, &st, &err);
  CHECK(w != NULL);
  if (w) {
    CHECK(add_range(w, &e, 0, 10, &err) == 0);
    CHECK(add_range(w, &e, 10, 11, &err) == -1);
    CHECK_CONTAINS(err, "record 10: 2 shards of rows_per_shard=5 are full");
    sharded_writer_close(w);
    ds_stage_close(st);
  }
  free(two);
  /* refusals at open */
  char *bad = ds_strf("%s/a.tfrecord,%s/b.tfrecord", tmpdir, tmpdir);
  CHECK(staged(bad, DS_STAGE_CREATE, &o, &st, &err) == NULL);
  CHECK_CONTAINS(err, "not a comma list");
  free(bad);
  bad = ds_strf("%s/x@*.tfrecord", tmpdir);
  CHECK(staged(bad, DS_STAGE_CREATE, &o, &st, &err) == NULL);
  CHECK_CONTAINS(err, "needs rows_per_shard");
  free(bad);
  free(plain);
  free(err);
  free_expected(&e);
}

/* ------------------------------------------------------------------ */
/* Fuzz regressions                                                     */

/* Every saved input of fuzz_tfrecord (regressions/tfrecord; its format:
 * an option byte whose bits 0-1 give the compression, bit 3 a sidecar of
 * u16 LE length before the file): the file part opened as each
 * compression, read and indexed, and the index never shorter than what
 * reads in order before an error (the index skips the data CRCs). */
static void test_regressions(void) {
  DIR *d = opendir(REGS);
  CHECK(d != NULL);
  size_t inputs = 0, disagree = 0;
  struct dirent *de;
  while (d && (de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.' || strstr(de->d_name, ".md")) continue;
    char path[512];
    snprintf(path, sizeof path, REGS "/%s", de->d_name);
    size_t n;
    uint8_t *b = fx_slurp(path, &n);
    if (!b || n < 1) {
      free(b);
      continue;
    }
    inputs++;
    size_t at = 1;
    if (b[0] & 8) {
      size_t k = n >= 3 ? (size_t)(b[1] | b[2] << 8) : 0;
      at = n >= 3 ? 3 + (k < n - 3 ? k : n - 3) : n;
    }
    for (int comp = 0; comp < 4; comp++) {
      tfrecord_options o = {.compression = (tfrecord_compression)comp};
      tfrecord_file t;
      char *err = NULL;
      if (tfrecord_open_memory(&t, de->d_name, b + at, n - at, &o, &err)) {
        free(err);
        continue;
      }
      tfrecord_cursor c;
      tfrecord_rec r;
      uint64_t seq = 0;
      int rc = -1;
      if (tfrecord_cursor_init(&c, &t, &err) == 0)
        while (seq < 100000 && (rc = tfrecord_next(&c, &r, &err)) == 1) seq++;
      free(err);
      err = NULL;
      if (tfrecord_index(&t, &err) || t.count < seq || (rc == 0 && t.count != seq))
        disagree++;
      free(err);
      tfrecord_cursor_free(&c);
      tfrecord_close(&t);
    }
    free(b);
  }
  if (d) closedir(d);
  check_note("    %zu inputs, %zu where the index and the read disagree\n", inputs,
             disagree);
  CHECK(inputs > 0 && disagree == 0);
}

/* ------------------------------------------------------------------ */
/* The index pass over many windows                                     */

#define WIN_RECORDS 20000
#define WIN_DAMAGED 15000 /* past the first MiB: not in the first windows */

/* The bytes of WIN_RECORDS records of mixed sizes (the first 2,500 bytes,
 * so the offsets array reserved from it is too small and grows; the rest
 * 0-199, every 1,000th 3,000, record WIN_DAMAGED the longest, 3,500),
 * each record's offset in off[0..WIN_RECORDS] (the last: the end); the
 * bytes' count in *size. */
static uint8_t *window_file(uint64_t *off, size_t *size) {
  size_t cap = (size_t)WIN_RECORDS * (200 + TFR_OVERHEAD) + 32 * 3500;
  uint8_t *b = malloc(cap);
  size_t at = 0;
  for (size_t i = 0; b && i < WIN_RECORDS; i++) {
    size_t len = i == 0                  ? 2500
                 : i == WIN_DAMAGED       ? 3500
                 : i % 1000 == 0          ? 3000
                                          : (i * 37) % 200;
    off[i] = at;
    tfr_frame_header(b + at, len);
    for (size_t k = 0; k < len; k++) b[at + TFR_HEADER + k] = (uint8_t)(i + k);
    tfr_frame_footer(b + at + TFR_HEADER + len, b + at + TFR_HEADER, len);
    at += TFR_OVERHEAD + len;
  }
  off[WIN_RECORDS] = at;
  *size = at;
  return b;
}

/* Index bytes b[0..size) (a file `name` in tmpdir when !memory, else the
 * bytes themselves) with max_record: 0 with *t indexed, or -1. */
static int index_bytes(const char *name, const uint8_t *b, size_t size, int memory,
                       uint64_t max_record, tfrecord_file *t, char **path) {
  tfrecord_options o = {.compression = TFRECORD_NONE, .max_record = max_record};
  char *err = NULL;
  *path = ds_strf("%s/%s", tmpdir, name);
  int rc = -1;
  if (memory) {
    rc = tfrecord_open_memory(t, *path, b, size, &o, &err);
  } else {
    FILE *f = fopen(*path, "wb");
    if (f && fwrite(b, 1, size, f) == size && fclose(f) == 0)
      rc = tfrecord_open(t, *path, &o, &err);
    else if (f)
      fclose(f);
  }
  if (rc == 0) rc = tfrecord_index(t, &err);
  if (rc) check_note("    %s: %s\n", name, err ? err : "cannot write");
  free(err);
  return rc;
}

/* The index pass over a file of many read windows (it walks the headers
 * each window holds): the offsets equal the ones written, from a file and
 * from memory; a damaged record past the first MiB (its length CRC, a
 * length over max_record, the file cut inside it) stops the index there,
 * the error naming the file, the record and its offset. */
static void test_index_windows(void) {
  uint64_t *off = malloc((WIN_RECORDS + 1) * sizeof *off);
  size_t size = 0;
  uint8_t *b = off ? window_file(off, &size) : NULL;
  CHECK(b && size > ((size_t)2 << 20) && off[WIN_DAMAGED] > ((uint64_t)1 << 20));
  if (!b) {
    free(off);
    return;
  }
  for (int memory = 0; memory < 2; memory++) {
    tfrecord_file t;
    char *path = NULL;
    CHECK(index_bytes("windows.tfrecord", b, size, memory, 0, &t, &path) == 0);
    CHECK(t.indexed && t.count == WIN_RECORDS && !t.tail_err);
    CHECK(t.indexed && memcmp(t.offsets, off, (WIN_RECORDS + 1) * sizeof *off) == 0);
    tfrecord_close(&t);
    free(path);
    /* the damage: 0 the length CRC, 1 a length over max_record, 2 a cut */
    for (int kind = 0; kind < 3; kind++) {
      uint64_t at = off[WIN_DAMAGED];
      size_t n = kind == 2 ? (size_t)at + TFR_HEADER + 10 : size;
      uint64_t max = kind == 1 ? (off[WIN_DAMAGED + 1] - at - TFR_OVERHEAD) - 1 : 0;
      uint8_t *d = malloc(size);
      if (!d) break;
      memcpy(d, b, size);
      if (kind == 0) d[at + 8] ^= 0x10;
      if (kind == 1) { /* every other record within the limit */
        for (size_t i = 0; i < WIN_RECORDS; i++)
          if (i != WIN_DAMAGED && off[i + 1] - off[i] - TFR_OVERHEAD > max) {
            max = 0;
            break;
          }
        CHECK(max > 0);
      }
      static const char *const what[] = {"length CRC mismatch", "max_value_bytes=",
                                         "cut short"};
      char name[64], want[128];
      snprintf(name, sizeof name, "windows-damaged-%d.tfrecord", kind);
      snprintf(want, sizeof want, "windows-damaged-%d.tfrecord: record %d at offset %llu: ",
               kind, WIN_DAMAGED, (unsigned long long)at);
      CHECK(index_bytes(name, d, n, memory, max, &t, &path) == 0);
      check_note("    %s, %s: %llu records, %s\n", name, memory ? "memory" : "file",
                 (unsigned long long)t.count, t.tail_err ? t.tail_err : "no error");
      CHECK(t.indexed && t.count == WIN_DAMAGED);
      CHECK(t.indexed && memcmp(t.offsets, off, (WIN_DAMAGED + 1) * sizeof *off) == 0);
      CHECK_CONTAINS(t.tail_err, want);
      CHECK_CONTAINS(t.tail_err, what[kind]);
      tfrecord_close(&t);
      free(path);
      free(d);
    }
  }
  free(b);
  free(off);
}

int main(void) {
  if (fx_temp_dir(tmpdir, sizeof tmpdir, "tfrecord", __FILE__)) return 1;
  test_crc();
  test_fixtures();
  test_skip_data_crc();
  test_wrong_compression();
  test_prefixes();
  test_idx();
  test_writer();
  test_big_records();
  test_max_record();
  test_cancel();
  test_index_windows();
  test_probe();
  test_set();
  test_staged();
  test_regressions();
  fx_remove_tree(tmpdir);
  return check_exit();
}
