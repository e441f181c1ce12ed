/* remote_file.c - reads of an open remote object: the tail, LRU blocks,
 * read-ahead windows fetched as parallel range GETs, and prefetched ranges
 * (see remote_file.h). */
#include "remote/remote_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of blocks and prefetched ranges held by all open remote files. */
static uint64_t held_total;

uint64_t ds_rfile_held_bytes(void) { return __atomic_load_n(&held_total, __ATOMIC_RELAXED); }

/* 1 when n more bytes may be held within DS_REMOTE_HELD_MAX. */
static int held_room(uint64_t n) { return ds_rfile_held_bytes() + n <= DS_REMOTE_HELD_MAX; }

/* Free a block's bytes and zero it. */
static void block_drop(ds_rblock *b) {
  if (b->data) {
    __atomic_sub_fetch(&held_total, (uint64_t)b->len, __ATOMIC_RELAXED);
    free(b->data);
  }
  memset(b, 0, sizeof *b);
}

/* Free the prefetched ranges v[0..n) and the array. */
static void pre_drop(ds_rblock *v, size_t n) {
  for (size_t i = 0; i < n; i++) block_drop(&v[i]);
  free(v);
}

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
  for (int i = 0; i < DS_RFILE_BLOCKS; i++) block_drop(&f->blk[i]);
  pre_drop(f->pre, f->npre);
  ds_probe_free(&f->at_open);
  ds_robj_free(&f->obj);
  pthread_mutex_destroy(&f->mu);
  free(f);
}

/* Copy to dst the longest prefix of [off, off + n) that the tail, a block
 * or a prefetched range holds (f->mu held): the bytes copied, 0 when none
 * holds off; *pre = 1 when they came from a prefetched range. */
static size_t copy_held(ds_rfile *f, uint8_t *dst, size_t n, uint64_t off, int *pre) {
  const ds_probe *p = &f->at_open;
  uint64_t tail_off = p->size - p->tail_len;
  const ds_rblock *hit = NULL;
  if (p->tail_len && off >= tail_off) {
    size_t k = p->size - off < n ? (size_t)(p->size - off) : n;
    memcpy(dst, p->tail + (off - tail_off), k);
    return k;
  }
  for (int i = 0; i < DS_RFILE_BLOCKS && !hit; i++) {
    ds_rblock *b = &f->blk[i];
    if (b->data && off >= b->off && off - b->off < b->len) {
      b->used = ++f->tick;
      hit = b;
    }
  }
  if (!hit && f->npre) { /* the last prefetched range starting at or before off */
    size_t lo = 0, hi = f->npre;
    while (hi - lo > 1) {
      size_t mid = lo + (hi - lo) / 2;
      if (f->pre[mid].off <= off) lo = mid;
      else hi = mid;
    }
    const ds_rblock *b = &f->pre[lo];
    if (off >= b->off && off - b->off < b->len) hit = b, *pre = 1;
  }
  if (!hit) return 0;
  uint64_t left = hit->len - (off - hit->off);
  size_t k = left < n ? (size_t)left : n;
  memcpy(dst, hit->data + (off - hit->off), k);
  return k;
}

/* How many bytes to fetch at q for a read that still needs n there
 * (f->mu held): a growing window when the read follows the last fetch
 * (or jumps forward less than DS_RFILE_GAP past its end), else n (at
 * least DS_RFILE_MIN); never into the tail held, never past the end, and
 * just n when the process-wide cap has no room. */
static uint64_t want(ds_rfile *f, size_t n, uint64_t q) {
  int seq = f->next_seq != 0 && q >= f->next_seq && q - f->next_seq < DS_RFILE_GAP;
  if (seq)
    f->ahead = f->ahead ? f->ahead * 2 : DS_RFILE_AHEAD_START;
  else
    f->ahead = 0;
  if (f->ahead > DS_RFILE_AHEAD_MAX) f->ahead = DS_RFILE_AHEAD_MAX;
  uint64_t w = n > f->ahead ? n : f->ahead;
  if (w < DS_RFILE_MIN) w = DS_RFILE_MIN;
  const ds_probe *p = &f->at_open;
  uint64_t tail_off = p->size - p->tail_len;
  if (q < tail_off && q + n <= tail_off && q + w > tail_off) w = tail_off - q;
  if (w > p->size - q) w = p->size - q;
  if (w > n && !held_room(w)) w = n;
  return w;
}

/* Keep a fetched block (the least recently used one goes), unless it is
 * larger than a window or the process-wide cap has no room: then free it. */
static void keep(ds_rfile *f, uint64_t off, uint8_t *data, uint64_t len) {
  if (len > DS_RFILE_AHEAD_MAX || !held_room(len)) {
    free(data);
    return;
  }
  __atomic_add_fetch(&held_total, len, __ATOMIC_RELAXED);
  pthread_mutex_lock(&f->mu);
  int pick = 0;
  for (int i = 1; i < DS_RFILE_BLOCKS; i++)
    if (!f->blk[i].data || (f->blk[pick].data && f->blk[i].used < f->blk[pick].used))
      pick = i;
  block_drop(&f->blk[pick]);
  f->blk[pick].off = off;
  f->blk[pick].len = (size_t)len;
  f->blk[pick].data = data;
  f->blk[pick].used = ++f->tick;
  pthread_mutex_unlock(&f->mu);
}

