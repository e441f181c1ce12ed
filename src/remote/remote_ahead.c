/* remote_ahead.c - whole small files fetched ahead and the store that
 * keeps them until opened (see remote_ahead.h). */
#include "remote/remote_ahead.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct aslot {
  char *url; /* NULL: free */
  int64_t at_ms;
  ds_probe p;
} aslot;

static pthread_mutex_t amu = PTHREAD_MUTEX_INITIALIZER;
static aslot store[DS_RAHEAD_SLOTS];
static uint64_t store_bytes;

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Free a slot (amu held). */
static void slot_free(aslot *s) {
  store_bytes -= s->p.tail_len;
  free(s->url);
  ds_probe_free(&s->p);
  memset(s, 0, sizeof *s);
}

/* Keep p (taken) for url, dated t, when there is room (amu not held). */
static void put(const char *url, ds_probe *p, int64_t t) {
  char *u = strdup(url);
  pthread_mutex_lock(&amu);
  aslot *pick = NULL;
  for (size_t i = 0; i < DS_RAHEAD_SLOTS; i++) {
    aslot *s = &store[i];
    if (s->url && (t - s->at_ms >= DS_PROBE_TTL_MS || strcmp(s->url, url) == 0))
      slot_free(s);
    if (!s->url && !pick) pick = s;
  }
  if (u && pick && store_bytes + p->tail_len <= DS_RAHEAD_BYTES) {
    pick->url = u;
    pick->at_ms = t;
    pick->p = *p;
    store_bytes += p->tail_len;
    memset(p, 0, sizeof *p);
    u = NULL;
  }
  pthread_mutex_unlock(&amu);
  free(u);
  ds_probe_free(p);
}

int ds_rahead_take(const char *url, ds_probe *out) {
  int hit = 0;
  int64_t t = now_ms();
  pthread_mutex_lock(&amu);
  for (size_t i = 0; i < DS_RAHEAD_SLOTS && !hit; i++) {
    aslot *s = &store[i];
    if (!s->url || strcmp(s->url, url) != 0) continue;
    if (t - s->at_ms < DS_PROBE_TTL_MS) {
      *out = s->p;
      store_bytes -= s->p.tail_len;
      memset(&s->p, 0, sizeof s->p);
      hit = 1;
    }
    slot_free(s);
  }
  pthread_mutex_unlock(&amu);
  return hit;
}

void ds_rahead_load(const char *const *paths, size_t n) {
  ds_robj *o = n ? calloc(n, sizeof *o) : NULL;
  ds_http_req *rs = n ? calloc(n, sizeof *rs) : NULL;
  if (!o || !rs) {
    free(o);
    free(rs);
    return;
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    char *err = NULL;
    if (ds_robj_make(paths[i], &o[k], &err) == 0) {
      ds_robj_req(&o[k], &rs[k], DS_HTTP_RANGE);
      rs[k].offset = 0;
      rs[k].length = DS_RAHEAD_FILE_MAX;
      k++;
    }
    free(err);
  }
  ds_http_opts ho;
  if (k) {
    ds_robj_http_opts(&o[0], &ho);
    ho.max_parallel = DS_RAHEAD_PARALLEL;
    ds_http_run(rs, k, &ho);
  }
  int64_t t = now_ms();
  for (size_t i = 0; i < k; i++) {
    ds_http_req *r = &rs[i];
    if (!r->err && r->size != DS_HTTP_SIZE_UNKNOWN && r->size > 0 && r->body.len == r->size) {
      ds_probe p;
      memset(&p, 0, sizeof p);
      p.kind = DS_PROBE_FILE;
      p.size = r->size;
      memcpy(p.etag, r->etag, sizeof p.etag);
      memcpy(p.version_id, r->version_id, sizeof p.version_id);
      p.tail = r->body.data;
      p.tail_len = r->body.len;
      r->body.data = NULL;
      r->body.len = r->body.cap = 0;
      put(o[i].url, &p, t);
    }
    ds_http_req_free(r);
    ds_robj_free(&o[i]);
  }
  free(rs);
  free(o);
}
