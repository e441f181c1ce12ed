/* vfs_remote.c - the remote backends of the file-system seam (core/vfs.h):
 * http://, https://, s3:// and gs://, read-only. open is one request (a
 * suffix range: size, ETag, tail; remote_probe.c), pread a range GET with
 * If-Match (remote_file.c), identity a hash of the URL, ETag and version
 * id. s3:// and gs:// list by prefix (a "folder" is a prefix with keys
 * under it; glob lists the longest literal prefix and matches the rest
 * with fnmatch); http(s) cannot list: listing and globs fail with ENOTSUP
 * and a detail saying why. Failures set errno and the detail (the URL
 * without secrets, the HTTP status, the server's error code). */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "core/vfs.h"
#include "remote/remote_ahead.h"
#include "remote/remote_file.h"
#include "remote/remote_probe_many.h"
#include "remote/s3_list.h"

#define REMOTE_DEV UINT64_C(0x72656d6f7465) /* "remote" */

/* FNV-1a over s, continuing from h. */
static uint64_t fnv(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (uint8_t)*s) * UINT64_C(0x100000001b3);
  return (h ^ 0xff) * UINT64_C(0x100000001b3);
}

/* The identity of what p says is at url. */
static void info_of(const char *url, const ds_probe *p, ds_vfs_info *st) {
  memset(st, 0, sizeof *st);
  st->kind = p->kind == DS_PROBE_FILE ? DS_VFS_FILE
             : p->kind == DS_PROBE_DIR ? DS_VFS_DIR
                                       : DS_VFS_MISSING;
  st->size = p->kind == DS_PROBE_FILE ? p->size : 0;
  st->dev = REMOTE_DEV;
  uint64_t h = fnv(UINT64_C(0xcbf29ce484222325), url);
  h = fnv(h, p->etag);
  h = fnv(h, p->version_id);
  if (!p->etag[0]) h = fnv(h, p->kind == DS_PROBE_FILE ? "file" : "dir");
  st->ino = h;
  if (!p->etag[0] && p->kind == DS_PROBE_FILE) st->ino ^= p->size; /* no ETag: the size */
}

/* Fail with errno e and detail msg (taken). */
static int fail(int e, char *msg) {
  ds_vfs_set_detail(msg);
  errno = e;
  return -1;
}

/* path, or at's folder + "/" + path (malloc'd). */
static char *full_path(const ds_vfs_dir *at, const char *path) {
  if (!at || !at->be || !at->impl) return strdup(path);
  const char *d = at->impl;
  size_t n = strlen(d);
  return ds_strf("%s%s%s", d, n && d[n - 1] == '/' ? "" : "/", path);
}

/* Make the object of at/path; -1 with errno and detail. */
static int obj_of(const ds_vfs_dir *at, const char *path, ds_robj *o) {
  char *p = full_path(at, path), *err = NULL;
  if (!p) return fail(ENOMEM, NULL);
  int rc = ds_robj_make(p, o, &err);
  free(p);
  return rc ? fail(strstr(err ? err : "", "segment") ? EACCES : EINVAL, err) : 0;
}

/* What is at o (cache allowed unless fresh); -1 with errno and detail. */
static int probe(const ds_robj *o, int fresh, ds_probe *p) {
  int eno = 0;
  char *err = NULL;
  if (ds_probe_get(o, fresh, p, &eno, &err)) return fail(eno ? eno : EIO, err);
  if (p->kind == DS_PROBE_MISSING) {
    free(err);
    return fail(ENOENT, ds_strf("%s", p->why));
  }
  free(err);
  return 0;
}

