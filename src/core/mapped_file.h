/* mapped_file.h - read-only files mapped into memory, and bounds-checked
 * access to their bytes. Every error names the file and the byte offset. */
#ifndef DS_MAPPED_FILE_H
#define DS_MAPPED_FILE_H

#include <stddef.h>
#include <stdint.h>

typedef struct ds_file {
  char *path;          /* as given; owned */
  const uint8_t *data; /* NULL when size == 0 */
  uint64_t size;
  int mapped;          /* 1 when data is an mmap to unmap on close */
  uint64_t dev, ino;   /* identity and last change when mapped, */
  int64_t mtime_ns;    /* to notice a file replaced or rewritten */
  uint64_t dropped;    /* [0, dropped) already given back by ds_file_drop */
} ds_file;

/* Map `path` read-only. On failure *err says "<path>: cannot open: <why>". */
int ds_file_open(ds_file *f, const char *path, char **err);
/* Wrap bytes already in memory (fuzzers, tests). The bytes are borrowed:
 * they must outlive the ds_file. */
int ds_file_from_memory(ds_file *f, const char *name, const uint8_t *data,
                        uint64_t size, char **err);
void ds_file_close(ds_file *f);

/* *out = pointer to bytes [off, off + len) of the file, or an error
 * "<path>: <len> bytes at offset <off> run past the end of the file
 * (<size> bytes)". */
int ds_file_slice(const ds_file *f, uint64_t off, uint64_t len,
                  const uint8_t **out, char **err);
/* Read a little-endian u64 at `off`, bounds-checked like ds_file_slice. */
int ds_file_u64le(const ds_file *f, uint64_t off, uint64_t *out, char **err);

/* Tell the kernel this process no longer needs the mapped pages wholly
 * inside [off, off + len): they leave the resident set and come back from
 * the page cache if touched again. Contents never change, so this is
 * always safe; scans use it to stream in constant memory. A scan drops
 * growing prefixes [0, n): the file remembers how far it has dropped, so
 * each call only walks the new pages (that mark is the one field a const
 * ds_file lets change; only the scanning thread calls this). */
void ds_file_drop(const ds_file *f, uint64_t off, uint64_t len);

/* 1 when the file on disk is no longer the one mapped (replaced,
 * truncated, rewritten: its identity, size or change time differ, or it is
 * gone). Reading a mapping whose file shrank would fault, so readers check
 * this before reusing a dataset opened earlier. */
int ds_file_stale(const ds_file *f);

/* The last path component (points into path). */
const char *ds_basename(const char *path);
/* "dir/name" (malloc'd), or NULL when out of memory. */
char *ds_path_join(const char *dir, const char *name);
/* 1 when `path` exists (following links); *is_dir (when not NULL) tells a
 * directory. */
int ds_path_exists(const char *path, int *is_dir);

#endif
