/* test_sigv4.c - Signature V4 against AWS's published examples: the
 * Signature Version 4 test suite (get-vanilla, get-vanilla-query-order-
 * key-case, post-header-value-case, get-header-value-trim, get-unreserved;
 * service "service", AKIDEXAMPLE, 20150830T123600Z) and the four S3
 * header-signing examples of the S3 API reference (GET Object with a
 * range, PUT Object, GET Bucket lifecycle, GET Bucket list objects;
 * examplebucket, AKIAIOSFODNN7EXAMPLE, 20130524T000000Z), each checked
 * at its canonical request, string to sign and signature. Also HMAC-SHA256
 * against RFC 4231 and UriEncode. Randomized requests against botocore are
 * in tests/conformance/test_remote_sigv4.py. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "remote/s3_sign.h"
#include "remote/sigv4.h"

#define SUITE_SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define S3_SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

/* The Authorization value of a request of the test suite. */
static char *suite_auth(const char *method, const char *path, const ds_kv *q,
                        size_t nq, const ds_kv *extra, size_t nextra) {
  ds_kv h[8] = {{"Host", "example.amazonaws.com"},
                {"X-Amz-Date", "20150830T123600Z"}};
  size_t n = 2;
  for (size_t i = 0; i < nextra; i++) h[n++] = extra[i];
  ds_sigv4_req r = {method, path, q, nq, h, n, DS_SIGV4_EMPTY_SHA256};
  ds_sigv4_scope s = {"AKIDEXAMPLE", SUITE_SECRET, "us-east-1", "service",
                      "20150830T123600Z"};
  ds_buf out = {0};
  char *err = NULL;
  if (ds_sigv4_authorization(&r, &s, &out, NULL, &err) ||
      ds_buf_append(&out, "", 1)) {
    free(err);
    ds_buf_free(&out);
    return NULL;
  }
  return (char *)out.data;
}

#define SUITE_PREFIX \
  "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "

