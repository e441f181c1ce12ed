/* test_remote_stats.c - the per-endpoint counters of remote reading
 * (core/remote_stats.c): endpoints without user info, path or query, host
 * in lower case; counts added per endpoint from many threads at once come
 * out exact; read with reset gives the counts and zeroes them; more
 * endpoints than rows share "(other)". */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/remote_stats.h"

/* The row of endpoint e in rows (NULL when none). */
static const ds_rstats_row *find(const ds_rstats_row *rows, size_t n, const char *e) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(rows[i].endpoint, e) == 0) return &rows[i];
  return NULL;
}

static void test_endpoint(void) {
  char e[128];
  ds_rstats_endpoint("https://user:pw@Data.Example.org:8443/a/b?X-Amz-Signature=s", e);
  CHECK_STR(e, "https://data.example.org:8443");
  ds_rstats_endpoint("http://127.0.0.1:9000/bkt/key", e);
  CHECK_STR(e, "http://127.0.0.1:9000");
  ds_rstats_endpoint("http://h", e);
  CHECK_STR(e, "http://h");
}

#define THREADS 4
#define ADDS 10000

static void *adder(void *arg) {
  (void)arg;
  for (int i = 0; i < ADDS; i++) {
    ds_rstats_add("http://threads:1/x", DS_RSTAT_REQUESTS, 1);
    ds_rstats_add("http://threads:1/y", DS_RSTAT_BYTES, 3);
  }
  return NULL;
}

static void test_threads_and_reset(void) {
  ds_rstats_row rows[DS_RSTATS_ENDPOINTS];
  ds_rstats_read(rows, DS_RSTATS_ENDPOINTS, 1); /* start from zero */
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, adder, NULL);
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  size_t n = ds_rstats_read(rows, DS_RSTATS_ENDPOINTS, 1);
  const ds_rstats_row *r = find(rows, n, "http://threads:1");
  CHECK(r != NULL);
  CHECK(r && r->v[DS_RSTAT_REQUESTS] == (uint64_t)THREADS * ADDS);
  CHECK(r && r->v[DS_RSTAT_BYTES] == (uint64_t)THREADS * ADDS * 3);
  CHECK(r && r->v[DS_RSTAT_RETRIES] == 0);
  CHECK(ds_rstats_read(rows, DS_RSTATS_ENDPOINTS, 0) == 0); /* reset: nothing left */
  uint64_t v[DS_RSTAT_NFIELDS] = {0};
  v[DS_RSTAT_CACHE_HITS] = 2;
  v[DS_RSTAT_WAIT_US] = 5000;
  ds_rstats_add_row("http://row:2", v);
  n = ds_rstats_read(rows, DS_RSTATS_ENDPOINTS, 0);
  r = find(rows, n, "http://row:2");
  CHECK(n == 1 && r && r->v[DS_RSTAT_CACHE_HITS] == 2 && r->v[DS_RSTAT_WAIT_US] == 5000);
}

static void test_overflow(void) {
  ds_rstats_row rows[DS_RSTATS_ENDPOINTS];
  ds_rstats_read(rows, DS_RSTATS_ENDPOINTS, 1);
  char url[64];
  for (int i = 0; i < 2 * DS_RSTATS_ENDPOINTS; i++) {
    snprintf(url, sizeof url, "http://h%d:80/k", i);
    ds_rstats_add(url, DS_RSTAT_REQUESTS, 1);
  }
  size_t n = ds_rstats_read(rows, DS_RSTATS_ENDPOINTS, 0);
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) total += rows[i].v[DS_RSTAT_REQUESTS];
  CHECK(n <= DS_RSTATS_ENDPOINTS);
  CHECK(total == 2 * DS_RSTATS_ENDPOINTS); /* nothing lost */
  CHECK(find(rows, n, "(other)") != NULL);
}

int main(void) {
  test_endpoint();
  test_threads_and_reset();
  test_overflow();
  return check_exit();
}
