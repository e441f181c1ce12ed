/* test_remote_config.c - remote paths and where their settings come from
 * (src/remote/remote_url.c, remote_creds.c): s3://, gs://, http(s)://
 * parsing; S3 object URLs in path and virtual-host style, with AWS's
 * endpoint and custom ones; credentials from the environment, from
 * ~/.aws/credentials and ~/.aws/config profiles (AWS_PROFILE,
 * AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE), region and endpoint
 * precedence, GCS HMAC keys / OAuth token / anonymous, and that no error
 * message ever holds a secret. The environment is this test's own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "remote/remote_creds.h"
#include "remote/remote_sign.h"
#include "remote/s3_sign.h"
#include "remote/remote_url.h"

static char home[256];

static void write_file(const char *rel, const char *text) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s", home, rel);
  FILE *f = fopen(p, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

static void clear_env(void) {
  const char *vars[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                        "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
                        "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE",
                        "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE",
                        "GS_ACCESS_KEY_ID", "GS_SECRET_ACCESS_KEY",
                        "GOOGLE_OAUTH_ACCESS_TOKEN", "GS_ENDPOINT_URL"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) unsetenv(vars[i]);
  setenv("HOME", home, 1);
}

static void test_parse(void) {
  ds_remote_url u;
  char *err = NULL;
  CHECK(ds_remote_scheme_of("/tmp/x") == DS_REMOTE_NONE);
  CHECK(ds_remote_scheme_of("S3://b/k") == DS_REMOTE_S3);
  CHECK(ds_remote_scheme_of("gs://b") == DS_REMOTE_GS);
  CHECK(ds_remote_scheme_of("HTTPS://h/") == DS_REMOTE_HTTP);
  CHECK(ds_remote_scheme_of("file:///x") == DS_REMOTE_NONE);
  CHECK(ds_remote_url_parse("s3://my-bucket/a b/c=d%20.bagz", &u, &err) == 0);
  CHECK_STR(u.bucket, "my-bucket");
  CHECK_STR(u.key, "a b/c=d%20.bagz"); /* literal, as aws s3 takes it */
  ds_remote_url_free(&u);
  CHECK(ds_remote_url_parse("gs://bkt", &u, &err) == 0);
  CHECK_STR(u.bucket, "bkt");
  CHECK_STR(u.key, "");
  ds_remote_url_free(&u);
  CHECK(ds_remote_url_parse("https://h:8443/p?q=1", &u, &err) == 0);
  CHECK_STR(u.url, "https://h:8443/p?q=1");
  CHECK(u.bucket == NULL);
  ds_remote_url_free(&u);
  CHECK(ds_remote_url_parse("s3:///key", &u, &err) == -1);
  CHECK_CONTAINS(err, "not a bucket name");
  CHECK(ds_remote_url_parse("s3://b@d/key", &u, &err) == -1);
  CHECK(ds_remote_url_parse("https:///x?token=SECRET", &u, &err) == -1);
  CHECK(err && strstr(err, "SECRET") == NULL);
  free(err);
}

/* The target's URL, Host and path as one string "url|host|path". */
static char *target(const char *endpoint, const char *region, ds_url_style st,
                    const char *bucket, const char *key, const ds_kv *q,
                    size_t nq) {
  ds_s3_target t;
  char *err = NULL;
  if (ds_s3_target_make(endpoint, region, st, bucket, key, q, nq, &t, &err)) {
    char *r = ds_strf("error: %s", err);
    free(err);
    return r;
  }
  char *r = ds_strf("%s|%s|%s", (char *)t.url.data, (char *)t.host.data,
                    (char *)t.path.data);
  ds_s3_target_free(&t);
  return r;
}

