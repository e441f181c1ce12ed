/* append_file.h - ds_afile, a buffered append-only file whose logical size
 * is exact after any failed write (append_file.c), and the write-all /
 * read-all helpers the writers' other files use. Plain C: knows files. */
#ifndef DS_APPEND_FILE_H
#define DS_APPEND_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

/* An append-only file written through a buffer. `size` is the logical
 * size (written + buffered); ds_afile_truncate rolls it back. */
typedef struct ds_afile {
  int fd;
  char *path;     /* the temporary path */
  uint64_t size;  /* logical size */
  uint8_t *buf;   /* pending bytes, flushed at 1 MiB */
  size_t nbuf;
  int dirty;      /* a failed write may have left bytes past size - nbuf
                   * that could not be cut yet (append_file.c) */
  /* Set by the owner for a file fsynced at commit: every DS_AFILE_WRITEBACK
   * bytes on disk, their disk write is started (sync_file_range, no wait),
   * so that fsync finds them written. handed: the bytes started so far. */
  int writeback;
  uint64_t handed;
  /* Optional followers of the bytes on disk (a remote stage uploading
   * parts as they fill, core/stage_early.h): on_grow after bytes were
   * written (with the size on disk: those bytes stay unless cut), on_cut
   * before the file is cut below what was written. */
  void (*on_grow)(void *ctx, uint64_t on_disk);
  void (*on_cut)(void *ctx, uint64_t size);
  void *hook_ctx;
} ds_afile;

/* The bytes a writeback file gathers on disk before their write starts. */
#define DS_AFILE_WRITEBACK ((uint64_t)8 << 20)

int ds_afile_write(ds_afile *f, const void *p, size_t n, char **err);
/* write(2) all of p to fd, retrying short writes and EINTR; errors name
 * `path`. */
int ds_write_all(int fd, const void *p, size_t n, const char *path, char **err);
/* pwrite(2) all of p at byte `off`; on failure the file is cut back to
 * `off` bytes (its good part: the caller's logical size) and the error
 * names `path` (and says so when even the cut failed). */
int ds_pwrite_all(int fd, const void *p, size_t n, uint64_t off,
                  const char *path, char **err);
/* pread(2) exactly n bytes at `off`; a file that ends first is "short
 * read" (never errno 0's "Success"). */
int ds_pread_all(int fd, void *p, size_t n, uint64_t off, const char *path,
                 char **err);
/* Write everything buffered to the file. */
int ds_afile_flush(ds_afile *f, char **err);
/* Cut the file back to `size` bytes (<= f->size). */
int ds_afile_truncate(ds_afile *f, uint64_t size, char **err);
/* Append `len` bytes of the file at `src_path` from offset `off` (in-kernel
 * copy where possible). */
int ds_afile_copy_from(ds_afile *f, const char *src_path, uint64_t off,
                       uint64_t len, char **err);

#endif
