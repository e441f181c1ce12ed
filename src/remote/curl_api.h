/* curl_api.h - libcurl, loaded with dlopen("libcurl.so.4") the first time
 * a remote path needs it: a process that never opens one loads nothing
 * (no library at .load, no threads). Only libcurl's headers are used at
 * build time, for its types and constants; every call goes through the
 * table below.
 *
 * As a guest in the host's process: the first ds_curl_get() (under
 * pthread_once) loads the library with RTLD_LOCAL and calls
 * curl_global_init(CURL_GLOBAL_DEFAULT) once. libcurl counts these calls,
 * so a host that uses libcurl itself keeps its own init; we never call
 * curl_global_cleanup and never dlclose, so what the host set up is never
 * torn down under it. libcurl >= 7.84 (CURL_VERSION_THREADSAFE) makes
 * curl_global_init thread-safe; older versions are still used, but a
 * host calling curl_global_init on another thread at the same moment
 * would race with ours (libcurl's own rule). Every handle is set
 * CURLOPT_NOSIGNAL, so libcurl never touches signal handlers (SIGPIPE is
 * avoided with MSG_NOSIGNAL/SO_NOSIGPIPE by libcurl itself). */
#ifndef DS_CURL_API_H
#define DS_CURL_API_H

#define CURL_DISABLE_DEPRECATION 1
#include <curl/curl.h>

/* The libcurl functions we call. multi_poll is NULL before 7.66 (then
 * multi_wait is used). */
typedef struct ds_curl_api {
  CURL *(*easy_init)(void);
  CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
  CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
  void (*easy_cleanup)(CURL *);
  const char *(*easy_strerror)(CURLcode);
  CURLM *(*multi_init)(void);
  CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
  CURLMcode (*multi_add_handle)(CURLM *, CURL *);
  CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
  CURLMcode (*multi_perform)(CURLM *, int *);
  CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned, int, int *);
  CURLMcode (*multi_wait)(CURLM *, struct curl_waitfd *, unsigned, int, int *);
  CURLMsg *(*multi_info_read)(CURLM *, int *);
  CURLMcode (*multi_cleanup)(CURLM *);
  struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
  void (*slist_free_all)(struct curl_slist *);
  CURLSH *(*share_init)(void);
  CURLSHcode (*share_setopt)(CURLSH *, CURLSHoption, ...);
  curl_version_info_data *(*version_info)(CURLversion);
  CURLcode (*global_init)(long);
  unsigned version_num;  /* e.g. 0x075800 for 7.88.0 */
  int threadsafe_init;   /* CURL_VERSION_THREADSAFE was set */
} ds_curl_api;

/* The loaded library (loading it on the first call, from any thread), or
 * NULL with *err ("remote paths need libcurl: ..."). Never unloaded. */
const ds_curl_api *ds_curl_get(char **err);

#endif