static int r_open(const ds_vfs_dir *at, const char *path, ds_vfs_file *f) {
  ds_robj o;
  ds_probe p;
  if (obj_of(at, path, &o)) return -1;
  /* a whole file fetched ahead (ds_vfs_load_many), else a probe */
  if (!ds_rahead_take(o.url, &p) && probe(&o, 0, &p)) {
    ds_robj_free(&o);
    return -1;
  }
  info_of(o.url, &p, &f->st);
  if (p.kind != DS_PROBE_FILE) { /* the caller refuses a folder by its kind */
    ds_probe_free(&p);
    ds_robj_free(&o);
    f->impl = NULL;
    return 0;
  }
  ds_rfile *rf = ds_rfile_new(&o, &p);
  if (!rf) {
    ds_probe_free(&p);
    ds_robj_free(&o);
    return fail(ENOMEM, NULL);
  }
  f->impl = rf;
  f->fd = -1;
  return 0;
}

/* -- whole small objects and the disk cache (remote_cache.h) -- */

/* 1 when rf's object is one the disk cache keeps whole. */
static int whole_wanted(const ds_rfile *rf) {
  ds_rcache_obj v;
  ds_probe_cache_view(&rf->at_open, &v);
  return ds_rcache_whole_wanted(&rf->obj, &v);
}

/* rf's object was replaced (a read failed on its ETag): forget what this
 * process and the disk cache know of it, so that the next open asks (an
 * open inside the freshness window would otherwise meet the old answer
 * again). errno kept. */
static void forget_replaced(const ds_rfile *rf) {
  int e = errno;
  ds_rcache_drop(&rf->obj);
  ds_probe_forget(rf->obj.url);
  errno = e;
}

/* The whole object of rf into buf (its size): the disk cache's bytes for
 * the ETag of the open, else one GET (If-Match that ETag), then kept.
 * 0 ok; -1 with errno and the detail. */
static int whole_of(ds_rfile *rf, uint8_t *buf) {
  const ds_probe *p = &rf->at_open;
  ds_rcache_obj v;
  ds_probe_cache_view(p, &v);
  if (ds_rcache_whole_get(&rf->obj, &v, buf)) return 0;
  ds_http_opts ho;
  ds_robj_http_opts(&rf->obj, &ho);
  ds_http_req r;
  ds_robj_req(&rf->obj, &r, DS_HTTP_RANGE);
  r.offset = 0;
  r.length = p->size;
  r.if_match = p->etag;
  if (ds_http_run(&r, 1, &ho) != 0 || r.body.len != p->size) {
    int e = r.err ? ds_probe_errno(&r) : EIO;
    char *why = r.err ? r.err : ds_strf("GET %s: a short answer", rf->obj.shown);
    r.err = NULL;
    ds_http_req_free(&r);
    return fail(e, why);
  }
  memcpy(buf, r.body.data, (size_t)p->size);
  ds_http_req_free(&r);
  ds_rcache_whole_put(&rf->obj, &v, buf);
  return 0;
}

/* DS_VFS_HINT_INDEX on a small object: fetch it whole now (or take it
 * from the disk cache) and hold it as the open's "tail", from which
 * remote_file.c serves every read without a request. Silent on failure
 * (the reads then go their usual way and tell). */
static void r_hint(ds_vfs_file *f, unsigned hints) {
  ds_rfile *rf = f->impl;
  if (!rf || !(hints & DS_VFS_HINT_INDEX) || !whole_wanted(rf))
    return;
  uint8_t *buf = malloc((size_t)rf->at_open.size);
  if (!buf) return;
  char *was = ds_vfs_detail() ? strdup(ds_vfs_detail()) : NULL;
  int eno = errno;
  if (whole_of(rf, buf)) {
    if (errno == ESTALE) forget_replaced(rf);
    free(buf);
    ds_vfs_set_detail(was); /* a hint leaves no trace */
    errno = eno;
    return;
  }
  free(was);
  free(rf->at_open.tail);
  rf->at_open.tail = buf;
  rf->at_open.tail_len = (size_t)rf->at_open.size;
}

static ssize_t r_pread(const ds_vfs_file *f, void *buf, size_t n, uint64_t off) {
  if (!f->impl) return fail(EISDIR, NULL);
  ssize_t k = ds_rfile_pread(f->impl, buf, n, off);
  if (k < 0 && errno == ESTALE) forget_replaced(f->impl);
  return k;
}