/* Fetch [q, q + w) as up to DS_RFILE_INFLIGHT range GETs at once and put
 * the answers together in order: 0 with *data (malloc'd) holding the
 * *len >= need bytes from q that arrived in one run from q, or -1 with
 * errno and the detail of the first piece missing below need. */
static int fetch(ds_rfile *f, uint64_t q, uint64_t w, uint64_t need, uint8_t **data,
                 uint64_t *len) {
  const ds_probe *p = &f->at_open;
  uint64_t piece = w;
  if (w > DS_RFILE_PIECE_MIN) {
    piece = (w + DS_RFILE_INFLIGHT - 1) / DS_RFILE_INFLIGHT;
    if (piece < DS_RFILE_PIECE_MIN) piece = DS_RFILE_PIECE_MIN;
  }
  size_t k = (size_t)((w + piece - 1) / piece);
  ds_http_req *rs = calloc(k, sizeof *rs);
  if (!rs) {
    ds_vfs_set_detail(NULL);
    errno = ENOMEM;
    return -1;
  }
  for (size_t i = 0; i < k; i++) {
    ds_robj_req(&f->obj, &rs[i], DS_HTTP_RANGE);
    rs[i].offset = q + i * piece;
    rs[i].length = w - i * piece < piece ? w - i * piece : piece;
    rs[i].if_match = p->etag[0] ? p->etag : NULL;
  }
  ds_http_opts ho;
  ds_robj_http_opts(&f->obj, &ho);
  ho.max_parallel = (int)k;
  ds_http_run(rs, k, &ho);
  uint64_t have = 0;
  size_t ok = 0;
  while (ok < k && !rs[ok].err && rs[ok].body.len == rs[ok].length) have += rs[ok++].length;
  int rc = 0;
  if (have < need) {
    ds_http_req *bad = &rs[ok];
    errno = bad->err ? ds_probe_errno(bad) : EIO;
    ds_vfs_set_detail(bad->err ? bad->err : ds_strf("GET %s: a short answer", f->obj.shown));
    bad->err = NULL;
    rc = -1;
  } else if (ok == 1) {
    *data = rs[0].body.data;
    rs[0].body.data = NULL;
    rs[0].body.len = rs[0].body.cap = 0;
    *len = have;
  } else if (!(*data = malloc(have))) {
    ds_vfs_set_detail(NULL);
    errno = ENOMEM;
    rc = -1;
  } else {
    for (size_t i = 0, at = 0; i < ok; at += rs[i].length, i++)
      memcpy(*data + at, rs[i].body.data, rs[i].length);
    *len = have;
  }
  int e = errno;
  for (size_t i = 0; i < k; i++) ds_http_req_free(&rs[i]);
  free(rs);
  errno = e;
  return rc;
}

ssize_t ds_rfile_pread(ds_rfile *f, void *buf, size_t n, uint64_t off) {
  const ds_probe *p = &f->at_open;
  if (off >= p->size || n == 0) return 0;
  if (n > p->size - off) n = (size_t)(p->size - off);
  uint8_t *dst = buf;
  size_t got = 0, k;
  int pre = 0;
  pthread_mutex_lock(&f->mu);
  while (got < n && (k = copy_held(f, dst + got, n - got, off + got, &pre)) > 0) got += k;
  uint64_t q = off + got, w = got < n && !pre ? want(f, n - got, q) : 0;
  pthread_mutex_unlock(&f->mu);
  /* a read from a prefetched range stops at its end: a window's read-ahead
   * (core/mapped_file.c) takes what is there rather than a new request */
  if (got == n || pre) return (ssize_t)got;
  uint8_t *data = NULL;
  uint64_t len = 0;
  if (fetch(f, q, w, n - got, &data, &len)) return -1;
  memcpy(dst + got, data, n - got);
  pthread_mutex_lock(&f->mu);
  f->next_seq = q + len;
  pthread_mutex_unlock(&f->mu);
  keep(f, q, data, len);
  return (ssize_t)n;
}

/* qsort order of ranges: by offset. */
static int by_off(const void *a, const void *b) {
  uint64_t x = ((const ds_vfs_range *)a)->off, y = ((const ds_vfs_range *)b)->off;
  return x < y ? -1 : x > y;
}

/* The extents to fetch for the ranges r[0..n) of f into *out (malloc'd,
 * sorted, merged through small gaps; the tail held is left out), within
 * DS_RFILE_PREFETCH_MAX and the process-wide cap less *planned (the bytes
 * of the batch's earlier files, which grows by these): their count, 0
 * when none or out of memory. */