static void test_targets(void) {
  char *s = target(NULL, "eu-west-1", DS_URL_STYLE_AUTO, "my-bucket", "a b/c.bagz",
                   NULL, 0);
  CHECK_STR(s, "https://my-bucket.s3.eu-west-1.amazonaws.com/a%20b/c.bagz|"
               "my-bucket.s3.eu-west-1.amazonaws.com|/a%20b/c.bagz");
  free(s);
  s = target(NULL, "us-east-1", DS_URL_STYLE_AUTO, "data.sets", "k", NULL, 0);
  CHECK_STR(s, "https://s3.us-east-1.amazonaws.com/data.sets/k|"
               "s3.us-east-1.amazonaws.com|/data.sets/k");
  free(s);
  s = target(NULL, "us-east-1", DS_URL_STYLE_PATH, "bkt", "k", NULL, 0);
  CHECK_STR(s, "https://s3.us-east-1.amazonaws.com/bkt/k|s3.us-east-1.amazonaws.com|/bkt/k");
  free(s);
  s = target(NULL, "us-east-1", DS_URL_STYLE_VIRTUAL, "data.sets", "k", NULL, 0);
  CHECK_CONTAINS(s, "error: bucket 'data.sets' cannot be a host name");
  free(s);
  ds_kv q[] = {{"prefix", "train@"}, {"list-type", "2"}};
  s = target("http://127.0.0.1:9000", "us-east-1", DS_URL_STYLE_AUTO, "bkt", "", q, 2);
  CHECK_STR(s, "http://127.0.0.1:9000/bkt/?list-type=2&prefix=train%40|"
               "127.0.0.1:9000|/bkt/");
  free(s);
  s = target("https://minio.local:9000/base/", "x", DS_URL_STYLE_VIRTUAL, "bkt",
             "k=1", NULL, 0);
  CHECK_STR(s, "https://bkt.minio.local:9000/base/k%3D1|bkt.minio.local:9000|/base/k%3D1");
  free(s);
  s = target("ftp://h", "x", DS_URL_STYLE_AUTO, "bkt", "k", NULL, 0);
  CHECK_CONTAINS(s, "error: endpoint 'ftp://h' is not an http");
  free(s);
  s = target("https://u:p@h", "x", DS_URL_STYLE_AUTO, "bkt", "k", NULL, 0);
  CHECK_CONTAINS(s, "no user info");
  CHECK(strstr(s, "u:p") == NULL);
  free(s);
}

static void test_s3_env(void) {
  ds_remote_config c;
  char *err = NULL;
  clear_env();
  CHECK(ds_remote_config_resolve(DS_REMOTE_S3, NULL, &c, &err) == 0);
  CHECK(c.access_key == NULL && c.secret_key == NULL);
  CHECK_STR(c.region, "us-east-1");
  CHECK(c.endpoint == NULL);
  CHECK_CONTAINS(c.source, "none found");
  ds_remote_config_free(&c);
  setenv("AWS_ACCESS_KEY_ID", "AKENV", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "SKENV", 1);
  setenv("AWS_SESSION_TOKEN", "TKENV", 1);
  setenv("AWS_DEFAULT_REGION", "eu-north-1", 1);
  setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1", 1);
  CHECK(ds_remote_config_resolve(DS_REMOTE_S3, NULL, &c, &err) == 0);
  CHECK_STR(c.access_key, "AKENV");
  CHECK_STR(c.secret_key, "SKENV");
  CHECK_STR(c.session_token, "TKENV");
  CHECK_STR(c.region, "eu-north-1");
  CHECK_STR(c.endpoint, "http://127.0.0.1:1");
  CHECK_CONTAINS(c.source, "environment");
  CHECK(strstr(c.source, "AKENV") == NULL && strstr(c.source, "SKENV") == NULL);
  ds_remote_config_free(&c);
  setenv("AWS_REGION", "ap-south-1", 1);
  setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:2", 1);
  CHECK(ds_remote_config_resolve(DS_REMOTE_S3, NULL, &c, &err) == 0);
  CHECK_STR(c.region, "ap-south-1");
  CHECK_STR(c.endpoint, "http://127.0.0.1:2");
  ds_remote_config_free(&c);
  ds_remote_options o = {"http://127.0.0.1:3", "sa-east-1", 0, DS_URL_STYLE_PATH};
  CHECK(ds_remote_config_resolve(DS_REMOTE_S3, &o, &c, &err) == 0);
  CHECK_STR(c.region, "sa-east-1");
  CHECK_STR(c.endpoint, "http://127.0.0.1:3");
  CHECK(c.url_style == DS_URL_STYLE_PATH);
  ds_remote_config_free(&c);
  o.anonymous = 1;
  CHECK(ds_remote_config_resolve(DS_REMOTE_S3, &o, &c, &err) == 0);
  CHECK(c.access_key == NULL && c.session_token == NULL);
  ds_remote_config_free(&c);
  free(err);
}

