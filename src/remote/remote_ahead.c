/* remote_ahead.c - whole small files fetched ahead on a helper thread and
 * the store that keeps them until opened (see remote_ahead.h).
 *
 * A file asked for gets a slot at once, marked pending, and its request
 * joins the queue; the helper thread (started when there is work, gone
 * when the queue is empty, joined by the next start and when the library
 * is unloaded) takes up to DS_RAHEAD_BATCH queued files at a time into
 * one batch of requests in flight (libcurl's multi interface) and fills
 * their slots. An open of a pending file waits for its batch rather than
 * fetching the same bytes again. */
#include "remote/remote_ahead.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cancel.h"
#include "remote/http.h"
#include "remote/remote_object.h"

#define WAIT_NS 50000000L /* an open waiting for a pending file polls its interrupt */

typedef struct aslot {
  char *url;   /* NULL: free */
  int pending; /* asked for, not fetched yet */
  int64_t at_ms;
  ds_probe p;
} aslot;

/* A queued file: its object and its slot. */
typedef struct aitem {
  ds_robj o;
  size_t slot;
} aitem;

static pthread_mutex_t amu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t acv = PTHREAD_COND_INITIALIZER; /* a batch was filled */
static aslot store[DS_RAHEAD_SLOTS];
static uint64_t store_bytes;
static aitem queue[DS_RAHEAD_SLOTS]; /* queue[0..nq): at most one per slot */
static size_t nq;
static pthread_t helper;
static int helper_on, helper_join, stopping;

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

/* Fill pending slot s with the answer r (its body taken when kept), or
 * free it when the file did not come whole or does not fit (amu held). */
static void fill(aslot *s, ds_http_req *r, int64_t t) {
  s->pending = 0;
  if (r->err || r->size == DS_HTTP_SIZE_UNKNOWN || r->size == 0 || r->body.len != r->size ||
      store_bytes + r->body.len > DS_RAHEAD_BYTES) {
    slot_free(s);
    return;
  }
  memset(&s->p, 0, sizeof s->p);
  s->p.kind = DS_PROBE_FILE;
  s->p.size = r->size;
  memcpy(s->p.etag, r->etag, sizeof s->p.etag);
  memcpy(s->p.version_id, r->version_id, sizeof s->p.version_id);
  s->p.tail = r->body.data;
  s->p.tail_len = r->body.len;
  r->body.data = NULL;
  r->body.len = r->body.cap = 0;
  s->at_ms = t;
  store_bytes += s->p.tail_len;
}

/* The helper's interrupt: the library is being unloaded. */
static int helper_stopped(void *ctx) {
  (void)ctx;
  return __atomic_load_n(&stopping, __ATOMIC_RELAXED);
}

/* The helper thread: fetch the queued files, a batch at a time, until
 * the queue is empty. */
static void *helper_main(void *arg) {
  (void)arg;
  ds_cancel_scope scope;
  ds_cancel_begin(&scope, helper_stopped, NULL);
  static aitem batch[DS_RAHEAD_BATCH]; /* only the helper uses it */
  static ds_http_req rs[DS_RAHEAD_BATCH];
  pthread_mutex_lock(&amu);
  while (nq && !stopping) {
    size_t k = nq < DS_RAHEAD_BATCH ? nq : DS_RAHEAD_BATCH;
    memcpy(batch, queue, k * sizeof *batch);
    memmove(queue, queue + k, (nq - k) * sizeof *queue);
    nq -= k;
    pthread_mutex_unlock(&amu);
    for (size_t i = 0; i < k; i++) {
      ds_robj_req(&batch[i].o, &rs[i], DS_HTTP_RANGE);
      rs[i].offset = 0;
      rs[i].length = DS_RAHEAD_FILE_MAX;
    }
    ds_http_opts ho;
    ds_robj_http_opts(&batch[0].o, &ho);
    ho.max_parallel = DS_RAHEAD_PARALLEL;
    ds_http_run(rs, k, &ho);
    int64_t t = now_ms();
    pthread_mutex_lock(&amu);
    for (size_t i = 0; i < k; i++) {
      fill(&store[batch[i].slot], &rs[i], t);
      ds_http_req_free(&rs[i]);
      ds_robj_free(&batch[i].o);
    }
    pthread_cond_broadcast(&acv);
  }
  for (size_t i = 0; i < nq; i++) { /* unloading: nothing more is fetched */
    slot_free(&store[queue[i].slot]);
    ds_robj_free(&queue[i].o);
  }
  nq = 0;
  helper_on = 0;
  pthread_cond_broadcast(&acv);
  pthread_mutex_unlock(&amu);
  ds_cancel_end(&scope);
  return NULL;
}

