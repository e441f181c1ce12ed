/* test_utf8.c - core/utf8.c: the escaping of raw bytes in error text (the
 * result is always valid UTF-8), encoding and decoding of code points,
 * and the maximal-subpart rule of ds_utf8_seq; core/numbers.h loads. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/numbers.h"
#include "core/utf8.h"

/* ds_escape of n bytes, checked to be valid UTF-8; the caller frees. */
static char *esc(const char *p, size_t n) {
  char *q = ds_escape(p, n);
  CHECK(q && ds_utf8_valid((const uint8_t *)q, strlen(q)));
  return q;
}

static void test_escape(void) {
  char *q = esc("fo\xfftran", 7);
  CHECK_STR(q, "fo\\xfftran");
  free(q);
  q = esc("caf\xc3\xa9 \xe2\x82", 8); /* valid é kept, a cut sequence escaped */
  CHECK_STR(q, "caf\xc3\xa9 \\xe2\\x82");
  free(q);
  q = esc("a\\b\n\0c", 6); /* backslash and control bytes escaped */
  CHECK_STR(q, "a\\x5cb\\x0a\\x00c");
  free(q);
  q = esc("\xed\xa0\x80", 3); /* an encoded surrogate is not UTF-8 */
  CHECK_STR(q, "\\xed\\xa0\\x80");
  free(q);
  char *err = NULL;
  CHECK(ds_err_quoted(&err, "key '%s' unknown", "\xfe\x41", 2) == -1);
  CHECK_STR(err, "key '\\xfeA' unknown");
  free(err);
}

static void test_code_points(void) {
  uint8_t b[4];
  CHECK(ds_utf8_encode(0x41, b) == 1 && b[0] == 0x41);
  CHECK(ds_utf8_encode(0xE9, b) == 2 && !memcmp(b, "\xc3\xa9", 2));
  CHECK(ds_utf8_encode(0x20AC, b) == 3 && !memcmp(b, "\xe2\x82\xac", 3));
  CHECK(ds_utf8_encode(0x1F600, b) == 4 && !memcmp(b, "\xf0\x9f\x98\x80", 4));
  CHECK(ds_utf8_encode(0xD800, b) == 0 && ds_utf8_encode(0x110000, b) == 0);
  const uint8_t s[] = "a\xc3\xa9\xf0\x9f\x98\x80";
  size_t i = 0;
  CHECK(ds_utf8_next(s, 7, &i) == 'a' && ds_utf8_next(s, 7, &i) == 0xE9 &&
        ds_utf8_next(s, 7, &i) == 0x1F600 && i == 7);
  size_t skip = 0;
  CHECK(ds_utf8_seq((const uint8_t *)"\xe2\x82x", 3, &skip) == 0 && skip == 2);
  CHECK(ds_utf8_seq((const uint8_t *)"\xc0\x80", 2, &skip) == 0 && skip == 1);
  CHECK(ds_ascii((const uint8_t *)"plain ascii text", 16) &&
        !ds_ascii((const uint8_t *)"plain ascii t\xc3\xa9xt", 17));
}

static void test_numbers(void) {
  const uint8_t le[8] = {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  CHECK(ds_load_int(le, 2, 0) == -2 && ds_load_int(le, 8, 0) == -2);
  CHECK(ds_load_uint(le, 2, 0) == 0xfffe && ds_load_uint(le, 2, 1) == 0xfeff);
  const uint8_t half[2] = {0x00, 0x3c}; /* 1.0 as a little-endian float16 */
  CHECK(ds_load_float(half, 2, 0) == 1.0);
  CHECK(ds_half_to_double(0xc000) == -2.0 && ds_half_to_double(0x0001) == 0x1p-24);
  const uint8_t be[4] = {0x3f, 0xc0, 0, 0}; /* 1.5f big-endian */
  CHECK(ds_load_float(be, 4, 1) == 1.5);
}

/* ds_utf8_valid at every length around its word steps (8 and 32 bytes):
 * ASCII is valid; one stray continuation byte, a cut sequence or a valid
 * two-byte sequence at any position is seen wherever it falls. */
static void test_valid_positions(void) {
  uint8_t t[80];
  int ascii = 1, stray = 1, cut = 1, two = 1;
  for (size_t n = 0; n <= 70; n++) {
    memset(t, 'a', sizeof t);
    ascii &= ds_utf8_valid(t, n);
    for (size_t i = 0; i < n; i++) {
      t[i] = 0x80;
      stray &= !ds_utf8_valid(t, n);
      t[i] = 0xC3; /* a lead byte: cut at the end, else followed by 'a' */
      cut &= !ds_utf8_valid(t, n);
      if (i + 1 < n) {
        t[i + 1] = 0xA9;
        two &= ds_utf8_valid(t, n);
        t[i + 1] = 'a';
      }
      t[i] = 'a';
    }
  }
  CHECK(ascii);
  CHECK(stray);
  CHECK(cut);
  CHECK(two);
}

int main(void) {
  test_valid_positions();
  test_escape();
  test_code_points();
  test_numbers();
  return check_exit();
}
