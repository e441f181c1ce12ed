/* remote_file.h - an open remote object (the impl of a ds_vfs_file of the
 * remote backends): its tail from the open's one request, and a few
 * blocks read since, so that a format's footer reads cost nothing and a
 * sequential scan costs one request per growing block (read-ahead up to
 * DS_RFILE_AHEAD_MAX), not one per record. Every range GET carries
 * If-Match with the ETag of the open: a replaced object fails with
 * ESTALE (the "changed while in use" error), never mixed bytes. Reads
 * from several threads are safe (the blocks are under a lock; requests run
 * outside it). Room for part 2: parallel read-ahead fills the same
 * blocks; a disk cache answers before the GET. */
#ifndef DS_REMOTE_FILE_H
#define DS_REMOTE_FILE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "remote/remote_probe.h"

#define DS_RFILE_BLOCKS 4
#define DS_RFILE_MIN ((uint64_t)64 << 10)        /* least bytes a GET asks */
#define DS_RFILE_AHEAD_MAX ((uint64_t)8 << 20)   /* read-ahead cap */

typedef struct ds_rblock {
  uint64_t off;
  size_t len;
  uint8_t *data;
  uint64_t used; /* last use (LRU) */
} ds_rblock;

typedef struct ds_rfile {
  ds_robj obj;
  ds_probe at_open; /* size, ETag, version, tail */
  pthread_mutex_t mu;
  ds_rblock blk[DS_RFILE_BLOCKS];
  uint64_t tick;
  uint64_t next_seq; /* where the last read ended */
  uint64_t ahead;    /* read-ahead now */
} ds_rfile;

/* Take obj and probe (both owned by the file after). */
ds_rfile *ds_rfile_new(ds_robj *obj, ds_probe *p);
void ds_rfile_free(ds_rfile *f);
/* Read up to n bytes at off (fewer at the end): the count, or -1 with
 * errno (and the detail set through ds_vfs_set_detail). */
ssize_t ds_rfile_pread(ds_rfile *f, void *buf, size_t n, uint64_t off);

#endif
