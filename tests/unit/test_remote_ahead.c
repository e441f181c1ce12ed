/* test_remote_ahead.c - whole files fetched ahead on a helper thread
 * (remote/remote_ahead.c), against a small HTTP server of the test's own
 * (127.0.0.1, a thread per connection, one request each) whose answers wait
 * behind a gate the test opens: ds_rahead_load returns while its requests
 * are still unanswered (the fetch runs on the helper thread); an open that
 * takes a file still being fetched waits for it and gets its bytes and
 * ETag; a file asked for twice while pending is kept once; one asked
 * for again after it was taken is fetched again; a file that did not come
 * whole (404) is not kept; several threads loading and taking at once get
 * every file's bytes. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "remote/remote_ahead.h"

#define MAXREQ 256

static int lfd, port;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int gate_open, stop_server, arrived;
static char paths[MAXREQ][64];
static int npaths;

/* The body of /fN: "file N " repeated to 100 + N bytes. */
static size_t body_of(int n, char *out) {
  size_t len = 100 + (size_t)n;
  char unit[32];
  int u = snprintf(unit, sizeof unit, "file %d ", n);
  for (size_t i = 0; i < len; i++) out[i] = unit[i % (size_t)u];
  return len;
}

/* Requests that arrived for path. */
static int count_of(const char *path) {
  int c = 0;
  pthread_mutex_lock(&mu);
  for (int i = 0; i < npaths; i++) c += strcmp(paths[i], path) == 0;
  pthread_mutex_unlock(&mu);
  return c;
}

/* One connection: read the request head, log its path, wait for the
 * gate, answer (206 with the whole file, or 404 for /missing). */
static void serve(int fd) {
  char req[4096];
  size_t got = 0;
  while (got < sizeof req - 1) {
    ssize_t k = read(fd, req + got, sizeof req - 1 - got);
    if (k <= 0) break;
    got += (size_t)k;
    req[got] = 0;
    if (strstr(req, "\r\n\r\n")) break;
  }
  req[got] = 0;
  char path[64] = "";
  sscanf(req, "GET %63s", path);
  pthread_mutex_lock(&mu);
  if (npaths < MAXREQ) snprintf(paths[npaths++], sizeof paths[0], "%s", path);
  arrived++;
  pthread_cond_broadcast(&cv);
  while (!gate_open && !stop_server) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  char head[512], body[512];
  int n = -1;
  if (sscanf(path, "/f%d", &n) == 1 && n >= 0 && n < 300) {
    size_t len = body_of(n, body);
    int h = snprintf(head, sizeof head,
                     "HTTP/1.1 206 Partial Content\r\nContent-Length: %zu\r\n"
                     "Content-Range: bytes 0-%zu/%zu\r\nETag: \"e%d\"\r\n"
                     "Connection: close\r\n\r\n", len, len - 1, len, n);
    if (send(fd, head, (size_t)h, MSG_NOSIGNAL) < 0 || send(fd, body, len, MSG_NOSIGNAL) < 0) {
    } /* a client gone: nothing to do (no SIGPIPE) */
  } else {
    static const char nf[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n"
                             "Connection: close\r\n\r\n";
    if (send(fd, nf, sizeof nf - 1, MSG_NOSIGNAL) < 0) {
    }
  }
  close(fd);
}

static void *conn_main(void *arg) {
  serve((int)(intptr_t)arg);
  return NULL;
}

/* Accept connections, a detached thread each, until the socket is shut. */
static void *server_main(void *arg) {
  (void)arg;
  for (;;) {
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0) return NULL;
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &at, conn_main, (void *)(intptr_t)fd) != 0) close(fd);
    pthread_attr_destroy(&at);
  }
}

