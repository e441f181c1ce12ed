/* remote_file.c - reads of an open remote object: the tail, LRU blocks,
 * read-ahead windows fetched as parallel range GETs, and prefetched ranges
 * (see remote_file.h). */
#include "remote/remote_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cancel.h"

/* Bytes of blocks and prefetched ranges held by all open remote files. */
static uint64_t held_total;

uint64_t ds_rfile_held_bytes(void) { return __atomic_load_n(&held_total, __ATOMIC_RELAXED); }

/* Reads of streams so far, all files (a clock for shed). */
static uint64_t reads_clock;

/* All open remote files (for shed), under files_mu. */
static pthread_mutex_t files_mu = PTHREAD_MUTEX_INITIALIZER;
static ds_rfile *files;

/* 1 when n more bytes may be held within DS_REMOTE_HELD_MAX. */
static int held_room(uint64_t n) { return ds_rfile_held_bytes() + n <= DS_REMOTE_HELD_MAX; }

/* The largest extent one GET of a prefetch fetches. */
#define PRE_EXTENT_MAX ((uint64_t)16 << 20)
/* How long a reader waits for a block before it polls its interrupt. */
#define WAIT_NS 20000000L

/* Free a block's bytes and zero it (stream -1). */
static void block_drop(ds_rblock *b) {
  if (b->data) {
    __atomic_sub_fetch(&held_total, (uint64_t)b->len, __ATOMIC_RELAXED);
    free(b->data);
  }
  memset(b, 0, sizeof *b);
  b->stream = -1;
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
  for (int i = 0; i < DS_RFILE_BLOCKS; i++) f->blk[i].stream = -1;
  pthread_mutex_init(&f->mu, NULL);
  pthread_cond_init(&f->cv, NULL);
  pthread_mutex_lock(&files_mu);
  f->next = files;
  if (files) files->prev = f;
  files = f;
  pthread_mutex_unlock(&files_mu);
  return f;
}

void ds_rfile_free(ds_rfile *f) {
  if (!f) return;
  pthread_mutex_lock(&files_mu);
  if (f->prev) f->prev->next = f->next;
  else files = f->next;
  if (f->next) f->next->prev = f->prev;
  pthread_mutex_unlock(&files_mu);
  pthread_mutex_lock(&f->mu);
  __atomic_store_n(&f->stop, 1, __ATOMIC_RELAXED);
  pthread_cond_broadcast(&f->cv);
  int join = f->helper_join;
  f->helper_join = 0;
  pthread_mutex_unlock(&f->mu);
  if (join) pthread_join(f->helper, NULL);
  for (int i = 0; i < DS_RFILE_BLOCKS; i++) block_drop(&f->blk[i]);
  pre_drop(f->pre, f->npre);
  ds_probe_free(&f->at_open);
  ds_robj_free(&f->obj);
  pthread_cond_destroy(&f->cv);
  pthread_mutex_destroy(&f->mu);
  free(f);
}

/* The block (any state but EMPTY) that holds off, or NULL (f->mu held). */
static ds_rblock *block_at(ds_rfile *f, uint64_t off) {
  for (int i = 0; i < DS_RFILE_BLOCKS; i++) {
    ds_rblock *b = &f->blk[i];
    if (b->state != DS_RB_EMPTY && off >= b->off && off - b->off < b->len) return b;
  }
  return NULL;
}

/* Copy to dst the longest prefix of [off, off + n) that the tail, a ready
 * block or a prefetched range holds (f->mu held): the bytes copied, 0 when
 * none holds off; *pre = 1 when they came from a prefetched range. */
