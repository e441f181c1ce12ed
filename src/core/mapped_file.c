/* mapped_file.c - dataset files read with pread or loaded whole, never
 * mapped (the reads go through the file-system seam, core/vfs.h): a
 * mapping of a file that shrinks faults (SIGBUS) and would take
 * the host process down, while a short pread is just an error. Nothing
 * here trusts an offset: every access checks off + len against the file
 * size without overflowing. (The name is historical.) */
#include "mapped_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cancel.h"
#include "common.h"
#include "open_stable.h"
#include "vfs.h"

/* What kind of non-regular file st is, for errors. */
static const char *file_kind(const ds_vfs_info *st) {
  if (st->kind == DS_VFS_DIR) return "a directory";
  if (st->kind == DS_VFS_FIFO) return "a FIFO";
  if (st->kind == DS_VFS_CHAR) return "a character device";
  if (st->kind == DS_VFS_BLOCK) return "a block device";
  if (st->kind == DS_VFS_SOCKET) return "a socket";
  return "not a regular file";
}

/* A non-local backend's words on its last failure (the URL, the HTTP
 * status, the server's error code), or NULL: the local file system's
 * errors say enough with strerror. */
static const char *be_detail(const ds_vfs_dir *at, const char *path) {
  const ds_vfs_backend *be = at && at->be ? at->be : ds_vfs_backend_for(path);
  return be == &ds_vfs_local ? NULL : ds_vfs_detail();
}

/* The error of a failed read of f: a remote object replaced (ESTALE) is
 * the "changed while it was read" error; a remote failure names the URL,
 * status and error code. */
static int read_error(const ds_file *f, uint64_t off, uint64_t len, char **err) {
  int e = errno;
  if (f->vf.be != &ds_vfs_local) {
    if (e == ESTALE) return ds_err_changed(err, f->path);
    if (e == ECANCELED) return ds_err(err, "%s", DS_CANCEL_MSG);
    if (ds_vfs_detail())
      return ds_err(err, "%s: cannot read %llu bytes at offset %llu: %s", f->path,
                    (unsigned long long)len, (unsigned long long)off, ds_vfs_detail());
  }
  return ds_err(err, "%s: cannot read %llu bytes at offset %llu: %s", f->path,
                (unsigned long long)len, (unsigned long long)off, strerror(e));
}

/* "<path>: cannot open: <why>" with a hint where errno alone misleads. */
static int open_error(const char *path, int e, char **err) {
  if (e == EMFILE || e == ENFILE)
    return ds_err(err, "%s: cannot open: %s (the process has reached its limit "
                       "of open files; each open table keeps one per data file: "
                       "raise `ulimit -n` or open fewer shards at once)",
                  path, strerror(e));
  if (e == ENAMETOOLONG)
    return ds_err(err, "%s: cannot open: the path is too long (%zu bytes)", path,
                  strlen(path));
  if (e == ELOOP)
    return ds_err(err, "%s: cannot open: a loop of symbolic links", path);
  return ds_err(err, "%s: cannot open: %s", path, strerror(e));
}

int ds_file_open(ds_file *f, const char *path, char **err) {
  return ds_file_open_at(f, NULL, path, path, err);
}

int ds_file_open_at(ds_file *f, const ds_vfs_dir *at, const char *rel, const char *path,
                    char **err) {
  memset(f, 0, sizeof *f);
  f->vf.fd = -1;
  /* a FIFO opens without waiting for a writer; it is refused below as
   * not a regular file */
  if (ds_vfs_open(&f->vf, at, rel) != 0) {
    int e = errno;
    const char *why = be_detail(at, rel);
    if (why) return ds_err(err, "%s: cannot open: %s", path, why);
    return open_error(path, e, err);
  }
  if (f->vf.st.kind != DS_VFS_FILE) {
    const char *kind = file_kind(&f->vf.st);
    ds_vfs_close(&f->vf);
    return ds_err(err, "%s: cannot read: %s, not a regular file", path, kind);
  }
  f->path = strdup(path);
  if (!f->path) {
    ds_vfs_close(&f->vf);
    return ds_err(err, "%s: out of memory", path);
  }
  f->on_disk = 1;
  f->size = f->vf.st.size;
  f->dev = f->vf.st.dev;
  f->ino = f->vf.st.ino;
  f->mtime_ns = f->vf.st.mtime_ns;
  return 0;
}

int ds_file_load(ds_file *f, const char *path, char **err) {
  return ds_file_load_at(f, NULL, path, path, err);
}

