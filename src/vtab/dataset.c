/* dataset.c - opening, caching, sharing and change detection of datasets
 * for every module (see dataset.h). */
#include "dataset.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/abspath.h"
#include "core/codec.h"
#include "core/common.h"
#include "vtab/vtab_util.h"

/* Open with ops and fill the shared part. */
static int open_dataset(const ds_dataset_ops *ops, const char *path, const ds_options *o,
                        int tvf, const char *key, ds_dataset **out, char **err) {
  int64_t max_value;
  ds_row_window win;
  if (ds_options_int(o, DS_OPTION_MAX_VALUE_BYTES, (int64_t)DS_MAX_VALUE_BYTES, 1,
                     (int64_t)1 << 62, &max_value, err) ||
      ds_row_window_parse(o, &win, err)) {
    ds_err_prefix(err, path);
    return -1;
  }
  ds_dataset *d = calloc(1, ops->size);
  if (!d) return ds_err(err, "out of memory");
  d->ops = ops;
  d->refs = 1;
  if (ops->open(d, path, o, tvf, err)) {
    ds_dataset_unref(d);
    return -1;
  }
  d->max_value = (uint64_t)max_value;
  d->win = win;
  d->key = strdup(key);
  d->path = strdup(path);
  if (!d->key || !d->path) {
    ds_dataset_unref(d);
    return ds_err(err, "out of memory");
  }
  *out = d;
  return 0;
}

/* 1 when d's files changed: marked so, seen by a read, or found by the
 * look at the disk made at most every 100 ms. */
static int is_changed(ds_dataset *d) {
  return d->stale || (d->ops->saw_change && d->ops->saw_change(d)) ||
         (ds_recheck_due(&d->checked_ns) && d->ops->changed(d));
}

int ds_options_create_only(const ds_options *o, int tvf, char **err) {
  static const char *const create_only[] = {"infer", "columns", NULL};
  for (const char *const *n = create_only; tvf && *n; n++)
    if (ds_options_get(o, *n))
      return ds_err(err, "option '%s' is only for the CREATE form (CREATE VIRTUAL TABLE t "
                         "USING module('path', %s=...)): the table-valued form has fixed "
                         "columns", *n, *n);
  return 0;
}

int ds_options_infer(const ds_options *o, int64_t def, int64_t *out, char **err) {
  const char *v = ds_options_get(o, "infer");
  if (v && strcasecmp(v, "all") == 0) {
    *out = INT64_MAX;
    return 0;
  }
  return ds_options_int(o, "infer", def, 0, INT64_MAX, out, err);
}

/* 1 when a CREATE argument is a whole option list in one quoted string
 * ('a=1, b=2'): a comma followed by `name=`. */
static int option_list_in_one(const char *arg) {
  for (const char *c = strchr(arg, ','); c; c = strchr(c + 1, ',')) {
    const char *p = c + 1;
    while (*p == ' ') p++;
    const char *name = p;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_') p++;
    while (*p == ' ') p++;
    if (p > name && *p == '=') return 1;
  }
  return 0;
}

int ds_dataset_create(const ds_dataset_ops *ops, int argc, const char *const *argv,
                      ds_options *o, ds_dataset **out, char **err) {
  memset(o, 0, sizeof *o);
  *out = NULL;
  char *given = argc > 3 ? ds_dequote(argv[3]) : NULL;
  if (!given && argc > 3) return ds_err(err, "out of memory");
  if (!given || !*given) {
    free(given);
    return ds_err(err, DS_NO_PATH, ops->usage);
  }
  /* resolved now and kept: a later chdir does not move the table */
  char *path = ds_path_absolute(given, err);
  free(given);
  if (!path) return -1;
  int rc = 0;
  for (int i = 4; i < argc && rc == 0; i++)
    if ((argv[i][0] == '\'' || argv[i][0] == '"') && option_list_in_one(argv[i])) {
      ds_err(err, "%s: %s holds several options in one string: in CREATE VIRTUAL TABLE "
                  "give each option as its own argument, unquoted (module('path', a=1, b=2))",
             path, argv[i]);
      rc = -1;
    } else if (ds_options_add(o, argv[i], err)) {
      ds_err_prefix(err, path);
      rc = -1;
    }
  if (rc == 0) rc = open_dataset(ops, path, o, 0, "", out, err);
  free(path);
  return rc;
}

int ds_dataset_for_call(const ds_dataset_ops *ops, ds_dataset **cache,
                        sqlite3_value *const *args, char **path_arg,
                        char **options_arg, char **err) {
  const char *path, *opts;
  char *key;
  if (ds_tvf_call((const sqlite3_value *const *)args, ops->usage, &path, &opts,
                  path_arg, options_arg, &key, err))
    return -1;
  ds_dataset *d = *cache;
  if (d && strcmp(d->key, key) == 0) {
    if (!is_changed(d)) {
      free(key);
      return 0;
    }
    ds_dataset_unref(d); /* its files changed: never touch those mappings again */
    *cache = NULL;
  }
  ds_options o = {0};
  int rc = opts ? ds_options_add_list(&o, opts, err) : 0;
  if (rc) ds_err_prefix(err, path);
  if (rc == 0) rc = open_dataset(ops, path, &o, 1, key, &d, err);
  ds_options_free(&o);
  free(key);
  if (rc) return -1;
  ds_dataset_unref(*cache);
  *cache = d;
  return 0;
}

int ds_dataset_check(ds_dataset *d, char **err) {
  if (!is_changed(d)) return 0;
  d->stale = 1;
  free(*err);
  *err = ds_changed_error(d->path);
  return -1;
}

int ds_dataset_reopen(ds_dataset **d, const char *path, const ds_options *o,
                      char **err) {
  ds_dataset *n;
  if (open_dataset((*d)->ops, path, o, 0, "", &n, err)) return -1;
  ds_dataset_unref(*d);
  *d = n;
  return 0;
}

void ds_dataset_ref(ds_dataset *d) { d->refs++; }

void ds_dataset_unref(ds_dataset *d) {
  if (!d || --d->refs > 0) return;
  d->ops->close(d);
  free(d->key);
  free(d->path);
  free(d);
}
