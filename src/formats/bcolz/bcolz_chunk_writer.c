/* bcolz_chunk_writer.c - chunk files of the bcolz writer, compressed and
 * written on the caller's thread or on one helper thread (see
 * bcolz_chunk_writer.h). The helper takes jobs in the order they came;
 * every slot has at most one, so the queue holds at most nslots. */
#include "formats/bcolz/bcolz_chunk_writer.h"

#include <blosc.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/stage.h"
#include "core/vfs.h"
#include "core/worker.h"

#define CW_HEADER 16 /* "blpk", version 1, 3 reserved, int64 nchunks = 1 */

/* One chunk for the helper thread. */
typedef struct cw_job {
  size_t slot;
  char *path;
  size_t typesize;
  const uint8_t *src;
  size_t n;
  uint32_t *cbytes;
} cw_job;

struct bcolz_chunk_writer {
  bcolz_write_options o;
  ds_buf cbuf;          /* the caller's compressed chunk */
  ds_buf wbuf;          /* the helper's */
  ds_worker w;          /* mu guards everything below */
  int started;          /* ds_worker_start was called */
  cw_job *queue;        /* ring of nslots jobs */
  size_t nslots, head, len;
  int busy;             /* the helper holds queue[head] (still counted in len) */
  unsigned char *inflight; /* per slot: a job queued or being written */
  char *err;            /* the helper's first error */
};

