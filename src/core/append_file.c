/* append_file.c - ds_afile: a buffered append-only file whose logical size
 * can be cut back (savepoints roll back by truncation). See stage.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stage.h"

#define AFILE_BUF ((size_t)1 << 20)

int ds_write_all(int fd, const void *buf, size_t n, const char *path, char **err) {
  const uint8_t *p = buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return ds_err(err, "%s: cannot write: %s", path, strerror(errno));
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Flush the buffer to the file. */
int ds_afile_flush(ds_afile *f, char **err) {
  if (f->nbuf == 0) return 0;
  if (ds_write_all(f->fd, f->buf, f->nbuf, f->path, err)) return -1;
  f->nbuf = 0;
  return 0;
}

/* Append n bytes: small writes gather in the buffer, big ones go direct. */
int ds_afile_write(ds_afile *f, const void *p, size_t n, char **err) {
  if (n == 0) return 0;
  if (!f->buf && !(f->buf = malloc(AFILE_BUF)))
    return ds_err(err, "%s: out of memory", f->path);
  if (f->nbuf + n > AFILE_BUF) {
    if (ds_afile_flush(f, err)) return -1;
    if (n >= AFILE_BUF) {
      if (ds_write_all(f->fd, p, n, f->path, err)) return -1;
      f->size += n;
      return 0;
    }
  }
  memcpy(f->buf + f->nbuf, p, n);
  f->nbuf += n;
  f->size += n;
  return 0;
}

/* Roll the file back to `size` bytes: drop buffered bytes past it, then cut
 * the file itself. */
int ds_afile_truncate(ds_afile *f, uint64_t size, char **err) {
  if (size > f->size)
    return ds_err(err, "%s: cannot truncate to %llu bytes, it has %llu",
                  f->path, (unsigned long long)size,
                  (unsigned long long)f->size);
  uint64_t on_disk = f->size - f->nbuf;
  if (size >= on_disk) {
    f->nbuf = (size_t)(size - on_disk);
  } else {
    f->nbuf = 0;
    if (ftruncate(f->fd, (off_t)size) != 0)
      return ds_err(err, "%s: cannot truncate: %s", f->path, strerror(errno));
    if (lseek(f->fd, (off_t)size, SEEK_SET) < 0)
      return ds_err(err, "%s: cannot seek: %s", f->path, strerror(errno));
  }
  f->size = size;
  return 0;
}

/* Append bytes [off, off+len) of another file: copy_file_range, falling
 * back to read/write when the kernel or filesystem cannot. */
int ds_afile_copy_from(ds_afile *f, const char *src_path, uint64_t off,
                       uint64_t len, char **err) {
  if (ds_afile_flush(f, err)) return -1;
  int in = open(src_path, O_RDONLY | O_CLOEXEC);
  if (in < 0)
    return ds_err(err, "%s: cannot open: %s", src_path, strerror(errno));
  loff_t ioff = (loff_t)off;
  uint64_t left = len;
  int rc = 0;
  while (left > 0) {
    ssize_t c = copy_file_range(in, &ioff, f->fd, NULL, left, 0);
    if (c > 0) {
      left -= (uint64_t)c;
      continue;
    }
    if (c < 0 && errno == EINTR) continue;
    if (c == 0) {
      rc = ds_err(err, "%s: ended before byte %llu", src_path,
                  (unsigned long long)(off + len));
      break;
    }
    /* fallback: plain reads */
    uint8_t *tmp = malloc(1 << 16);
    if (!tmp) {
      rc = ds_err(err, "%s: out of memory", src_path);
      break;
    }
    while (left > 0 && rc == 0) {
      size_t want = left < (1 << 16) ? (size_t)left : (1 << 16);
      ssize_t r = pread(in, tmp, want, ioff);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0)
        rc = ds_err(err, "%s: cannot read at byte %llu", src_path,
                    (unsigned long long)ioff);
      else if (ds_write_all(f->fd, tmp, (size_t)r, f->path, err) == 0) {
        ioff += r;
        left -= (uint64_t)r;
      } else
        rc = -1;
    }
    free(tmp);
    break;
  }
  close(in);
  if (rc == 0) f->size += len;
  return rc;
}