/* ds_file_load_at, hinting the backend first when `index`. */
static int load_at(ds_file *f, const ds_vfs_dir *at, const char *rel, const char *path,
                   int index, char **err) {
  if (ds_file_open_at(f, at, rel, path, err)) return -1;
  if (index) ds_vfs_hint(&f->vf, DS_VFS_HINT_INDEX);
  if (f->size > 0) {
    uint8_t *p = f->size <= SIZE_MAX ? malloc((size_t)f->size) : NULL;
    if (!p) {
      ds_err(err, "%s: out of memory for its %llu bytes", path,
             (unsigned long long)f->size);
      ds_file_close(f);
      return -1;
    }
    if (ds_file_read(f, 0, f->size, p, err)) {
      free(p);
      ds_file_close(f);
      return -1;
    }
    f->data = p;
    f->owned = 1;
  }
  ds_vfs_close(&f->vf);
  return 0;
}

int ds_file_load_at(ds_file *f, const ds_vfs_dir *at, const char *rel, const char *path,
                    char **err) {
  return load_at(f, at, rel, path, 0, err);
}

int ds_file_load_index(ds_file *f, const char *path, char **err) {
  return load_at(f, NULL, path, path, 1, err);
}

int ds_file_load_index_at(ds_file *f, const ds_vfs_dir *at, const char *rel, const char *path,
                          char **err) {
  return load_at(f, at, rel, path, 1, err);
}

int ds_file_from_memory(ds_file *f, const char *name, const uint8_t *data,
                        uint64_t size, char **err) {
  memset(f, 0, sizeof *f);
  f->vf.fd = -1;
  f->path = strdup(name);
  if (!f->path) return ds_err(err, "%s: out of memory", name);
  f->data = size ? data : NULL;
  f->size = size;
  return 0;
}

void ds_file_close(ds_file *f) {
  if (f->path) ds_vfs_close(&f->vf);
  if (f->owned) free((void *)f->data);
  free(f->path);
  memset(f, 0, sizeof *f);
  f->vf.fd = -1;
}

void ds_file_hint_index(ds_file *f) {
  if (f->path && f->vf.be) ds_vfs_hint(&f->vf, DS_VFS_HINT_INDEX);
}

void ds_file_forget_data(ds_file *f) {
  if (f->owned) free((void *)f->data);
  f->data = NULL;
  f->owned = 0;
}

/* The bounds error of every access. */
static int past_end(const ds_file *f, uint64_t off, uint64_t len, char **err) {
  return ds_err(err,
                "%s: %llu bytes at offset %llu run past the end of the file "
                "(%llu bytes)",
                f->path, (unsigned long long)len, (unsigned long long)off,
                (unsigned long long)f->size);
}

int ds_file_slice(const ds_file *f, uint64_t off, uint64_t len,
                  const uint8_t **out, char **err) {
  if (off > f->size || len > f->size - off) return past_end(f, off, len, err);
  if (!f->data && f->size > 0)
    return ds_err(err, "%s: internal error: %llu bytes at offset %llu asked of a "
                       "streamed file without a view",
                  f->path, (unsigned long long)len, (unsigned long long)off);
  *out = f->data ? f->data + off : (const uint8_t *)"";
  return 0;
}

/* Read at least `least` and up to `most` bytes: stops at the end of the
 * file, or at a short read once `least` are in (a remote file hands back
 * just the prefetched bytes it holds, core/vfs.h ds_vfs_prefetch, rather
 * than fetch more for a window's read-ahead). The count, or -1 with errno. */
