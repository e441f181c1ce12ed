/* vfs.h - the one file-system seam: every touch of a file system by the
 * readers and writers (open, pread, size, identity, list a folder, expand
 * a pattern, exists/kind; for writers create, rename, remove, fsync,
 * mkdir) goes through these functions, and only a backend file
 * (vfs_local.c today) calls the operating system
 * (tools/check_layers.sh checks it).
 *
 * A backend is a table of operations (ds_vfs_backend), picked from the
 * path's scheme in one place, ds_vfs_backend_for (vfs.c), like htslib's
 * hFILE_backend: "scheme://..." names a registered backend; anything else
 * (no scheme, an unknown one, `posix:` specs) is the local file system.
 * Errors follow POSIX: -1 (or NULL) with errno set, so callers' messages
 * stay "<path>: <what>: <strerror>"; a backend maps its failures to errno
 * values (ENOENT, EACCES, EIO, ENOTSUP, ...).
 *
 * Identity (ds_vfs_info.dev, .ino, .size, .mtime_ns) is what change
 * detection compares: the local backend gives device, inode, size and
 * change time; a remote backend gives its own id in dev, a hash of the
 * object's ETag (and version id) in ino, the size, and 0. Writers' file
 * descriptors (ds_vfs_*_fd) are the local backend's: a writer to s3:// or
 * gs:// stages local files and publishes them through core/vfs_publish.h.
 * Plain C: no SQLite. */
#ifndef DS_VFS_H
#define DS_VFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common.h"

/* What is at a path (ds_vfs_info.kind). */
typedef enum ds_vfs_kind {
  DS_VFS_MISSING = 0,
  DS_VFS_FILE,
  DS_VFS_DIR,
  DS_VFS_LINK, /* only from ds_vfs_lstat */
  DS_VFS_FIFO,
  DS_VFS_CHAR,
  DS_VFS_BLOCK,
  DS_VFS_SOCKET,
  DS_VFS_OTHER
} ds_vfs_kind;

/* What a path or an open file is: its kind, size and identity. */
typedef struct ds_vfs_info {
  ds_vfs_kind kind;
  uint64_t size;
  uint64_t dev, ino; /* identity (see the top of this file) */
  int64_t mtime_ns;  /* last change, nanoseconds */
} ds_vfs_info;

typedef struct ds_vfs_backend ds_vfs_backend;

/* An open folder: reads relative to it see that folder even after
 * another program replaced it (bcolz holds its table folder so). */
typedef struct ds_vfs_dir {
  const ds_vfs_backend *be; /* NULL: not open */
  int fd;                   /* local: the O_DIRECTORY descriptor */
  void *impl;               /* other backends' state */
} ds_vfs_dir;

/* A file open for reading; st is what it was at open. */
typedef struct ds_vfs_file {
  const ds_vfs_backend *be; /* NULL: not open */
  int fd;                   /* local: the descriptor; else -1 */
  void *impl;               /* other backends' state */
  ds_vfs_info st;
} ds_vfs_file;

/* A folder's listing being read (backend-owned; starts with its backend). */
typedef struct ds_vfs_list {
  const ds_vfs_backend *be;
} ds_vfs_list;

/* The paths a pattern matched (malloc'd strings). */
typedef struct ds_vfs_names {
  char **v;
  size_t n;
} ds_vfs_names;

/* How ds_vfs_rename treats an existing target. */
typedef enum ds_vfs_rename_how {
  DS_VFS_REPLACE = 0,   /* rename(2): replace it */
  DS_VFS_NOREPLACE = 1, /* fail with EEXIST (emulated where the file
                         * system lacks RENAME_NOREPLACE) */
  DS_VFS_EXCHANGE = 2   /* swap the two (both must exist) */
} ds_vfs_rename_how;

/* A byte range of a file (ds_vfs_prefetch). */
typedef struct ds_vfs_range {
  uint64_t off, len;
} ds_vfs_range;

/* One file's ranges in a ds_vfs_prefetch_many. */
typedef struct ds_vfs_prefetch_set {
  const ds_vfs_file *f;
  const ds_vfs_range *r;
  size_t n;
} ds_vfs_prefetch_set;