static size_t copy_held(ds_rfile *f, uint8_t *dst, size_t n, uint64_t off, int *pre) {
  const ds_probe *p = &f->at_open;
  uint64_t tail_off = p->size - p->tail_len;
  const ds_rblock *hit = NULL;
  if (p->tail_len && off >= tail_off) {
    size_t k = p->size - off < n ? (size_t)(p->size - off) : n;
    memcpy(dst, p->tail + (off - tail_off), k);
    return k;
  }
  ds_rblock *b = block_at(f, off);
  if (b && b->state == DS_RB_READY) {
    b->used = ++f->tick;
    hit = b;
  }
  if (!hit && f->npre) { /* the last prefetched range starting at or before off */
    size_t lo = 0, hi = f->npre;
    while (hi - lo > 1) {
      size_t mid = lo + (hi - lo) / 2;
      if (f->pre[mid].off <= off) lo = mid;
      else hi = mid;
    }
    const ds_rblock *x = &f->pre[lo];
    if (off >= x->off && off - x->off < x->len) hit = x, *pre = 1;
  }
  if (!hit) return 0;
  uint64_t left = hit->len - (off - hit->off);
  size_t k = left < n ? (size_t)left : n;
  memcpy(dst, hit->data + (off - hit->off), k);
  return k;
}

/* The stream a read of [off, off + n) belongs to (f->mu held): one whose
 * last read ended within DS_RFILE_GAP of off (*follows = 1 from the
 * third read of a stream on: it is read ahead), else a new
 * one in the least recently used place (its blocks fetched ahead become
 * plain blocks). Its end moves to off + n when that is further. */
static ds_rstream *stream_for(ds_rfile *f, uint64_t off, uint64_t n, int *follows) {
  ds_rstream *best = NULL, *lru = &f->st[0];
  uint64_t dist = UINT64_MAX;
  for (int i = 0; i < DS_RFILE_STREAMS; i++) {
    ds_rstream *s = &f->st[i];
    if (s->used < lru->used) lru = s;
    if (!s->used) continue;
    uint64_t d = off >= s->pos ? off - s->pos : s->pos - off;
    if (d < DS_RFILE_GAP && d < dist) best = s, dist = d;
  }
  if (best) best->runs++, best->hint_end = 0; /* read now: shed as any */
  *follows = best != NULL && best->runs >= 2;
  if (!best) {
    int k = (int)(lru - f->st);
    for (int i = 0; i < DS_RFILE_BLOCKS; i++)
      if (f->blk[i].stream == k) f->blk[i].stream = -1;
    memset(lru, 0, sizeof *lru);
    lru->lo = off;
    best = lru;
  }
  best->used = ++f->tick;
  best->seen = __atomic_add_fetch(&reads_clock, 1, __ATOMIC_RELAXED);
  if (off + n > best->pos) best->pos = off + n;
  return best;
}

/* Free the blocks fetched ahead for stream k that it has read past by
 * more than DS_RFILE_GAP (the other thread of a scan may still read just
 * behind it) (f->mu held). */
static void drop_passed(ds_rfile *f, int k) {
  uint64_t pos = f->st[k].pos;
  for (int i = 0; i < DS_RFILE_BLOCKS; i++) {
    ds_rblock *b = &f->blk[i];
    if (b->stream == k && b->state == DS_RB_READY && b->off + b->len + DS_RFILE_GAP <= pos)
      block_drop(b);
  }
}

/* A place for a new block (f->mu held): an empty one, else the least
 * recently used ready or failed block not fetched ahead for a stream
 * still before it; NULL when every place is busy. */
static ds_rblock *free_place(ds_rfile *f) {
  ds_rblock *pick = NULL;
  for (int i = 0; i < DS_RFILE_BLOCKS; i++) {
    ds_rblock *b = &f->blk[i];
    if (b->state == DS_RB_EMPTY) return b;
    if (b->state != DS_RB_READY && b->state != DS_RB_FAILED) continue;
    if (b->stream >= 0 && f->st[b->stream].pos < b->off + b->len) continue;
    if (!pick || b->used < pick->used) pick = b;
  }
  if (pick) block_drop(pick);
  return pick;
}

/* The end of the bytes worth fetching from q: the start of the next
 * block after q, of another stream after q, the tail, the end of the
 * object (f->mu held). */
