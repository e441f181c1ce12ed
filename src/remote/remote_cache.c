/* remote_cache.c - the persistent cache of remote index bytes (see
 * remote_cache.h). An entry file is
 *   "DSRCACH2" | u64 kind ('p' or 'w') | u64 confirmed (ms since 1970) |
 *   u64 object size | u64 etag len | u64 version len | u64 payload len |
 *   SHA-256 of the URL (32) | etag | version | payload |
 *   u32 CRC-32 (gzip's) of everything before
 * (integers in this machine's order: the cache is local). The URL is kept
 * only as its hash: signed query strings never reach the disk. The check
 * is against damage (a torn or flipped file), not forgery (whoever can
 * write the folder can write a valid entry): ISA-L's CRC-32 checks the
 * 30 MB of a large datadings index in a few ms, where SHA-256 (libmd) took
 * 150 ms of a warm `key IN (...)`. Entries of the older "DSRCACHE" layout
 * (a SHA-256 trailer) fail the magic: deleted and fetched again. */
#include "remote/remote_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <isa-l.h>
#include <isa-l/crc.h>

#include "core/append_file.h"
#include "core/remote_stats.h"
#include "core/upper_vectors.h"
#include "core/vfs.h"
#include "remote/sha256_hmac.h"

#define MAGIC "DSRCACH2"
#define CHECK_LEN 4 /* the CRC-32 trailer */
#define HEAD_LEN (8 + 6 * 8 + DS_SHA256_LEN)
#define NAME_LEN (2 * DS_SHA256_LEN + 2) /* hex + ".p" */
#define TMP_PREFIX ".tmp-"
#define TMP_STALE_NS ((int64_t)600 * 1000000000) /* a temp file older: left by a crash */

/* -- settings (read from the environment at each use: no state) -- */

/* The cache folder into out (no trailing '/'); 0 when there is none. */
static int cache_dir(char *out, size_t n) {
  const char *d = getenv("DATASETS_REMOTE_CACHE_DIR");
  int w;
  if (d && d[0] == '/')
    w = snprintf(out, n, "%s", d);
  else if ((d = getenv("XDG_CACHE_HOME")) && d[0] == '/')
    w = snprintf(out, n, "%s/sqlite-datasets/remote", d);
  else if ((d = getenv("HOME")) && d[0] == '/')
    w = snprintf(out, n, "%s/.cache/sqlite-datasets/remote", d);
  else
    return 0;
  if (w <= 0 || (size_t)w >= n - NAME_LEN - 40) return 0;
  while (w > 1 && out[w - 1] == '/') out[--w] = 0;
  return 1;
}

/* DATASETS_REMOTE_CACHE_MAX: bytes, with an optional K, M or G suffix. */
static uint64_t cache_max(void) {
  const char *s = getenv("DATASETS_REMOTE_CACHE_MAX");
  if (!s || !*s) return DS_RCACHE_MAX_DEFAULT;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s) return DS_RCACHE_MAX_DEFAULT;
  int sh = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20
         : *end == 'G' || *end == 'g' ? 30 : 0;
  if (sh && v > (UINT64_MAX >> sh)) return UINT64_MAX;
  return (uint64_t)v << sh;
}

/* DATASETS_REMOTE_CACHE_FRESH_MS (DS_RCACHE_FRESH_DEFAULT_MS when unset or
 * empty; 0 or less: no window). */
static long long fresh_ms(void) {
  const char *s = getenv("DATASETS_REMOTE_CACHE_FRESH_MS");
  long long w = s && *s ? atoll(s) : DS_RCACHE_FRESH_DEFAULT_MS;
  return w > 0 ? w : 0;
}

int ds_rcache_fresh_window(void) { return fresh_ms() > 0; }

int ds_rcache_fresh(int64_t age_ms) { return age_ms >= 0 && age_ms < fresh_ms(); }

int ds_rcache_on(const ds_robj *o) {
  if (o->cache == 1) return 0;
  if (strchr(o->url, '?')) return 0; /* a signed URL: its key would change, its HEAD fail */
  if (o->cache != 0) {
    const char *s = getenv("DATASETS_REMOTE_CACHE");
    if (s && (strcasecmp(s, "off") == 0 || strcmp(s, "0") == 0 ||
              strcasecmp(s, "no") == 0 || strcasecmp(s, "false") == 0))
      return 0;
  }
  char d[4096];
  return cache_dir(d, sizeof d);
}

