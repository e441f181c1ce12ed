/* append_file.c - ds_afile: a buffered append-only file whose logical size
 * can be cut back (savepoints roll back by truncation). See stage.h.
 *
 * Faults. Every write goes to its logical offset (pwrite, copy_file_range
 * with an output offset), never to the descriptor's offset, and a write
 * that fails part way (a short write, then ENOSPC, EIO, EDQUOT) is undone
 * by cutting the file back to the bytes known good: the file then holds
 * exactly size - nbuf bytes, the buffer the rest, so the failed
 * statement's rollback (ds_afile_truncate) restores the state at its
 * start. When even that cut fails, `dirty` says the file may hold bytes
 * past the good ones: the next flush cuts them (and fails, failing the
 * commit, while it cannot). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "append_file.h"
#include "vfs.h"

#define AFILE_BUF ((size_t)1 << 20)

int ds_write_all(int fd, const void *buf, size_t n, const char *path, char **err) {
  const uint8_t *p = buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return ds_err(err, "%s: cannot write: %s", path, strerror(errno));
    }
    if (w == 0) return ds_err(err, "%s: cannot write: no progress", path);
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

int ds_pwrite_all(int fd, const void *buf, size_t n, uint64_t off,
                  const char *path, char **err) {
  const uint8_t *p = buf;
  uint64_t at = off;
  while (n > 0) {
    ssize_t w = pwrite(fd, p, n, (off_t)at);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int e = w < 0 ? errno : EIO;
      if (ftruncate(fd, (off_t)off) == 0)
        return ds_err(err, "%s: cannot write %zu bytes at byte %llu: %s", path,
                      n, (unsigned long long)at, strerror(e));
      return ds_err(err,
                    "%s: cannot write at byte %llu: %s; and cannot cut it back "
                    "to %llu bytes: %s", path, (unsigned long long)at,
                    strerror(e), (unsigned long long)off, strerror(errno));
    }
    p += w;
    at += (uint64_t)w;
    n -= (size_t)w;
  }
  return 0;
}

int ds_pread_all(int fd, void *buf, size_t n, uint64_t off, const char *path,
                 char **err) {
  uint8_t *p = buf;
  while (n > 0) {
    ssize_t r = ds_vfs_pread_fd(fd, p, n, off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      return ds_err(err, "%s: cannot read %zu bytes at byte %llu: %s", path, n,
                    (unsigned long long)off, r < 0 ? strerror(errno) : "short read");
    p += r;
    off += (uint64_t)r;
    n -= (size_t)r;
  }
  return 0;
}

/* After a failed write: cut the file back to its good bytes, or remember
 * that it may hold more (the error already says what failed). */
static void undo_write(ds_afile *f) {
  if (ftruncate(f->fd, (off_t)(f->size - f->nbuf)) != 0) f->dirty = 1;
}

/* Cut bytes a failed write may have left past the good ones. */
static int clean(ds_afile *f, char **err) {
  if (!f->dirty) return 0;
  if (ftruncate(f->fd, (off_t)(f->size - f->nbuf)) != 0)
    return ds_err(err, "%s: an earlier write failed and the file cannot be cut "
                  "back to %llu bytes: %s", f->path,
                  (unsigned long long)(f->size - f->nbuf), strerror(errno));
  f->dirty = 0;
  return 0;
}

/* Write n bytes at the end of the good bytes (buffer empty); on failure
 * the file is as it was. */
static int put_direct(ds_afile *f, const void *p, size_t n, char **err) {
  if (ds_pwrite_all(f->fd, p, n, f->size - f->nbuf, f->path, err)) {
    undo_write(f);
    return -1;
  }
  return 0;
}

/* Tell the follower how many bytes are on disk; for a writeback file,
 * start the disk write of the last DS_AFILE_WRITEBACK or more (without
 * waiting: the fsync at commit then finds them written rather than
 * writing all of them while nothing else runs). */
static void grown(ds_afile *f) {
  uint64_t on_disk = f->size - f->nbuf;
  if (f->writeback && on_disk >= f->handed + DS_AFILE_WRITEBACK) {
    (void)sync_file_range(f->fd, (off_t)f->handed, (off_t)(on_disk - f->handed),
                          SYNC_FILE_RANGE_WRITE);
    f->handed = on_disk;
  }
  if (f->on_grow) f->on_grow(f->hook_ctx, on_disk);
}

/* Flush the buffer to the file. On failure the bytes stay buffered. */
int ds_afile_flush(ds_afile *f, char **err) {
  if (clean(f, err)) return -1;
  if (f->nbuf == 0) return 0;
  if (put_direct(f, f->buf, f->nbuf, err)) return -1;
  f->nbuf = 0;
  grown(f);
  return 0;
}

/* Append n bytes: small writes gather in the buffer, big ones go direct.
 * On failure nothing of the n bytes is added. */