static void test_s3_files(void) {
  ds_remote_config c;
  char *err = NULL;
  clear_env();
  write_file(".aws/credentials",
             "# comment\n[default]\naws_access_key_id = AKDEF\n"
             "aws_secret_access_key=SKDEF\n\n[work]\n aws_access_key_id = AKWORK\n"
             "aws_access_key_id = AKWORK\naws_secret_access_key = SK WORK=/+\n"
             "aws_session_token = TKWORK\n");
  write_file(".aws/config",
             "[default]\nregion = us-west-1\n[profile work]\nregion=eu-central-1\n"
             "s3 =\n  endpoint_url = http://nested.invalid\n"
             "endpoint_url = http://127.0.0.1:9\n[profile cfgonly]\n"
             "aws_access_key_id=AKCFG\naws_secret_access_key=SKCFG\n");
  CHECK(ds_remote_config_resolve(DS_REMOTE_S3, NULL, &c, &err) == 0);
  CHECK_STR(c.access_key, "AKDEF");
  CHECK_STR(c.secret_key, "SKDEF");
  CHECK(c.session_token == NULL);
  CHECK_STR(c.region, "us-west-1");
  CHECK_CONTAINS(c.source, "profile 'default'");
  ds_remote_config_free(&c);
  setenv("AWS_PROFILE", "work", 1);
  CHECK(ds_remote_config_resolve(DS_REMOTE_S3, NULL, &c, &err) == 0);
  CHECK_STR(c.access_key, "AKWORK");
  CHECK_STR(c.secret_key, "SK WORK=/+");
  CHECK_STR(c.session_token, "TKWORK");
  CHECK_STR(c.region, "eu-central-1");
  CHECK_STR(c.endpoint, "http://127.0.0.1:9"); /* not the nested s3 one */
  ds_remote_config_free(&c);
  setenv("AWS_PROFILE", "cfgonly", 1);
  CHECK(ds_remote_config_resolve(DS_REMOTE_S3, NULL, &c, &err) == 0);
  CHECK_STR(c.access_key, "AKCFG");
  CHECK_CONTAINS(c.source, "config");
  ds_remote_config_free(&c);
  setenv("AWS_PROFILE", "missing", 1);
  CHECK(ds_remote_config_resolve(DS_REMOTE_S3, NULL, &c, &err) == -1);
  CHECK_CONTAINS(err, "profile 'missing'");
  /* the environment's keys come before the profile's */
  setenv("AWS_PROFILE", "work", 1);
  setenv("AWS_ACCESS_KEY_ID", "AKENV", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "SKENV", 1);
  CHECK(ds_remote_config_resolve(DS_REMOTE_S3, NULL, &c, &err) == 0);
  CHECK_STR(c.access_key, "AKENV");
  CHECK(c.session_token == NULL); /* not the profile's token with env keys */
  CHECK_STR(c.region, "eu-central-1");
  ds_remote_config_free(&c);
  /* other file names; a malformed line: its number, never its text */
  clear_env();
  char p[512];
  snprintf(p, sizeof p, "%s/creds2", home);
  write_file("creds2", "[default]\nSECRETLINEVALUE\n");
  setenv("AWS_SHARED_CREDENTIALS_FILE", p, 1);
  CHECK(ds_remote_config_resolve(DS_REMOTE_S3, NULL, &c, &err) == -1);
  CHECK_CONTAINS(err, "creds2:2: a line without '='");
  CHECK(err && strstr(err, "SECRETLINEVALUE") == NULL);
  free(err);
}

static void test_gs(void) {
  ds_remote_config c;
  char *err = NULL;
  clear_env();
  setenv("AWS_ACCESS_KEY_ID", "AKENV", 1); /* not used for gs:// */
  setenv("AWS_SECRET_ACCESS_KEY", "SKENV", 1);
  CHECK(ds_remote_config_resolve(DS_REMOTE_GS, NULL, &c, &err) == 0);
  CHECK(c.access_key == NULL && c.bearer_token == NULL);
  CHECK_STR(c.endpoint, "https://storage.googleapis.com");
  CHECK_STR(c.region, "auto");
  ds_remote_config_free(&c);
  setenv("GOOGLE_OAUTH_ACCESS_TOKEN", "ya29.TOKEN", 1);
  CHECK(ds_remote_config_resolve(DS_REMOTE_GS, NULL, &c, &err) == 0);
  CHECK_STR(c.bearer_token, "ya29.TOKEN");
  ds_remote_config_free(&c);
  setenv("GS_ACCESS_KEY_ID", "GOOG1X", 1);
  setenv("GS_SECRET_ACCESS_KEY", "GSSECRET", 1);
  setenv("GS_ENDPOINT_URL", "http://127.0.0.1:4443", 1);
  CHECK(ds_remote_config_resolve(DS_REMOTE_GS, NULL, &c, &err) == 0);
  CHECK_STR(c.access_key, "GOOG1X");
  CHECK(c.bearer_token == NULL); /* HMAC keys first */
  CHECK_STR(c.endpoint, "http://127.0.0.1:4443");
  ds_remote_config_free(&c);
  ds_remote_options o = {0};
  o.anonymous = 1;
  CHECK(ds_remote_config_resolve(DS_REMOTE_GS, &o, &c, &err) == 0);
  CHECK(c.access_key == NULL && c.bearer_token == NULL);
  ds_remote_config_free(&c);
  CHECK(ds_remote_config_resolve(DS_REMOTE_HTTP, NULL, &c, &err) == -1);
  free(err);
}

