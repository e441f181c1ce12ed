/* test_http_parse.c - the pure parts of the HTTP range client
 * (src/remote/http_parse.c): Content-Range, Retry-After, the XML error
 * code, URLs made fit for messages, the range a 206 must carry. */
#include <string.h>

#include "check.h"
#include "remote/http_parse.h"

/* Parse a Content-Range given as a C string. */
static int cr(const char *v, uint64_t *f, uint64_t *l, uint64_t *t) {
  return ds_http_parse_content_range(v, strlen(v), f, l, t);
}

static void test_content_range(void) {
  uint64_t f, l, t;
  CHECK(cr("bytes 0-9/100", &f, &l, &t) == 0 && f == 0 && l == 9 && t == 100);
  CHECK(cr(" bytes 90-99/100\r\n", &f, &l, &t) == 0 && f == 90 && l == 99);
  CHECK(cr("bytes 5-5/*", &f, &l, &t) == 0 && t == DS_HTTP_SIZE_UNKNOWN);
  CHECK(cr("bytes */0", &f, &l, &t) == 0 && f == DS_HTTP_SIZE_UNKNOWN && t == 0);
  CHECK(cr("bytes 18446744073709551614-18446744073709551614/18446744073709551615",
           &f, &l, &t) != 0); /* 20 digits: refused, never wrapped */
  CHECK(cr("bytes 9-0/100", &f, &l, &t) != 0);   /* last before first */
  CHECK(cr("bytes 0-100/100", &f, &l, &t) != 0); /* past the end */
  CHECK(cr("bytes */*", &f, &l, &t) != 0);
  CHECK(cr("items 0-9/100", &f, &l, &t) != 0);
  CHECK(cr("bytes 0-9/100x", &f, &l, &t) != 0);
  CHECK(cr("bytes 0-9", &f, &l, &t) != 0);
  CHECK(cr("bytes -9/100", &f, &l, &t) != 0);
}

static void test_retry_after(void) {
  CHECK(ds_http_parse_retry_after("2", 1) == 2000);
  CHECK(ds_http_parse_retry_after(" 0 \r\n", 5) == 0);
  const char *date = "Wed, 21 Oct 2015 07:28:00 GMT";
  CHECK(ds_http_parse_retry_after(date, strlen(date)) == -1);
  CHECK(ds_http_parse_retry_after("99999999", 8) == 86400L * 1000);
  CHECK(ds_http_parse_retry_after("", 0) == -1);
}

static void test_xml_code(void) {
  char code[32];
  const char *b = "<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code>"
                  "<Message>The specified key does not exist.</Message></Error>";
  ds_http_xml_error_code(b, strlen(b), code, sizeof code);
  CHECK_STR(code, "NoSuchKey");
  const char *evil = "<Error><Code>Bad\" key=<script></Code>";
  ds_http_xml_error_code(evil, strlen(evil), code, sizeof code);
  CHECK_STR(code, "Badkey"); /* only name characters, up to the '<' */
  ds_http_xml_error_code("no xml", 6, code, sizeof code);
  CHECK_STR(code, "");
  ds_http_xml_error_code("<Code>SignatureDoesNotMatch", 27, code, 10);
  CHECK_STR(code, "Signature"); /* cut at the room given */
}

static void test_url_for_message(void) {
  char out[256];
  ds_http_url_for_message("https://b.s3.amazonaws.com/k%20x?X-Amz-Signature=abc",
                          out, sizeof out);
  CHECK_STR(out, "https://b.s3.amazonaws.com/k%20x");
  ds_http_url_for_message("http://user:pa@ss@127.0.0.1:9/a#frag", out, sizeof out);
  CHECK_STR(out, "http://127.0.0.1:9/a");
  ds_http_url_for_message("http://h/a@b", out, sizeof out);
  CHECK_STR(out, "http://h/a@b"); /* an '@' in the path is not user info */
  ds_http_url_for_message("http://h/abcdef", out, 10);
  CHECK_STR(out, "http://h/");
}

static void test_expected_range(void) {
  uint64_t f, l;
  CHECK(ds_http_expected_range(0, 10, 5, 100, &f, &l) == 0 && f == 10 && l == 14);
  CHECK(ds_http_expected_range(0, 98, 5, 100, &f, &l) == 0 && f == 98 && l == 99);
  CHECK(ds_http_expected_range(0, 100, 5, 100, &f, &l) == -1);
  CHECK(ds_http_expected_range(1, 0, 64, 100, &f, &l) == 0 && f == 36 && l == 99);
  CHECK(ds_http_expected_range(1, 0, 640, 100, &f, &l) == 0 && f == 0 && l == 99);
  CHECK(ds_http_expected_range(1, 0, 64, 0, &f, &l) == -1);
  /* s3rver answers bytes=-64 of 1000 bytes with 0-64/1000: not this */
  CHECK(ds_http_expected_range(1, 0, 64, 1000, &f, &l) == 0 && !(f == 0 && l == 64));
}

int main(void) {
  test_content_range();
  test_retry_after();
  test_xml_code();
  test_url_for_message();
  test_expected_range();
  return check_exit();
}
