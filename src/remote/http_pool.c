/* http_pool.c - pooled sessions and the shared DNS/TLS cache of the HTTP
 * client (http_pool.h). */
#include "remote/http_pool.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/common.h"


#define POOL_KEEP 8 /* idle sessions kept (their connections stay open) */

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static ds_http_session *pool_idle;
static int pool_nidle;
static CURLSH *share;             /* DNS cache and TLS sessions */
static pthread_mutex_t share_mu[CURL_LOCK_DATA_LAST];


static void share_lock(CURL *h, curl_lock_data d, curl_lock_access a, void *u) {
  (void)h, (void)a, (void)u;
  pthread_mutex_lock(&share_mu[d]);
}
static void share_unlock(CURL *h, curl_lock_data d, void *u) {
  (void)h, (void)u;
  pthread_mutex_unlock(&share_mu[d]);
}

/* The share handle, made once (under pool_mu). NULL when it cannot be:
 * then nothing is shared (still correct). */
static CURLSH *get_share(const ds_curl_api *c) {
  if (share) return share;
  CURLSH *s = c->share_init();
  if (!s) return NULL;
  for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
    pthread_mutex_init(&share_mu[i], NULL);
  c->share_setopt(s, CURLSHOPT_LOCKFUNC, share_lock);
  c->share_setopt(s, CURLSHOPT_UNLOCKFUNC, share_unlock);
  c->share_setopt(s, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  c->share_setopt(s, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  share = s;
  return share;
}

/* A session for this call: an idle one, or a new one. */
ds_http_session *ds_http_session_get(const ds_curl_api *c, int max_parallel,
                            CURLSH **sh, char **err) {
  pthread_mutex_lock(&pool_mu);
  ds_http_session *s = pool_idle;
  if (s) {
    pool_idle = s->next;
    pool_nidle--;
  }
  *sh = get_share(c);
  pthread_mutex_unlock(&pool_mu);
  if (!s) {
    s = calloc(1, sizeof *s);
    if (s) s->multi = c->multi_init();
    if (!s || !s->multi) {
      free(s);
      ds_err(err, "out of memory (HTTP session)");
      return NULL;
    }
  }
  c->multi_setopt(s->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)max_parallel);
  c->multi_setopt(s->multi, CURLMOPT_MAXCONNECTS, (long)max_parallel * 2);
  return s;
}

/* Give a session back (kept idle, or closed when enough are). */
void ds_http_session_put(const ds_curl_api *c, ds_http_session *s) {
  pthread_mutex_lock(&pool_mu);
  if (pool_nidle < POOL_KEEP) {
    s->next = pool_idle;
    pool_idle = s;
    pool_nidle++;
    s = NULL;
  }
  pthread_mutex_unlock(&pool_mu);
  if (s) {
    c->multi_cleanup(s->multi);
    free(s);
  }
}
