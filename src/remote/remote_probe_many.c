/* remote_probe_many.c - many remote paths probed at once, and the store
 * of their answers (see remote_probe_many.h). */
#include "remote/remote_probe_many.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cancel.h"

/* -- the store: open addressing over a lazily made table of pointers -- */

#define PROBES 16 /* slots looked at from a URL's hash */

typedef struct wslot {
  char *url;
  uint64_t h;
  int64_t at_ms;
  ds_probe p;
} wslot;

static pthread_mutex_t wmu = PTHREAD_MUTEX_INITIALIZER;
static wslot **warm; /* DS_PROBE_WARM_SLOTS, made on the first put */
static uint64_t warm_bytes;

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* FNV-1a of s. */
static uint64_t hash_of(const char *s) {
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (; *s; s++) h = (h ^ (uint8_t)*s) * UINT64_C(0x100000001b3);
  return h;
}

/* Free a slot (wmu held). */
static void slot_free(wslot **sp) {
  wslot *s = *sp;
  if (!s) return;
  warm_bytes -= s->p.tail_len;
  free(s->url);
  ds_probe_free(&s->p);
  free(s);
  *sp = NULL;
}

/* A copy of src, tail included (0, or -1 out of memory). */
static int copy_probe(ds_probe *dst, const ds_probe *src) {
  *dst = *src;
  dst->tail = NULL;
  if (src->tail_len) {
    if (!(dst->tail = malloc(src->tail_len))) return -1;
    memcpy(dst->tail, src->tail, src->tail_len);
  }
  return 0;
}

int ds_probe_warm_get(const char *url, ds_probe *out) {
  uint64_t h = hash_of(url);
  int hit = 0;
  int64_t t = now_ms();
  pthread_mutex_lock(&wmu);
  for (size_t i = 0; warm && i < PROBES && !hit; i++) {
    wslot *s = warm[(h + i) % DS_PROBE_WARM_SLOTS];
    if (s && s->h == h && t - s->at_ms < DS_PROBE_TTL_MS && strcmp(s->url, url) == 0)
      hit = copy_probe(out, &s->p) == 0;
  }
  pthread_mutex_unlock(&wmu);
  return hit;
}

void ds_probe_warm_forget(const char *url) {
  uint64_t h = hash_of(url);
  pthread_mutex_lock(&wmu);
  for (size_t i = 0; warm && i < PROBES; i++) {
    wslot **sp = &warm[(h + i) % DS_PROBE_WARM_SLOTS];
    if (*sp && (*sp)->h == h && strcmp((*sp)->url, url) == 0) slot_free(sp);
  }
  pthread_mutex_unlock(&wmu);
}

/* Keep p (taken) for url as of t, when there is room. */
static void warm_put(const char *url, ds_probe *p, int64_t t) {
  uint64_t h = hash_of(url);
  wslot *n = calloc(1, sizeof *n);
  if (n) n->url = strdup(url);
  if (!n || !n->url) {
    if (n) free(n);
    ds_probe_free(p);
    return;
  }
  n->h = h;
  n->at_ms = t;
  n->p = *p;
  memset(p, 0, sizeof *p);
  pthread_mutex_lock(&wmu);
  if (!warm) warm = calloc(DS_PROBE_WARM_SLOTS, sizeof *warm);
  wslot **pick = NULL;
  for (size_t i = 0; warm && i < PROBES; i++) {
    wslot **sp = &warm[(h + i) % DS_PROBE_WARM_SLOTS];
    if (*sp && (t - (*sp)->at_ms >= DS_PROBE_TTL_MS ||
                ((*sp)->h == h && strcmp((*sp)->url, url) == 0)))
      slot_free(sp);
    if (!*sp && !pick) pick = sp;
  }
  if (pick && warm_bytes + n->p.tail_len <= DS_PROBE_WARM_BYTES) {
    warm_bytes += n->p.tail_len;
    *pick = n;
    n = NULL;
  }
  pthread_mutex_unlock(&wmu);
  if (n) {
    free(n->url);
    ds_probe_free(&n->p);
    free(n);
  }
}

