/* s3_parts.c - a multipart upload's parts sent by helper threads from a
 * local file, as its bytes become final (s3_parts.h). One lock guards the
 * parts' states; helpers take the lowest part that is ready and not sent,
 * send it without the lock, and record its ETag (or drop it when the file
 * was cut below its end meanwhile). Helpers are detached and return when
 * nothing is ready, and each part opens the file for itself: an upload
 * waiting for its file to grow (one per staged shard) holds no thread and
 * no descriptor. */
#include "remote/s3_parts.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cancel.h"
#include "core/vfs.h"

#define MAX_PARTS 10000 /* S3's limit */

enum { TODO = 0, SENDING, SENT };

typedef struct part {
  char etag[200];
  unsigned char state;
  unsigned char stale; /* cut while SENDING: not taken, sent again after */
} part;

struct ds_s3_parts {
  const ds_robj *o;
  char *local;         /* the local file (each part opens it) */
  char *upload_id;     /* NULL once handed over by finish */
  pthread_mutex_t mu;
  pthread_cond_t cv;   /* broadcast on every change */
  int running;         /* helpers alive (they return when idle) */
  part *v;             /* parts [0, cap) (zeroed: TODO) */
  size_t cap;
  size_t lo;           /* no part below lo is TODO */
  uint64_t avail;      /* bytes that are final */
  int final;           /* size is the file's size */
  uint64_t size;
  int stop;            /* helpers return (atomic: their cancel check reads it) */
  int failed;
  char *err;           /* the first failure */
};

/* The parts a final file of `size` bytes has. */
static size_t parts_of(uint64_t size) {
  return size == 0 ? 1 : (size_t)((size + DS_S3_PART - 1) / DS_S3_PART);
}

/* Make v hold parts [0, n) (under the lock); -1 when out of memory. */
static int reserve(ds_s3_parts *p, size_t n) {
  if (n <= p->cap) return 0;
  size_t cap = p->cap ? p->cap : 16;
  while (cap < n) cap *= 2;
  part *v = realloc(p->v, cap * sizeof *v);
  if (!v) return -1;
  memset(v + p->cap, 0, (cap - p->cap) * sizeof *v);
  p->v = v;
  p->cap = cap;
  return 0;
}

/* How many parts may be sent now (under the lock). */
static size_t ready_parts(const ds_s3_parts *p) {
  size_t n = p->final ? parts_of(p->size) : (size_t)(p->avail / DS_S3_PART);
  return n > MAX_PARTS ? MAX_PARTS : n;
}

/* The lowest part that is ready and TODO (under the lock): 1 with *i. */
static int pick(ds_s3_parts *p, size_t *i) {
  size_t n = ready_parts(p);
  if (reserve(p, n)) return 0;
  while (p->lo < n && p->v[p->lo].state != TODO) p->lo++;
  if (p->lo >= n) return 0;
  *i = p->lo++;
  return 1;
}

/* Record the first failure (under the lock); takes e. */
static void fail(ds_s3_parts *p, char *e) {
  if (!p->failed) {
    p->failed = 1;
    p->err = e ? e : strdup("out of memory");
  } else {
    free(e);
  }
}

