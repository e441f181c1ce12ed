/* vfs.c - the seam's dispatcher: picks a backend from a path's scheme
 * (the one place that does), passes each call to it, and the steps built
 * from its calls (fsync by path, remove a tree). See vfs.h. */
#include "vfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common.h"

/* The backends a "scheme://" names; the local one serves everything
 * else. A new backend is one row here (see ARCHITECTURE.md). */
static const ds_vfs_backend *const schemed[] = {&ds_vfs_http, &ds_vfs_https, &ds_vfs_s3,
                                                &ds_vfs_gs, NULL};

/* The detail of this thread's last backend failure (vfs.h). */
static _Thread_local char *detail;

void ds_vfs_set_detail(char *msg) {
  free(detail);
  detail = msg;
}

const char *ds_vfs_detail(void) { return detail; }

/* The remote settings current on this thread (vfs.h). */
static _Thread_local const ds_vfs_remote_opts *remote_opts;

const ds_vfs_remote_opts *ds_vfs_remote_use(const ds_vfs_remote_opts *o) {
  const ds_vfs_remote_opts *was = remote_opts;
  remote_opts = o;
  return was;
}

const ds_vfs_remote_opts *ds_vfs_remote_current(void) { return remote_opts; }

const ds_vfs_backend *ds_vfs_backend_for(const char *path) {
  const char *colon = strstr(path, "://");
  if (!colon) return &ds_vfs_local;
  size_t n = (size_t)(colon - path);
  for (size_t i = 0; schemed[i]; i++)
    if (strlen(schemed[i]->scheme) == n && strncasecmp(schemed[i]->scheme, path, n) == 0)
      return schemed[i];
  return &ds_vfs_local;
}

int ds_vfs_split_prefix(const char *elem, const char **rest, size_t *scheme_len) {
  const char *colon = strchr(elem, ':');
  *rest = elem;
  *scheme_len = 0;
  if (!colon) return 0;
  const char *start = elem[0] == '/' ? elem + 1 : elem;
  if (start > colon) return 0;
  if (memchr(start, '/', (size_t)(colon - start))) return 0;
  size_t n = (size_t)(colon - start);
  if (n == 0 || (n == 5 && memcmp(start, "posix", 5) == 0)) {
    *rest = colon + 1;
    return 0;
  }
  *scheme_len = n;
  return 1;
}

size_t ds_vfs_posix_prefix(const char *path) {
  return strncmp(path, "posix:", 6) == 0 ? 6 : 0;
}

int ds_vfs_has_scheme(const char *e, size_t n) {
  size_t i = 0;
  while (i < n && ((e[i] >= 'a' && e[i] <= 'z') || (e[i] >= 'A' && e[i] <= 'Z'))) i++;
  return i >= 2 && i < n && e[i] == ':';
}

/* The backend of a path relative to `at` (at's own when given). */
static const ds_vfs_backend *be_at(const ds_vfs_dir *at, const char *path) {
  return at && at->be ? at->be : ds_vfs_backend_for(path);
}

/* errno = ENOTSUP, -1: a backend without this operation. */
static int unsupported(void) {
  errno = ENOTSUP;
  return -1;
}

int ds_vfs_open(ds_vfs_file *f, const ds_vfs_dir *at, const char *path) {
  memset(f, 0, sizeof *f);
  f->fd = -1;
  const ds_vfs_backend *be = be_at(at, path);
  if (be->open(at, path, f) != 0) {
    f->be = NULL;
    return -1;
  }
  f->be = be;
  return 0;
}

void ds_vfs_prefetch(const ds_vfs_file *f, const ds_vfs_range *r, size_t n) {
  if (f->be && f->be->prefetch && n > 0) f->be->prefetch(f, r, n);
}

void ds_vfs_read_ahead(const ds_vfs_file *f, uint64_t off, uint64_t len) {
  if (f->be && f->be->read_ahead && len > 0) f->be->read_ahead(f, off, len);
}

void ds_vfs_prefetch_many(const ds_vfs_prefetch_set *s, size_t n) {
  /* the sets of the first backend with prefetch_many go to it together
   * (the remote backends share one implementation); the others one by one */
  ds_vfs_prefetch_set *mine = n ? malloc(n * sizeof *mine) : NULL;
  size_t k = 0;
  const ds_vfs_backend *be = NULL;
  for (size_t i = 0; i < n; i++) {
    const ds_vfs_backend *b = s[i].f->be;
    if (!b || s[i].n == 0) continue;
    if (mine && b->prefetch_many && (!be || b->prefetch_many == be->prefetch_many)) {
      be = b;
      mine[k++] = s[i];
    } else {
      ds_vfs_prefetch(s[i].f, s[i].r, s[i].n);
    }
  }
  if (be && k) be->prefetch_many(mine, k);
  free(mine);
}

/* The paths of paths[0..n) whose backend has the hint op (the one at
 * byte `at` of the backend's table), handed to the first such backend's
 * op (the remote backends share one implementation). */
static void hand_many(const char *const *paths, size_t n, size_t at) {
  typedef void (*many_fn)(const char *const *, size_t);
  const char **mine = n > 1 ? malloc(n * sizeof *mine) : NULL;
  if (!mine) return;
  size_t k = 0;
  many_fn fn = NULL;
  for (size_t i = 0; i < n; i++) {
    const ds_vfs_backend *b = ds_vfs_backend_for(paths[i]);
    many_fn g;
    memcpy(&g, (const char *)b + at, sizeof g);
    if (!g || (fn && g != fn)) continue;
    fn = g;
    mine[k++] = paths[i];
  }
  if (fn && k > 1) fn(mine, k);
  free(mine);
}

void ds_vfs_stat_many(const char *const *paths, size_t n) {
  hand_many(paths, n, offsetof(ds_vfs_backend, stat_many));
}