static size_t plan(const ds_rfile *f, const ds_vfs_range *r, size_t n, ds_vfs_range **out,
                   uint64_t *planned) {
  const ds_probe *p = &f->at_open;
  uint64_t tail_off = p->size - p->tail_len; /* the tail is held already */
  ds_vfs_range *v = n ? malloc(n * sizeof *v) : NULL;
  *out = v;
  if (!v) return 0;
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t a = r[i].off, b = r[i].len > tail_off - a ? tail_off : a + r[i].len;
    if (a < tail_off && b > a) v[m++] = (ds_vfs_range){a, b - a};
  }
  qsort(v, m, sizeof *v, by_off);
  /* merge: through gaps under DS_RFILE_MIN always, through gaps under
   * DS_RFILE_GAP when no larger than the bytes wanted on both sides; an
   * extent stops at DS_RFILE_AHEAD_MAX (one GET each) */
  size_t e = 0;
  uint64_t useful = 0, total = 0;
  for (size_t i = 0; i < m; i++) {
    uint64_t end = v[i].off + v[i].len;
    if (e > 0) {
      ds_vfs_range *x = &v[e - 1];
      uint64_t xend = x->off + x->len;
      uint64_t gap = v[i].off > xend ? v[i].off - xend : 0;
      uint64_t grown = (end > xend ? end : xend) - x->off;
      if ((gap < DS_RFILE_MIN || (gap < DS_RFILE_GAP && gap <= useful + v[i].len)) &&
          grown <= DS_RFILE_AHEAD_MAX) {
        if (total + (grown - x->len) > DS_RFILE_PREFETCH_MAX ||
            !held_room(*planned + total + (grown - x->len)))
          break;
        total += grown - x->len;
        x->len = grown;
        useful += v[i].len;
        continue;
      }
    }
    if (total + v[i].len > DS_RFILE_PREFETCH_MAX || !held_room(*planned + total + v[i].len))
      break;
    v[e++] = v[i];
    total += v[i].len;
    useful = v[i].len;
  }
  *planned += total;
  return e;
}

/* Keep the answers rs[0..e) (those complete) as f's prefetched ranges,
 * replacing what an earlier prefetch kept; the answers are freed. */
static void install(ds_rfile *f, ds_http_req *rs, size_t e) {
  ds_rblock *got = e ? calloc(e, sizeof *got) : NULL;
  size_t ng = 0;
  for (size_t i = 0; got && i < e; i++) {
    if (rs[i].err || rs[i].body.len != rs[i].length) continue;
    got[ng].off = rs[i].offset;
    got[ng].len = rs[i].body.len;
    got[ng].data = rs[i].body.data;
    rs[i].body.data = NULL;
    rs[i].body.len = rs[i].body.cap = 0;
    __atomic_add_fetch(&held_total, (uint64_t)got[ng].len, __ATOMIC_RELAXED);
    ng++;
  }
  for (size_t i = 0; i < e; i++) ds_http_req_free(&rs[i]);
  if (!got) return;
  pthread_mutex_lock(&f->mu);
  ds_rblock *old = f->pre;
  size_t nold = f->npre;
  f->pre = got;
  f->npre = ng;
  pthread_mutex_unlock(&f->mu);
  pre_drop(old, nold);
}

void ds_rfile_prefetch_many(ds_rfile *const *fs, const ds_vfs_range *const *r,
                            const size_t *n, size_t k) {
  ds_vfs_range **ext = k ? calloc(k, sizeof *ext) : NULL;
  size_t *ne = k ? calloc(k, sizeof *ne) : NULL;
  size_t total = 0;
  uint64_t planned = 0;
  for (size_t j = 0; ext && ne && j < k; j++)
    total += ne[j] = plan(fs[j], r[j], n[j], &ext[j], &planned);
  ds_http_req *rs = total ? calloc(total, sizeof *rs) : NULL;
  if (rs) {
    for (size_t j = 0, at = 0; j < k; j++)
      for (size_t i = 0; i < ne[j]; i++, at++) {
        ds_robj_req(&fs[j]->obj, &rs[at], DS_HTTP_RANGE);
        rs[at].offset = ext[j][i].off;
        rs[at].length = ext[j][i].len;
        rs[at].if_match = fs[j]->at_open.etag[0] ? fs[j]->at_open.etag : NULL;
      }
    ds_http_opts ho;
    ds_robj_http_opts(&fs[0]->obj, &ho);
    ho.max_parallel = DS_RFILE_PREFETCH_PARALLEL;
    ds_http_run(rs, total, &ho);
    for (size_t j = 0, at = 0; j < k; at += ne[j], j++)
      if (ne[j]) install(fs[j], rs + at, ne[j]);
  }
  for (size_t j = 0; ext && j < k; j++) free(ext[j]);
  free(ext);
  free(ne);
  free(rs);
}

void ds_rfile_prefetch(ds_rfile *f, const ds_vfs_range *r, size_t n) {
  ds_rfile_prefetch_many(&f, &r, &n, 1);
}