static int64_t wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The entry path of o's URL and kind ('p', 'w') into out; the URL's hash
 * into uh. 0 when there is no cache folder. */
static int entry_path(const ds_robj *o, char kind, char *out, size_t n,
                      uint8_t uh[DS_SHA256_LEN]) {
  char d[4096];
  if (!cache_dir(d, sizeof d)) return 0;
  ds_sha256(o->url, strlen(o->url), uh);
  char hex[2 * DS_SHA256_LEN + 1];
  ds_hex_lower(uh, DS_SHA256_LEN, hex);
  return snprintf(out, n, "%s/%s.%c", d, hex, kind) < (int)n;
}

/* -- reading an entry -- */

typedef struct entry {
  uint64_t kind, confirmed, size;
  const char *etag, *vid;
  size_t etag_len, vid_len;
  const uint8_t *payload;
  size_t payload_len;
  uint8_t *raw; /* the file's bytes (malloc'd) */
} entry;

static uint64_t get64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

/* The check of an entry's first n bytes into out: their CRC-32 (gzip's),
 * little-endian. */
static void check_of(const uint8_t *p, size_t n, uint8_t out[CHECK_LEN]) {
  uint32_t c = 0;
  for (size_t at = 0; at < n;) { /* ISA-L takes a u64 length; cut anyway */
    size_t k = n - at > ((size_t)1 << 30) ? (size_t)1 << 30 : n - at;
    c = crc32_gzip_refl(c, (uint8_t *)p + at, k);
    at += k;
  }
  ds_clear_upper_vectors();
  for (int i = 0; i < CHECK_LEN; i++) out[i] = (uint8_t)(c >> (8 * i));
}

/* Read and check the entry at path: 1 good, 0 absent, -1 damaged or not
 * o's (deleted). */
