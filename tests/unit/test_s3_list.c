/* test_s3_list.c - ListObjectsV2 pages parsed (src/remote/s3_list.c):
 * keys with XML entities and character references decoded, sizes, common
 * prefixes, the continuation token of a truncated page, pages appended,
 * and what is refused: a body that is no listing, an entry without a Key,
 * an unknown entity, a truncated page without a token. (Listings from a
 * server: tests/conformance/test_remote_s3rver.py.) */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "remote/s3_list.h"

static int parse(const char *xml, ds_s3_listing *l, char **next, char **err) {
  return ds_s3_list_parse(xml, strlen(xml), l, next, err);
}

int main(void) {
  ds_s3_listing l = {0};
  char *next = NULL, *err = NULL;
  const char *page1 =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Name>bkt</Name><Prefix>d/</Prefix><KeyCount>2</KeyCount>"
      "<IsTruncated>true</IsTruncated>"
      "<Contents><Key>d/a&amp;b &lt;c&gt; &quot;&apos;.bin</Key>"
      "<LastModified>2026-01-01T00:00:00.000Z</LastModified><Size>123</Size>"
      "</Contents>"
      "<Contents><Key>d/&#x4E2D;&#233;.bin</Key><Size>18446744073709551615</Size></Contents>"
      "<CommonPrefixes><Prefix>d/sub/</Prefix></CommonPrefixes>"
      "<NextContinuationToken>1/ab+c=&amp;</NextContinuationToken>"
      "</ListBucketResult>";
  CHECK(parse(page1, &l, &next, &err) == 0);
  CHECK(l.n == 2);
  CHECK_STR(l.n > 0 ? l.objects[0].key : NULL, "d/a&b <c> \"'.bin");
  CHECK(l.n > 0 && l.objects[0].size == 123);
  CHECK_STR(l.n > 1 ? l.objects[1].key : NULL, "d/\xe4\xb8\xad\xc3\xa9.bin");
  CHECK(l.n > 1 && l.objects[1].size == UINT64_MAX);
  CHECK(l.nprefixes == 1);
  CHECK_STR(l.nprefixes ? l.prefixes[0] : NULL, "d/sub/");
  CHECK_STR(next, "1/ab+c=&");
  free(next);
  const char *page2 =
      "<ListBucketResult><IsTruncated>false</IsTruncated>"
      "<Contents><Key>d/z</Key><Size>0</Size></Contents>"
      "<NextContinuationToken>ignored</NextContinuationToken></ListBucketResult>";
  CHECK(parse(page2, &l, &next, &err) == 0);
  CHECK(l.n == 3 && next == NULL); /* appended; not truncated: no token */
  CHECK_STR(l.n > 2 ? l.objects[2].key : NULL, "d/z");
  ds_s3_listing_free(&l);
  CHECK(parse("<Error><Code>NoSuchBucket</Code></Error>", &l, &next, &err) == -1);
  CHECK_CONTAINS(err, "not a ListBucketResult");
  CHECK(parse("<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>",
              &l, &next, &err) == -1);
  CHECK_CONTAINS(err, "without a Key");
  ds_s3_listing_free(&l);
  CHECK(parse("<ListBucketResult><Contents><Key>a&nbsp;b</Key></Contents></ListBucketResult>",
              &l, &next, &err) == -1);
  CHECK_CONTAINS(err, "not XML text");
  ds_s3_listing_free(&l);
  CHECK(parse("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>", &l,
              &next, &err) == -1);
  CHECK_CONTAINS(err, "without a continuation token");
  CHECK(ds_s3_list_parse(NULL, 0, &l, &next, &err) == -1);
  ds_s3_listing_free(&l);
  free(err);
  return check_exit();
}
