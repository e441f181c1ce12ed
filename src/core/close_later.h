/* close_later.h - close file descriptors on a helper thread. A replaced
 * dataset's old files are unlinked while a descriptor holds each one, so
 * the unlink only drops the name; the last close then frees the file's
 * cached pages and blocks (70-90 ms for a 281 MB file, once the largest
 * step of a datadings COMMIT), and that close happens here, after the
 * COMMIT returned. A process that exits first loses nothing: the kernel
 * closes the descriptors and frees the unlinked files. */
#ifndef DS_CLOSE_LATER_H
#define DS_CLOSE_LATER_H

#include <pthread.h>
#include <stddef.h>

typedef struct ds_close_later {
  int *fds;          /* owned; closed by the thread (or by wait) */
  size_t n, cap;
  pthread_t thread;
  int running;       /* the thread was started and is not yet joined */
} ds_close_later;

/* Keep fd to be closed by the next ds_close_later_start (closed now when
 * there is no memory to keep it). */
void ds_close_later_add(ds_close_later *c, int fd);
/* Close every kept descriptor on a new thread (here when none starts).
 * A thread still running from before is joined first. */
void ds_close_later_start(ds_close_later *c);
/* Join the thread, if any; close what is still kept. */
void ds_close_later_wait(ds_close_later *c);

#endif
