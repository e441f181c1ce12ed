/* remote_stats.c - per-endpoint counters of remote reading (see
 * remote_stats.h). */
#include "core/remote_stats.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static ds_rstats_row table[DS_RSTATS_ENDPOINTS];
static size_t used;

void ds_rstats_endpoint(const char *url, char out[128]) {
  const char *p = url ? strstr(url, "://") : NULL;
  if (!p) {
    snprintf(out, 128, "%s", "(local)");
    return;
  }
  const char *host = p + 3;
  size_t alen = strcspn(host, "/?#");
  const char *at = memchr(host, '@', alen); /* user info: never shown */
  if (at) {
    alen -= (size_t)(at + 1 - host);
    host = at + 1;
  }
  int n = snprintf(out, 128, "%.*s%.*s", (int)(p + 3 - url), url, (int)alen, host);
  for (int i = 0; i < n && i < 127; i++) /* scheme and host: any case is one */
    if (out[i] >= 'A' && out[i] <= 'Z') out[i] = (char)(out[i] - 'A' + 'a');
}

/* The row of endpoint e (made when new; the last row takes the rest). */
static ds_rstats_row *row_of(const char *e) {
  pthread_mutex_lock(&mu);
  ds_rstats_row *r = NULL;
  for (size_t i = 0; i < used && !r; i++)
    if (strcmp(table[i].endpoint, e) == 0) r = &table[i];
  if (!r && used < DS_RSTATS_ENDPOINTS - 1) {
    r = &table[used];
    snprintf(r->endpoint, sizeof r->endpoint, "%s", e);
    used++;
  }
  if (!r) {
    r = &table[DS_RSTATS_ENDPOINTS - 1];
    snprintf(r->endpoint, sizeof r->endpoint, "%s", "(other)");
    if (used < DS_RSTATS_ENDPOINTS) used = DS_RSTATS_ENDPOINTS;
  }
  pthread_mutex_unlock(&mu);
  return r;
}

void ds_rstats_add(const char *url, ds_rstat_field f, uint64_t n) {
  if (f < 0 || f >= DS_RSTAT_NFIELDS || n == 0) return;
  char e[128];
  ds_rstats_endpoint(url, e);
  __atomic_add_fetch(&row_of(e)->v[f], n, __ATOMIC_RELAXED);
}

void ds_rstats_add_row(const char *e, const uint64_t v[DS_RSTAT_NFIELDS]) {
  ds_rstats_row *r = row_of(e);
  for (int f = 0; f < DS_RSTAT_NFIELDS; f++)
    if (v[f]) __atomic_add_fetch(&r->v[f], v[f], __ATOMIC_RELAXED);
}

size_t ds_rstats_read(ds_rstats_row *rows, size_t max, int reset) {
  size_t k = 0;
  pthread_mutex_lock(&mu);
  for (size_t i = 0; i < used && k < max; i++) {
    ds_rstats_row r;
    memcpy(r.endpoint, table[i].endpoint, sizeof r.endpoint);
    uint64_t any = 0;
    for (int f = 0; f < DS_RSTAT_NFIELDS; f++) {
      r.v[f] = reset ? __atomic_exchange_n(&table[i].v[f], 0, __ATOMIC_RELAXED)
                     : __atomic_load_n(&table[i].v[f], __ATOMIC_RELAXED);
      any |= r.v[f];
    }
    if (any) rows[k++] = r;
  }
  pthread_mutex_unlock(&mu);
  return k;
}
