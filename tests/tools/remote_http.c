/* remote_http.c - drives the HTTP range client (src/remote/http.c) for
 * tests/conformance/test_remote_http.py and the fault tests: runs one
 * batch of requests given on the command line, prints one JSON line per
 * request, then a line of counters.
 *
 *   remote_http [options] KIND URL [OFFSET LENGTH] [KIND URL ...]
 *   KIND: range OFFSET LENGTH | suffix LENGTH | whole | head
 *         | list PREFIX-URL MAXKEYS TOKEN|- (ListObjectsV2, the XML whole)
 *   URL: http(s)://, or s3:// / gs:// resolved as the backend will
 *        (remote_creds.c from the environment, remote_url.c, signed by
 *        remote_sign.c)
 *   options: --retries N  --small-whole N  --backoff-ms N  --timeout-ms N
 *            --if-match ETAG (every request)  --max-bytes N
 *            --cancel-after-ms N (a cancel scope that says stop after N ms)
 *            --threads T (the batch run on T threads at once)
 *            --repeat N (the batch run N times in a row, results of the last)
 *            --maps (print whether libcurl is mapped before and after)
 *            --list-all URL MAXKEYS DELIM|- (ds_s3_list: every object under
 *                    the URL's prefix, as one JSON line, then exit)
 *            --dump (print only the first request's body, or its error
 *                    on stderr and exit 1)
 *            --sign-s3 REGION (sign http URLs with the s3:// config)
 *            --endpoint URL  --region R  --anonymous  --url-style path|virtual
 *   out: {"ok", "err", "status", "size", "etag", "version_id", "tries", "changed",
 *         "len", "cap" (the body buffer's size), "sha256"} ... then {"requests", "retries", "bytes",
 *         "failures", "curl_before", "curl_after"} */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cancel.h"
#include "remote/http.h"
#include "remote/remote_creds.h"
#include "remote/remote_sign.h"
#include "remote/remote_url.h"
#include "remote/s3_list.h"

static ds_http_opts opts;
static ds_http_req *proto; /* the requests as parsed */
static size_t nreq;
static long cancel_after_ms = -1;
static const char *sign_region;

/* 1 when libcurl.so is in this process's maps. */
static int curl_mapped(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[4096];
  int found = 0;
  while (f && fgets(line, sizeof line, f))
    if (strstr(line, "libcurl")) found = 1;
  if (f) fclose(f);
  return found;
}

static int64_t ms_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The cancel callback: stop once the deadline passed. */
static int deadline_passed(void *ctx) { return ms_now() >= *(int64_t *)ctx; }

static ds_remote_options ropt;
static ds_remote_config configs[4]; /* per scheme, resolved on first need */
static int resolved[4];

/* The config of a scheme (resolved once); NULL with a message on stderr. */
static ds_remote_config *config_of(ds_remote_scheme sc) {
  if (!resolved[sc]) {
    char *err = NULL;
    ds_remote_options o = ropt;
    if (sc == DS_REMOTE_S3 && sign_region) o.region = sign_region;
    if (ds_remote_config_resolve(sc, &o, &configs[sc], &err)) {
      fprintf(stderr, "remote_http: %s\n", err);
      free(err);
      return NULL;
    }
    resolved[sc] = 1;
  }
  return &configs[sc];
}

/* Turn an s3:// or gs:// argument into its request URL (kept in urls);
 * 0 ok. query: the ListObjectsV2 pairs or NULL. */
static char *urls[1024];
static size_t nurls;
static int resolve(ds_http_req *r, const ds_kv *query, size_t nq) {
  ds_remote_scheme sc = ds_remote_scheme_of(r->url);
  if (sc != DS_REMOTE_S3 && sc != DS_REMOTE_GS) {
    if (sign_region) {
      r->sign = ds_remote_sign;
      r->sign_ctx = config_of(DS_REMOTE_S3);
      return r->sign_ctx ? 0 : -1;
    }
    return 0;
  }
  ds_remote_config *c = config_of(sc);
  ds_remote_url u;
  ds_s3_target t;
  char *err = NULL;
  if (!c || ds_remote_url_parse(r->url, &u, &err)) {
    fprintf(stderr, "remote_http: %s\n", err ? err : "no config");
    free(err);
    return -1;
  }
  if (ds_s3_target_make(c->endpoint, c->region, c->url_style, u.bucket,
                        query ? "" : u.key, query, nq, &t, &err)) {
    fprintf(stderr, "remote_http: %s\n", err);
    free(err);
    ds_remote_url_free(&u);
    return -1;
  }
  ds_remote_url_free(&u);
  urls[nurls++] = (char *)t.url.data;
  t.url.data = NULL;
  ds_s3_target_free(&t);
  r->url = urls[nurls - 1];
  r->sign = ds_remote_sign;
  r->sign_ctx = c;
  return 0;
}

