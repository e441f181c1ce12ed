/* remote_probe.c - what is at a remote path (see remote_probe.h). */
#include "remote/remote_probe.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cancel.h"
#include "core/remote_stats.h"
#include "remote/s3_list.h"

int ds_probe_errno(const ds_http_req *r) {
  if (r->changed) return ESTALE;
  if (r->err && strcmp(r->err, DS_CANCEL_MSG) == 0) return ECANCELED;
  if (r->status == 404) return ENOENT;
  if (r->status == 401 || r->status == 403) return EACCES;
  return EIO;
}

void ds_probe_free(ds_probe *p) {
  free(p->tail);
  memset(p, 0, sizeof *p);
}

/* -- the cache -- */

#define SLOTS 64

typedef struct slot {
  char *url;
  int64_t at_ms;
  ds_probe p;
} slot;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static slot slots[SLOTS];
/* Servers seen answering a suffix range wrongly (s3rver): their opens go
 * HEAD + range. Keyed by the endpoint's first 120 bytes of URL. */
static char broken_suffix[8][128];

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A copy of p (tail included); 0 ok, -1 out of memory. */
static int probe_copy(ds_probe *dst, const ds_probe *src) {
  *dst = *src;
  dst->tail = NULL;
  if (src->tail_len) {
    dst->tail = malloc(src->tail_len);
    if (!dst->tail) return -1;
    memcpy(dst->tail, src->tail, src->tail_len);
  }
  return 0;
}

/* 1 when a fresh answer for url was copied to out. */
static int cache_get(const char *url, ds_probe *out) {
  int hit = 0;
  int64_t t = now_ms();
  pthread_mutex_lock(&mu);
  for (int i = 0; i < SLOTS; i++)
    if (slots[i].url && strcmp(slots[i].url, url) == 0 &&
        t - slots[i].at_ms < DS_PROBE_TTL_MS) {
      hit = probe_copy(out, &slots[i].p) == 0;
      break;
    }
  pthread_mutex_unlock(&mu);
  return hit;
}

/* Remember p for url (the oldest slot goes). */
static void cache_put(const char *url, const ds_probe *p) {
  ds_probe c;
  char *u = strdup(url);
  if (!u || probe_copy(&c, p)) {
    free(u);
    return;
  }
  pthread_mutex_lock(&mu);
  int pick = 0;
  for (int i = 0; i < SLOTS; i++) {
    if (slots[i].url && strcmp(slots[i].url, url) == 0) {
      pick = i;
      break;
    }
    if (!slots[i].url || slots[i].at_ms < slots[pick].at_ms) pick = i;
    if (!slots[i].url) break;
  }
  free(slots[pick].url);
  ds_probe_free(&slots[pick].p);
  slots[pick].url = u;
  slots[pick].p = c;
  slots[pick].at_ms = now_ms();
  pthread_mutex_unlock(&mu);
}

/* The endpoint part of a URL ("http://h:p") into key. */
static void endpoint_key(const char *url, char key[128]) {
  const char *p = strstr(url, "://");
  size_t n = p ? (size_t)(p + 3 - url) + strcspn(p + 3, "/?#") : strlen(url);
  if (n > 127) n = 127;
  memcpy(key, url, n);
  key[n] = 0;
}

static int suffix_broken(const char *url) {
  char k[128];
  endpoint_key(url, k);
  int yes = 0;
  pthread_mutex_lock(&mu);
  for (int i = 0; i < 8 && !yes; i++) yes = strcmp(broken_suffix[i], k) == 0;
  pthread_mutex_unlock(&mu);
  return yes;
}

static void mark_suffix_broken(const char *url) {
  char k[128];
  endpoint_key(url, k);
  pthread_mutex_lock(&mu);
  int i = 0;
  while (i < 8 && broken_suffix[i][0] && strcmp(broken_suffix[i], k) != 0) i++;
  if (i < 8) memcpy(broken_suffix[i], k, 128);
  pthread_mutex_unlock(&mu);
}

/* -- asking the server -- */

/* Take a successful answer's size, ETag, version and tail into out. */
static void take(ds_probe *out, ds_http_req *r) {
  out->kind = DS_PROBE_FILE;
  out->size = r->size == DS_HTTP_SIZE_UNKNOWN ? r->body.len : r->size;
  memcpy(out->etag, r->etag, sizeof out->etag);
  memcpy(out->version_id, r->version_id, sizeof out->version_id);
  out->tail = r->body.data;
  out->tail_len = r->body.len;
  r->body.data = NULL;
  r->body.len = r->body.cap = 0;
}

/* The suffix request refused for a Content-Range other than asked
 * (s3rver's answer to bytes=-n). */
static int wrong_suffix(const ds_http_req *r) {
  return r->err && strstr(r->err, "the server answered bytes") != NULL;
}

