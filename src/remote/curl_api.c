/* curl_api.c - load libcurl on first use (dlopen, never dlclose) and call
 * curl_global_init once, as curl_api.h explains. */
#include "remote/curl_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/common.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static ds_curl_api api;
static int loaded;        /* api is usable */
static char load_err[512]; /* why not */

/* dlsym into a function pointer (through memcpy: ISO C has no cast from
 * void * to a function pointer). */
static int sym(void *lib, const char *name, void *fnptr, int optional) {
  void *p = dlsym(lib, name);
  if (!p && !optional) {
    snprintf(load_err, sizeof load_err,
             "remote paths need libcurl: libcurl.so.4 has no %s", name);
    return -1;
  }
  memcpy(fnptr, &p, sizeof p);
  return 0;
}

/* The pthread_once body: load, resolve, check the version, init once. */
static void load(void) {
  void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(load_err, sizeof load_err,
             "remote paths need libcurl (Debian: libcurl4): %s",
             e ? e : "libcurl.so.4 not found");
    return;
  }
  if (sym(lib, "curl_easy_init", &api.easy_init, 0) ||
      sym(lib, "curl_easy_setopt", &api.easy_setopt, 0) ||
      sym(lib, "curl_easy_getinfo", &api.easy_getinfo, 0) ||
      sym(lib, "curl_easy_cleanup", &api.easy_cleanup, 0) ||
      sym(lib, "curl_easy_strerror", &api.easy_strerror, 0) ||
      sym(lib, "curl_multi_init", &api.multi_init, 0) ||
      sym(lib, "curl_multi_setopt", &api.multi_setopt, 0) ||
      sym(lib, "curl_multi_add_handle", &api.multi_add_handle, 0) ||
      sym(lib, "curl_multi_remove_handle", &api.multi_remove_handle, 0) ||
      sym(lib, "curl_multi_perform", &api.multi_perform, 0) ||
      sym(lib, "curl_multi_poll", &api.multi_poll, 1) ||
      sym(lib, "curl_multi_wait", &api.multi_wait, 0) ||
      sym(lib, "curl_multi_info_read", &api.multi_info_read, 0) ||
      sym(lib, "curl_multi_cleanup", &api.multi_cleanup, 0) ||
      sym(lib, "curl_slist_append", &api.slist_append, 0) ||
      sym(lib, "curl_slist_free_all", &api.slist_free_all, 0) ||
      sym(lib, "curl_share_init", &api.share_init, 0) ||
      sym(lib, "curl_share_setopt", &api.share_setopt, 0) ||
      sym(lib, "curl_version_info", &api.version_info, 0) ||
      sym(lib, "curl_global_init", &api.global_init, 0))
    return; /* the library stays loaded: harmless, and never half-used */
  curl_version_info_data *v = api.version_info(CURLVERSION_NOW);
  api.version_num = v ? v->version_num : 0;
  api.threadsafe_init = v && (v->features & CURL_VERSION_THREADSAFE);
  if (api.version_num < 0x073700) { /* 7.55: the getinfo and share we use */
    snprintf(load_err, sizeof load_err,
             "remote paths need libcurl 7.55 or later (this one is %s)",
             v && v->version ? v->version : "older");
    return;
  }
  CURLcode rc = api.global_init(CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK) {
    snprintf(load_err, sizeof load_err, "libcurl failed to initialise: %s",
             api.easy_strerror(rc));
    return;
  }
  loaded = 1;
}

const ds_curl_api *ds_curl_get(char **err) {
  pthread_once(&once, load);
  if (!loaded) {
    ds_err(err, "%s", load_err);
    return NULL;
  }
  return &api;
}