/* Compress src[0..n) into cbuf and write it as path: 0, or -1 and err. */
static int chunk_file(const bcolz_write_options *o, ds_buf *cbuf, const char *path,
                      size_t typesize, const uint8_t *src, size_t n, uint32_t *cbytes,
                      char **err) {
  size_t cap = n + BLOSC_MAX_OVERHEAD;
  if (ds_buf_reserve(cbuf, cap)) return ds_err(err, "out of memory");
  int r = blosc_compress_ctx(o->clevel, o->shuffle, typesize, n, src, cbuf->data, cap,
                             o->cname, 0, 1);
  if (r <= 0) return ds_err(err, "c-blosc could not compress a chunk (%d)", r);
  static const uint8_t head[CW_HEADER] = {'b', 'l', 'p', 'k', 1, 0, 0, 0, 1};
  int fd = ds_vfs_open_fd(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return ds_err(err, "cannot create %s: %s", path, strerror(errno));
  int rc = ds_write_all(fd, head, CW_HEADER, path, err) ||
           ds_write_all(fd, cbuf->data, (size_t)r, path, err);
  /* without sync the caller fsyncs every file at the end (a table's stage,
   * before its commit): the disk write starts now, without waiting, so
   * those fsyncs find the data written (and ext4's journal commits the
   * block allocations of all of them at the first, not one per file) */
  if (!rc && !o->sync) (void)sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  if (!rc && o->sync && ds_vfs_fsync_fd(fd)) rc = ds_err(err, "cannot fsync %s: %s", path, strerror(errno));
  close(fd);
  if (rc) { /* no partial chunk left behind (upstream counts the files) */
    ds_vfs_remove(path);
    return -1;
  }
  *cbytes = (uint32_t)r;
  return 0;
}

/* The helper: write queued chunks in order until told to stop. */
static void *helper_main(void *arg) {
  bcolz_chunk_writer *cw = arg;
  pthread_mutex_lock(&cw->w.mu);
  for (;;) {
    while (!cw->w.stop && cw->len == 0) pthread_cond_wait(&cw->w.cv, &cw->w.mu);
    if (cw->w.stop) break;
    cw_job j = cw->queue[cw->head];
    cw->busy = 1;
    int failed = cw->err != NULL; /* after an error the rest is dropped */
    pthread_mutex_unlock(&cw->w.mu);
    char *e = NULL;
    uint32_t cb = 0;
    if (!failed && chunk_file(&cw->o, &cw->wbuf, j.path, j.typesize, j.src, j.n, &cb, &e) == 0)
      *j.cbytes = cb;
    free(j.path);
    pthread_mutex_lock(&cw->w.mu);
    if (e && !cw->err) cw->err = e;
    else free(e);
    cw->head = (cw->head + 1) % cw->nslots;
    cw->len--;
    cw->busy = 0;
    cw->inflight[j.slot] = 0;
    pthread_cond_broadcast(&cw->w.cv);
  }
  pthread_mutex_unlock(&cw->w.mu);
  return NULL;
}

int bcolz_chunk_writer_new(const bcolz_write_options *o, size_t nslots,
                           bcolz_chunk_writer **out, char **err) {
  bcolz_chunk_writer *cw = calloc(1, sizeof *cw);
  if (cw) {
    cw->queue = calloc(nslots ? nslots : 1, sizeof *cw->queue);
    cw->inflight = calloc(nslots ? nslots : 1, 1);
  }
  if (!cw || !cw->queue || !cw->inflight) {
    bcolz_chunk_writer_free(cw);
    return ds_err(err, "out of memory");
  }
  cw->o = *o;
  cw->nslots = nslots ? nslots : 1;
  *out = cw;
  return 0;
}

void bcolz_chunk_writer_free(bcolz_chunk_writer *cw) {
  if (!cw) return;
  if (cw->started) ds_worker_stop(&cw->w);
  for (size_t i = 0; i < cw->len; i++) free(cw->queue[(cw->head + i) % cw->nslots].path);
  free(cw->queue);
  free(cw->inflight);
  free(cw->err);
  ds_buf_free(&cw->cbuf);
  ds_buf_free(&cw->wbuf);
  free(cw);
}

int bcolz_chunk_write(bcolz_chunk_writer *cw, const char *path, size_t typesize,
                      const uint8_t *src, size_t n, uint32_t *cbytes, char **err) {
  return chunk_file(&cw->o, &cw->cbuf, path, typesize, src, n, cbytes, err);
}

/* The helper's first error, copied for the caller (mu held). */
static int helper_error(bcolz_chunk_writer *cw, char **err) {
  return cw->err ? ds_err(err, "%s", cw->err) : 0;
}

int bcolz_chunk_wait(bcolz_chunk_writer *cw, size_t slot, char **err) {
  if (!cw->started || !cw->w.running) return 0;
  pthread_mutex_lock(&cw->w.mu);
  while (cw->inflight[slot]) pthread_cond_wait(&cw->w.cv, &cw->w.mu);
  int rc = helper_error(cw, err);
  pthread_mutex_unlock(&cw->w.mu);
  return rc;
}

int bcolz_chunk_submit(bcolz_chunk_writer *cw, size_t slot, char *path, size_t typesize,
                       const uint8_t *src, size_t n, uint32_t *cbytes, char **err) {
  if (!cw->started) { /* the first full chunk: start the helper */
    ds_worker_start(&cw->w, helper_main, cw);
    cw->started = 1;
  }
  if (!cw->w.running) { /* no helper: now, on this thread */
    int rc = bcolz_chunk_write(cw, path, typesize, src, n, cbytes, err);
    free(path);
    return rc;
  }
  pthread_mutex_lock(&cw->w.mu);
  while (cw->inflight[slot]) pthread_cond_wait(&cw->w.cv, &cw->w.mu);
  int rc = helper_error(cw, err);
  if (rc == 0) {
    cw->queue[(cw->head + cw->len) % cw->nslots] = (cw_job){slot, path, typesize, src, n, cbytes};
    cw->len++;
    cw->inflight[slot] = 1;
    pthread_cond_broadcast(&cw->w.cv);
  }
  pthread_mutex_unlock(&cw->w.mu);
  if (rc) free(path);
  return rc;
}

int bcolz_chunk_drain(bcolz_chunk_writer *cw, char **err) {
  if (!cw->started || !cw->w.running) return 0;
  pthread_mutex_lock(&cw->w.mu);
  while (cw->len) pthread_cond_wait(&cw->w.cv, &cw->w.mu);
  int rc = helper_error(cw, err);
  pthread_mutex_unlock(&cw->w.mu);
  return rc;
}
