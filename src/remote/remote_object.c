/* remote_object.c - a remote path made ready for requests (see
 * remote_object.h). */
#include "remote/remote_object.h"

#include <stdlib.h>
#include <string.h>

#include "core/vfs.h"
#include "remote/remote_sign.h"

int ds_remote_path_confined(const char *path) {
  const char *p = strstr(path, "://");
  if (!p) return 0;
  p += 3;
  p += strcspn(p, "/"); /* the host or bucket */
  size_t end = strcspn(p, "?#");
  if (ds_remote_scheme_of(path) != DS_REMOTE_HTTP) end = strlen(p);
  for (size_t i = 0; i < end;) {
    if (p[i] != '/') {
      i++;
      continue;
    }
    size_t n = strcspn(p + i + 1, "/?#");
    if (i + 1 + n > end) n = end - i - 1;
    if ((n == 1 && p[i + 1] == '.') || (n == 2 && p[i + 1] == '.' && p[i + 2] == '.'))
      return -1;
    i += 1 + n;
  }
  return 0;
}

int ds_robj_make(const char *path, ds_robj *o, char **err) {
  memset(o, 0, sizeof *o);
  char shown[1024];
  ds_http_url_for_message(path, shown, sizeof shown);
  if (ds_remote_path_confined(path))
    return ds_err(err, "%s: a remote path may not contain a '.' or '..' segment "
                       "(the files of a remote dataset stay inside it)",
                  shown);
  const ds_vfs_remote_opts *ro = ds_vfs_remote_current();
  o->retries = ro && ro->retries >= 0 ? (int)ro->retries : -1;
  o->timeout_ms = ro && ro->timeout_ms >= 0 ? (long)ro->timeout_ms : -1;
  o->cache = ro && ro->remote_cache >= 0 ? (int)ro->remote_cache : -1;
  ds_remote_url u;
  if (ds_remote_url_parse(path, &u, err)) return -1;
  o->scheme = u.scheme;
  o->path = strdup(path);
  o->shown = strdup(shown);
  if (!o->path || !o->shown) goto oom;
  if (u.scheme == DS_REMOTE_HTTP) {
    o->url = u.url;
    u.url = NULL;
    ds_remote_url_free(&u);
    return 0;
  }
  o->bucket = u.bucket;
  o->key = u.key;
  u.bucket = u.key = NULL;
  ds_remote_url_free(&u);
  ds_remote_options opt = {0};
  if (ro) {
    opt.endpoint = ro->endpoint;
    opt.region = ro->region;
    opt.anonymous = (int)(ro->anonymous & 1);
    opt.url_style = (ds_url_style)ro->url_style;
  }
  if (ds_remote_config_resolve(o->scheme, &opt, &o->cfg, err)) {
    ds_robj_free(o);
    return -1;
  }
  o->has_cfg = 1;
  ds_s3_target t;
  if (ds_s3_target_make(o->cfg.endpoint, o->cfg.region, o->cfg.url_style, o->bucket,
                        o->key, NULL, 0, &t, err)) {
    ds_err_prefix(err, shown);
    ds_robj_free(o);
    return -1;
  }
  o->url = strdup((char *)t.url.data);
  ds_s3_target_free(&t);
  if (!o->url) goto oom;
  return 0;
oom:
  ds_robj_free(o);
  return ds_err(err, "%s: out of memory", shown);
}

void ds_robj_http_opts(const ds_robj *o, ds_http_opts *h) {
  ds_remote_http_opts(h);
  if (o->retries >= 0) h->retries = o->retries;
  if (o->timeout_ms >= 0) h->timeout_ms = o->timeout_ms;
}

void ds_robj_free(ds_robj *o) {
  free(o->path);
  free(o->url);
  free(o->shown);
  free(o->bucket);
  free(o->key);
  if (o->has_cfg) ds_remote_config_free(&o->cfg);
  memset(o, 0, sizeof *o);
}

void ds_robj_req(const ds_robj *o, ds_http_req *r, ds_http_kind kind) {
  memset(r, 0, sizeof *r);
  r->kind = kind;
  r->url = o->url;
  if (o->has_cfg) {
    r->sign = ds_remote_sign;
    r->sign_ctx = (void *)&o->cfg;
  }
}

/* A non-negative integer from the environment, or def. */
static long env_long(const char *name, long def) {
  const char *v = getenv(name);
  if (!v || !*v) return def;
  char *end;
  long x = strtol(v, &end, 10);
  return *end || x < 0 ? def : x;
}

void ds_remote_http_opts(ds_http_opts *o) {
  ds_http_opts_default(o);
  o->retries = (int)env_long("DATASETS_REMOTE_RETRIES", o->retries);
  o->timeout_ms = env_long("DATASETS_REMOTE_TIMEOUT_MS", o->timeout_ms);
}
