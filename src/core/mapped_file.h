/* mapped_file.h - dataset files, read without mmap so that a file that
 * shrinks while we use it gives an error, never SIGBUS (see README
 * "Files that change under a query").
 *
 * A ds_file is either *loaded* (the whole file in owned memory: indexes,
 * meta, dictionaries, chunk files) or *streamed* (an open descriptor; its
 * bytes are read with ds_vfs_pread (core/vfs.h) into a caller's ds_view, a buffer that belongs
 * to one cursor or thread). Every access is bounds-checked against the size
 * seen at open, and every error names the file and the byte offset. */
#ifndef DS_MAPPED_FILE_H
#define DS_MAPPED_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "vfs.h"

typedef struct ds_file {
  char *path;          /* as given; owned */
  const uint8_t *data; /* loaded or borrowed bytes; NULL when streamed or empty */
  uint64_t size;       /* at open */
  ds_vfs_file vf;      /* streamed: the open file (core/vfs.h); else vf.be NULL */
  int owned;           /* 1 when data is malloc'd by ds_file_load */
  int on_disk;         /* 1 when opened from a path (not from memory) */
  uint64_t dev, ino;   /* identity and last change at open, */
  int64_t mtime_ns;    /* to notice a file replaced or rewritten */
} ds_file;

/* Open `path` for streamed reads (reads nothing yet). On failure *err says
 * "<path>: <what is wrong>" (missing, a directory, a FIFO or device, a
 * loop of symbolic links, a name too long, too many open files, ...). */
int ds_file_open(ds_file *f, const char *path, char **err);
/* Read the whole of `path` into owned memory (for small files). */
int ds_file_load(ds_file *f, const char *path, char **err);
/* ds_file_open and ds_file_load of `rel` under the open folder `at`
 * (a reader that holds a dataset's folder reads that folder's
 * files even after another program replaced it); `path` names the file in
 * errors and is the path ds_file_stale looks at. */
int ds_file_open_at(ds_file *f, const ds_vfs_dir *at, const char *rel, const char *path, char **err);
int ds_file_load_at(ds_file *f, const ds_vfs_dir *at, const char *rel, const char *path, char **err);
/* ds_file_load(_at) of an index or metadata file (meta.json, index.npy, a
 * dictionary, bcolz meta, a tfrecord index): the backend is told so
 * (DS_VFS_HINT_INDEX) before the read; a remote one keeps it in its disk
 * cache. Data files (bcolz chunks) use ds_file_load. */
int ds_file_load_index(ds_file *f, const char *path, char **err);
int ds_file_load_index_at(ds_file *f, const ds_vfs_dir *at, const char *rel, const char *path,
                          char **err);
/* Wrap bytes already in memory (fuzzers, tests). The bytes are borrowed:
 * they must outlive the ds_file. */
int ds_file_from_memory(ds_file *f, const char *name, const uint8_t *data,
                        uint64_t size, char **err);
void ds_file_close(ds_file *f);
/* Tell a streamed file's backend that it is an index or metadata file
 * (ds_vfs_hint, DS_VFS_HINT_INDEX): remote ones keep it in their cache. */
void ds_file_hint_index(ds_file *f);
/* Free a loaded file's bytes but keep its path and identity, so that
 * ds_file_stale still tells whether it changed on disk. */
void ds_file_forget_data(ds_file *f);

/* *out = pointer to bytes [off, off + len) of a loaded or in-memory file,
 * or an error "<path>: <len> bytes at offset <off> run past the end of the
 * file (<size> bytes)". A streamed file is an error here: use a ds_view. */
int ds_file_slice(const ds_file *f, uint64_t off, uint64_t len,
                  const uint8_t **out, char **err);
/* 1 when f is streamed from a backend that takes ds_vfs_prefetch hints
 * (a remote file): worth working out the ranges a lookup list needs. */