/* Run a copy of the batch; returns the copy. */
static void *run_batch(void *arg) {
  ds_http_req *r = calloc(nreq, sizeof *r);
  for (size_t i = 0; i < nreq; i++) {
    r[i] = proto[i];
    memset(&r[i].body, 0, sizeof r[i].body);
    r[i].err = NULL;
  }
  ds_cancel_scope scope;
  int64_t deadline = ms_now() + cancel_after_ms;
  if (cancel_after_ms >= 0) ds_cancel_begin(&scope, deadline_passed, &deadline);
  ds_http_run(r, nreq, &opts);
  if (cancel_after_ms >= 0) ds_cancel_end(&scope);
  (void)arg;
  return r;
}

/* --list-all: ds_s3_list of an s3:// or gs:// prefix as one JSON line. */
static int list_all(const char *url, int max_keys, const char *delim) {
  ds_remote_url u;
  char *err = NULL;
  ds_s3_listing l = {0};
  json_t *o = json_object();
  ds_remote_config *c = config_of(ds_remote_scheme_of(url));
  if (!c || ds_remote_url_parse(url, &u, &err)) {
    json_object_set_new(o, "err", json_string(err ? err : "no config"));
  } else {
    if (ds_s3_list(c, u.bucket, u.key, strcmp(delim, "-") ? delim : NULL, max_keys,
                   0, &opts, &l, &err))
      json_object_set_new(o, "err", json_string(err));
    json_t *keys = json_array(), *sizes = json_array(), *pre = json_array();
    for (size_t i = 0; i < l.n; i++) {
      json_array_append_new(keys, json_string(l.objects[i].key));
      json_array_append_new(sizes, json_integer((json_int_t)l.objects[i].size));
    }
    for (size_t i = 0; i < l.nprefixes; i++)
      json_array_append_new(pre, json_string(l.prefixes[i]));
    json_object_set_new(o, "keys", keys);
    json_object_set_new(o, "sizes", sizes);
    json_object_set_new(o, "prefixes", pre);
    ds_s3_listing_free(&l);
    ds_remote_url_free(&u);
  }
  ds_http_stats st;
  ds_http_get_stats(&st);
  json_object_set_new(o, "requests", json_integer((json_int_t)st.requests));
  char *t = json_dumps(o, JSON_COMPACT);
  printf("%s\n", t);
  free(t);
  free(err);
  json_decref(o);
  return 0;
}

static void print_results(ds_http_req *r) {
  for (size_t i = 0; i < nreq; i++) {
    json_t *o = json_object();
    char hex[DS_SHA256_HEX_LEN];
    ds_sha256_hex(r[i].body.data ? (void *)r[i].body.data : "", r[i].body.len, hex);
    json_object_set_new(o, "ok", json_boolean(r[i].err == NULL));
    json_object_set_new(o, "err", r[i].err ? json_string(r[i].err) : json_null());
    json_object_set_new(o, "status", json_integer(r[i].status));
    json_object_set_new(o, "size", r[i].size == DS_HTTP_SIZE_UNKNOWN
                                       ? json_null()
                                       : json_integer((json_int_t)r[i].size));
    json_object_set_new(o, "etag", json_string(r[i].etag));
    json_object_set_new(o, "version_id", json_string(r[i].version_id));
    json_object_set_new(o, "tries", json_integer(r[i].tries));
    json_object_set_new(o, "changed", json_boolean(r[i].changed));
    json_object_set_new(o, "len", json_integer((json_int_t)r[i].body.len));
    json_object_set_new(o, "cap", json_integer((json_int_t)r[i].body.cap));
    json_object_set_new(o, "sha256", json_string(hex));
    char *t = json_dumps(o, JSON_COMPACT);
    printf("%s\n", t);
    free(t);
    json_decref(o);
  }
}