/* -- probing in parallel -- */

/* Suffix GETs of one ds_http_run: answers are handed to the threads (their
 * disk-cache writes) chunk by chunk, while the next chunk is on the wire. */
#define CHUNK (4 * DS_PROBE_BATCH_PARALLEL)

typedef struct many {
  ds_robj *objs;
  ds_probe *res; /* answers, by object (ok[i] says which came) */
  char *ok;      /* 1: answered; 2: answered by the batch, to write to disk */
  size_t n;
  size_t *q;     /* objects for the threads, in the order they are ready */
  size_t qn;     /* of them published (atomic; only the caller adds) */
  size_t qnext;  /* the next one to take (atomic) */
  int qdone;     /* nothing more will be added (atomic) */
  int stop;      /* the caller was interrupted (atomic) */
  size_t done;   /* helper threads finished (atomic) */
} many;

/* The helpers' cancel callback: the caller's interrupt. */
static int stopped(void *ctx) { return __atomic_load_n(&((many *)ctx)->stop, __ATOMIC_RELAXED); }

/* Hand object i to the threads (the caller only). */
static void push(many *m, size_t i) {
  size_t k = __atomic_load_n(&m->qn, __ATOMIC_RELAXED);
  m->q[k] = i;
  __atomic_store_n(&m->qn, k + 1, __ATOMIC_RELEASE);
}

/* 1 when the caller was interrupted (then stop is set for all). */
static int stopping(many *m) {
  if (__atomic_load_n(&m->stop, __ATOMIC_RELAXED) || ds_cancel_check()) {
    __atomic_store_n(&m->stop, 1, __ATOMIC_RELAXED);
    return 1;
  }
  return 0;
}

/* Take objects from the queue until it is done and empty (or stop): a
 * batch's answer is written to the disk cache, any other is probed (its
 * answer to res). Waits for the caller's batch in 1 ms naps: bounded by
 * the batch, which its timeouts and the interrupt bound. */
static void work(many *m) {
  for (;;) {
    if (stopping(m)) return;
    size_t k = __atomic_fetch_add(&m->qnext, 1, __ATOMIC_RELAXED);
    while (k >= __atomic_load_n(&m->qn, __ATOMIC_ACQUIRE)) {
      if (__atomic_load_n(&m->qdone, __ATOMIC_ACQUIRE) &&
          k >= __atomic_load_n(&m->qn, __ATOMIC_ACQUIRE))
        return;
      if (stopping(m)) return;
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
    }
    size_t i = m->q[k];
    if (m->ok[i] == 2) {
      ds_probe_keep(&m->objs[i], &m->res[i]);
      continue;
    }
    ds_probe p;
    int eno = 0;
    char *err = NULL;
    if (ds_probe_get(&m->objs[i], 0, &p, &eno, &err) == 0) {
      m->res[i] = p;
      m->ok[i] = 1;
    }
    free(err);
  }
}

/* A helper thread: work under a cancel scope that sees the caller's stop. */
static void *helper(void *arg) {
  many *m = arg;
  ds_cancel_scope sc;
  ds_cancel_begin(&sc, stopped, m);
  work(m);
  ds_cancel_end(&sc);
  __atomic_add_fetch(&m->done, 1, __ATOMIC_RELEASE);
  return NULL;
}

/* The suffix GETs of objects at[0..nb), CHUNK at a time in one batch each
 * (DS_PROBE_BATCH_PARALLEL in flight, connections reused): an answer is
 * taken (and queued for its disk write when keep), a failure queued for
 * ds_probe_get. On the calling thread. */