static void r_prefetch(const ds_vfs_file *f, const ds_vfs_range *r, size_t n) {
  if (f->impl) ds_rfile_prefetch(f->impl, r, n);
}

static void r_read_ahead(const ds_vfs_file *f, uint64_t off, uint64_t len) {
  if (f->impl) ds_rfile_ahead(f->impl, off, len);
}

static void r_prefetch_many(const ds_vfs_prefetch_set *s, size_t n) {
  ds_rfile **fs = n ? malloc(n * sizeof *fs) : NULL;
  const ds_vfs_range **r = n ? malloc(n * sizeof *r) : NULL;
  size_t *c = n ? malloc(n * sizeof *c) : NULL, k = 0;
  for (size_t i = 0; fs && r && c && i < n; i++)
    if (s[i].f->impl) {
      fs[k] = s[i].f->impl;
      r[k] = s[i].r;
      c[k++] = s[i].n;
    }
  if (k) ds_rfile_prefetch_many(fs, r, c, k);
  free(fs);
  free(r);
  free(c);
}

static int r_restat(const ds_vfs_file *f, ds_vfs_info *st) {
  ds_rfile *rf = f->impl;
  if (!rf) {
    *st = f->st;
    return 0;
  }
  ds_probe p;
  if (probe(&rf->obj, 1, &p)) return -1;
  info_of(rf->obj.url, &p, st);
  ds_probe_free(&p);
  return 0;
}

static void r_close(ds_vfs_file *f) {
  ds_rfile_free(f->impl);
  f->impl = NULL;
}

static int r_stat(const ds_vfs_dir *at, const char *path, int follow, ds_vfs_info *st) {
  (void)follow;
  memset(st, 0, sizeof *st);
  ds_robj o;
  ds_probe p;
  if (obj_of(at, path, &o)) return -1;
  int rc = probe(&o, 0, &p);
  if (rc == 0) info_of(o.url, &p, st);
  ds_probe_free(&p);
  ds_robj_free(&o);
  return rc;
}

static int r_exists(const char *path) {
  ds_vfs_info st;
  return r_stat(NULL, path, 1, &st) == 0;
}

static int r_dir_open(const char *path, ds_vfs_dir *d) {
  ds_vfs_info st;
  if (r_stat(NULL, path, 1, &st)) return -1;
  if (st.kind != DS_VFS_DIR) return fail(ENOTDIR, NULL);
  char *p = strdup(path);
  if (!p) return fail(ENOMEM, NULL);
  size_t n = strlen(p);
  while (n > 0 && p[n - 1] == '/' && strstr(p, "://") + 3 < p + n - 1) p[--n] = 0;
  d->impl = p;
  d->fd = -1;
  return 0;
}

static void r_dir_close(ds_vfs_dir *d) {
  free(d->impl);
  d->impl = NULL;
}

static int r_dir_stat(const ds_vfs_dir *d, ds_vfs_info *st) {
  return r_stat(NULL, d->impl, 1, st);
}

/* -- listing (s3://, gs://) -- */

/* Why http(s) cannot list: the detail of ENOTSUP. */
static int no_listing(const char *path, const char *what) {
  char shown[1024];
  ds_http_url_for_message(path, shown, sizeof shown);
  return fail(ENOTSUP, ds_strf("%s: %s needs a listing, and http(s) servers give none: "
                               "name the files (name@N, comma lists), or use s3:// "
                               "or gs://",
                               shown, what));
}

typedef struct r_list {
  ds_vfs_list base;
  char **names;
  size_t n, i;
} r_list;

