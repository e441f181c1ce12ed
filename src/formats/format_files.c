/* format_files.c - file tests and sizes shared by the formats'
 * descriptors (see format_files.h). */
#include "format_files.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/mapped_file.h"
#include "core/vfs.h"
#include "core/vfs_each.h"
#include "formats/format.h"

#define MAX_DEPTH 64 /* directory nesting followed by ds_fmt_dir_bytes */

int ds_fmt_listed_bytes(const char *path, unsigned detail,
                        int (*expand)(const char *, ds_shard_list *, char **),
                        uint64_t (*file_bytes)(const char *, unsigned), uint64_t *total,
                        char **err) {
  ds_shard_list l;
  *total = 0;
  if (expand(path, &l, err)) return -1;
  for (size_t i = 0; i < l.n; i++) *total += file_bytes(l.paths[i], detail);
  ds_shard_list_free(&l);
  return 0;
}

uint64_t ds_fmt_file_bytes(const char *file, unsigned detail) {
  (void)detail;
  return ds_fmt_file_size(file);
}

int ds_fmt_is_dir(const char *path) {
  int d = 0;
  return ds_path_exists(path, &d) && d;
}

int ds_fmt_is_file(const char *path) {
  ds_vfs_info st;
  return ds_vfs_stat(path, &st) == 0 && st.kind == DS_VFS_FILE;
}

int ds_fmt_exists_join(const char *a, const char *sep, const char *b) {
  char *p = ds_strf("%s%s%s", a, sep, b);
  int ok = p && ds_vfs_exists(p);
  free(p);
  return ok;
}

int ds_fmt_detect_dir_by(const char *dir, const char *first, unsigned first_detail,
                         const char *second, unsigned *detail) {
  if (ds_fmt_exists_join(dir, "/", first)) {
    *detail = first_detail;
    return 1;
  }
  *detail = 0;
  return ds_fmt_exists_join(dir, "/", second);
}

int ds_fmt_ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

uint64_t ds_fmt_file_size(const char *path) {
  return ds_vfs_file_size(path);
}

/* Where dir_bytes is: the nesting and the sum so far. */
typedef struct dir_walk {
  int depth;
  uint64_t *total;
} dir_walk;

static int dir_bytes(const char *dir, int depth, uint64_t *total, char **err);

/* ds_vfs_entry_fn of dir_bytes: a file's size, a folder's files. */
static int add_entry(void *ctx, const char *p, const char *name, const ds_vfs_info *st,
                     char **err) {
  dir_walk *w = ctx;
  (void)name;
  if (!st) return 0; /* vanished meanwhile */
  if (st->kind == DS_VFS_DIR) return dir_bytes(p, w->depth + 1, w->total, err);
  if (st->kind == DS_VFS_FILE) *w->total += st->size;
  return 0;
}

/* Sum of the regular files under dir, depth levels down. */
static int dir_bytes(const char *dir, int depth, uint64_t *total, char **err) {
  if (depth > MAX_DEPTH) return ds_err(err, "%s: directories nested too deep", dir);
  dir_walk w = {depth, total};
  return ds_vfs_each(dir, add_entry, &w, err);
}

int ds_fmt_dir_bytes(const char *dir, uint64_t *total, char **err) {
  return dir_bytes(dir, 0, total, err);
}

int ds_fmt_folder_bytes(const char *path, unsigned detail, uint64_t *total, char **err) {
  (void)detail;
  *total = 0;
  ds_vfs_list *d = ds_vfs_list_open(NULL, path);
  if (!d && errno == ENOTSUP) { /* http(s): no listing, so no sum */
    *total = DS_BYTES_UNKNOWN;
    return 0;
  }
  if (!d) return ds_err(err, "%s: cannot list: %s", path, strerror(errno));
  dir_walk w = {0, total};
  return ds_vfs_each_listed(d, path, add_entry, &w, err);
}

int ds_fmt_replace_dir(const char *path, const char *what, char **err) {
  ds_vfs_info st;
  if (ds_vfs_lstat(path, &st) != 0) return 0;
  if (st.kind == DS_VFS_DIR) return 1;
  return ds_err(err, "%s: not a directory, so not %s (mode=replace replaces only one; move "
                     "it away first)",
                path, what);
}

int ds_fmt_path_problem(const char *path, char **err) {
  ds_vfs_info st;
  if (ds_vfs_stat(path, &st) == 0) {
    const char *kind = st.kind == DS_VFS_FIFO    ? "a FIFO"
                       : st.kind == DS_VFS_CHAR  ? "a character device"
                       : st.kind == DS_VFS_BLOCK ? "a block device"
                       : st.kind == DS_VFS_SOCKET ? "a socket"
                                                  : "not a regular file";
    return ds_err(err, "%s: %s, not a dataset file or directory", path, kind);
  }
  int e = errno;
  if (e == ENOENT || e == ENOTDIR) return ds_err(err, "%s: no such file or directory", path);
  if (e == ELOOP) return ds_err(err, "%s: a loop of symbolic links", path);
  if (e == ENAMETOOLONG)
    return ds_err(err, "%.200s...: the path is too long (%zu bytes)", path, strlen(path));
  return ds_err(err, "%s: %s", path, strerror(e));
}