static void batch(many *m, const size_t *at, size_t nb, int keep) {
  ds_http_req *rs = nb ? calloc(nb < CHUNK ? nb : CHUNK, sizeof *rs) : NULL;
  if (!rs) {
    for (size_t j = 0; j < nb; j++) push(m, at[j]);
    return;
  }
  ds_http_opts ho;
  ds_robj_http_opts(&m->objs[at[0]], &ho);
  ho.max_parallel = DS_PROBE_BATCH_PARALLEL;
  for (size_t from = 0; from < nb; from += CHUNK) {
    size_t c = nb - from < CHUNK ? nb - from : CHUNK;
    if (stopping(m)) { /* the threads stop too; nothing more is asked */
      break;
    }
    for (size_t j = 0; j < c; j++) ds_probe_suffix_req(&m->objs[at[from + j]], &rs[j]);
    ds_http_run(rs, c, &ho);
    for (size_t j = 0; j < c; j++) {
      size_t i = at[from + j];
      if (!rs[j].err) {
        ds_probe_take(&m->objs[i], &rs[j], &m->res[i]);
        m->ok[i] = keep ? 2 : 1;
        if (keep) push(m, i);
      } else {
        push(m, i);
      }
      ds_http_req_free(&rs[j]);
    }
  }
  free(rs);
}

void ds_probe_many(const char *const *paths, size_t n) {
  if (n < 2) return;
  many m = {0};
  m.objs = calloc(n, sizeof(ds_robj));
  m.res = calloc(n, sizeof(ds_probe));
  m.ok = calloc(n, 1);
  m.q = calloc(n, sizeof *m.q);
  size_t *at = calloc(n, sizeof *at);
  m.n = n;
  if (!m.objs || !m.res || !m.ok || !m.q || !at) {
    free(m.objs);
    free(m.res);
    free(m.ok);
    free(m.q);
    free(at);
    return;
  }
  /* what is known without a request; the rest by a suffix GET in the
   * batch, or by ds_probe_get on the threads */
  size_t nb = 0, nask = 0;
  for (size_t i = 0; i < n; i++) {
    char *err = NULL;
    if (ds_robj_make(paths[i], &m.objs[i], &err)) {
      memset(&m.objs[i], 0, sizeof m.objs[i]);
      free(err);
      continue;
    }
    free(err);
    int plan = ds_probe_plan(&m.objs[i], &m.res[i]);
    if (plan == DS_PLAN_KNOWN) {
      m.ok[i] = 1;
    } else if (plan == DS_PLAN_SUFFIX) {
      at[nb++] = i;
    } else {
      push(&m, i);
      nask++;
    }
  }
  int keep = nb && ds_rcache_on(&m.objs[at[0]]);
  size_t jobs = nask + (keep ? nb : 0);
  size_t want = jobs < DS_PROBE_PARALLEL ? jobs : DS_PROBE_PARALLEL - 1, started = 0;
  pthread_t *th = want ? calloc(want, sizeof *th) : NULL;
  for (size_t i = 0; th && i < want; i++) {
    if (pthread_create(&th[i], NULL, helper, &m) != 0) break;
    started++;
  }
  batch(&m, at, nb, keep);
  __atomic_store_n(&m.qdone, 1, __ATOMIC_RELEASE);
  work(&m); /* the caller takes what is left too, under its own cancel scope */
  if (ds_cancel_check()) __atomic_store_n(&m.stop, 1, __ATOMIC_RELAXED);
  /* wait for the helpers, passing an interrupt on */
  while (__atomic_load_n(&m.done, __ATOMIC_ACQUIRE) < started) {
    if (ds_cancel_check()) __atomic_store_n(&m.stop, 1, __ATOMIC_RELAXED);
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
  }
  for (size_t i = 0; i < started; i++) pthread_join(th[i], NULL);
  free(th);
  /* the answers go in together, dated now: a batch longer than the store's
   * freshness must not see its first answers expire before it ends */
  int64_t t = now_ms();
  for (size_t i = 0; i < n; i++)
    if (m.ok[i]) warm_put(m.objs[i].url, &m.res[i], t);
  for (size_t i = 0; i < n; i++) ds_robj_free(&m.objs[i]);
  free(m.objs);
  free(m.res);
  free(m.ok);
  free(m.q);
  free(at);
}
