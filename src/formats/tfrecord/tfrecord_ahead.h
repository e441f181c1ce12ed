/* tfrecord_ahead.h - the index pass's read-ahead (tfrecord_index, with
 * threads=2): a local uncompressed file read in 1 MiB windows on a helper
 * thread while the query thread walks the headers of the window before
 * (tfrecord_walk.h), so that the pass costs about the read alone. Each
 * window holds every header that starts in it (it reaches TFR_HEADER
 * bytes into the next). Knows no SQLite. */
#ifndef DS_TFRECORD_AHEAD_H
#define DS_TFRECORD_AHEAD_H

#include <stdint.h>

#include "core/mapped_file.h"
#include "formats/tfrecord/tfrecord_walk.h"

typedef struct tfr_ahead tfr_ahead;

/* Read the uncompressed TFRecord file f (records of at most max_record
 * bytes) from `from` on, ahead; NULL when f is not a local file read from
 * disk, the calling thread may run on only one CPU, or no memory or
 * thread could be had (the caller reads the slow way). */
tfr_ahead *tfr_ahead_start(const ds_file *f, uint64_t from, uint64_t max_record);

/* The window that holds the header starting at file offset `off`, in *w
 * (valid until the next call with a later window, or tfr_ahead_free): 1,
 * after waiting for its read; 0 when there is none (before `from`, a
 * header the file's end cuts, an earlier window than the last one asked for, or a read
 * failed: the caller reads it the slow way, which says what is wrong).
 * Offsets asked for must not go down. */
int tfr_ahead_window(tfr_ahead *a, uint64_t off, tfr_window *w);

/* Stop the helper and free the windows (NULL is fine). */
void tfr_ahead_free(tfr_ahead *a);

#endif