/* List o's prefix (key + "/") with delimiter d into l; -1 with errno. */
static int list_prefix(const ds_robj *o, const char *prefix, const char *delim,
                       ds_s3_listing *l) {
  ds_http_opts ho;
  ds_robj_http_opts(o, &ho);
  char *err = NULL;
  memset(l, 0, sizeof *l);
  if (ds_s3_list(&o->cfg, o->bucket, prefix, delim, 0, 0, &ho, l, &err)) {
    ds_s3_listing_free(l);
    return fail(strstr(err ? err : "", "HTTP 404") ? ENOENT
                : strstr(err ? err : "", "HTTP 403") ? EACCES
                                                    : EIO,
                err);
  }
  return 0;
}

static ds_vfs_list *r_list_open(const ds_vfs_dir *at, const char *path);

static const char *r_list_next(ds_vfs_list *l) {
  r_list *x = (r_list *)l;
  return x->i < x->n ? x->names[x->i++] : NULL;
}

static void r_list_close(ds_vfs_list *l) {
  r_list *x = (r_list *)l;
  for (size_t i = 0; i < x->n; i++) free(x->names[i]);
  free(x->names);
  free(x);
}

/* Append a copy of s[0..n) to x; -1 out of memory. */
static int push(char ***v, size_t *n, const char *s, size_t len) {
  char **g = realloc(*v, (*n + 1) * sizeof *g);
  if (!g) return -1;
  *v = g;
  if (!(g[*n] = malloc(len + 1))) return -1;
  memcpy(g[*n], s, len);
  g[*n][len] = 0;
  (*n)++;
  return 0;
}

/* The most folders of one listing noted: half of the answers
 * remote_probe.c remembers (64), so that a long listing's later folders
 * do not push out its first ones before the caller, going through the
 * names in order, states them (past it, folders are probed as before). */
#define NOTE_DIRS_MAX 32

/* The listed folders names[nobj..n) of at/path are folders (keys lie
 * under them): remembered as the probe would find them (remote_probe.h
 * ds_probe_note_dir), so that stating each costs no request (the first
 * NOTE_DIRS_MAX). A name that is also a key (names[0..nobj)) is left to
 * the probe (the key wins). */
static void note_dirs(const ds_vfs_dir *at, const char *path, char **names, size_t nobj,
                      size_t n) {
  char *base = full_path(at, path);
  size_t bl = base ? strlen(base) : 0;
  for (size_t i = nobj; base && i < n && i - nobj < NOTE_DIRS_MAX; i++) {
    int also_key = 0;
    for (size_t j = 0; j < nobj && !also_key; j++) also_key = strcmp(names[j], names[i]) == 0;
    char *child = also_key ? NULL
                  : ds_strf("%s%s%s", base, bl && base[bl - 1] == '/' ? "" : "/", names[i]);
    ds_robj c;
    char *err = NULL;
    if (child && ds_robj_make(child, &c, &err) == 0) {
      ds_probe_note_dir(c.url);
      ds_robj_free(&c);
    }
    free(err);
    free(child);
  }
  free(base);
}

