/* test_remote_cache.c - the persistent cache of remote index bytes
 * (remote/remote_cache.c) without a network: a probe entry round trip
 * (file named by the URL's SHA-256), a damaged entry detected and
 * deleted, whole entries served only for their ETag, off for
 * remote_cache=off, DATASETS_REMOTE_CACHE=off and signed URLs (query
 * strings), and the size bound: least recently used entries go first, a
 * temporary file a crash left is removed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "check.h"
#include "remote/remote_cache.h"
#include "remote/sha256_hmac.h"

static char dir[64];

/* The entry file of url and kind ('p', 'w') into out. */
static void entry_file(const char *url, char kind, char *out, size_t n) {
  char hex[DS_SHA256_HEX_LEN];
  ds_sha256_hex(url, strlen(url), hex);
  snprintf(out, n, "%s/%s.%c", dir, hex, kind);
}

static int exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0;
}

static long size_of(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

/* Set p's mtime to t seconds since 1970. */
static void set_time(const char *p, long t) {
  struct timeval tv[2] = {{t, 0}, {t, 0}};
  utimes(p, tv);
}

/* An object at url (no network: nothing is asked). */
static int obj(const char *url, ds_robj *o) {
  char *err = NULL;
  int rc = ds_robj_make(url, o, &err);
  free(err);
  return rc;
}

static void test_probe_round_trip(void) {
  ds_robj o;
  CHECK(obj("http://h:1/a.bin", &o) == 0);
  CHECK(ds_rcache_on(&o));
  uint8_t tail[100];
  for (int i = 0; i < 100; i++) tail[i] = (uint8_t)(i * 7);
  ds_rcache_obj p = {.size = 1000, .tail = tail, .tail_len = sizeof tail};
  strcpy(p.etag, "\"e1\"");
  strcpy(p.version_id, "v9");
  ds_rcache_probe_put(&o, &p);
  char f[256];
  entry_file("http://h:1/a.bin", 'p', f, sizeof f);
  CHECK(exists(f));
  ds_rcache_obj g;
  int64_t age = -1;
  CHECK(ds_rcache_probe_get(&o, &g, &age) == 1);
  CHECK(g.size == 1000 && strcmp(g.etag, "\"e1\"") == 0 && strcmp(g.version_id, "v9") == 0);
  CHECK(g.tail_len == 100 && g.tail && memcmp(g.tail, tail, 100) == 0);
  CHECK(age >= 0 && age < 60000);
  free(g.tail);
  /* a flipped byte: detected, the file deleted */
  FILE *fp = fopen(f, "r+b");
  if (fp) {
    fseek(fp, 100, SEEK_SET);
    int c = fgetc(fp);
    fseek(fp, 100, SEEK_SET);
    fputc(c ^ 1, fp);
    fclose(fp);
  }
  CHECK(ds_rcache_probe_get(&o, &g, &age) == 0);
  CHECK(!exists(f));
  ds_robj_free(&o);
}

static void test_whole_by_etag(void) {
  ds_robj o;
  CHECK(obj("http://h:1/idx.offsets", &o) == 0);
  size_t n = 200000;
  uint8_t *b = malloc(n), *got = malloc(n);
  for (size_t i = 0; b && i < n; i++) b[i] = (uint8_t)(i * 31 + 5);
  ds_rcache_obj p = {.size = n, .tail_len = 65536};
  strcpy(p.etag, "\"w1\"");
  CHECK(ds_rcache_whole_wanted(&o, &p));
  ds_rcache_whole_put(&o, &p, b);
  memset(got, 0, n);
  CHECK(ds_rcache_whole_get(&o, &p, got) == 1 && memcmp(got, b, n) == 0);
  ds_rcache_obj other = p;
  strcpy(other.etag, "\"w2\"");
  CHECK(ds_rcache_whole_get(&o, &other, got) == 0); /* another ETag: a miss */
  other = p;
  other.size = n + 1;
  CHECK(ds_rcache_whole_get(&o, &other, got) == 0); /* another size: a miss */
  ds_rcache_obj noetag = p;
  noetag.etag[0] = 0;
  CHECK(!ds_rcache_whole_wanted(&o, &noetag));
  ds_rcache_obj big = p;
  big.size = DS_RCACHE_WHOLE_MAX + 1;
  CHECK(!ds_rcache_whole_wanted(&o, &big));
  free(b);
  free(got);
  ds_robj_free(&o);
}

static void test_off(void) {
  ds_robj o;
  CHECK(obj("https://h/x?X-Amz-Signature=abc", &o) == 0);
  CHECK(!ds_rcache_on(&o)); /* a signed URL */
  ds_robj_free(&o);
  CHECK(obj("http://h:1/a.bin", &o) == 0);
  o.cache = 1; /* remote_cache=off */
  CHECK(!ds_rcache_on(&o));
  o.cache = -1;
  setenv("DATASETS_REMOTE_CACHE", "off", 1);
  CHECK(!ds_rcache_on(&o));
  o.cache = 0; /* remote_cache=on wins over the environment */
  CHECK(ds_rcache_on(&o));
  unsetenv("DATASETS_REMOTE_CACHE");
  ds_robj_free(&o);
}

static void test_bound(void) {
  /* the entries of the tests before go (ds_rcache_drop); then five
   * entries, used in the order 0..4 (mtimes), a crash's old temp file */
  ds_robj d;
  CHECK(obj("http://h:1/idx.offsets", &d) == 0);
  ds_rcache_drop(&d);
  ds_robj_free(&d);
  char names[5][256], url[64];
  uint8_t tail[2000];
  memset(tail, 7, sizeof tail);
  long one = 0;
  for (int i = 0; i < 5; i++) {
    ds_robj o;
    snprintf(url, sizeof url, "http://h:1/lru%d", i);
    CHECK(obj(url, &o) == 0);
    ds_rcache_obj p = {.size = 5000, .tail = tail, .tail_len = sizeof tail};
    strcpy(p.etag, "\"x\"");
    ds_rcache_probe_put(&o, &p);
    entry_file(url, 'p', names[i], sizeof names[i]);
    set_time(names[i], 1000000 + i * 10);
    one = size_of(names[i]);
    ds_robj_free(&o);
  }
  char tmpf[256];
  snprintf(tmpf, sizeof tmpf, "%s/.tmp-1-2-3", dir);
  FILE *fp = fopen(tmpf, "w");
  if (fp) fclose(fp);
  set_time(tmpf, 1000000);
  CHECK(one > 2000);
  /* a bound of 4.5 entries: the sixth write passes it; down to 3/4 */
  char max[32];
  long bound = one * 9 / 2;
  snprintf(max, sizeof max, "%ld", bound);
  setenv("DATASETS_REMOTE_CACHE_MAX", max, 1);
  ds_robj o;
  CHECK(obj("http://h:1/lru5", &o) == 0);
  ds_rcache_obj p = {.size = 5000, .tail = tail, .tail_len = sizeof tail};
  strcpy(p.etag, "\"x\"");
  ds_rcache_probe_put(&o, &p);
  char newest[256];
  entry_file("http://h:1/lru5", 'p', newest, sizeof newest);
  ds_robj_free(&o);
  /* 6 entries > 4.5: the oldest go until <= 3.375 entries: 3 are left */
  CHECK(!exists(names[0]) && !exists(names[1]) && !exists(names[2]));
  CHECK(exists(names[3]) && exists(names[4]) && exists(newest));
  CHECK(!exists(tmpf));
  unsetenv("DATASETS_REMOTE_CACHE_MAX");
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/ds-rcache-unit-XXXXXX");
  if (!mkdtemp(dir)) return 1;
  setenv("DATASETS_REMOTE_CACHE_DIR", dir, 1);
  unsetenv("DATASETS_REMOTE_CACHE");
  unsetenv("DATASETS_REMOTE_CACHE_MAX");
  test_probe_round_trip();
  test_whole_by_etag();
  test_off();
  test_bound();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) return 1;
  return check_exit();
}