static void gate(int open) {
  pthread_mutex_lock(&mu);
  gate_open = open;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

static void url_of(const char *path, char *out, size_t n) {
  snprintf(out, n, "http://127.0.0.1:%d%s", port, path);
}

/* The test's check of a file taken: its bytes and ETag. */
static void check_taken(int n, const ds_probe *p) {
  char want[512];
  size_t len = body_of(n, want);
  CHECK_MSG(p->size == len && p->tail_len == len && memcmp(p->tail, want, len) == 0,
            "/f%d: the whole file (%llu bytes)", n, (unsigned long long)p->size);
  char etag[16];
  snprintf(etag, sizeof etag, "\"e%d\"", n);
  CHECK_STR(p->etag, etag);
}

static void test_pending(void) {
  char u[3][128];
  const char *v[3];
  for (int i = 0; i < 3; i++) {
    char path[16];
    snprintf(path, sizeof path, "/f%d", i + 1);
    url_of(path, u[i], sizeof u[i]);
    v[i] = u[i];
  }
  gate(0);
  ds_rahead_load(v, 3);
  /* returned with the requests unanswered (the gate is shut): they
   * arrive while the test goes on */
  pthread_mutex_lock(&mu);
  for (int i = 0; i < 200 && arrived < 3; i++) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += 1;
    pthread_cond_timedwait(&cv, &mu, &t); /* bounded: 200 x 1 s at most */
    if (arrived >= 3) break;
  }
  int seen = arrived, open = gate_open;
  pthread_mutex_unlock(&mu);
  CHECK_MSG(seen == 3 && !open, "load returned before any answer: %d requests waiting", seen);
  ds_rahead_load(v, 3); /* pending: not asked again */
  gate(1);
  for (int i = 0; i < 3; i++) {
    ds_probe p;
    memset(&p, 0, sizeof p);
    int hit = ds_rahead_take(u[i], &p); /* waits for the batch */
    CHECK_MSG(hit == 1, "take /f%d after a load: a hit", i + 1);
    if (hit) check_taken(i + 1, &p);
    ds_probe_free(&p);
  }
  /* loaded twice while pending, kept once: a second take misses (a second
   * slot for the same file would hit) */
  for (int i = 0; i < 3; i++) {
    ds_probe p;
    memset(&p, 0, sizeof p);
    CHECK_MSG(ds_rahead_take(u[i], &p) == 0, "/f%d loaded twice, kept once", i + 1);
    ds_probe_free(&p);
  }
  ds_probe p;
  memset(&p, 0, sizeof p);
  int before = count_of("/f1");
  ds_rahead_load(v, 1); /* taken, then asked again: fetched again */
  CHECK(ds_rahead_take(u[0], &p) == 1);
  ds_probe_free(&p);
  CHECK(count_of("/f1") > before);
  char m[128];
  url_of("/missing", m, sizeof m);
  const char *mv[1] = {m};
  ds_rahead_load(mv, 1);
  CHECK_MSG(ds_rahead_take(m, &p) == 0, "a 404 is not kept");
  CHECK(count_of("/missing") >= 1);
}

#define THREADS 4
#define PER 24

static void *loader(void *arg) {
  int t = (int)(intptr_t)arg;
  char u[PER][128];
  const char *v[PER];
  for (int i = 0; i < PER; i++) {
    char path[16];
    snprintf(path, sizeof path, "/f%d", 100 + t * PER + i);
    url_of(path, u[i], sizeof u[i]);
    v[i] = u[i];
  }
  ds_rahead_load(v, PER);
  int *hits = calloc(1, sizeof *hits);
  for (int i = 0; hits && i < PER; i++) {
    ds_probe p;
    if (ds_rahead_take(u[i], &p)) {
      char want[512];
      size_t len = body_of(100 + t * PER + i, want);
      *hits += p.tail_len == len && memcmp(p.tail, want, len) == 0;
      ds_probe_free(&p);
    }
  }
  return hits;
}

static void test_threads(void) {
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++)
    pthread_create(&th[i], NULL, loader, (void *)(intptr_t)i);
  int total = 0;
  for (int i = 0; i < THREADS; i++) {
    void *r;
    pthread_join(th[i], &r);
    total += r ? *(int *)r : 0;
    free(r);
  }
  CHECK_MSG(total == THREADS * PER, "threads: every file's bytes taken: %d of %d", total,
            THREADS * PER);
}

int main(void) {
  setenv("DATASETS_REMOTE_RETRIES", "0", 1);
  lfd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof a;
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, 64) ||
      getsockname(lfd, (struct sockaddr *)&a, &al)) {
    CHECK_MSG(0, "listen on 127.0.0.1");
    return check_exit();
  }
  port = ntohs(a.sin_port);
  pthread_t srv;
  pthread_create(&srv, NULL, server_main, NULL);
  test_pending();
  test_threads();
  pthread_mutex_lock(&mu);
  stop_server = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  shutdown(lfd, SHUT_RDWR);
  close(lfd);
  pthread_join(srv, NULL);
  return check_exit();
}
