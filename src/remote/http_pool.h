/* http_pool.h - the HTTP client's sessions: a session is a libcurl multi
 * handle with its connection cache, used by one thread at a time; idle
 * sessions are kept (POOL_KEEP) so that connections are reused from one
 * batch (statement) to the next, from any thread. DNS answers and TLS
 * sessions are shared between sessions through one share handle under
 * mutexes. (libcurl's shared connection cache is not made for concurrent
 * threads, so connections are never shared: sessions are.) */
#ifndef DS_HTTP_POOL_H
#define DS_HTTP_POOL_H

#include "remote/curl_api.h"

typedef struct ds_http_session {
  CURLM *multi;
  struct ds_http_session *next;
} ds_http_session;

/* A session for this call (an idle one, or a new one) allowing
 * max_parallel connections per host; *sh gets the share handle (NULL when
 * it could not be made: nothing is then shared, still correct). NULL with
 * *err when out of memory. */
ds_http_session *ds_http_session_get(const ds_curl_api *c, int max_parallel,
                                     CURLSH **sh, char **err);
/* Give a session back (kept idle, or closed when enough are). */
void ds_http_session_put(const ds_curl_api *c, ds_http_session *s);

#endif