int ds_afile_write(ds_afile *f, const void *p, size_t n, char **err) {
  if (n == 0) return 0;
  if (!f->buf && !(f->buf = malloc(AFILE_BUF)))
    return ds_err(err, "%s: out of memory", f->path);
  if (f->nbuf + n > AFILE_BUF) {
    if (ds_afile_flush(f, err)) return -1;
    if (n >= AFILE_BUF) {
      if (put_direct(f, p, n, err)) return -1;
      f->size += n;
      grown(f);
      return 0;
    }
  }
  memcpy(f->buf + f->nbuf, p, n);
  f->nbuf += n;
  f->size += n;
  return 0;
}

/* Roll the file back to `size` bytes: drop buffered bytes past it, or cut
 * the file itself when `size` is below what was flushed. */
int ds_afile_truncate(ds_afile *f, uint64_t size, char **err) {
  if (size > f->size)
    return ds_err(err, "%s: cannot truncate to %llu bytes, it has %llu",
                  f->path, (unsigned long long)size,
                  (unsigned long long)f->size);
  uint64_t on_disk = f->size - f->nbuf;
  if (size >= on_disk) {
    f->nbuf = (size_t)(size - on_disk);
  } else {
    if (f->on_cut) f->on_cut(f->hook_ctx, size); /* before the bytes change */
    if (ftruncate(f->fd, (off_t)size) != 0)
      return ds_err(err, "%s: cannot truncate: %s", f->path, strerror(errno));
    f->nbuf = 0;
    f->dirty = 0;
    if (f->handed > size) f->handed = size;
  }
  f->size = size;
  return 0;
}

/* Fall back from copy_file_range to reads and writes? Only when the
 * kernel or filesystem cannot copy; a real error (ENOSPC, EIO) is one. */
static int copy_unsupported(int e) {
  return e == EXDEV || e == EINVAL || e == ENOSYS || e == EOPNOTSUPP ||
         e == EBADF || e == ETXTBSY || e == EPERM;
}

/* Append bytes [off, off+len) of another file: copy_file_range, falling
 * back to read/write when the kernel or filesystem cannot. On failure the
 * file is as it was. */
/* ds_afile_copy_from of a remote object (a writer to object storage
 * continuing what it published): read through the seam's remote backend. */
static int copy_remote(ds_afile *f, const char *src_path, uint64_t off, uint64_t len,
                       char **err) {
  ds_vfs_file in = {0};
  if (ds_vfs_open(&in, NULL, src_path) != 0) {
    const char *d = ds_vfs_detail();
    return ds_err(err, "%s: cannot open: %s", src_path, d ? d : strerror(errno));
  }
  uint8_t *tmp = malloc(1 << 20);
  int rc = tmp ? 0 : ds_err(err, "%s: out of memory", src_path);
  uint64_t at = off, end = off + len, size0 = f->size;
  while (rc == 0 && at < end) {
    size_t want = end - at < (1 << 20) ? (size_t)(end - at) : (1 << 20);
    ssize_t r = ds_vfs_pread(&in, tmp, want, at);
    if (r <= 0) {
      const char *d = ds_vfs_detail();
      rc = ds_err(err, "%s: cannot read at byte %llu: %s", src_path, (unsigned long long)at,
                  r < 0 ? (d ? d : strerror(errno)) : "short read");
    } else {
      rc = ds_afile_write(f, tmp, (size_t)r, err);
      at += (uint64_t)r;
    }
  }
  free(tmp);
  ds_vfs_close(&in);
  if (rc) ds_afile_truncate(f, size0, NULL); /* as it was */
  return rc;
}

int ds_afile_copy_from(ds_afile *f, const char *src_path, uint64_t off,
                       uint64_t len, char **err) {
  if (ds_vfs_backend_for(src_path) != &ds_vfs_local)
    return copy_remote(f, src_path, off, len, err);
  if (ds_afile_flush(f, err)) return -1;
  int in = ds_vfs_open_fd(src_path, O_RDONLY | O_CLOEXEC);
  if (in < 0)
    return ds_err(err, "%s: cannot open: %s", src_path, strerror(errno));
  loff_t ioff = (loff_t)off, ooff = (loff_t)f->size;
  uint64_t left = len;
  int rc = 0;
  while (left > 0) {
    ssize_t c = copy_file_range(in, &ioff, f->fd, &ooff, left, 0);
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
    if (!copy_unsupported(errno)) {
      rc = ds_err(err, "%s: cannot copy %llu bytes of %s at byte %llu: %s",
                  f->path, (unsigned long long)left, src_path,
                  (unsigned long long)ooff, strerror(errno));
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
      ssize_t r = ds_vfs_pread_fd(in, tmp, want, (uint64_t)ioff);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0)
        rc = ds_err(err, "%s: cannot read at byte %llu: %s", src_path,
                    (unsigned long long)ioff, r < 0 ? strerror(errno) : "short read");
      else if (ds_pwrite_all(f->fd, tmp, (size_t)r, (uint64_t)ooff, f->path, err) == 0) {
        ioff += r;
        ooff += r;
        left -= (uint64_t)r;
      } else
        rc = -1;
    }
    free(tmp);
    break;
  }
  close(in);
  if (rc == 0) f->size += len;
  else undo_write(f);
  if (rc == 0) grown(f);
  return rc;
}