static uint64_t room_end(ds_rfile *f, uint64_t q) {
  const ds_probe *p = &f->at_open;
  uint64_t end = p->size - p->tail_len;
  if (q >= end) end = p->size;
  for (int i = 0; i < DS_RFILE_BLOCKS; i++) {
    const ds_rblock *b = &f->blk[i];
    if (b->state != DS_RB_EMPTY && b->off > q && b->off < end) end = b->off;
  }
  for (int i = 0; i < DS_RFILE_STREAMS; i++) {
    const ds_rstream *s = &f->st[i];
    if (s->used && s->lo > q && s->lo < end) end = s->lo;
  }
  return end;
}

static void *helper_main(void *arg);

/* The size of stream s's next block: DS_RFILE_BLOCK_START, doubled
 * while the doubled size is no more than the stream has read since it
 * began, up to DS_RFILE_BLOCK_MAX (1, 2, 4, 8 MiB once 2, 4, 8 MiB are
 * read: blocks grow with what the reader has read in order, not with
 * what was fetched ahead for it, so a LIMIT that stops early fetched
 * little ahead). */
static uint64_t block_size(const ds_rstream *s) {
  uint64_t read = s->pos > s->lo ? s->pos - s->lo : 0, w = DS_RFILE_BLOCK_START;
  while (w < DS_RFILE_BLOCK_MAX && read >= 2 * w) w *= 2;
  return w < DS_RFILE_BLOCK_MAX ? w : DS_RFILE_BLOCK_MAX;
}

/* How far ahead of its reader stream s is read: DS_RFILE_AHEAD_BLOCKS
 * of its next block size, at most DS_RFILE_AHEAD_MAX. */
static uint64_t ahead_bytes(const ds_rstream *s) {
  uint64_t a = DS_RFILE_AHEAD_BLOCKS * block_size(s);
  return a < DS_RFILE_AHEAD_MAX ? a : DS_RFILE_AHEAD_MAX;
}

/* Free the ready blocks fetched ahead (not the others, nor the
 * prefetched ranges) of the open files other than f that are not busy
 * right now, for streams not read in the last DS_RFILE_SHED_AFTER reads
 * (the other thread of a scan may still be reading the end of the shard
 * before) and not hinted (f->mu held; the others' locks only tried, so
 * no two files wait for each other). */
static void shed(ds_rfile *f) {
  uint64_t now = __atomic_load_n(&reads_clock, __ATOMIC_RELAXED);
  pthread_mutex_lock(&files_mu);
  for (ds_rfile *g = files; g && ds_rfile_held_bytes() > DS_RFILE_SHED_AT; g = g->next) {
    if (g == f || pthread_mutex_trylock(&g->mu) != 0) continue;
    for (int i = 0; i < DS_RFILE_BLOCKS; i++) {
      const ds_rblock *b = &g->blk[i];
      const ds_rstream *s = b->stream >= 0 ? &g->st[b->stream] : NULL;
      if (s && !s->hint_end && s->seen + DS_RFILE_SHED_AFTER <= now &&
          (b->state == DS_RB_READY || b->state == DS_RB_FAILED))
        block_drop(&g->blk[i]);
    }
    pthread_mutex_unlock(&g->mu);
  }
  pthread_mutex_unlock(&files_mu);
}

/* Queue the blocks after stream k's reader, as long as they end within
 * ahead_bytes of it (a hinted stream not read yet: up to its hint_end), for the
 * helper thread (started when it is not running) (f->mu held). A read
 * sheds the other files' blocks first when all hold too much; a hint does
 * not (the file before it in a scan is still being read). */