static int64_t pread_least(const ds_vfs_file *vf, uint8_t *dst, uint64_t least,
                           uint64_t most, uint64_t off) {
  uint64_t got = 0;
  while (got < most) {
    size_t want = most - got > ((size_t)1 << 30) ? (size_t)1 << 30 : (size_t)(most - got);
    ssize_t n = ds_vfs_pread(vf, dst + got, want, off + got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    got += (uint64_t)n;
    if ((size_t)n < want && got >= least) break;
  }
  return (int64_t)got;
}

/* Read until len bytes are in, or fewer when the file ends first (the
 * count read is returned; -1 with errno on an I/O error). */
static int64_t pread_full(const ds_vfs_file *vf, uint8_t *dst, uint64_t len, uint64_t off) {
  return pread_least(vf, dst, len, len, off);
}

/* The error for a read that came back short: the file shrank. */
static int short_read(const ds_file *f, uint64_t off, uint64_t len, char **err) {
  ds_vfs_info st;
  if (ds_vfs_restat(&f->vf, &st) == 0 && st.size < f->size)
    return ds_err(err, "%s: cannot read %llu bytes at offset %llu: the file was "
                       "truncated to %llu bytes while in use (it had %llu when "
                       "opened)",
                  f->path, (unsigned long long)len, (unsigned long long)off,
                  (unsigned long long)st.size, (unsigned long long)f->size);
  return ds_err(err, "%s: cannot read %llu bytes at offset %llu: the file ended "
                     "early (it had %llu bytes when opened)",
                f->path, (unsigned long long)len, (unsigned long long)off,
                (unsigned long long)f->size);
}

int ds_file_read(const ds_file *f, uint64_t off, uint64_t len, uint8_t *dst,
                 char **err) {
  if (off > f->size || len > f->size - off) return past_end(f, off, len, err);
  if (len == 0) return 0;
  if (f->data) {
    memcpy(dst, f->data + off, (size_t)len);
    return 0;
  }
  int64_t n = pread_full(&f->vf, dst, len, off);
  if (n < 0) return read_error(f, off, len, err);
  if ((uint64_t)n < len) return short_read(f, off, len, err);
  return 0;
}

uint8_t *ds_file_copy(const ds_file *f, uint64_t off, uint64_t len, char **err) {
  uint8_t *p = len <= SIZE_MAX ? malloc(len ? (size_t)len : 1) : NULL;
  if (!p) {
    ds_err(err, "%s: out of memory for %llu bytes", f->path, (unsigned long long)len);
    return NULL;
  }
  if (ds_file_read(f, off, len, p, err)) {
    free(p);
    return NULL;
  }
  return p;
}

int ds_file_prefetchable(const ds_file *f) {
  return !f->data && f->vf.be && f->vf.be->prefetch;
}

void ds_file_prefetch(const ds_file *f, const ds_vfs_range *r, size_t n) {
  if (ds_file_prefetchable(f)) ds_vfs_prefetch(&f->vf, r, n);
}

void ds_file_read_ahead(const ds_file *f, uint64_t off, uint64_t len) {
  if (ds_file_prefetchable(f)) ds_vfs_read_ahead(&f->vf, off, len);
}

int ds_file_prefetch_set(const ds_file *f, const ds_vfs_range *r, size_t n,
                         ds_vfs_prefetch_set *out) {
  if (!ds_file_prefetchable(f)) return 0;
  *out = (ds_vfs_prefetch_set){&f->vf, r, n};
  return 1;
}

int ds_file_u64le(const ds_file *f, uint64_t off, uint64_t *out, char **err) {
  uint8_t b[8];
  if (ds_file_read(f, off, 8, b, err)) return -1;
  *out = ds_le64(b);
  return 0;
}

int ds_view_read(ds_view *v, const ds_file *f, uint64_t off, uint64_t len,
                 const uint8_t **out, char **err) {
  if (off > f->size || len > f->size - off) return past_end(f, off, len, err);
  if (f->data || len == 0) {
    *out = f->data ? f->data + off : (const uint8_t *)"";
    return 0;
  }
  int same = v->file == f && v->ino == f->ino && v->dev == f->dev;
  if (same && off >= v->off && off - v->off <= v->buf.len &&
      len <= v->buf.len - (off - v->off)) {
    *out = v->buf.data + (off - v->off);
    return 0;
  }
  /* Reads that go forward from the window (a scan) read ahead, doubling up
   * to DS_VIEW_AHEAD; a jump reads just what it needs. */
  int sequential = same && off >= v->off && off - v->off <= v->buf.len + 4096;
  if (!sequential) v->jumps++;
  v->ahead = sequential ? (v->ahead ? v->ahead * 2 : 16384) : 0;
  uint64_t cap = v->max_ahead ? v->max_ahead : DS_VIEW_AHEAD;
  if (v->ahead > cap) v->ahead = cap;
  uint64_t want = len > v->ahead ? len : v->ahead;
  if (want > f->size - off) want = f->size - off;
  v->file = NULL;
  v->buf.len = 0;
  if (want > SIZE_MAX || ds_buf_reserve(&v->buf, (size_t)want))
    return ds_err(err, "%s: out of memory reading %llu bytes at offset %llu",
                  f->path, (unsigned long long)want, (unsigned long long)off);
  int64_t n = pread_least(&f->vf, v->buf.data, len, want, off);
  if (n < 0) return read_error(f, off, len, err);
  if ((uint64_t)n < len) return short_read(f, off, len, err);
  v->file = f;
  v->ino = f->ino; /* a file closed and another opened at the same address */
  v->dev = f->dev; /* must not hit this window */
  v->off = off;
  v->buf.len = (size_t)n;
  *out = v->buf.data;
  return 0;
}

void ds_view_reset(ds_view *v) {
  v->file = NULL;
  v->buf.len = 0;
  v->ahead = 0;
  if (v->buf.cap > ((size_t)4 << 20)) ds_buf_free(&v->buf);
}

void ds_view_free(ds_view *v) {
  ds_buf_free(&v->buf);
  memset(v, 0, sizeof *v);
}

int ds_file_stale(const ds_file *f) {
  if (!f->on_disk) return 0; /* in memory, or never opened */
  ds_vfs_info st;
  if (ds_vfs_stat(f->path, &st) != 0) return 1;
  return st.dev != f->dev || st.ino != f->ino || st.size != f->size ||
         st.mtime_ns != f->mtime_ns;
}

char *ds_path_join(const char *dir, const char *name) {
  return ds_strf("%s/%s", dir, name);
}

const char *ds_basename(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}