/* HEAD then a range of the last bytes (servers that get suffixes wrong). */
static int head_then_tail(const ds_robj *o, const ds_http_opts *ho, ds_probe *out,
                          ds_http_req *r) {
  ds_robj_req(o, r, DS_HTTP_HEAD);
  if (ds_http_run(r, 1, ho)) return -1;
  if (r->size == DS_HTTP_SIZE_UNKNOWN) {
    free(r->err);
    r->err = ds_strf("HEAD %s: no Content-Length", o->shown);
    return -1;
  }
  ds_probe p = {0};
  p.kind = DS_PROBE_FILE;
  p.size = r->size;
  memcpy(p.etag, r->etag, sizeof p.etag);
  memcpy(p.version_id, r->version_id, sizeof p.version_id);
  ds_http_req_free(r);
  if (p.size > 1) { /* (a 1-byte range bytes=0-0 is what s3rver gets wrong) */
    uint64_t n = p.size < DS_PROBE_TAIL ? p.size : DS_PROBE_TAIL;
    ds_robj_req(o, r, DS_HTTP_RANGE);
    r->offset = p.size - n;
    r->length = n;
    r->if_match = p.etag[0] ? p.etag : NULL;
    if (ds_http_run(r, 1, ho)) return -1;
    p.tail = r->body.data;
    p.tail_len = r->body.len;
    r->body.data = NULL;
    r->body.len = r->body.cap = 0;
  }
  *out = p;
  return 0;
}

/* 1 when keys lie under o's key as a folder (s3/gs); -1 with *err. */
static int s3_is_dir(const ds_robj *o, const ds_http_opts *ho, char **err) {
  size_t kl = strlen(o->key);
  if (kl == 0) return 1; /* the bucket */
  char *prefix = o->key[kl - 1] == '/' ? strdup(o->key) : ds_strf("%s/", o->key);
  if (!prefix) return ds_err(err, "out of memory");
  ds_s3_listing l = {0};
  /* one page of one key: "more than 1 page" is fine, a key is there */
  int rc = ds_s3_list(&o->cfg, o->bucket, prefix, "/", 1, 1, ho, &l, err);
  free(prefix);
  if (l.n + l.nprefixes > 0) {
    free(*err);
    *err = NULL;
    rc = 1;
  }
  ds_s3_listing_free(&l);
  return rc;
}

/* 1 when "url/" answers as a folder (200 or 403), 0 when not. */
static int http_is_dir(const ds_robj *o, const ds_http_opts *ho) {
  char *u = ds_strf("%s/", o->url);
  if (!u) return 0;
  size_t n = strlen(o->url);
  if (n && o->url[n - 1] == '/') u[n] = 0;
  ds_http_req r;
  ds_robj_req(o, &r, DS_HTTP_HEAD);
  r.url = u;
  int ok = ds_http_run(&r, 1, ho) == 0 || r.status == 403;
  ds_http_req_free(&r);
  free(u);
  return ok;
}

/* Ask the server what is at o. */
static int ask(const ds_robj *o, ds_probe *out, int *eno, char **err) {
  ds_http_opts ho;
  ds_robj_http_opts(o, &ho);
  ds_http_req r;
  int rc;
  if (suffix_broken(o->url)) {
    rc = head_then_tail(o, &ho, out, &r);
  } else {
    ds_robj_req(o, &r, DS_HTTP_SUFFIX);
    r.length = DS_PROBE_TAIL;
    rc = ds_http_run(&r, 1, &ho);
    if (rc == 0) {
      take(out, &r);
    } else if (wrong_suffix(&r)) {
      mark_suffix_broken(o->url);
      ds_http_req_free(&r);
      rc = head_then_tail(o, &ho, out, &r);
    }
  }
  if (rc == 0) {
    ds_http_req_free(&r);
    return 0;
  }
  int e = ds_probe_errno(&r);
  int gone = r.status == 404 || (o->scheme == DS_REMOTE_HTTP && r.status == 403) ||
             /* s3rver's 206 for a range of an empty object */
             (r.status == 206 && r.tries == 1);
  if (r.status == 206) { /* an empty object as s3rver answers it: HEAD says */
    ds_http_req_free(&r);
    ds_robj_req(o, &r, DS_HTTP_HEAD);
    if (ds_http_run(&r, 1, &ho) == 0 && r.size == 0) {
      memset(out, 0, sizeof *out);
      out->kind = DS_PROBE_FILE;
      memcpy(out->etag, r.etag, sizeof out->etag);
      ds_http_req_free(&r);
      return 0;
    }
    gone = 0;
  }
  if (!gone) {
    *eno = e;
    ds_err(err, "%s", r.err ? r.err : "request failed");
    ds_http_req_free(&r);
    return -1;
  }
  char *miss = r.err;
  r.err = NULL;
  ds_http_req_free(&r);
  memset(out, 0, sizeof *out);
  int dir = o->scheme == DS_REMOTE_HTTP ? http_is_dir(o, &ho) : s3_is_dir(o, &ho, err);
  if (dir < 0) {
    free(miss);
    *eno = EIO;
    return -1;
  }
  out->kind = dir ? DS_PROBE_DIR : DS_PROBE_MISSING;
  if (!dir) snprintf(out->why, sizeof out->why, "%s", miss ? miss : "no such object");
  free(miss);
  return 0;
}

/* -- the persistent cache (remote_cache.h) -- */