/* ds_remote_sign: Bearer for a GCS token, SigV4 from the URL (its query
 * decoded, then encoded again as SigV4 does), nothing when anonymous. */
static void test_sign(void) {
  ds_remote_config c = {0};
  ds_buf out = {0};
  char *err = NULL;
  c.region = "us-east-1";
  CHECK(ds_remote_sign(&c, "GET", "https://h/b/k", NULL, NULL, &out, &err) == 0);
  CHECK(out.len == 0); /* anonymous: no header */
  c.bearer_token = "ya29.TOKEN";
  CHECK(ds_remote_sign(&c, "GET", "https://h/b/k", NULL, NULL, &out, &err) == 0);
  CHECK(ds_buf_append(&out, "", 1) == 0);
  CHECK_STR((char *)out.data, "Authorization: Bearer ya29.TOKEN\n");
  out.len = 0;
  c.bearer_token = NULL;
  c.access_key = "AKID";
  c.secret_key = "SECRET";
  c.session_token = "TOK";
  CHECK(ds_remote_sign(&c, "GET",
                       "http://127.0.0.1:9000/bkt/?list-type=2&prefix=a%20b%3D&max-keys=5",
                       NULL, NULL, &out, &err) == 0);
  CHECK(ds_buf_append(&out, "", 1) == 0);
  /* the same request signed from its decoded pairs: the same headers
   * (both within this second; retried once if the second turned) */
  ds_kv q[] = {{"list-type", "2"}, {"prefix", "a b="}, {"max-keys", "5"}};
  ds_s3_sign_in in = {0};
  in.method = "GET";
  in.host = "127.0.0.1:9000";
  in.path = "/bkt/";
  in.query = q;
  in.nquery = 3;
  in.region = "us-east-1";
  ds_s3_keys k = {"AKID", "SECRET", "TOK"};
  ds_buf want = {0};
  for (int i = 0; i < 2; i++) {
    want.len = 0;
    in.now = time(NULL);
    ds_s3_sign_headers(&in, &k, &want, &err);
    ds_buf_append(&want, "", 1);
    if (strcmp((char *)want.data, (char *)out.data) == 0) break;
    out.len = 0;
    ds_remote_sign(&c, "GET",
                   "http://127.0.0.1:9000/bkt/?list-type=2&prefix=a%20b%3D&max-keys=5",
                   NULL, NULL, &out, &err);
    ds_buf_append(&out, "", 1);
  }
  CHECK_STR((char *)out.data, (char *)want.data);
  CHECK_CONTAINS((char *)out.data, "x-amz-security-token: TOK\n");
  ds_buf_free(&out);
  ds_buf_free(&want);
  free(err);
  ds_buf d = {0};
  CHECK(ds_percent_decode(&d, "a%20b%3d%zz%4", 13) == 0);
  CHECK(d.len == 9 && memcmp(d.data, "a b=%zz%4", 9) == 0);
  ds_buf_free(&d);
}

int main(void) {
  snprintf(home, sizeof home, "/tmp/ds-test-creds-XXXXXX");
  if (!mkdtemp(home)) return 1;
  char d[300];
  snprintf(d, sizeof d, "%s/.aws", home);
  if (mkdir(d, 0700)) return 1;
  test_parse();
  test_targets();
  test_s3_env();
  test_s3_files();
  test_gs();
  test_sign();
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", home);
  if (system(cmd)) return 1;
  return check_exit();
}
