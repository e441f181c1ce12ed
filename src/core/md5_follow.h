/* md5_follow.h - the MD5 of an append-only file computed on a second
 * thread while the file is still being written: the writer says how many
 * bytes are on disk so far (ds_md5_follow_feed), the thread reads them back
 * (pread, from the page cache) and hashes them, and ds_md5_follow_finish
 * waits for the rest. Hashed bytes are also handed to the disk at once
 * (sync_file_range, not waited for): the file is fsynced at commit, and
 * that fsync then finds little left to write. A datadings writer's data file is hundreds of MB and
 * MD5 was a fifth of its copy time on the writing thread.
 *
 * Savepoints: ds_md5_follow_cut must be called before the file is cut
 * back; the thread pauses, and restarts from byte 0 when it had hashed
 * past the cut. Without a thread (pthread_create failed) finish hashes
 * everything on the caller's thread. Knows no SQLite. */
#ifndef DS_MD5_FOLLOW_H
#define DS_MD5_FOLLOW_H

#include <md5.h>
#include <stdint.h>

typedef struct ds_md5_follow ds_md5_follow;

/* Follow file descriptor fd (not owned; it must stay open until stop),
 * whose first `done` bytes are already in ctx. NULL when out of memory. */
ds_md5_follow *ds_md5_follow_start(int fd, const MD5_CTX *ctx, uint64_t done);
/* The first `avail` bytes of the file are written: hash them (no wait). */
void ds_md5_follow_feed(ds_md5_follow *m, uint64_t avail);
/* The file is about to be cut to `size` bytes: forget anything past it
 * (waits for the thread's current read). */
void ds_md5_follow_cut(ds_md5_follow *m, uint64_t size);
/* Hash up to byte `size` (all written), then *out = the context (not
 * finalized). 0, or -1 with *err when the file could not be read. */
int ds_md5_follow_finish(ds_md5_follow *m, uint64_t size, MD5_CTX *out,
                         const char *path, char **err);
/* Stop the thread and free (NULL is fine). */
void ds_md5_follow_stop(ds_md5_follow *m);

#endif