int ds_file_prefetchable(const ds_file *f);
/* ds_vfs_prefetch of a streamed file (a no-op for loaded ones). */
void ds_file_prefetch(const ds_file *f, const ds_vfs_range *r, size_t n);
/* ds_vfs_read_ahead of a streamed file (a no-op for loaded ones): it
 * will be read in order from off soon. */
void ds_file_read_ahead(const ds_file *f, uint64_t off, uint64_t len);
/* The seam's prefetch set of ranges r[0..n) of f into *out (for
 * ds_vfs_prefetch_many: many files' ranges in one round): 1, or 0 when f
 * takes no hint (loaded, or local). */
int ds_file_prefetch_set(const ds_file *f, const ds_vfs_range *r, size_t n,
                         ds_vfs_prefetch_set *out);
/* Read a little-endian u64 at `off` (any kind of file). */
int ds_file_u64le(const ds_file *f, uint64_t off, uint64_t *out, char **err);
/* Copy bytes [off, off + len) of any kind of file into dst: bounds-checked
 * against the size at open; a file that is now shorter is an error naming
 * the file, the offset and both sizes. */
int ds_file_read(const ds_file *f, uint64_t off, uint64_t len, uint8_t *dst,
                 char **err);

/* A reader's window on streamed files: it holds the bytes of the last read
 * (and, for reads that follow each other, up to DS_VIEW_AHEAD bytes after
 * them, so a scan makes one system call per window, not per row). One per
 * cursor or thread; zero-initialise, free with ds_view_free. */
typedef struct ds_view {
  ds_buf buf;            /* file bytes [off, off + buf.len) */
  const ds_file *file;   /* whose bytes buf holds, or NULL */
  uint64_t dev, ino;     /* that file's identity */
  uint64_t off;
  uint64_t ahead;        /* read-ahead now (grows while reads are sequential) */
  uint64_t jumps;        /* reads that missed the window and were not sequential */
  uint64_t max_ahead;    /* cap on ahead; 0: DS_VIEW_AHEAD; DS_VIEW_EXACT:
                            read only what is asked */
} ds_view;

#define DS_VIEW_AHEAD ((uint64_t)1 << 20)
#define DS_VIEW_EXACT ((uint64_t)1)

/* *out = bytes [off, off + len) of f, valid until the next read through
 * v (or for as long as f, when f is loaded or in memory). */
int ds_view_read(ds_view *v, const ds_file *f, uint64_t off, uint64_t len,
                 const uint8_t **out, char **err);
/* The bytes [off, off + len) of f when v's window already holds them (no
 * system call, no check left to make: the window was read from f), else
 * NULL: then ds_view_read. Inline, for the per-record path of scans. */
static inline const uint8_t *ds_view_held(const ds_view *v, const ds_file *f,
                                          uint64_t off, uint64_t len) {
  if (v->file != f || v->ino != f->ino || v->dev != f->dev || off < v->off ||
      off - v->off > v->buf.len || len > v->buf.len - (off - v->off))
    return NULL;
  return v->buf.data + (off - v->off);
}
/* Readers load a table they would otherwise read entry by entry (bagz
 * limits, datadings offsets) into memory once a view has jumped this often:
 * scans stay flat in memory, lookups then cost one read, not two. */
#define DS_VIEW_JUMPS_TO_LOAD 64
/* The part [off, off + len) of any file as owned memory (malloc'd; NULL
 * with *err when it cannot be read). */
uint8_t *ds_file_copy(const ds_file *f, uint64_t off, uint64_t len, char **err);

/* Forget what v holds (keeps the buffer unless it grew past 4 MiB). */
void ds_view_reset(ds_view *v);
void ds_view_free(ds_view *v);

/* 1 when the file on disk is no longer the one opened (replaced,
 * truncated, rewritten: its identity, size or change time differ, or it is
 * gone). Readers check this before reusing a dataset opened earlier. */
int ds_file_stale(const ds_file *f);

/* The last path component (points into path). */
const char *ds_basename(const char *path);
/* "dir/name" (malloc'd), or NULL when out of memory. (ds_path_exists is
 * in vfs.h.) */
char *ds_path_join(const char *dir, const char *name);

#endif
