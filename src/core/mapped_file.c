/* mapped_file.c - read-only mmap of dataset files and bounds-checked slices.
 * Nothing here trusts an offset: every access checks off + len against the
 * file size without overflowing. */
#include "mapped_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

int ds_file_open(ds_file *f, const char *path, char **err) {
  memset(f, 0, sizeof *f);
  /* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused
   * below as not a regular file. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return ds_err(err, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return ds_err(err, "%s: cannot stat: %s", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return ds_err(err, "%s: not a regular file", path);
  }
  f->path = strdup(path);
  if (!f->path) {
    close(fd);
    return ds_err(err, "%s: out of memory", path);
  }
  f->size = (uint64_t)st.st_size;
  f->dev = (uint64_t)st.st_dev;
  f->ino = (uint64_t)st.st_ino;
  f->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
  if (f->size > 0) {
    void *p = mmap(NULL, (size_t)f->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      close(fd);
      free(f->path);
      f->path = NULL;
      return ds_err(err, "%s: cannot map: %s", path, strerror(e));
    }
    f->data = p;
    f->mapped = 1;
  }
  close(fd);
  return 0;
}

int ds_file_from_memory(ds_file *f, const char *name, const uint8_t *data,
                        uint64_t size, char **err) {
  memset(f, 0, sizeof *f);
  f->path = strdup(name);
  if (!f->path) return ds_err(err, "%s: out of memory", name);
  f->data = size ? data : NULL;
  f->size = size;
  return 0;
}

void ds_file_close(ds_file *f) {
  if (f->mapped && f->data) munmap((void *)f->data, (size_t)f->size);
  free(f->path);
  memset(f, 0, sizeof *f);
}

int ds_file_slice(const ds_file *f, uint64_t off, uint64_t len,
                  const uint8_t **out, char **err) {
  if (off > f->size || len > f->size - off)
    return ds_err(err,
                  "%s: %llu bytes at offset %llu run past the end of the file "
                  "(%llu bytes)",
                  f->path, (unsigned long long)len, (unsigned long long)off,
                  (unsigned long long)f->size);
  *out = f->data ? f->data + off : (const uint8_t *)"";
  return 0;
}

int ds_file_u64le(const ds_file *f, uint64_t off, uint64_t *out, char **err) {
  const uint8_t *p = NULL;
  if (ds_file_slice(f, off, 8, &p, err)) return -1;
  *out = ds_le64(p);
  return 0;
}

int ds_file_stale(const ds_file *f) {
  if (!f->mapped) return 0; /* in memory, or an empty file: nothing to fault */
  struct stat st;
  if (stat(f->path, &st) != 0) return 1;
  return (uint64_t)st.st_dev != f->dev || (uint64_t)st.st_ino != f->ino ||
         (uint64_t)st.st_size != f->size ||
         (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec != f->mtime_ns;
}

void ds_file_drop(const ds_file *f, uint64_t off, uint64_t len) {
  if (!f->mapped || !f->data || off >= f->size) return;
  if (len > f->size - off) len = f->size - off;
  uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
  uint64_t a = (off + page - 1) / page * page, b = (off + len) / page * page;
  int prefix = off == 0;
  if (prefix && b < f->dropped) ((ds_file *)f)->dropped = 0; /* a new pass */
  if (prefix && a < f->dropped) a = f->dropped; /* already given back */
  if (b > a) madvise((void *)(f->data + a), (size_t)(b - a), MADV_DONTNEED);
  if (prefix && b > f->dropped) ((ds_file *)f)->dropped = b;
}

char *ds_path_join(const char *dir, const char *name) {
  return ds_strf("%s/%s", dir, name);
}

int ds_path_exists(const char *path, int *is_dir) {
  struct stat st;
  if (stat(path, &st) != 0) return 0;
  if (is_dir) *is_dir = S_ISDIR(st.st_mode);
  return 1;
}

const char *ds_basename(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}