/* ds_vfs_glob flags and results. */
#define DS_VFS_GLOB_NOSORT 1 /* any order (else sorted as glob(3) sorts) */
#define DS_VFS_NOMATCH 1     /* ds_vfs_glob: nothing matched */

/* A backend: its scheme and operations. `at` (may be NULL) is a folder
 * the path is relative to. Writer operations may be NULL (a read-only
 * backend): the call then fails with ENOTSUP. */
struct ds_vfs_backend {
  const char *scheme; /* "" for the local file system */
  int (*open)(const ds_vfs_dir *at, const char *path, ds_vfs_file *f);
  ssize_t (*pread)(const ds_vfs_file *f, void *buf, size_t n, uint64_t off);
  int (*restat)(const ds_vfs_file *f, ds_vfs_info *st); /* what it is now */
  void (*close)(ds_vfs_file *f);
  int (*stat)(const ds_vfs_dir *at, const char *path, int follow, ds_vfs_info *st);
  int (*exists)(const char *path);
  int (*dir_open)(const char *path, ds_vfs_dir *d);
  void (*dir_close)(ds_vfs_dir *d);
  int (*dir_stat)(const ds_vfs_dir *d, ds_vfs_info *st);
  ds_vfs_list *(*list_open)(const ds_vfs_dir *at, const char *path);
  const char *(*list_next)(ds_vfs_list *l);
  void (*list_close)(ds_vfs_list *l);
  int (*glob)(const char *pattern, int flags, ds_vfs_names *out);
  /* writers */
  int (*rename)(const char *from, const char *to, ds_vfs_rename_how how);
  int (*remove)(const char *path);
  int (*rmdir)(const char *path);
  int (*mkdir)(const char *path);
  int (*truncate)(const char *path, uint64_t size);
  /* optional: what the reader will do with an open file (DS_VFS_HINT_*) */
  void (*hint)(ds_vfs_file *f, unsigned hints);
  /* hints (may be NULL: no-ops). prefetch: the byte ranges of f the
   * caller will read soon; stat_many: paths about to be looked at. */
  void (*prefetch)(const ds_vfs_file *f, const ds_vfs_range *r, size_t n);
  void (*stat_many)(const char *const *paths, size_t n);
  /* prefetch_many: prefetch of several files of this backend at once */
  void (*prefetch_many)(const ds_vfs_prefetch_set *s, size_t n);
  /* load_many: whole files about to be read (may be NULL) */
  void (*load_many)(const char *const *paths, size_t n);
  /* read_ahead: f is about to be read in order from off (may be NULL) */
  void (*read_ahead)(const ds_vfs_file *f, uint64_t off, uint64_t len);
};

/* The local file system's backend (vfs_local.c). */
extern const ds_vfs_backend ds_vfs_local;
/* The remote backends (remote/vfs_remote.c): http://, https://, s3://,
 * gs:// (read-only; see ARCHITECTURE.md "The file-system seam"). */
extern const ds_vfs_backend ds_vfs_http, ds_vfs_https, ds_vfs_s3, ds_vfs_gs;

/* A backend's words on its last failure on this thread (a remote one:
 * "GET <url>: HTTP 404 NoSuchKey"), beyond errno; NULL when it left none.
 * Backends set it (a malloc'd string, taken) before failing. */
void ds_vfs_set_detail(char *msg);
const char *ds_vfs_detail(void);

/* The non-secret settings of remote paths a table's options give
 * (endpoint=, region=, url_style=, anonymous=, retries=, timeout_ms=,
 * remote_cache=;
 * their specs are in core/option_spec.c). The SQLite layer makes them
 * current on its thread around a dataset's open (ds_vfs_remote_use); the
 * remote backends read them at open and keep them for the file's reads.
 * NULL/-1: not given (the environment's or the default). */
typedef struct ds_vfs_remote_opts {
  const char *endpoint;
  const char *region;
  int64_t url_style; /* 0 auto, 1 path, 2 virtual */
  int64_t anonymous; /* position in its names: odd = yes */
  int64_t retries;   /* -1: not given */
  int64_t timeout_ms;
  int64_t remote_cache; /* the persistent cache: -1 not given, 0 on, 1 off */
} ds_vfs_remote_opts;
/* Make o current on this thread (NULL: none); returns the one before. */
const ds_vfs_remote_opts *ds_vfs_remote_use(const ds_vfs_remote_opts *o);
/* The current settings (NULL when none). */
const ds_vfs_remote_opts *ds_vfs_remote_current(void);