/* The library is unloaded (dlclose): stop the helper and wait for it, so
 * that no thread runs code that is gone. */
__attribute__((destructor)) static void rahead_unload(void) {
  pthread_mutex_lock(&amu);
  __atomic_store_n(&stopping, 1, __ATOMIC_RELAXED);
  int join = helper_join;
  helper_join = 0;
  pthread_mutex_unlock(&amu);
  if (join) pthread_join(helper, NULL);
}

/* 1 when url has a slot (pending or fresh) (amu held); stale slots of
 * url are freed. */
static int known(const char *url, int64_t t) {
  for (size_t i = 0; i < DS_RAHEAD_SLOTS; i++) {
    aslot *s = &store[i];
    if (!s->url || strcmp(s->url, url) != 0) continue;
    if (s->pending || t - s->at_ms < DS_PROBE_TTL_MS) return 1;
    slot_free(s);
  }
  return 0;
}

/* A free slot (amu held), stale ones freed on the way; NULL when none. */
static aslot *free_slot(int64_t t) {
  aslot *pick = NULL;
  for (size_t i = 0; i < DS_RAHEAD_SLOTS; i++) {
    aslot *s = &store[i];
    if (s->url && !s->pending && t - s->at_ms >= DS_PROBE_TTL_MS) slot_free(s);
    if (!s->url && !pick) pick = s;
  }
  return pick;
}

int ds_rahead_take(const char *url, ds_probe *out) {
  int hit = 0;
  pthread_mutex_lock(&amu);
  for (size_t i = 0; i < DS_RAHEAD_SLOTS && !hit; i++) {
    aslot *s = &store[i];
    if (!s->url || strcmp(s->url, url) != 0) continue;
    while (s->pending) { /* its batch is in flight: wait for it */
      struct timespec w;
      clock_gettime(CLOCK_REALTIME, &w);
      w.tv_nsec += WAIT_NS;
      if (w.tv_nsec >= 1000000000L) w.tv_sec++, w.tv_nsec -= 1000000000L;
      pthread_cond_timedwait(&acv, &amu, &w);
      if (ds_cancel_check()) break;
    }
    if (s->pending) break; /* interrupted: the open goes its usual way */
    if (!s->url) break;    /* it did not come whole */
    if (now_ms() - s->at_ms < DS_PROBE_TTL_MS) {
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
  for (size_t i = 0; i < n; i++) {
    ds_robj o;
    char *err = NULL;
    if (ds_robj_make(paths[i], &o, &err)) {
      free(err);
      continue;
    }
    char *u = strdup(o.url);
    int64_t t = now_ms();
    pthread_mutex_lock(&amu);
    aslot *s = u && !stopping && !known(u, t) ? free_slot(t) : NULL;
    if (s) {
      s->url = u;
      s->pending = 1;
      u = NULL;
      queue[nq].o = o;
      queue[nq].slot = (size_t)(s - store);
      nq++;
      memset(&o, 0, sizeof o);
      if (!helper_on) {
        if (helper_join) pthread_join(helper, NULL); /* it returned already */
        helper_join = 0;
        if (pthread_create(&helper, NULL, helper_main, NULL) == 0) {
          helper_on = helper_join = 1;
        } else { /* no thread: nothing is fetched ahead */
          slot_free(s);
          nq--;
          o = queue[nq].o;
        }
      }
    }
    pthread_mutex_unlock(&amu);
    free(u);
    ds_robj_free(&o);
  }
}