static int entry_read(const char *path, const uint8_t uh[DS_SHA256_LEN], char kind,
                      uint64_t payload_max, entry *e) {
  memset(e, 0, sizeof *e);
  int fd = ds_vfs_open_fd(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ds_vfs_info st;
  int bad = 1;
  uint8_t *raw = NULL;
  if (ds_vfs_stat_fd(fd, &st) == 0 && st.size >= HEAD_LEN + CHECK_LEN &&
      st.size <= HEAD_LEN + 512 + payload_max + CHECK_LEN &&
      (raw = malloc((size_t)st.size)) != NULL &&
      ds_pread_all(fd, raw, (size_t)st.size, 0, path, NULL) == 0) {
    size_t n = (size_t)st.size, body = n - CHECK_LEN;
    uint8_t sum[CHECK_LEN];
    check_of(raw, body, sum);
    e->kind = get64(raw + 8);
    e->confirmed = get64(raw + 16);
    e->size = get64(raw + 24);
    uint64_t el = get64(raw + 32), vl = get64(raw + 40), pl = get64(raw + 48);
    if (memcmp(raw, MAGIC, 8) == 0 && memcmp(sum, raw + body, CHECK_LEN) == 0 &&
        e->kind == (uint64_t)kind && memcmp(raw + 56, uh, DS_SHA256_LEN) == 0 &&
        el < 200 && vl < 128 && pl <= payload_max &&
        HEAD_LEN + el + vl + pl == body) {
      e->etag = (const char *)raw + HEAD_LEN;
      e->etag_len = (size_t)el;
      e->vid = e->etag + el;
      e->vid_len = (size_t)vl;
      e->payload = (const uint8_t *)e->vid + vl;
      e->payload_len = (size_t)pl;
      e->raw = raw;
      raw = NULL;
      bad = 0;
      ds_vfs_touch_fd(fd); /* its last use: the LRU order */
    }
  } else if (errno == ENOMEM) {
    bad = 2; /* not the entry's fault */
  }
  free(raw);
  ds_vfs_close_fd(fd);
  if (bad == 1) ds_vfs_remove(path);
  return bad ? -1 : 1;
}

/* -- writing an entry -- */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t total_est = -1; /* bytes in the folder as this process knows (-1: not yet) */
static uint64_t tmp_serial;

/* An entry file of the folder, with its size and last use. */
typedef struct aged {
  int64_t used_ns;
  uint64_t size;
  char name[NAME_LEN + 1];
} aged;

static int by_age(const void *a, const void *b) {
  int64_t x = ((const aged *)a)->used_ns, y = ((const aged *)b)->used_ns;
  return x < y ? -1 : x > y;
}

/* 1 when name is an entry's ("<64 hex>.p" / ".w"). */
static int is_entry(const char *name) {
  if (strlen(name) != NAME_LEN || name[NAME_LEN - 2] != '.') return 0;
  if (name[NAME_LEN - 1] != 'p' && name[NAME_LEN - 1] != 'w') return 0;
  return strspn(name, "0123456789abcdef") == NAME_LEN - 2;
}

/* Measure the folder (removing temporary files a crash left) and, when
 * it holds more than max, remove the least recently used entries until
 * 3/4 of max is left. The bytes left; called under mu. */
static int64_t scan_and_evict(const char *dir, uint64_t max) {
  ds_vfs_list *l = ds_vfs_list_open(NULL, dir);
  if (!l) return 0;
  aged *v = NULL;
  size_t n = 0, cap = 0;
  uint64_t total = 0;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  int64_t now_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
  char path[4096 + NAME_LEN + 64];
  for (const char *name; (name = ds_vfs_list_next(l)) != NULL;) {
    int entry = is_entry(name), tmp = strncmp(name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0;
    if (!entry && !tmp) continue;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ds_vfs_info st;
    if (ds_vfs_lstat(path, &st) != 0 || st.kind != DS_VFS_FILE) continue;
    if (tmp) {
      if (now_ns - st.mtime_ns > TMP_STALE_NS) ds_vfs_remove(path);
      continue;
    }
    if (n == cap) {
      size_t c2 = cap ? cap * 2 : 64;
      aged *g = realloc(v, c2 * sizeof *g);
      if (!g) break;
      v = g;
      cap = c2;
    }
    v[n].used_ns = st.mtime_ns;
    v[n].size = st.size;
    memcpy(v[n].name, name, NAME_LEN + 1);
    n++;
    total += st.size;
  }
  ds_vfs_list_close(l);
  if (total > max && v) {
    qsort(v, n, sizeof *v, by_age);
    uint64_t goal = max - max / 4;
    for (size_t i = 0; i < n && total > goal; i++) {
      snprintf(path, sizeof path, "%s/%s", dir, v[i].name);
      if (ds_vfs_remove(path) == 0 || errno == ENOENT) total -= v[i].size;
    }
  }
  free(v);
  return (int64_t)total;
}

/* Count `bytes` more in the folder; evict when past the bound. */
static void account(const char *dir, uint64_t bytes, uint64_t max) {
  pthread_mutex_lock(&mu);
  if (total_est < 0)
    total_est = scan_and_evict(dir, max);
  else
    total_est += (int64_t)bytes;
  if ((uint64_t)total_est > max) total_est = scan_and_evict(dir, max);
  pthread_mutex_unlock(&mu);
}

/* mkdir -p of dir (silent; the write after tells). */
static void make_dirs(const char *dir) {
  char p[4096];
  snprintf(p, sizeof p, "%s", dir);
  for (char *s = p + 1; *s; s++)
    if (*s == '/') {
      *s = 0;
      ds_vfs_mkdir(p);
      *s = '/';
    }
  ds_vfs_mkdir(p);
}

/* Write an entry of o atomically (temp file + rename); silent on failure. */
static void entry_write(const ds_robj *o, char kind, const ds_rcache_obj *p, const void *payload,
                        size_t plen) {
  char path[4096 + NAME_LEN + 64], dir[4096];
  uint8_t uh[DS_SHA256_LEN];
  if (!p->etag[0] || !cache_dir(dir, sizeof dir) ||
      !entry_path(o, kind, path, sizeof path, uh))
    return;
  uint64_t max = cache_max();
  size_t el = strlen(p->etag), vl = strlen(p->version_id);
  size_t n = HEAD_LEN + el + vl + plen + CHECK_LEN;
  if (n > max) return;
  uint8_t *b = malloc(n);
  if (!b) return;
  uint64_t h[6] = {(uint64_t)kind, (uint64_t)wall_ms(), p->size, el, vl, plen};
  memcpy(b, MAGIC, 8);
  memcpy(b + 8, h, sizeof h);
  memcpy(b + 56, uh, DS_SHA256_LEN);
  memcpy(b + HEAD_LEN, p->etag, el);
  memcpy(b + HEAD_LEN + el, p->version_id, vl);
  if (plen) memcpy(b + HEAD_LEN + el + vl, payload, plen);
  check_of(b, n - CHECK_LEN, b + n - CHECK_LEN);
  char tmp[sizeof path + 64];
  uint64_t serial = __atomic_add_fetch(&tmp_serial, 1, __ATOMIC_RELAXED);
  snprintf(tmp, sizeof tmp, "%s/" TMP_PREFIX "%ld-%llx-%llx", dir, (long)getpid(),
           (unsigned long long)serial, (unsigned long long)(uintptr_t)b);
  int fd = ds_vfs_open_fd(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    make_dirs(dir);
    fd = ds_vfs_open_fd(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC);
  }
  if (fd >= 0) {
    int ok = ds_write_all(fd, b, n, tmp, NULL) == 0;
    ds_vfs_close_fd(fd);
    if (ok && ds_vfs_rename(tmp, path, DS_VFS_REPLACE) == 0)
      account(dir, n, max);
    else
      ds_vfs_remove(tmp);
  }
  free(b);
}

/* -- the API -- */

int ds_rcache_probe_get(const ds_robj *o, ds_rcache_obj *out, int64_t *age_ms) {
  memset(out, 0, sizeof *out);
  char path[4096 + NAME_LEN + 64];
  uint8_t uh[DS_SHA256_LEN];
  entry e;
  if (!entry_path(o, 'p', path, sizeof path, uh) ||
      entry_read(path, uh, 'p', DS_RCACHE_TAIL_MAX, &e) != 1)
    return 0;
  int ok = e.payload_len <= e.size && (e.payload_len == 0 || (out->tail = malloc(e.payload_len)));
  if (ok) {
    out->size = e.size;
    memcpy(out->etag, e.etag, e.etag_len);
    memcpy(out->version_id, e.vid, e.vid_len);
    if (e.payload_len) memcpy(out->tail, e.payload, e.payload_len);
    out->tail_len = e.payload_len;
    *age_ms = wall_ms() - (int64_t)e.confirmed;
  }
  free(e.raw);
  return ok;
}

void ds_rcache_probe_put(const ds_robj *o, const ds_rcache_obj *p) {
  if (p->tail_len > DS_RCACHE_TAIL_MAX) return;
  entry_write(o, 'p', p, p->tail, p->tail_len);
}

void ds_rcache_drop(const ds_robj *o) {
  char path[4096 + NAME_LEN + 64];
  uint8_t uh[DS_SHA256_LEN];
  if (entry_path(o, 'p', path, sizeof path, uh)) ds_vfs_remove(path);
  if (entry_path(o, 'w', path, sizeof path, uh)) ds_vfs_remove(path);
}

int ds_rcache_whole_wanted(const ds_robj *o, const ds_rcache_obj *at_open) {
  return at_open->etag[0] && at_open->size > at_open->tail_len &&
         at_open->size <= DS_RCACHE_WHOLE_MAX && ds_rcache_on(o);
}

int ds_rcache_whole_get(const ds_robj *o, const ds_rcache_obj *at_open, void *buf) {
  char path[4096 + NAME_LEN + 64];
  uint8_t uh[DS_SHA256_LEN];
  entry e;
  int hit = 0;
  if (entry_path(o, 'w', path, sizeof path, uh) &&
      entry_read(path, uh, 'w', DS_RCACHE_WHOLE_MAX, &e) == 1) {
    hit = e.size == at_open->size && e.payload_len == at_open->size &&
          e.etag_len == strlen(at_open->etag) &&
          memcmp(e.etag, at_open->etag, e.etag_len) == 0;
    if (hit) memcpy(buf, e.payload, e.payload_len);
    free(e.raw);
  }
  ds_rstats_add(o->url, hit ? DS_RSTAT_CACHE_HITS : DS_RSTAT_CACHE_MISSES, 1);
  if (hit) ds_rstats_add(o->url, DS_RSTAT_CACHE_BYTES, at_open->size);
  return hit;
}

void ds_rcache_whole_put(const ds_robj *o, const ds_rcache_obj *at_open, const void *buf) {
  entry_write(o, 'w', at_open, buf, (size_t)at_open->size);
}
