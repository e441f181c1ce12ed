/* close_later.c - close file descriptors on a helper thread (see
 * close_later.h). */
#include <stdlib.h>
#include <unistd.h>

#include "close_later.h"

/* A batch the thread owns. */
typedef struct batch {
  int *fds;
  size_t n;
} batch;

static void close_all(int *fds, size_t n) {
  for (size_t i = 0; i < n; i++) close(fds[i]);
  free(fds);
}

/* The thread: close one batch and return. */
static void *closer(void *arg) {
  batch *b = arg;
  close_all(b->fds, b->n);
  free(b);
  return NULL;
}

void ds_close_later_add(ds_close_later *c, int fd) {
  if (fd < 0) return;
  if (c->n == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 8;
    int *p = realloc(c->fds, cap * sizeof *p);
    if (!p) {
      close(fd);
      return;
    }
    c->fds = p;
    c->cap = cap;
  }
  c->fds[c->n++] = fd;
}

void ds_close_later_start(ds_close_later *c) {
  if (c->running) {
    pthread_join(c->thread, NULL);
    c->running = 0;
  }
  if (c->n == 0) return;
  batch *b = malloc(sizeof *b);
  if (b) {
    b->fds = c->fds;
    b->n = c->n;
    c->running = pthread_create(&c->thread, NULL, closer, b) == 0;
    if (!c->running) free(b);
  }
  if (!c->running) close_all(c->fds, c->n); /* no thread: here */
  c->fds = NULL;
  c->n = c->cap = 0;
}

void ds_close_later_wait(ds_close_later *c) {
  if (c->running) {
    pthread_join(c->thread, NULL);
    c->running = 0;
  }
  close_all(c->fds, c->n);
  c->fds = NULL;
  c->n = c->cap = 0;
}