/* Send part i, bytes [off, off + len) of the file: its ETag into etag. */
static int put_part(ds_s3_parts *p, size_t i, uint64_t off, uint64_t len, char *etag,
                    char **err) {
  int fd = ds_vfs_open_fd(p->local, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return ds_err(err, "%s: cannot read the staged file: %s", p->local, strerror(errno));
  char num[24], what[48];
  snprintf(num, sizeof num, "%zu", i + 1);
  snprintf(what, sizeof what, " (part %zu)", i + 1);
  ds_kv q[] = {{"partNumber", num}, {"uploadId", p->upload_id}};
  ds_s3_call c;
  ds_s3_call_init(&c, "PUT", q, 2, what);
  c.fd = fd;
  c.off = off;
  c.len = len;
  int rc = ds_s3_run(p->o, &c, err);
  if (rc == 0 && !c.etag[0]) rc = ds_err(err, "PUT %s%s: the answer has no ETag", p->o->shown, what);
  if (rc == 0) memcpy(etag, c.etag, sizeof c.etag);
  ds_buf_free(&c.resp);
  ds_vfs_close_fd(fd);
  return rc;
}

/* Take one ready part and send it (called and returning with the lock
 * held; sends without it). 0 when nothing was ready. */
static int send_one(ds_s3_parts *p) {
  size_t i;
  if (p->stop || p->failed || !pick(p, &i)) return 0;
  p->v[i].state = SENDING;
  p->v[i].stale = 0;
  uint64_t off = (uint64_t)i * DS_S3_PART;
  uint64_t len = DS_S3_PART;
  if (p->final && p->size - off < len) len = p->size - off;
  pthread_mutex_unlock(&p->mu);
  char etag[200];
  char *e = NULL;
  int rc = put_part(p, i, off, len, etag, &e);
  pthread_mutex_lock(&p->mu);
  part *q = &p->v[i];
  if (q->stale) { /* cut meanwhile: its bytes changed; send it again */
    q->state = TODO;
    q->stale = 0;
    if (i < p->lo) p->lo = i;
    free(e);
  } else if (rc) {
    q->state = TODO;
    fail(p, e);
  } else {
    q->state = SENT;
    memcpy(q->etag, etag, sizeof etag);
  }
  pthread_cond_broadcast(&p->cv);
  return 1;
}

/* The helpers' cancel check: the owner said stop. */
static int stopped(void *ctx) {
  ds_s3_parts *p = ctx;
  return __atomic_load_n(&p->stop, __ATOMIC_RELAXED);
}

/* A helper (detached): send ready parts until none is ready or told to
 * stop; its last act is to count itself out (the owner may free p once
 * running is 0 and the lock is released). */
static void *helper(void *arg) {
  ds_s3_parts *p = arg;
  ds_cancel_scope sc;
  ds_cancel_begin(&sc, stopped, p); /* a stop interrupts a part on its way */
  pthread_mutex_lock(&p->mu);
  while (send_one(p)) {
  }
  ds_cancel_end(&sc);
  p->running--;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* Start helpers until `want` run (under the lock); 0 when none runs and
 * none could start. */
static int more_helpers(ds_s3_parts *p, int want) {
  if (want > DS_S3_PARTS_INFLIGHT) want = DS_S3_PARTS_INFLIGHT;
  pthread_attr_t a;
  if (p->running < want && pthread_attr_init(&a) == 0) {
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    while (p->running < want && !p->stop && pthread_create(&t, &a, helper, p) == 0)
      p->running++;
    pthread_attr_destroy(&a);
  }
  return p->running > 0;
}

/* Stop the helpers and wait until none runs. */
static void stop_helpers(ds_s3_parts *p) {
  pthread_mutex_lock(&p->mu);
  __atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
  pthread_cond_broadcast(&p->cv);
  while (p->running > 0) pthread_cond_wait(&p->cv, &p->mu);
  pthread_mutex_unlock(&p->mu);
}

int ds_s3_parts_start(const ds_robj *o, const char *local, ds_s3_parts **out, char **err) {
  *out = NULL;
  ds_s3_parts *p = calloc(1, sizeof *p);
  if (!p || !(p->local = strdup(local))) {
    free(p);
    return ds_err(err, "out of memory");
  }
  p->o = o;
  if (ds_s3_mpu_create(o, &p->upload_id, err)) {
    free(p->local);
    free(p);
    return -1;
  }
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  *out = p;
  return 0;
}

void ds_s3_parts_feed(ds_s3_parts *p, uint64_t final) {
  pthread_mutex_lock(&p->mu);
  if (!p->final && final > p->avail) p->avail = final;
  size_t n = ready_parts(p);
  if (n > 0 && !p->failed) more_helpers(p, (int)(n < DS_S3_PARTS_INFLIGHT ? n : DS_S3_PARTS_INFLIGHT));
  pthread_mutex_unlock(&p->mu);
}

void ds_s3_parts_cut(ds_s3_parts *p, uint64_t size) {
  pthread_mutex_lock(&p->mu);
  if (size < p->avail) p->avail = size;
  size_t first = (size_t)(size / DS_S3_PART); /* the first part that changes */
  for (size_t i = first; i < p->cap; i++) {
    if (p->v[i].state == SENDING) p->v[i].stale = 1;
    else p->v[i].state = TODO;
  }
  if (first < p->lo) p->lo = first;
  pthread_mutex_unlock(&p->mu);
}

/* 1 when parts [0, n) are all SENT (under the lock). */
static int all_sent(const ds_s3_parts *p, size_t n) {
  if (n > p->cap) return 0;
  for (size_t i = 0; i < n; i++)
    if (p->v[i].state != SENT) return 0;
  return 1;
}

int ds_s3_parts_finish(ds_s3_parts *p, uint64_t size, ds_s3_mpu *u, char **err) {
  memset(u, 0, sizeof *u);
  size_t n = parts_of(size);
  pthread_mutex_lock(&p->mu);
  p->final = 1;
  p->size = size;
  if (n > MAX_PARTS)
    fail(p, ds_strf("%s: %llu bytes is more than %d parts of %llu", p->o->shown,
                    (unsigned long long)size, MAX_PARTS, (unsigned long long)DS_S3_PART));
  else if (reserve(p, n))
    fail(p, NULL);
  while (!p->failed && !all_sent(p, n)) {
    /* helpers return when idle: one for each part left (4 at most) */
    size_t left = 0;
    for (size_t i = 0; i < n && left < DS_S3_PARTS_INFLIGHT; i++) left += p->v[i].state != SENT;
    if (!more_helpers(p, (int)left)) { /* none could start: send them here */
      if (!send_one(p)) break;
      continue;
    }
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += 50 * 1000000L;
    if (t.tv_nsec >= 1000000000L) t.tv_sec++, t.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&p->cv, &p->mu, &t);
    if (ds_cancel_check()) fail(p, ds_strf("PUT %s: %s", p->o->shown, DS_CANCEL_MSG));
  }
  int ok = !p->failed && all_sent(p, n);
  if (!ok && !p->failed) fail(p, ds_strf("PUT %s: a part was not sent", p->o->shown));
  pthread_mutex_unlock(&p->mu);
  stop_helpers(p);
  if (!ok) {
    ds_err(err, "%s", p->err ? p->err : "out of memory");
    ds_s3_mpu_abort(p->o, p->upload_id, NULL);
    free(p->upload_id);
    p->upload_id = NULL;
    return -1;
  }
  u->etags = calloc(n, sizeof *u->etags);
  u->local = strdup(p->local);
  if (!u->etags || !u->local) {
    ds_s3_mpu_free(u);
    ds_err(err, "out of memory");
    ds_s3_mpu_abort(p->o, p->upload_id, NULL);
    free(p->upload_id);
    p->upload_id = NULL;
    return -1;
  }
  for (size_t i = 0; i < n; i++) memcpy(u->etags[i], p->v[i].etag, sizeof u->etags[i]);
  u->nparts = n;
  u->size = size;
  u->upload_id = p->upload_id; /* handed over */
  p->upload_id = NULL;
  return 0;
}

const char *ds_s3_parts_upload_id(const ds_s3_parts *p) {
  return p->upload_id;
}

void ds_s3_parts_free(ds_s3_parts *p) {
  if (!p) return;
  stop_helpers(p);
  if (p->upload_id) ds_s3_mpu_abort(p->o, p->upload_id, NULL);
  free(p->upload_id);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  free(p->local);
  free(p->v);
  free(p->err);
  free(p);
}