static void test_suite(void) {
  char *a = suite_auth("GET", "/", NULL, 0, NULL, 0);
  CHECK_STR(a, SUITE_PREFIX "SignedHeaders=host;x-amz-date, Signature="
               "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  free(a);
  ds_kv q[] = {{"Param2", "value2"}, {"Param1", "value1"}};
  a = suite_auth("GET", "/", q, 2, NULL, 0);
  CHECK_STR(a, SUITE_PREFIX "SignedHeaders=host;x-amz-date, Signature="
               "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
  free(a);
  ds_kv h1[] = {{"My-Header1", "VALUE1"}};
  a = suite_auth("POST", "/", NULL, 0, h1, 1);
  CHECK_STR(a, SUITE_PREFIX "SignedHeaders=host;my-header1;x-amz-date, Signature="
               "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d");
  free(a);
  ds_kv h2[] = {{"My-Header1", " value1"}, {"My-Header2", "\"a   b   c\""}};
  a = suite_auth("GET", "/", NULL, 0, h2, 2);
  CHECK_STR(a, SUITE_PREFIX "SignedHeaders=host;my-header1;my-header2;x-amz-date, "
               "Signature=acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736");
  free(a);
  a = suite_auth("GET",
                 "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                 NULL, 0, NULL, 0);
  CHECK_STR(a, SUITE_PREFIX "SignedHeaders=host;x-amz-date, Signature="
               "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f");
  free(a);
}

/* One S3 example: canonical request, string to sign and signature. */
static void s3_case(const char *method, const char *path, const ds_kv *q,
                    size_t nq, const ds_kv *h, size_t nh, const char *payload,
                    const char *want_creq, const char *want_sts,
                    const char *want_sig) {
  ds_sigv4_req r = {method, path, q, nq, h, nh, payload};
  ds_sigv4_scope s = {"AKIAIOSFODNN7EXAMPLE", S3_SECRET, "us-east-1", "s3",
                      "20130524T000000Z"};
  ds_buf creq = {0}, sh = {0}, sts = {0}, auth = {0};
  char *err = NULL, sig[DS_SHA256_HEX_LEN] = "";
  CHECK(ds_sigv4_canonical_request(&r, &creq, &sh, &err) == 0);
  CHECK_STR((char *)creq.data, want_creq);
  CHECK(ds_sigv4_string_to_sign(&s, (char *)creq.data, &sts) == 0);
  CHECK_STR((char *)sts.data, want_sts);
  CHECK(ds_sigv4_authorization(&r, &s, &auth, sig, &err) == 0);
  CHECK_STR(sig, want_sig);
  free(err);
  ds_buf_free(&creq);
  ds_buf_free(&sh);
  ds_buf_free(&sts);
  ds_buf_free(&auth);
}

#define E DS_SIGV4_EMPTY_SHA256
#define S3_STS "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"

static void test_s3_examples(void) {
  ds_kv get[] = {{"Host", "examplebucket.s3.amazonaws.com"},
                 {"Range", "bytes=0-9"},
                 {"x-amz-content-sha256", E},
                 {"x-amz-date", "20130524T000000Z"}};
  s3_case("GET", "/test.txt", NULL, 0, get, 4, E,
          "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
          "x-amz-content-sha256:" E "\nx-amz-date:20130524T000000Z\n\n"
          "host;range;x-amz-content-sha256;x-amz-date\n" E,
          S3_STS "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972",
          "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  /* PUT of "Welcome to Amazon S3." to "test$file.text" */
  char body_hash[DS_SHA256_HEX_LEN];
  ds_sha256_hex("Welcome to Amazon S3.", 21, body_hash);
  CHECK_STR(body_hash, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  ds_buf path = {0};
  CHECK(ds_buf_puts(&path, "/") == 0 &&
        ds_uri_encode(&path, "test$file.text", 14, 1) == 0 &&
        ds_buf_append(&path, "", 1) == 0);
  CHECK_STR((char *)path.data, "/test%24file.text");
  ds_kv put[] = {{"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                 {"Host", "examplebucket.s3.amazonaws.com"},
                 {"x-amz-date", "20130524T000000Z"},
                 {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
                 {"x-amz-content-sha256", body_hash}};
  s3_case("PUT", (char *)path.data, NULL, 0, put, 5, body_hash,
          "PUT\n/test%24file.text\n\ndate:Fri, 24 May 2013 00:00:00 GMT\n"
          "host:examplebucket.s3.amazonaws.com\n"
          "x-amz-content-sha256:44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072\n"
          "x-amz-date:20130524T000000Z\nx-amz-storage-class:REDUCED_REDUNDANCY\n\n"
          "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class\n"
          "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
          S3_STS "9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d",
          "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
  ds_buf_free(&path);
  ds_kv h3[] = {{"Host", "examplebucket.s3.amazonaws.com"},
                {"x-amz-date", "20130524T000000Z"},
                {"x-amz-content-sha256", E}};
  ds_kv lifecycle[] = {{"lifecycle", ""}};
  s3_case("GET", "/", lifecycle, 1, h3, 3, E,
          "GET\n/\nlifecycle=\nhost:examplebucket.s3.amazonaws.com\n"
          "x-amz-content-sha256:" E "\nx-amz-date:20130524T000000Z\n\n"
          "host;x-amz-content-sha256;x-amz-date\n" E,
          S3_STS "9766c798316ff2757b517bc739a67f6213b4ab36dd5da2f94eaebf79c77395ca",
          "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
  ds_kv list[] = {{"prefix", "J"}, {"max-keys", "2"}};
  s3_case("GET", "/", list, 2, h3, 3, E,
          "GET\n/\nmax-keys=2&prefix=J\nhost:examplebucket.s3.amazonaws.com\n"
          "x-amz-content-sha256:" E "\nx-amz-date:20130524T000000Z\n\n"
          "host;x-amz-content-sha256;x-amz-date\n" E,
          S3_STS "df57d21db20da04d7fa30298dd4488ba3a2b47ca3a489c74750e0f1e7df1b9b7",
          "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

/* ds_s3_sign_headers on the GET Object example gives its signature. */
static void test_s3_sign_headers(void) {
  ds_s3_sign_in in = {0};
  in.method = "GET";
  in.host = "examplebucket.s3.amazonaws.com";
  in.path = "/test.txt";
  in.range = "bytes=0-9";
  in.payload_hash = E;
  in.region = "us-east-1";
  in.now = 1369353600; /* 2013-05-24T00:00:00Z */
  ds_s3_keys k = {"AKIAIOSFODNN7EXAMPLE", S3_SECRET, NULL};
  ds_buf out = {0};
  char *err = NULL;
  CHECK(ds_s3_sign_headers(&in, &k, &out, &err) == 0);
  CHECK(ds_buf_append(&out, "", 1) == 0);
  CHECK_STR((char *)out.data,
            "x-amz-date: 20130524T000000Z\nx-amz-content-sha256: " E "\n"
            "Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/"
            "20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;"
            "x-amz-content-sha256;x-amz-date, Signature="
            "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41\n");
  /* a session token is sent and signed: the signature changes */
  ds_buf_free(&out);
  k.session_token = "TOKEN/with+chars=";
  CHECK(ds_s3_sign_headers(&in, &k, &out, &err) == 0);
  CHECK(ds_buf_append(&out, "", 1) == 0);
  CHECK_CONTAINS((char *)out.data, "x-amz-security-token: TOKEN/with+chars=\n");
  CHECK_CONTAINS((char *)out.data, "x-amz-date;x-amz-security-token, Signature=");
  CHECK(strstr((char *)out.data, "f0e8bdb87c96") == NULL);
  ds_buf_free(&out);
  free(err);
}

/* RFC 4231 test cases 1, 2 and 6 (a key longer than a block). */
static void test_hmac(void) {
  uint8_t mac[32];
  char hex[65];
  uint8_t key1[20];
  memset(key1, 0x0b, sizeof key1);
  ds_hmac_sha256(key1, 20, "Hi There", 8, mac);
  ds_hex_lower(mac, 32, hex);
  CHECK_STR(hex, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  ds_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, mac);
  ds_hex_lower(mac, 32, hex);
  CHECK_STR(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  uint8_t key6[131];
  memset(key6, 0xaa, sizeof key6);
  const char *m6 = "Test Using Larger Than Block-Size Key - Hash Key First";
  ds_hmac_sha256(key6, sizeof key6, m6, strlen(m6), mac);
  ds_hex_lower(mac, 32, hex);
  CHECK_STR(hex, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

static void test_uri_encode(void) {
  ds_buf b = {0};
  const char *s = "a b/c=d&e+\xc3\xa9~_.-";
  CHECK(ds_uri_encode(&b, s, strlen(s), 1) == 0 && ds_buf_append(&b, "", 1) == 0);
  CHECK_STR((char *)b.data, "a%20b/c%3Dd%26e%2B%C3%A9~_.-");
  b.len = 0;
  CHECK(ds_uri_encode(&b, s, strlen(s), 0) == 0 && ds_buf_append(&b, "", 1) == 0);
  CHECK_STR((char *)b.data, "a%20b%2Fc%3Dd%26e%2B%C3%A9~_.-");
  ds_buf_free(&b);
  char d[17];
  ds_sigv4_amz_date(1440938160, d);
  CHECK_STR(d, "20150830T123600Z");
}

int main(void) {
  test_hmac();
  test_uri_encode();
  test_suite();
  test_s3_examples();
  test_s3_sign_headers();
  return check_exit();
}
