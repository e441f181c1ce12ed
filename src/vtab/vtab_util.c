/* vtab_util.c - error plumbing between readers (malloc'd messages) and
 * SQLite (sqlite3_malloc'd messages prefixed with the module name). */
#include "vtab_util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/common.h"
#include "core/utf8.h"

/* msg as valid UTF-8 (SQLite's clients decode error text as UTF-8:
 * Python's sqlite3 raises UnicodeDecodeError and loses the message
 * otherwise); frees msg. NULL stays NULL (out of memory). */
static char *valid_text(char *msg) {
  if (!msg || ds_utf8_valid((const uint8_t *)msg, strlen(msg))) return msg;
  char *fixed = ds_utf8_fix(msg);
  free(msg);
  return fixed;
}

int ds_set_error(char **pzErr, const char *module, char *msg) {
  msg = valid_text(msg);
  if (pzErr) {
    sqlite3_free(*pzErr);
    *pzErr = sqlite3_mprintf("%s: %s", module, msg ? msg : "out of memory");
  }
  free(msg);
  return SQLITE_ERROR;
}

int ds_vtab_error(sqlite3_vtab *vtab, const char *module, char *msg) {
  return ds_set_error(&vtab->zErrMsg, module, msg);
}

void ds_result_error(sqlite3_context *ctx, const char *module, char *msg) {
  msg = valid_text(msg);
  char *m = sqlite3_mprintf("%s: %s", module, msg ? msg : "out of memory");
  if (m) sqlite3_result_error(ctx, m, -1);
  else sqlite3_result_error_nomem(ctx);
  sqlite3_free(m);
  free(msg);
}

int ds_recheck_due(int64_t *last_ns) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
  if (*last_ns && now - *last_ns < 100000000) return 0;
  *last_ns = now;
  return 1;
}

char *ds_changed_error(const char *path) {
  return ds_strf("%s: the dataset's files changed on disk since the table was "
                 "created; drop the table and create it again",
                 path);
}

int ds_tvf_call(const sqlite3_value *const *args, const char *usage,
                const ds_opt_group *options, const char **path, const char **opts, char **path_arg,
                char **options_arg, char **key, char **err) {
  sqlite3_value *pv = (sqlite3_value *)args[0], *ov = (sqlite3_value *)args[1];
  *path = pv ? (const char *)sqlite3_value_text(pv) : NULL;
  *opts = ov ? (const char *)sqlite3_value_text(ov) : NULL;
  if (!*path || !**path) {
    char *u = ds_opt_usage(usage, options, DS_FORMS_ALL);
    ds_err(err, DS_NO_PATH, u ? u : usage);
    free(u);
    return -1;
  }
  *path_arg = sqlite3_mprintf("%s", *path);
  *options_arg = *opts ? sqlite3_mprintf("%s", *opts) : NULL;
  *key = ds_strf("%s\n%s", *path, *opts ? *opts : "");
  return *key ? 0 : ds_err(err, "out of memory");
}