static void queue_ahead(ds_rfile *f, int k) {
  ds_rstream *s = &f->st[k];
  const ds_probe *p = &f->at_open;
  uint64_t end = p->size - p->tail_len;
  if (s->hint_end && s->hint_end < end) end = s->hint_end;
  if (s->next < s->pos) s->next = s->pos;
  if (!s->hint_end && ds_rfile_held_bytes() > DS_RFILE_SHED_AT) shed(f);
  int queued = 0;
  uint64_t ahead = ahead_bytes(s);
  while (s->next < end && s->next - s->pos < ahead) {
    ds_rblock *b = block_at(f, s->next);
    if (b) { /* fetched or fetching already */
      s->next = b->off + b->len;
      continue;
    }
    uint64_t w = block_size(s), re = room_end(f, s->next);
    if (re <= s->next || (re < end && re - s->next < DS_RFILE_MIN && !block_at(f, re)))
      break; /* another stream's bytes start here */
    if (w > re - s->next) w = re - s->next;
    if (w > end - s->next) w = end - s->next;
    if (s->next - s->pos + w > ahead) break; /* it would end past the window */
    if (!held_room(w) || !(b = free_place(f))) break;
    b->off = s->next;
    b->len = (size_t)w;
    b->state = DS_RB_QUEUED;
    b->stream = k;
    b->used = ++f->tick;
    s->next += w;
    queued++;
  }
  if (!queued || f->helper_on || f->stop) return;
  if (f->helper_join) pthread_join(f->helper, NULL); /* it returned already */
  f->helper_join = 0;
  if (pthread_create(&f->helper, NULL, helper_main, f) == 0) {
    f->helper_on = f->helper_join = 1;
    return;
  }
  for (int i = 0; i < DS_RFILE_BLOCKS; i++) /* no thread: the reader fetches */
    if (f->blk[i].state == DS_RB_QUEUED) block_drop(&f->blk[i]);
}

void ds_rfile_ahead(ds_rfile *f, uint64_t off, uint64_t len) {
  const ds_probe *p = &f->at_open;
  if (len == 0 || off >= p->size - p->tail_len) return;
  pthread_mutex_lock(&f->mu);
  ds_rstream *lru = &f->st[0], *near = NULL;
  for (int i = 0; i < DS_RFILE_STREAMS; i++) {
    ds_rstream *s = &f->st[i];
    if (s->used < lru->used) lru = s;
    uint64_t d = !s->used ? UINT64_MAX : off >= s->pos ? off - s->pos : s->pos - off;
    if (d < DS_RFILE_GAP) near = s;
  }
  if (near && near->runs >= 2) { /* read ahead already */
    pthread_mutex_unlock(&f->mu);
    return;
  }
  ds_rstream *s = near; /* a read or two there (the open's): it goes on */
  if (!s) {
    s = lru;
    for (int i = 0; i < DS_RFILE_BLOCKS; i++)
      if (f->blk[i].stream == (int)(s - f->st)) f->blk[i].stream = -1;
    memset(s, 0, sizeof *s);
    s->lo = s->pos = off;
  }
  uint64_t from = s->pos > off ? s->pos : off;
  s->runs = 1; /* its next read follows it */
  s->hint_end = from + len > from ? from + len : UINT64_MAX;
  s->used = ++f->tick;
  queue_ahead(f, (int)(s - f->st));
  pthread_mutex_unlock(&f->mu);
}

