/* md5_follow.c - MD5 of a growing file on a second thread (see
 * md5_follow.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "md5_follow.h"
#include "vfs.h"

#define CHUNK ((size_t)1 << 20)
#define WRITEBACK ((uint64_t)16 << 20) /* bytes handed to the disk at once */

struct ds_md5_follow {
  int fd;
  pthread_t thread;
  int has_thread;
  pthread_mutex_t mu;
  pthread_cond_t work, idle;
  uint64_t avail;  /* bytes the writer says are on disk */
  uint64_t done;   /* bytes in ctx */
  uint64_t handed; /* bytes whose disk write was started (while busy, or under mu) */
  int busy;        /* the thread is reading/hashing past done */
  int quit;
  int error;       /* errno of a failed read, -1 the file ended first, 0 */
  MD5_CTX ctx;
  uint8_t *buf;
};

/* Hash bytes [m->done, m->done + n) into the context and start writing
 * them to disk (every WRITEBACK bytes: larger pieces cost the filesystem
 * less): read, hash and write back without the lock (the caller set
 * busy, so cut and finish wait, and nothing else touches ctx), then
 * account under it. */
static void hash_chunk(ds_md5_follow *m, uint64_t from, size_t n) {
  ssize_t r;
  do r = ds_vfs_pread_fd(m->fd, m->buf, n, from);
  while (r < 0 && errno == EINTR);
  if (r > 0) { /* start the disk write of what was hashed (no wait) */
    MD5Update(&m->ctx, m->buf, (size_t)r);
    uint64_t end = from + (uint64_t)r;
    if (end > m->handed && end - m->handed >= WRITEBACK) {
      (void)sync_file_range(m->fd, (off_t)m->handed, (off_t)(end - m->handed),
                            SYNC_FILE_RANGE_WRITE);
      m->handed = end;
    }
  }
  pthread_mutex_lock(&m->mu);
  if (r <= 0) m->error = r < 0 && errno ? errno : -1;
  else m->done += (uint64_t)r;
}

/* The thread: hash whatever is on disk and not hashed, until quit. */
static void *follow(void *arg) {
  ds_md5_follow *m = arg;
  pthread_mutex_lock(&m->mu);
  for (;;) {
    while (!m->quit && (m->error || m->done >= m->avail)) pthread_cond_wait(&m->work, &m->mu);
    if (m->quit) break;
    uint64_t from = m->done, left = m->avail - m->done;
    m->busy = 1;
    pthread_mutex_unlock(&m->mu);
    hash_chunk(m, from, left < CHUNK ? (size_t)left : CHUNK); /* relocks */
    m->busy = 0;
    pthread_cond_broadcast(&m->idle);
  }
  pthread_mutex_unlock(&m->mu);
  return NULL;
}

ds_md5_follow *ds_md5_follow_start(int fd, const MD5_CTX *ctx, uint64_t done) {
  ds_md5_follow *m = calloc(1, sizeof *m);
  if (!m || !(m->buf = malloc(CHUNK))) {
    free(m);
    return NULL;
  }
  m->fd = fd;
  m->ctx = *ctx;
  m->done = m->avail = done;
  pthread_mutex_init(&m->mu, NULL);
  pthread_cond_init(&m->work, NULL);
  pthread_cond_init(&m->idle, NULL);
  m->has_thread = pthread_create(&m->thread, NULL, follow, m) == 0;
  return m;
}

void ds_md5_follow_feed(ds_md5_follow *m, uint64_t avail) {
  if (!m || !m->has_thread || avail <= m->avail) return; /* only this thread writes avail */
  pthread_mutex_lock(&m->mu);
  m->avail = avail;
  pthread_cond_signal(&m->work);
  pthread_mutex_unlock(&m->mu);
}

void ds_md5_follow_cut(ds_md5_follow *m, uint64_t size) {
  if (!m) return;
  pthread_mutex_lock(&m->mu);
  while (m->busy) pthread_cond_wait(&m->idle, &m->mu);
  if (m->avail > size) m->avail = size;
  if (m->handed > size) m->handed = size;
  if (m->done > size) { /* hashed past the cut: start over */
    MD5Init(&m->ctx);
    m->done = 0;
  }
  pthread_mutex_unlock(&m->mu);
}

int ds_md5_follow_finish(ds_md5_follow *m, uint64_t size, MD5_CTX *out,
                         const char *path, char **err) {
  pthread_mutex_lock(&m->mu);
  if (m->has_thread) {
    if (size > m->avail) m->avail = size;
    pthread_cond_signal(&m->work);
    while (!m->error && (m->busy || m->done < size)) pthread_cond_wait(&m->idle, &m->mu);
  } else {
    m->avail = size;
    while (!m->error && m->done < size) { /* no thread: hash here */
      uint64_t left = size - m->done;
      pthread_mutex_unlock(&m->mu);
      hash_chunk(m, m->done, left < CHUNK ? (size_t)left : CHUNK); /* relocks */
    }
  }
  int e = m->error;
  if (!e) *out = m->ctx;
  pthread_mutex_unlock(&m->mu);
  if (e)
    return ds_err(err, "%s: cannot read back for its md5: %s", path,
                  e > 0 ? strerror(e) : "short read");
  return 0;
}

void ds_md5_follow_stop(ds_md5_follow *m) {
  if (!m) return;
  if (m->has_thread) {
    pthread_mutex_lock(&m->mu);
    m->quit = 1;
    pthread_cond_signal(&m->work);
    pthread_mutex_unlock(&m->mu);
    pthread_join(m->thread, NULL);
  }
  pthread_mutex_destroy(&m->mu);
  pthread_cond_destroy(&m->work);
  pthread_cond_destroy(&m->idle);
  free(m->buf);
  free(m);
}