/* The backend for `path`: the one place a scheme picks a backend. */
const ds_vfs_backend *ds_vfs_backend_for(const char *path);

/* A path spec's file-system prefix, for the spec parsers (shard specs,
 * absolute paths, writers): "posix:", "/posix:" and ":" name the local
 * file system and are dropped (*rest after them; `prefix` is their length
 * in elem); *scheme_len = 0. Any other "name:" before the first '/' is a
 * file system we do not have: returns 1 with the name's length in
 * *scheme_len (the caller refuses it by name). No prefix: 0, *rest = elem. */
int ds_vfs_split_prefix(const char *elem, const char **rest, size_t *scheme_len);
/* The length of a leading "posix:" (the local file system written out),
 * else 0: what the writers and absolute paths drop or keep. */
size_t ds_vfs_posix_prefix(const char *path);
/* 1 when e[0..n) starts with "name:" (two or more letters): a scheme the
 * caller leaves for the reader to accept or refuse. */
int ds_vfs_has_scheme(const char *e, size_t n);

/* -- reading -- */

/* Open path (relative to `at` when not NULL) for reading, without
 * blocking on a FIFO; f->st is what it is. Any kind of file opens: the
 * caller checks f->st.kind. */
int ds_vfs_open(ds_vfs_file *f, const ds_vfs_dir *at, const char *path);
/* Read up to n bytes at off (fewer at the end; -1 with errno; a remote
 * file also returns fewer when the read starts in a range a
 * ds_vfs_prefetch fetched and runs past it: callers that need n loop, as
 * core/mapped_file.c does). One call through the backend's table: the
 * per-record path's only cost. */
static inline ssize_t ds_vfs_pread(const ds_vfs_file *f, void *buf, size_t n,
                                   uint64_t off) {
  return f->be->pread(f, buf, n, off);
}
/* Hints of ds_vfs_hint. DS_VFS_HINT_INDEX: an index or metadata file,
 * read all over its life (datadings .offsets/.keys/..., separate bagz
 * limits, meta files and index.npy loaded whole): a remote backend may
 * fetch a small one whole at once and keep it in its disk cache
 * (remote/remote_cache.h). */
#define DS_VFS_HINT_INDEX 1u
/* Tell the backend of an open file what the reader will do; a hint only:
 * backends without a use for it ignore it, and nothing fails. */
void ds_vfs_hint(ds_vfs_file *f, unsigned hints);
/* A hint: the ranges r[0..n) of f will be read soon (a `rowid IN (...)`
 * list's records). A remote backend fetches them now, many requests in
 * flight, and later preads of them cost no request; the local backend
 * does nothing. Never fails (a range not fetched is read when asked). */
void ds_vfs_prefetch(const ds_vfs_file *f, const ds_vfs_range *r, size_t n);
/* ds_vfs_prefetch of several files at once (the shards of a set): a
 * remote backend fetches all their ranges in one batch of requests in
 * flight, one round for the whole list rather than one per file. Sets of
 * files without the hint are skipped. Never fails. */
void ds_vfs_prefetch_many(const ds_vfs_prefetch_set *s, size_t n);
/* A hint: paths[0..n) will be stat'ed or opened soon (the shards of a
 * set). A remote backend probes them in parallel into its short-lived
 * probe cache, so that the opens that follow make no request in a row;
 * the local backend does nothing. Never fails. */
void ds_vfs_stat_many(const char *const *paths, size_t n);
/* A hint: the whole files paths[0..n) will be opened and read soon (the
 * next chunk files of a bcolz scan). A remote backend fetches the small
 * ones whole on a helper thread, many requests in flight, into a
 * short-lived store, and returns at once, so that each open and read that
 * follows makes no request (an open of a file still in flight waits for
 * it) (remote/remote_ahead.h); the local backend does nothing. Never
 * fails. */