void ds_probe_cache_view(const ds_probe *p, ds_rcache_obj *v) {
  v->size = p->size;
  memcpy(v->etag, p->etag, sizeof v->etag);
  memcpy(v->version_id, p->version_id, sizeof v->version_id);
  v->tail = p->tail;
  v->tail_len = p->tail_len;
}

/* Keep p (a file with an ETag) in the disk cache. */
static void to_disk(const ds_robj *o, const ds_probe *p) {
  ds_rcache_obj v;
  ds_probe_cache_view(p, &v);
  if (p->kind == DS_PROBE_FILE && p->etag[0]) ds_rcache_probe_put(o, &v);
}

/* o's answer from the disk cache when its ETag still holds: no request
 * while the entry is fresh, else one HEAD (no body). 1 when out has it;
 * 0 (a miss: the caller asks) when there is none or it is stale; with
 * no_request, 2 (and no HEAD) when there is an entry to confirm. */
static int from_disk(const ds_robj *o, ds_probe *out, int no_request) {
  int64_t age = 0;
  ds_rcache_obj c;
  if (!ds_rcache_on(o) || !ds_rcache_probe_get(o, &c, &age)) {
    ds_rstats_add(o->url, DS_RSTAT_CACHE_MISSES, 1);
    return 0;
  }
  if (no_request && !ds_rcache_fresh(age)) {
    free(c.tail);
    return 2;
  }
  out->kind = DS_PROBE_FILE;
  out->size = c.size;
  memcpy(out->etag, c.etag, sizeof out->etag);
  memcpy(out->version_id, c.version_id, sizeof out->version_id);
  out->tail = c.tail;
  out->tail_len = c.tail_len;
  int ok = ds_rcache_fresh(age);
  if (!ok) {
    ds_http_opts ho;
    ds_robj_http_opts(o, &ho);
    ds_http_req r;
    ds_robj_req(o, &r, DS_HTTP_HEAD);
    ok = ds_http_run(&r, 1, &ho) == 0 && r.etag[0] && strcmp(r.etag, out->etag) == 0 &&
         r.size == out->size;
    if (ok) {
      memcpy(out->version_id, r.version_id, sizeof out->version_id);
      if (ds_rcache_fresh_window()) to_disk(o, out); /* confirmed now */
    } else if (r.etag[0]) {
      ds_rcache_drop(o); /* replaced: its entries are stale */
    }
    ds_http_req_free(&r);
  }
  if (!ok) {
    ds_probe_free(out);
    ds_rstats_add(o->url, DS_RSTAT_CACHE_MISSES, 1);
    return 0;
  }
  ds_rstats_add(o->url, DS_RSTAT_CACHE_HITS, 1);
  ds_rstats_add(o->url, DS_RSTAT_CACHE_BYTES, out->tail_len);
  return 1;
}

int ds_probe_get(const ds_robj *o, int fresh, ds_probe *out, int *eno, char **err) {
  memset(out, 0, sizeof *out);
  *eno = 0;
  if (!fresh && ds_probe_warm_get(o->url, out)) return 0;
  if (!fresh && cache_get(o->url, out)) return 0;
  if (!fresh && from_disk(o, out, 0)) {
    cache_put(o->url, out);
    return 0;
  }
  if (ask(o, out, eno, err)) return -1;
  cache_put(o->url, out);
  if (ds_rcache_on(o)) to_disk(o, out);
  return 0;
}

int ds_probe_plan(const ds_robj *o, ds_probe *out) {
  memset(out, 0, sizeof *out);
  if (ds_probe_warm_get(o->url, out) || cache_get(o->url, out)) return DS_PLAN_KNOWN;
  if (suffix_broken(o->url)) return DS_PLAN_ASK;
  int d = from_disk(o, out, 1);
  if (d == 1) {
    cache_put(o->url, out);
    return DS_PLAN_KNOWN;
  }
  return d == 2 ? DS_PLAN_ASK : DS_PLAN_SUFFIX;
}

void ds_probe_suffix_req(const ds_robj *o, ds_http_req *r) {
  ds_robj_req(o, r, DS_HTTP_SUFFIX);
  r->length = DS_PROBE_TAIL;
}

void ds_probe_take(const ds_robj *o, ds_http_req *r, ds_probe *out) {
  memset(out, 0, sizeof *out);
  take(out, r);
  cache_put(o->url, out);
}

void ds_probe_keep(const ds_robj *o, const ds_probe *p) {
  if (ds_rcache_on(o)) to_disk(o, p);
}

void ds_probe_note_dir(const char *url) {
  ds_probe p;
  memset(&p, 0, sizeof p);
  p.kind = DS_PROBE_DIR;
  cache_put(url, &p);
}

/* Forget the cached answer for url (a writer just changed the object). */
void ds_probe_forget(const char *url) {
  ds_probe_warm_forget(url);
  pthread_mutex_lock(&mu);
  for (int i = 0; i < SLOTS; i++)
    if (slots[i].url && strcmp(slots[i].url, url) == 0) {
      free(slots[i].url);
      slots[i].url = NULL;
      ds_probe_free(&slots[i].p);
    }
  pthread_mutex_unlock(&mu);
}