int main(int argc, char **argv) {
  ds_http_opts_default(&opts);
  const char *if_match = NULL;
  uint64_t max_bytes = 0;
  int threads = 1, maps = 0, dump = 0, repeat = 1;
  proto = calloc((size_t)argc, sizeof *proto);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : "0";
    if (!strcmp(a, "--retries")) opts.retries = atoi(v), i++;
    else if (!strcmp(a, "--small-whole")) opts.small_whole = strtoull(v, NULL, 10), i++;
    else if (!strcmp(a, "--backoff-ms")) opts.backoff_base_ms = atol(v), i++;
    else if (!strcmp(a, "--timeout-ms")) opts.timeout_ms = atol(v), i++;
    else if (!strcmp(a, "--if-match")) if_match = v, i++;
    else if (!strcmp(a, "--max-bytes")) max_bytes = strtoull(v, NULL, 10), i++;
    else if (!strcmp(a, "--cancel-after-ms")) cancel_after_ms = atol(v), i++;
    else if (!strcmp(a, "--threads")) threads = atoi(v), i++;
    else if (!strcmp(a, "--sign-s3")) sign_region = v, i++;
    else if (!strcmp(a, "--endpoint")) ropt.endpoint = v, i++;
    else if (!strcmp(a, "--region")) ropt.region = v, i++;
    else if (!strcmp(a, "--anonymous")) ropt.anonymous = 1;
    else if (!strcmp(a, "--url-style"))
      ropt.url_style = !strcmp(v, "virtual") ? DS_URL_STYLE_VIRTUAL : DS_URL_STYLE_PATH, i++;
    else if (!strcmp(a, "--maps")) maps = 1;
    else if (!strcmp(a, "--dump")) dump = 1;
    else if (!strcmp(a, "--list-all") && i + 3 < argc)
      return list_all(argv[i + 1], atoi(argv[i + 2]), argv[i + 3]);
    else if (!strcmp(a, "--repeat")) repeat = atoi(v), i++;
    else {
      ds_http_req *r = &proto[nreq++];
      if (!strcmp(a, "range") && i + 3 < argc) {
        r->kind = DS_HTTP_RANGE;
        r->url = argv[i + 1];
        r->offset = strtoull(argv[i + 2], NULL, 10);
        r->length = strtoull(argv[i + 3], NULL, 10);
        i += 3;
      } else if (!strcmp(a, "suffix") && i + 2 < argc) {
        r->kind = DS_HTTP_SUFFIX;
        r->url = argv[i + 1];
        r->length = strtoull(argv[i + 2], NULL, 10);
        i += 2;
      } else if (!strcmp(a, "whole") && i + 1 < argc) {
        r->kind = DS_HTTP_WHOLE;
        r->url = argv[++i];
      } else if (!strcmp(a, "list") && i + 3 < argc && nreq <= 1000) {
        /* ListObjectsV2 of the bucket, prefix = the URL's key */
        ds_remote_url u;
        char *err = NULL;
        if (ds_remote_url_parse(argv[i + 1], &u, &err)) {
          fprintf(stderr, "remote_http: %s\n", err);
          return 2;
        }
        static ds_kv q[1000][4];
        ds_kv *kv = q[nreq - 1];
        size_t n = 0;
        kv[n++] = (ds_kv){"list-type", "2"};
        kv[n++] = (ds_kv){"prefix", strdup(u.key)};
        kv[n++] = (ds_kv){"max-keys", argv[i + 2]};
        if (strcmp(argv[i + 3], "-")) kv[n++] = (ds_kv){"continuation-token", argv[i + 3]};
        ds_remote_url_free(&u);
        r->kind = DS_HTTP_WHOLE;
        r->url = argv[i + 1];
        i += 3;
        if (resolve(r, kv, n)) return 2;
        continue;
      } else if (!strcmp(a, "head") && i + 1 < argc) {
        r->kind = DS_HTTP_HEAD;
        r->url = argv[++i];
      } else {
        fprintf(stderr, "remote_http: bad argument %s\n", a);
        return 2;
      }
      if (resolve(r, NULL, 0)) return 2;
    }
  }
  for (size_t i = 0; i < nreq; i++) {
    proto[i].if_match = if_match;
    proto[i].max_bytes = max_bytes;
  }
  int before = curl_mapped();
  if (dump) {
    ds_http_req *r = run_batch(NULL);
    int bad = nreq == 0 || r[0].err != NULL;
    if (bad)
      fprintf(stderr, "%s\n", nreq ? r[0].err : "no request");
    else
      fwrite(r[0].body.data, 1, r[0].body.len, stdout);
    for (size_t i = 0; i < nreq; i++) ds_http_req_free(&r[i]);
    free(r);
    free(proto);
    return bad;
  }
  for (int k = 1; k < repeat; k++) { /* earlier rounds: answers dropped */
    ds_http_req *r = run_batch(NULL);
    for (size_t i = 0; i < nreq; i++) ds_http_req_free(&r[i]);
    free(r);
  }
  if (threads <= 1) {
    ds_http_req *r = run_batch(NULL);
    print_results(r);
    for (size_t i = 0; i < nreq; i++) ds_http_req_free(&r[i]);
    free(r);
  } else {
    pthread_t *t = calloc((size_t)threads, sizeof *t);
    for (int k = 0; k < threads; k++) pthread_create(&t[k], NULL, run_batch, NULL);
    for (int k = 0; k < threads; k++) {
      void *res;
      pthread_join(t[k], &res);
      ds_http_req *r = res;
      print_results(r);
      for (size_t i = 0; i < nreq; i++) ds_http_req_free(&r[i]);
      free(r);
    }
    free(t);
  }
  ds_http_stats s;
  ds_http_get_stats(&s);
  printf("{\"requests\": %llu, \"retries\": %llu, \"bytes\": %llu, "
         "\"failures\": %llu, \"curl_before\": %s, \"curl_after\": %s}\n",
         (unsigned long long)s.requests, (unsigned long long)s.retries,
         (unsigned long long)s.bytes, (unsigned long long)s.failures,
         maps ? (before ? "true" : "false") : "null",
         maps ? (curl_mapped() ? "true" : "false") : "null");
  free(proto);
  for (size_t i = 0; i < nurls; i++) free(urls[i]);
  for (int k = 0; k < 4; k++)
    if (resolved[k]) ds_remote_config_free(&configs[k]);
  return 0;
}
