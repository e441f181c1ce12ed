/* detect.c - format detection of a dataset path and the bytes its files
 * take on disk (see detect.h for the rules). */
#include "detect.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/mapped_file.h"
#include "core/shard_spec.h"
#include "core/vfs.h"
#include "formats/datadings/datadings.h"
#include "formats/file_kind.h"

#define MAX_DEPTH 64 /* directory nesting followed by ds_detect_bytes */

/* The sibling files of a datadings data file X (X<suffix>). */
static const char *const dd_suffixes[] = {".offsets", ".keys", ".key_hashes",
                                          ".filter", ".md5", ".index", NULL};

static int is_dir(const char *path) {
  int d = 0;
  return ds_path_exists(path, &d) && d;
}

static int is_file(const char *path) {
  ds_vfs_info st;
  return ds_vfs_stat(path, &st) == 0 && st.kind == DS_VFS_FILE;
}

/* 1 when dir/name (or path + suffix) exists. */
static int exists_join(const char *a, const char *sep, const char *b) {
  char *p = ds_strf("%s%s%s", a, sep, b);
  int ok = p && ds_vfs_exists(p);
  free(p);
  return ok;
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

/* A datadings data file: X.offsets or X.index beside it. */
static int dd_file(const char *path) {
  return is_file(path) && (exists_join(path, "", ".offsets") ||
                           exists_join(path, "", ".index"));
}

/* "dir/x.bagz" -> "dir/limits.x.bagz" (malloc'd). */
static char *bagz_limits_path(const char *path) {
  const char *base = ds_basename(path);
  return ds_strf("%.*slimits.%s", (int)(base - path), path, base);
}

/* The limits in [from, to) of f are non-decreasing from *prev and none
 * passes `end`; *prev becomes the last one. 1 when they are. */
static int limits_consistent(const ds_vfs_file *f, uint64_t from, uint64_t to, uint64_t end,
                             uint64_t *prev) {
  uint8_t buf[8192];
  while (from < to) {
    size_t want = to - from < sizeof buf ? (size_t)(to - from) : sizeof buf;
    if (ds_vfs_pread(f, buf, want, from) != (ssize_t)want) return 0;
    for (size_t i = 0; i < want; i += 8) {
      uint64_t v = ds_le64(buf + i);
      if (v < *prev || v > end) return 0;
      *prev = v;
    }
    from += want;
  }
  return 1;
}

/* The file ends with a consistent tail-limits section: the u64 in its last
 * 8 bytes is the records/limits boundary B, B <= size - 8, (size - B) % 8
 * == 0, and every limit from byte B on is non-decreasing and at most B (the
 * last is B itself: the records end where the limits begin). A file whose
 * records take no bytes at all (a run of zero bytes, a .tar's zero blocks)
 * is not taken for a bag of empty records. */
static int bagz_tail_ok(const char *path) {
  ds_vfs_file f;
  if (ds_vfs_open(&f, NULL, path) != 0) return 0;
  uint8_t b[8];
  int ok = f.st.size >= 8 && ds_vfs_pread(&f, b, 8, f.st.size - 8) == 8;
  uint64_t size = ok ? f.st.size : 0, end = ok ? ds_le64(b) : 0;
  uint64_t prev = 0;
  ok = ok && end > 0 && end <= size - 8 && (size - end) % 8 == 0 &&
       limits_consistent(&f, end, size, end, &prev);
  ds_vfs_close(&f);
  return ok;
}

/* One bagz file: 1 and *separate when it looks like one, else 0. */
static int bagz_file(const char *path, int *separate) {
  *separate = 0;
  if (!is_file(path)) return 0;
  char *lp = bagz_limits_path(path);
  *separate = lp && is_file(lp);
  free(lp);
  return *separate || ends_with(path, ".bagz") || ends_with(path, ".bag") ||
         bagz_tail_ok(path);
}

/* A glob pattern for datadings (a bagz @* spec is not one). */
static int dd_glob_pattern(const char *path) {
  return strpbrk(path, "*?[") != NULL && strstr(path, "@*") == NULL;
}

static int found(ds_detected *out, ds_format f, const char *module) {
  out->format = f;
  out->module = module;
  return 0;
}

static int detect_dir(const char *path, ds_detected *out, char **err) {
  if (exists_join(path, "/", "__rootdirs__")) {
    out->bcolz_ctable = 1;
    return found(out, DS_FORMAT_BCOLZ, "bcolz");
  }
  if (exists_join(path, "/", "meta/storage")) return found(out, DS_FORMAT_BCOLZ, "bcolz");
  if (exists_join(path, "/", "index.npy")) {
    out->atlas_shard = 1;
    return found(out, DS_FORMAT_ATLAS, "atlas");
  }
  if (exists_join(path, "/", "meta.json")) return found(out, DS_FORMAT_ATLAS, "atlas");
  return ds_err(err, "%s: not a dataset: looked for __rootdirs__ or meta/storage "
                     "(a bcolz ctable or carray) and index.npy or meta.json (an "
                     "atlas shard or dataset) in this directory",
                path);
}

/* Why `path`, neither a regular file nor a directory, cannot be read:
 * missing, a loop of links, a name too long, a device, a FIFO, ... */
static int path_problem(const char *path, char **err) {
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

/* The files of a shard spec must all be bagz files. */
static int detect_bagz_spec(const char *path, ds_detected *out, char **err) {
  ds_shard_list l;
  if (ds_shard_spec_expand(path, &l, err)) return -1;
  int all_separate = 1, rc = 0;
  for (size_t i = 0; i < l.n && rc == 0; i++) {
    int sep;
    if (!bagz_file(l.paths[i], &sep)) {
      if (!is_file(l.paths[i]))
        rc = path_problem(l.paths[i], err), ds_err_prefix(err, path);
      else
        rc = ds_err(err, "%s: not a dataset: %s is not a bagz file (looked for a "
                         ".bag or .bagz name, limits.%s beside it, or a valid "
                         "limits tail)",
                    path, l.paths[i], ds_basename(l.paths[i]));
    }
    all_separate &= sep;
  }
  ds_shard_list_free(&l);
  if (rc) return -1;
  out->bagz_separate = all_separate;
  return found(out, DS_FORMAT_BAGZ, "bagz");
}

int ds_detect(const char *path, ds_detected *out, char **err) {
  memset(out, 0, sizeof *out);
  if (!path || !*path) return ds_err(err, "no path given");
  if (is_dir(path)) return detect_dir(path, out, err);
  if (is_file(path)) {
    if (dd_file(path)) return found(out, DS_FORMAT_DATADINGS, "datadings");
    int sep;
    if (bagz_file(path, &sep)) {
      out->bagz_separate = sep;
      return found(out, DS_FORMAT_BAGZ, "bagz");
    }
    const char *kind = ds_file_kind_of(path);
    return ds_err(err, "%s: not a dataset%s%s: looked for %s.offsets or %s.index "
                       "beside it (datadings) and a .bag or .bagz name, "
                       "limits.%s beside it, or a valid limits tail (bagz)",
                  path, kind ? ", it looks like " : "", kind ? kind : "",
                  ds_basename(path), ds_basename(path), ds_basename(path));
  }
  if (dd_glob_pattern(path)) {
    ds_shard_list l;
    if (datadings_expand_paths(path, &l, err)) return -1;
    int ok = dd_file(l.paths[0]);
    if (!ok)
      ds_err(err, "%s: not a dataset: the first match %s has neither %s.offsets "
                  "nor %s.index beside it (a glob names datadings files)",
             path, l.paths[0], ds_basename(l.paths[0]), ds_basename(l.paths[0]));
    ds_shard_list_free(&l);
    return ok ? found(out, DS_FORMAT_DATADINGS, "datadings") : -1;
  }
  if (strchr(path, '@') || strchr(path, ',') || strchr(path, ':'))
    return detect_bagz_spec(path, out, err);
  return path_problem(path, err);
}

/* ------------------------------------------------------------ sizes */

static uint64_t file_size(const char *path) { return ds_vfs_file_size(path); }

/* Sum of the regular files under dir (lstat: links are not followed). */
static int dir_bytes(const char *dir, int depth, uint64_t *total, char **err) {
  if (depth > MAX_DEPTH) return ds_err(err, "%s: directories nested too deep", dir);
  ds_vfs_list *d = ds_vfs_list_open(NULL, dir);
  if (!d) return ds_err(err, "%s: cannot list: %s", dir, strerror(errno));
  int rc = 0;
  const char *name;
  while (rc == 0 && (name = ds_vfs_list_next(d)) != NULL) {
    char *p = ds_strf("%s/%s", dir, name);
    ds_vfs_info st;
    if (!p) rc = ds_err(err, "out of memory");
    else if (ds_vfs_lstat(p, &st) != 0) rc = 0; /* vanished meanwhile */
    else if (st.kind == DS_VFS_DIR) rc = dir_bytes(p, depth + 1, total, err);
    else if (st.kind == DS_VFS_FILE) *total += st.size;
    free(p);
  }
  ds_vfs_list_close(d);
  return rc;
}

/* Bytes of datadings data file `file` and its index files. */
static uint64_t dd_file_bytes(const char *file) {
  uint64_t total = file_size(file);
  for (size_t k = 0; dd_suffixes[k]; k++) {
    char *p = ds_strf("%s%s", file, dd_suffixes[k]);
    if (p) total += file_size(p);
    free(p);
  }
  return total;
}

/* Bytes of bagz file `file` and, when separate, its limits file. */
static uint64_t bagz_file_bytes(const char *file, int separate) {
  uint64_t total = file_size(file);
  char *lp = separate ? bagz_limits_path(file) : NULL;
  if (lp) total += file_size(lp);
  free(lp);
  return total;
}

int ds_detect_shard_bytes(const char *shard, const ds_detected *d,
                          uint64_t *bytes, char **err) {
  *bytes = 0;
  switch (d->format) {
  case DS_FORMAT_ATLAS:
  case DS_FORMAT_BCOLZ: return dir_bytes(shard, 0, bytes, err);
  case DS_FORMAT_BAGZ: *bytes = bagz_file_bytes(shard, d->bagz_separate); return 0;
  case DS_FORMAT_DATADINGS: *bytes = dd_file_bytes(shard); return 0;
  }
  return ds_err(err, "%s: unknown format", shard);
}

int ds_detect_bytes(const char *path, const ds_detected *d, uint64_t *bytes,
                    char **err) {
  *bytes = 0;
  ds_shard_list l;
  switch (d->format) {
  case DS_FORMAT_ATLAS:
  case DS_FORMAT_BCOLZ:
    return dir_bytes(path, 0, bytes, err);
  case DS_FORMAT_BAGZ:
    if (ds_shard_spec_expand(path, &l, err)) return -1;
    for (size_t i = 0; i < l.n; i++) *bytes += bagz_file_bytes(l.paths[i], d->bagz_separate);
    break;
  case DS_FORMAT_DATADINGS:
    if (datadings_expand_paths(path, &l, err)) return -1;
    for (size_t i = 0; i < l.n; i++) *bytes += dd_file_bytes(l.paths[i]);
    break;
  default:
    return ds_err(err, "%s: unknown format", path);
  }
  ds_shard_list_free(&l);
  return 0;
}
