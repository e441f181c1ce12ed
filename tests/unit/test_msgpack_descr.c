/* test_msgpack_descr.c - numpy descr literals packed as msgpack-numpy packs
 * dtype.descr (decoders/msgpack_descr.c): compared with the bytes Python's
 * msgpack writes for the same lists (hand-assembled here), Python's
 * escapes decoded, and malformed or hostile text refused with an error. */
#include <msgpack.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/common.h"
#include "decoders/msgpack_descr.h"

/* msgpack-c's write callback into a ds_buf. */
static int put(void *data, const char *p, size_t n) {
  return ds_buf_append((ds_buf *)data, p, n) ? -1 : 0;
}

/* Pack text; 0 and the bytes in *out, or -1 with *err. */
static int pack(const char *text, ds_buf *out, char **err) {
  msgpack_packer pk;
  out->len = 0;
  msgpack_packer_init(&pk, out, put);
  return ds_msgpack_pack_descr(&pk, text, err);
}

/* Does text pack to exactly want[0..n)? */
static int packs_to(const char *text, const char *want, size_t n) {
  ds_buf b = {0};
  char *err = NULL;
  int ok = pack(text, &b, &err) == 0 && b.len == n && memcmp(b.data, want, n) == 0;
  if (!ok) check_note("    %s: %s\n", text, err ? err : "bytes differ");
  free(err);
  ds_buf_free(&b);
  return ok;
}

/* Is text refused with an error mentioning needle? */
static int refused(const char *text, const char *needle) {
  ds_buf b = {0};
  char *err = NULL;
  int ok = pack(text, &b, &err) == -1 && err && strstr(err, needle);
  if (!ok) check_note("    %s: %s\n", text, err ? err : "accepted");
  free(err);
  ds_buf_free(&b);
  return ok;
}

int main(void) {
  /* [['a', '<i4'], ['b', '<f8']] as msgpack.packb writes it */
  CHECK(packs_to("[('a', '<i4'), ('b', '<f8')]",
                 "\x92\x92\xa1" "a\xa3<i4\x92\xa1" "b\xa3<f8", 15));
  /* a subarray shape (2,) is a one-item array */
  CHECK(packs_to("[('b', '<f8', (2,))]", "\x91\x93\xa1" "b\xa3<f8\x91\x02", 10));
  CHECK(packs_to("[('m', '<f4', (2, 3))]", "\x91\x93\xa1m\xa3<f4\x92\x02\x03", 11));
  /* nested, a title pair, an empty tuple */
  CHECK(packs_to("[('p', [('x', '<f4')])]", "\x91\x92\xa1p\x91\x92\xa1x\xa3<f4", 12));
  CHECK(packs_to("[(('T', 'n'), '|u1')]", "\x91\x92\x92\xa1T\xa1n\xa3|u1", 11));
  CHECK(packs_to("()", "\x90", 1));
  /* Python's escapes: quotes, backslash, \x01, \u00e9 as UTF-8 */
  CHECK(packs_to("[(\"it's\", '<i4')]", "\x91\x92\xa4it's\xa3<i4", 11));
  CHECK(packs_to("[('a\\\\b\\x01\\u00e9', '<i4')]", "\x91\x92\xa6" "a\\b\x01\xc3\xa9\xa3<i4", 13));
  /* refused: never closed, junk, bad escapes, text after the end, depth */
  CHECK(refused("[('a', '<i4')", "never closed"));
  CHECK(refused("[('a, '<i4')]", "dtype description"));
  CHECK(refused("[('a', <i4)]", "unexpected"));
  CHECK(refused("[('a\\q', '<i4')]", "unsupported escape"));
  CHECK(refused("[('a\\x4', '<i4')]", "unsupported escape"));
  CHECK(refused("[('\\ud800', '<i4')]", "unsupported escape")); /* a surrogate */
  CHECK(refused("[] x", "after its end"));
  CHECK(refused("[99999999999999999999999]", "too large"));
  char deep[400];
  memset(deep, '[', 200);
  memset(deep + 200, ']', 199);
  deep[399] = 0;
  CHECK(refused(deep, "never closed"));
  deep[398] = ']';
  memset(deep, '[', 199);
  memset(deep + 199, ']', 199);
  deep[398] = 0;
  CHECK(refused(deep, "nested too deeply"));
  return check_exit();
}
