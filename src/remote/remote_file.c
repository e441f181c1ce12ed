/* remote_file.c - reads of an open remote object (see remote_file.h). */
#include "remote/remote_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/vfs.h"

ds_rfile *ds_rfile_new(ds_robj *obj, ds_probe *p) {
  ds_rfile *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  f->obj = *obj;
  f->at_open = *p;
  memset(obj, 0, sizeof *obj);
  memset(p, 0, sizeof *p);
  pthread_mutex_init(&f->mu, NULL);
  return f;
}

void ds_rfile_free(ds_rfile *f) {
  if (!f) return;
  for (int i = 0; i < DS_RFILE_BLOCKS; i++) free(f->blk[i].data);
  ds_probe_free(&f->at_open);
  ds_robj_free(&f->obj);
  pthread_mutex_destroy(&f->mu);
  free(f);
}

/* Copy [off, off + n) when the tail or a block holds all of it: 1. */
static int held(ds_rfile *f, void *buf, size_t n, uint64_t off) {
  const ds_probe *p = &f->at_open;
  uint64_t tail_off = p->size - p->tail_len;
  if (off >= tail_off && off + n <= p->size) {
    memcpy(buf, p->tail + (off - tail_off), n);
    return 1;
  }
  int hit = 0;
  pthread_mutex_lock(&f->mu);
  for (int i = 0; i < DS_RFILE_BLOCKS && !hit; i++) {
    ds_rblock *b = &f->blk[i];
    if (b->data && off >= b->off && off + n <= b->off + b->len) {
      memcpy(buf, b->data + (off - b->off), n);
      b->used = ++f->tick;
      f->next_seq = off + n;
      hit = 1;
    }
  }
  pthread_mutex_unlock(&f->mu);
  return hit;
}

/* How many bytes to ask for a read of n at off: at least DS_RFILE_MIN,
 * more while reads follow each other, never into the tail held. */
static uint64_t want(ds_rfile *f, size_t n, uint64_t off) {
  pthread_mutex_lock(&f->mu);
  if (off == f->next_seq && off != 0)
    f->ahead = f->ahead ? f->ahead * 2 : 4 * DS_RFILE_MIN;
  else
    f->ahead = 0;
  if (f->ahead > DS_RFILE_AHEAD_MAX) f->ahead = DS_RFILE_AHEAD_MAX;
  uint64_t w = n > f->ahead ? n : f->ahead;
  pthread_mutex_unlock(&f->mu);
  if (w < DS_RFILE_MIN) w = DS_RFILE_MIN;
  const ds_probe *p = &f->at_open;
  uint64_t tail_off = p->size - p->tail_len;
  if (off < tail_off && off + n <= tail_off && off + w > tail_off) w = tail_off - off;
  if (w > p->size - off) w = p->size - off;
  return w;
}

/* Keep a fetched block (the least recently used one goes). */
static void keep(ds_rfile *f, uint64_t off, ds_buf *body, uint64_t end_read) {
  pthread_mutex_lock(&f->mu);
  int pick = 0;
  for (int i = 1; i < DS_RFILE_BLOCKS; i++)
    if (!f->blk[i].data || f->blk[i].used < f->blk[pick].used) pick = i;
  free(f->blk[pick].data);
  f->blk[pick].off = off;
  f->blk[pick].len = body->len;
  f->blk[pick].data = body->data;
  f->blk[pick].used = ++f->tick;
  f->next_seq = end_read;
  pthread_mutex_unlock(&f->mu);
  body->data = NULL;
  body->len = body->cap = 0;
}

ssize_t ds_rfile_pread(ds_rfile *f, void *buf, size_t n, uint64_t off) {
  const ds_probe *p = &f->at_open;
  if (off >= p->size || n == 0) return 0;
  if (n > p->size - off) n = (size_t)(p->size - off);
  if (held(f, buf, n, off)) return (ssize_t)n;
  ds_http_opts ho;
  ds_robj_http_opts(&f->obj, &ho);
  ds_http_req r;
  ds_robj_req(&f->obj, &r, DS_HTTP_RANGE);
  r.offset = off;
  r.length = want(f, n, off);
  r.if_match = p->etag[0] ? p->etag : NULL;
  if (ds_http_run(&r, 1, &ho) != 0 || r.body.len < n) {
    int e = r.err ? ds_probe_errno(&r) : EIO;
    ds_vfs_set_detail(r.err ? r.err : ds_strf("GET %s: a short answer", f->obj.shown));
    r.err = NULL;
    ds_http_req_free(&r);
    errno = e;
    return -1;
  }
  memcpy(buf, r.body.data, n);
  if (r.body.len <= DS_RFILE_AHEAD_MAX) keep(f, off, &r.body, off + n);
  ds_http_req_free(&r);
  return (ssize_t)n;
}