/* The helper's interrupt: the file is being closed. */
static int helper_stopped(void *ctx) {
  ds_rfile *f = ctx;
  return __atomic_load_n(&f->stop, __ATOMIC_RELAXED);
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

/* The helper's run: its slots (range GETs in flight on one thread,
 * libcurl's multi interface) and the block each fetches. */
typedef struct helper_run {
  ds_rfile *f;
  const char *etag;
  ds_http_req rs[DS_RFILE_AHEAD_INFLIGHT];
  ds_rblock *bs[DS_RFILE_AHEAD_INFLIGHT]; /* NULL: the slot idles */
} helper_run;

/* Keep slot i's answer in its block (READY, or FAILED: its reader
 * fetches it again and tells the error) (f->mu held). */
static void slot_done(helper_run *h, size_t i) {
  ds_rblock *b = h->bs[i];
  ds_http_req *r = &h->rs[i];
  if (!r->err && r->body.len == b->len) {
    b->data = r->body.data;
    r->body.data = NULL;
    r->body.len = r->body.cap = 0;
    __atomic_add_fetch(&held_total, (uint64_t)b->len, __ATOMIC_RELAXED);
    b->state = DS_RB_READY;
  } else {
    b->state = DS_RB_FAILED;
  }
  ds_http_req_free(r);
  h->bs[i] = NULL;
}

/* ds_http_opts.refill of the helper: keep slot i's answer when it has
 * one, then give the slot the QUEUED block queued first (1), or none
 * (0; the file closing: none). */
static int helper_refill(void *ctx, size_t i) {
  helper_run *h = ctx;
  ds_rfile *f = h->f;
  pthread_mutex_lock(&f->mu);
  if (h->bs[i]) {
    slot_done(h, i);
    pthread_cond_broadcast(&f->cv);
  }
  ds_rblock *b = NULL;
  for (int j = 0; j < DS_RFILE_BLOCKS && !f->stop; j++)
    if (f->blk[j].state == DS_RB_QUEUED && (!b || f->blk[j].used < b->used)) b = &f->blk[j];
  if (b) {
    b->state = DS_RB_LOADING;
    h->bs[i] = b;
    ds_robj_req(&f->obj, &h->rs[i], DS_HTTP_RANGE);
    h->rs[i].offset = b->off;
    h->rs[i].length = b->len;
    h->rs[i].if_match = h->etag;
  }
  pthread_mutex_unlock(&f->mu);
  return b != NULL;
}

/* The helper thread: fetch the QUEUED blocks, up to
 * DS_RFILE_AHEAD_INFLIGHT at once, starting the next as soon as one
 * ends (the pipe never empties while blocks are queued), until none is
 * left (then return) or the file closes. */
static void *helper_main(void *arg) {
  ds_rfile *f = arg;
  ds_cancel_scope scope;
  ds_cancel_begin(&scope, helper_stopped, f);
  helper_run *h = calloc(1, sizeof *h);
  pthread_mutex_lock(&f->mu);
  while (h && !f->stop) {
    int queued = 0;
    for (int i = 0; i < DS_RFILE_BLOCKS; i++) queued |= f->blk[i].state == DS_RB_QUEUED;
    if (!queued) break; /* the lock held on: a block queued later starts a new helper */
    pthread_mutex_unlock(&f->mu);
    h->f = f;
    h->etag = f->at_open.etag[0] ? f->at_open.etag : NULL;
    ds_http_opts ho;
    ds_robj_http_opts(&f->obj, &ho);
    ho.max_parallel = DS_RFILE_AHEAD_INFLIGHT;
    ho.refill = helper_refill;
    ho.refill_ctx = h;
    ds_http_run(h->rs, DS_RFILE_AHEAD_INFLIGHT, &ho);
    pthread_mutex_lock(&f->mu);
    for (size_t i = 0; i < DS_RFILE_AHEAD_INFLIGHT; i++) /* cut short: closing */
      if (h->bs[i]) slot_done(h, i);
    pthread_cond_broadcast(&f->cv);
  }
  for (int i = 0; i < DS_RFILE_BLOCKS; i++) /* closing, or no memory: nothing is waited for */
    if (f->blk[i].state == DS_RB_QUEUED) block_drop(&f->blk[i]);
  f->helper_on = 0;
  pthread_cond_broadcast(&f->cv);
  pthread_mutex_unlock(&f->mu);
  free(h);
  ds_cancel_end(&scope);
  return NULL;
}

/* Wait (f->mu held) for a block being fetched: 0, or -1 with errno
 * ECANCELED when the reader's statement was interrupted meanwhile. */
static int wait_block(ds_rfile *f) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_nsec += WAIT_NS;
  if (t.tv_nsec >= 1000000000L) t.tv_sec++, t.tv_nsec -= 1000000000L;
  pthread_cond_timedwait(&f->cv, &f->mu, &t);
  if (ds_cancel_check()) {
    ds_vfs_set_detail(strdup(DS_CANCEL_MSG));
    errno = ECANCELED;
    return -1;
  }
  return 0;
}

