/* format_files.c - file tests and sizes shared by the formats'
 * descriptors (see format_files.h). */
#include "format_files.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/common.h"
#include "core/mapped_file.h"

#define MAX_DEPTH 64 /* directory nesting followed by ds_fmt_dir_bytes */

int ds_fmt_is_dir(const char *path) {
  int d = 0;
  return ds_path_exists(path, &d) && d;
}

int ds_fmt_is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int ds_fmt_exists_join(const char *a, const char *sep, const char *b) {
  char *p = ds_strf("%s%s%s", a, sep, b);
  struct stat st;
  int ok = p && stat(p, &st) == 0;
  free(p);
  return ok;
}

int ds_fmt_ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

uint64_t ds_fmt_file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
}

/* Sum of the regular files under dir, depth levels down. */
static int dir_bytes(const char *dir, int depth, uint64_t *total, char **err) {
  if (depth > MAX_DEPTH) return ds_err(err, "%s: directories nested too deep", dir);
  DIR *d = opendir(dir);
  if (!d) return ds_err(err, "%s: cannot list: %s", dir, strerror(errno));
  int rc = 0;
  struct dirent *e;
  while (rc == 0 && (e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char *p = ds_strf("%s/%s", dir, e->d_name);
    struct stat st;
    if (!p) rc = ds_err(err, "out of memory");
    else if (lstat(p, &st) != 0) rc = 0; /* vanished meanwhile */
    else if (S_ISDIR(st.st_mode)) rc = dir_bytes(p, depth + 1, total, err);
    else if (S_ISREG(st.st_mode)) *total += (uint64_t)st.st_size;
    free(p);
  }
  closedir(d);
  return rc;
}

int ds_fmt_dir_bytes(const char *dir, uint64_t *total, char **err) {
  return dir_bytes(dir, 0, total, err);
}

int ds_fmt_path_problem(const char *path, char **err) {
  struct stat st;
  if (stat(path, &st) == 0) {
    const char *kind = S_ISFIFO(st.st_mode)  ? "a FIFO"
                       : S_ISCHR(st.st_mode) ? "a character device"
                       : S_ISBLK(st.st_mode) ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
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