void ds_vfs_load_many(const char *const *paths, size_t n) {
  hand_many(paths, n, offsetof(ds_vfs_backend, load_many));
}

int ds_vfs_restat(const ds_vfs_file *f, ds_vfs_info *st) { return f->be->restat(f, st); }

void ds_vfs_hint(ds_vfs_file *f, unsigned hints) {
  if (f->be && f->be->hint) f->be->hint(f, hints);
}

void ds_vfs_close(ds_vfs_file *f) {
  if (f->be) f->be->close(f);
  f->be = NULL;
  f->fd = -1;
  f->impl = NULL;
}

int ds_vfs_stat(const char *path, ds_vfs_info *st) {
  return ds_vfs_backend_for(path)->stat(NULL, path, 1, st);
}

int ds_vfs_lstat(const char *path, ds_vfs_info *st) {
  return ds_vfs_backend_for(path)->stat(NULL, path, 0, st);
}

int ds_vfs_stat_at(const ds_vfs_dir *at, const char *rel, ds_vfs_info *st) {
  return be_at(at, rel)->stat(at, rel, 1, st);
}

int ds_vfs_exists(const char *path) { return ds_vfs_backend_for(path)->exists(path); }

int ds_path_exists(const char *path, int *is_dir) {
  ds_vfs_info st;
  if (ds_vfs_stat(path, &st) != 0) return 0;
  if (is_dir) *is_dir = st.kind == DS_VFS_DIR;
  return 1;
}

uint64_t ds_vfs_file_size(const char *path) {
  ds_vfs_info st;
  return ds_vfs_stat(path, &st) == 0 && st.kind == DS_VFS_FILE ? st.size : 0;
}

int ds_vfs_dir_open(ds_vfs_dir *d, const char *path) {
  memset(d, 0, sizeof *d);
  d->fd = -1;
  const ds_vfs_backend *be = ds_vfs_backend_for(path);
  if (be->dir_open(path, d) != 0) {
    d->be = NULL;
    return -1;
  }
  d->be = be;
  return 0;
}

void ds_vfs_dir_close(ds_vfs_dir *d) {
  if (d->be) d->be->dir_close(d);
  d->be = NULL;
  d->fd = -1;
  d->impl = NULL;
}

int ds_vfs_dir_stat(const ds_vfs_dir *d, ds_vfs_info *st) { return d->be->dir_stat(d, st); }

ds_vfs_list *ds_vfs_list_open(const ds_vfs_dir *at, const char *path) {
  return be_at(at, path)->list_open(at, path);
}

const char *ds_vfs_list_next(ds_vfs_list *l) { return l->be->list_next(l); }

void ds_vfs_list_close(ds_vfs_list *l) {
  if (l) l->be->list_close(l);
}

int ds_vfs_glob(const char *pattern, int flags, ds_vfs_names *out) {
  memset(out, 0, sizeof *out);
  return ds_vfs_backend_for(pattern)->glob(pattern, flags, out);
}

void ds_vfs_names_free(ds_vfs_names *n) {
  for (size_t i = 0; i < n->n; i++) free(n->v[i]);
  free(n->v);
  memset(n, 0, sizeof *n);
}

int ds_vfs_rename(const char *from, const char *to, ds_vfs_rename_how how) {
  const ds_vfs_backend *be = ds_vfs_backend_for(from);
  if (be != ds_vfs_backend_for(to)) {
    errno = EXDEV;
    return -1;
  }
  return be->rename ? be->rename(from, to, how) : unsupported();
}

int ds_vfs_remove(const char *path) {
  const ds_vfs_backend *be = ds_vfs_backend_for(path);
  return be->remove ? be->remove(path) : unsupported();
}

int ds_vfs_rmdir(const char *path) {
  const ds_vfs_backend *be = ds_vfs_backend_for(path);
  return be->rmdir ? be->rmdir(path) : unsupported();
}

int ds_vfs_mkdir(const char *path) {
  const ds_vfs_backend *be = ds_vfs_backend_for(path);
  return be->mkdir ? be->mkdir(path) : unsupported();
}

int ds_vfs_truncate(const char *path, uint64_t size) {
  const ds_vfs_backend *be = ds_vfs_backend_for(path);
  return be->truncate ? be->truncate(path, size) : unsupported();
}

int ds_fsync_path(const char *path, char **err) {
  int fd = ds_vfs_open_fd(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ds_err(err, "%s: cannot open: %s", path, strerror(errno));
  int rc = ds_vfs_fsync_fd(fd) == 0
               ? 0
               : ds_err(err, "%s: fsync failed: %s", path, strerror(errno));
  ds_vfs_close_fd(fd);
  return rc;
}

int ds_remove_tree(const char *path, char **err) {
  ds_vfs_info st;
  if (ds_vfs_lstat(path, &st) != 0) return 0;
  if (st.kind == DS_VFS_DIR) {
    ds_vfs_list *d = ds_vfs_list_open(NULL, path);
    if (!d) return ds_err(err, "%s: cannot list: %s", path, strerror(errno));
    const char *name;
    int rc = 0;
    while (rc == 0 && (name = ds_vfs_list_next(d)) != NULL) {
      char *p = ds_strf("%s/%s", path, name);
      rc = p ? ds_remove_tree(p, err) : ds_err(err, "out of memory");
      free(p);
    }
    ds_vfs_list_close(d);
    if (rc) return rc;
    if (ds_vfs_rmdir(path) != 0 && errno != ENOENT)
      return ds_err(err, "%s: cannot remove: %s", path, strerror(errno));
    return 0;
  }
  if (ds_vfs_remove(path) != 0 && errno != ENOENT)
    return ds_err(err, "%s: cannot remove: %s", path, strerror(errno));
  return 0;
}