ssize_t ds_rfile_pread(ds_rfile *f, void *buf, size_t n, uint64_t off) {
  const ds_probe *p = &f->at_open;
  if (off >= p->size || n == 0) return 0;
  if (n > p->size - off) n = (size_t)(p->size - off);
  uint8_t *dst = buf;
  size_t got = 0;
  int pre = 0, follows = 0, rc = 0;
  pthread_mutex_lock(&f->mu);
  /* reads of the tail (a format's footer) belong to no stream */
  uint64_t tail_off = p->size - p->tail_len;
  ds_rstream *s = off < tail_off || !p->tail_len ? stream_for(f, off, n, &follows) : NULL;
  int sk = s ? (int)(s - f->st) : -1;
  if (follows) drop_passed(f, sk);
  while (got < n && !rc) {
    uint64_t q = off + got;
    size_t k = copy_held(f, dst + got, n - got, q, &pre);
    if (k) {
      got += k;
      /* a read from a prefetched range stops at its end: a window's
       * read-ahead (core/mapped_file.c) takes what is there rather than a
       * new request */
      if (pre) break;
      continue;
    }
    ds_rblock *b = block_at(f, q);
    if (b && (b->state == DS_RB_QUEUED || b->state == DS_RB_LOADING)) {
      if (follows) queue_ahead(f, sk);
      rc = wait_block(f);
      continue;
    }
    if (b) block_drop(b); /* failed ahead: fetched again here, its error told */
    /* a miss: fetch here a block from q (a stream's next block size when
     * the read follows one, else what is asked, at least DS_RFILE_MIN),
     * marked as being fetched so that the other reader waits for it */
    uint64_t need = n - got, w = follows ? block_size(s) : 0; /* follows: s is set */
    if (w < need) w = need;
    if (w < DS_RFILE_MIN) w = DS_RFILE_MIN;
    uint64_t re = room_end(f, q);
    if (w > re - q) w = re - q < need ? need : re - q;
    if (w > p->size - q) w = p->size - q;
    ds_rblock *mine = NULL;
    if (w <= DS_RFILE_BLOCK_MAX && held_room(w) && (mine = free_place(f))) {
      mine->off = q;
      mine->len = (size_t)w;
      mine->state = DS_RB_LOADING;
      mine->stream = follows ? sk : -1;
      mine->used = ++f->tick;
      if (follows && s->next < q + w) s->next = q + w;
    } else if (w > need && !held_room(w)) {
      w = need;
    }
    if (follows) queue_ahead(f, sk); /* the blocks after it, meanwhile */
    pthread_mutex_unlock(&f->mu);
    uint8_t *data = NULL;
    uint64_t len = 0;
    rc = fetch(f, q, w, need, &data, &len);
    pthread_mutex_lock(&f->mu);
    if (rc) {
      if (mine) block_drop(mine);
      pthread_cond_broadcast(&f->cv);
      break;
    }
    if (mine && len == mine->len) {
      mine->data = data;
      mine->state = DS_RB_READY;
      __atomic_add_fetch(&held_total, len, __ATOMIC_RELAXED);
      pthread_cond_broadcast(&f->cv);
      continue; /* copied from it on the next turn */
    }
    if (mine) { /* fewer bytes than the block: keep none */
      block_drop(mine);
      pthread_cond_broadcast(&f->cv);
    }
    memcpy(dst + got, data, need);
    got += need;
    free(data);
  }
  if (!rc && follows && !pre) queue_ahead(f, sk); /* not for IN lists' ranges */
  pthread_mutex_unlock(&f->mu);
  return rc ? -1 : (ssize_t)got;
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
  /* merge: through gaps under DS_RFILE_PREFETCH_GAP always, through gaps
   * under DS_RFILE_GAP when no larger than the bytes wanted on both
   * sides; an extent stops at PRE_EXTENT_MAX (one GET each) */
  size_t e = 0;
  uint64_t useful = 0, total = 0;
  for (size_t i = 0; i < m; i++) {
    uint64_t end = v[i].off + v[i].len;
    if (e > 0) {
      ds_vfs_range *x = &v[e - 1];
      uint64_t xend = x->off + x->len;
      uint64_t gap = v[i].off > xend ? v[i].off - xend : 0;
      uint64_t grown = (end > xend ? end : xend) - x->off;
      if ((gap < DS_RFILE_PREFETCH_GAP || (gap < DS_RFILE_GAP && gap <= useful + v[i].len)) &&
          grown <= PRE_EXTENT_MAX) {
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