static ds_vfs_list *r_list_open(const ds_vfs_dir *at, const char *path) {
  ds_robj o;
  if (obj_of(at, path, &o)) return NULL;
  if (o.scheme == DS_REMOTE_HTTP) {
    no_listing(o.path, "listing a folder");
    ds_robj_free(&o);
    return NULL;
  }
  size_t kl = strlen(o.key);
  char *prefix = kl == 0 || o.key[kl - 1] == '/' ? strdup(o.key) : ds_strf("%s/", o.key);
  ds_s3_listing l;
  r_list *x = calloc(1, sizeof *x);
  if (!prefix || !x || list_prefix(&o, prefix, "/", &l)) {
    if (!prefix || !x) fail(ENOMEM, NULL);
    free(prefix);
    free(x);
    ds_robj_free(&o);
    return NULL;
  }
  size_t pl = strlen(prefix);
  int bad = 0;
  for (size_t i = 0; i < l.n && !bad; i++)
    if (strlen(l.objects[i].key) > pl)
      bad = push(&x->names, &x->n, l.objects[i].key + pl, strlen(l.objects[i].key) - pl);
  size_t nobj = x->n;
  for (size_t i = 0; i < l.nprefixes && !bad; i++) {
    size_t n = strlen(l.prefixes[i]);
    if (n > pl + 1) bad = push(&x->names, &x->n, l.prefixes[i] + pl, n - pl - 1);
  }
  if (!bad) note_dirs(at, path, x->names, nobj, x->n);
  int empty = l.n + l.nprefixes == 0 && kl > 0;
  ds_s3_listing_free(&l);
  free(prefix);
  if (bad || empty) {
    char *why = empty ? ds_strf("%s: no keys under this prefix", o.shown) : NULL;
    ds_robj_free(&o);
    r_list_close(&x->base);
    fail(empty ? ENOENT : ENOMEM, why);
    return NULL;
  }
  ds_robj_free(&o);
  x->base.be = NULL; /* set below by the caller's table */
  return &x->base;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int r_glob(const char *pattern, int flags, ds_vfs_names *out) {
  ds_robj o;
  if (obj_of(NULL, pattern, &o)) return -1;
  if (o.scheme == DS_REMOTE_HTTP) {
    no_listing(pattern, "a pattern (@*, *, ?, [...])");
    ds_robj_free(&o);
    return -1;
  }
  size_t lit = strcspn(o.key, "*?[\\");
  char *prefix = ds_strf("%.*s", (int)lit, o.key);
  ds_s3_listing l;
  if (!prefix || list_prefix(&o, prefix, NULL, &l)) {
    if (!prefix) fail(ENOMEM, NULL);
    free(prefix);
    ds_robj_free(&o);
    return -1;
  }
  free(prefix);
  /* the scheme and bucket as given, then each matching key */
  size_t head = (size_t)(strstr(pattern, "://") + 3 - pattern) + strlen(o.bucket) + 1;
  int rc = 0;
  for (size_t i = 0; i < l.n && rc == 0; i++) {
    if (fnmatch(o.key, l.objects[i].key, FNM_PATHNAME) != 0) continue;
    char *p = ds_strf("%.*s%s", (int)head, pattern, l.objects[i].key);
    if (!p) {
      rc = -1;
      break;
    }
    char **g = realloc(out->v, (out->n + 1) * sizeof *g);
    if (!g) {
      free(p);
      rc = -1;
      break;
    }
    out->v = g;
    out->v[out->n++] = p;
  }
  ds_s3_listing_free(&l);
  ds_robj_free(&o);
  if (rc) {
    ds_vfs_names_free(out);
    return fail(ENOMEM, NULL);
  }
  if (out->n == 0) return DS_VFS_NOMATCH;
  if (!(flags & DS_VFS_GLOB_NOSORT)) qsort(out->v, out->n, sizeof *out->v, cmp_str);
  return 0;
}

#define REMOTE_BACKEND(name, sch)                                                  \
  static ds_vfs_list *name##_list_open(const ds_vfs_dir *at, const char *path) {  \
    ds_vfs_list *l = r_list_open(at, path);                                        \
    if (l) l->be = &ds_vfs_##name;                                                 \
    return l;                                                                      \
  }                                                                                \
  const ds_vfs_backend ds_vfs_##name = {                                           \
      .scheme = sch,           .open = r_open,       .pread = r_pread,             \
      .restat = r_restat,      .close = r_close,     .stat = r_stat,               \
      .exists = r_exists,      .dir_open = r_dir_open, .dir_close = r_dir_close,   \
      .dir_stat = r_dir_stat,  .list_open = name##_list_open,                      \
      .list_next = r_list_next, .list_close = r_list_close, .glob = r_glob,        \
      .hint = r_hint, .prefetch = r_prefetch, .stat_many = ds_probe_many, \
      .prefetch_many = r_prefetch_many,                                          \
      .load_many = ds_rahead_load, .read_ahead = r_read_ahead};

REMOTE_BACKEND(http, "http")
REMOTE_BACKEND(https, "https")
REMOTE_BACKEND(s3, "s3")
REMOTE_BACKEND(gs, "gs")
