/* remote_sign.c - signs S3 requests described on stdin, one JSON object a
 * line, with ds_s3_sign_headers, and prints for each one JSON line of what
 * would be sent, for tests/conformance/test_remote_sigv4.py to compare with
 * botocore's signer:
 *   in:  {"method", "host", "path_prefix" ("/bucket" or ""), "key" (decoded),
 *         "query": [[name, value], ...] (decoded), "range", "if_match",
 *         "payload_hash" (null: UNSIGNED-PAYLOAD), "region", "now" (epoch
 *         seconds), "access_key", "secret_key", "session_token"}
 *   out: {"target": "<encoded path>[?<query>]", "headers": {name: value}}
 *   or   {"error": "..."} */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/s3_sign.h"

/* A string member or NULL. */
static const char *str(json_t *o, const char *k) {
  json_t *v = json_object_get(o, k);
  return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Sign one request; returns the JSON line to print (malloc'd). */
static char *sign_one(json_t *in) {
  const char *prefix = str(in, "path_prefix"), *key = str(in, "key");
  ds_buf path = {0}, query = {0}, hdrs = {0};
  char *err = NULL;
  json_t *q = json_object_get(in, "query");
  size_t nq = json_array_size(q);
  ds_kv *kv = calloc(nq ? nq : 1, sizeof *kv);
  for (size_t i = 0; i < nq; i++) {
    kv[i].name = json_string_value(json_array_get(json_array_get(q, i), 0));
    kv[i].value = json_string_value(json_array_get(json_array_get(q, i), 1));
  }
  ds_buf_puts(&path, prefix ? prefix : "");
  ds_buf_puts(&path, "/");
  ds_uri_encode(&path, key, strlen(key), 1);
  ds_buf_append(&path, "", 1);
  ds_sigv4_canonical_query(&query, kv, nq);
  ds_buf_append(&query, "", 1);
  ds_s3_sign_in s = {0};
  s.method = str(in, "method");
  s.host = str(in, "host");
  s.path = (char *)path.data;
  s.query = kv;
  s.nquery = nq;
  s.range = str(in, "range");
  s.if_match = str(in, "if_match");
  s.payload_hash = str(in, "payload_hash");
  s.region = str(in, "region");
  s.now = (time_t)json_integer_value(json_object_get(in, "now"));
  ds_s3_keys k = {str(in, "access_key"), str(in, "secret_key"),
                  str(in, "session_token")};
  json_t *out = json_object();
  if (ds_s3_sign_headers(&s, &k, &hdrs, &err)) {
    json_object_set_new(out, "error", json_string(err));
  } else {
    ds_buf target = {0};
    ds_buf_printf(&target, "%s%s%s", (char *)path.data, nq ? "?" : "",
                  (char *)query.data);
    json_object_set_new(out, "target", json_stringn((char *)target.data, target.len));
    ds_buf_free(&target);
    json_t *h = json_object();
    char *save = NULL;
    ds_buf_append(&hdrs, "", 1);
    for (char *line = strtok_r((char *)hdrs.data, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
      char *colon = strstr(line, ": ");
      if (!colon) continue;
      *colon = 0;
      json_object_set_new(h, line, json_string(colon + 2));
    }
    json_object_set_new(out, "headers", h);
  }
  char *text = json_dumps(out, JSON_COMPACT);
  json_decref(out);
  free(kv);
  free(err);
  ds_buf_free(&path);
  ds_buf_free(&query);
  ds_buf_free(&hdrs);
  return text;
}

int main(void) {
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, stdin) > 0) {
    json_error_t e;
    json_t *in = json_loads(line, 0, &e);
    if (!in) {
      printf("{\"error\": \"bad input line\"}\n");
      continue;
    }
    char *out = sign_one(in);
    printf("%s\n", out ? out : "{\"error\": \"out of memory\"}");
    free(out);
    json_decref(in);
  }
  free(line);
  return 0;
}