void ds_vfs_load_many(const char *const *paths, size_t n);
/* A hint: f will be read in order from off soon (the next shard of a
 * scan, while the last part of the one before is read). A remote backend
 * starts fetching its first len bytes ahead now, without waiting, so that
 * the scan finds them there; the local backend does nothing. Never fails. */
void ds_vfs_read_ahead(const ds_vfs_file *f, uint64_t off, uint64_t len);
/* What the open file is now (size after a truncate, ...). */
int ds_vfs_restat(const ds_vfs_file *f, ds_vfs_info *st);
/* Close (a file never opened or already closed is fine). */
void ds_vfs_close(ds_vfs_file *f);

/* What is at path following symbolic links (0; -1 with errno: a missing
 * path gives ENOENT), or not following them (DS_VFS_LINK). */
int ds_vfs_stat(const char *path, ds_vfs_info *st);
int ds_vfs_lstat(const char *path, ds_vfs_info *st);
/* ds_vfs_stat of rel under an open folder. */
int ds_vfs_stat_at(const ds_vfs_dir *at, const char *rel, ds_vfs_info *st);
/* 1 when something is at path (following links), else 0 with errno. */
int ds_vfs_exists(const char *path);
/* 1 when `path` exists (following links); *is_dir (when not NULL) tells a
 * directory. */
int ds_path_exists(const char *path, int *is_dir);
/* The size of the regular file at path, 0 when it is none. */
uint64_t ds_vfs_file_size(const char *path);

/* Open a folder (d->be NULL when it fails, -1 with errno: ENOTDIR for a
 * file). */
int ds_vfs_dir_open(ds_vfs_dir *d, const char *path);
void ds_vfs_dir_close(ds_vfs_dir *d);
/* What the open folder is (its identity). */
int ds_vfs_dir_stat(const ds_vfs_dir *d, ds_vfs_info *st);

/* List a folder (`path`, relative to `at` when not NULL): NULL with errno
 * when it cannot; then each ds_vfs_list_next gives one entry's name
 * ("." and ".." skipped; in the file system's order), NULL at the end. */
ds_vfs_list *ds_vfs_list_open(const ds_vfs_dir *at, const char *path);
const char *ds_vfs_list_next(ds_vfs_list *l);
void ds_vfs_list_close(ds_vfs_list *l);

/* Expand a glob(3) pattern: 0 with out->n > 0 paths, DS_VFS_NOMATCH, or
 * -1 (errno ENOMEM: out of memory for the list; else the pattern could
 * not be expanded). */
int ds_vfs_glob(const char *pattern, int flags, ds_vfs_names *out);
void ds_vfs_names_free(ds_vfs_names *n);

/* -- writing (local files) -- */

/* open(2) for a writer: flags are open(2)'s, mode 0644; the descriptor
 * or -1 with errno. */
int ds_vfs_open_fd(const char *path, int oflags);
/* close(2) of such a descriptor. */
void ds_vfs_close_fd(int fd);
/* What the descriptor is. */
int ds_vfs_stat_fd(int fd, ds_vfs_info *st);
/* fsync(2), and pread(2) of a writer's own files. */
int ds_vfs_fsync_fd(int fd);
ssize_t ds_vfs_pread_fd(int fd, void *buf, size_t n, uint64_t off);
/* futimens(2) to now: a file's mtime marks its last use (the remote
 * cache's least-recently-used order, remote/remote_cache.c). */
int ds_vfs_touch_fd(int fd);
/* rename(2), renameat2 with RENAME_NOREPLACE or RENAME_EXCHANGE. */
int ds_vfs_rename(const char *from, const char *to, ds_vfs_rename_how how);
/* unlink(2), rmdir(2), mkdir(2) (mode 0755), truncate(2). */
int ds_vfs_remove(const char *path);
int ds_vfs_rmdir(const char *path);
int ds_vfs_mkdir(const char *path);
int ds_vfs_truncate(const char *path, uint64_t size);

/* fsync one file or directory by path (a directory: its entries are
 * durable); errors name the path. */
int ds_fsync_path(const char *path, char **err);
/* Remove a file or a whole directory tree (no error when absent). */
int ds_remove_tree(const char *path, char **err);

#endif
