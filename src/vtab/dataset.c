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

static const char *const mode_names[] = {"read", "create", "replace", NULL};
const ds_opt_spec ds_mode_specs[] = {
    {.name = "mode", .forms = DS_FORM_CREATE | DS_FORM_WRITER, .kind = DS_OPT_ENUM,
     .names = mode_names, .def = 0,
     .help = "read the dataset, or write a new one (create) or over an old one (replace)"},
    {0}};

char *ds_dataset_usage(const ds_dataset_ops *ops) {
  return ds_opt_usage(ops->usage, ops->options, DS_FORMS_ALL);
}

/* What every module's dataset takes whatever its form: max_value_bytes
 * and mode= (bound here, once), the row window (core/row_window.h). */
typedef struct shared_opts {
  ds_common_opts common;
  int64_t mode;
} shared_opts;
static const ds_opt_group shared_groups[] = {
    {ds_common_option_specs, offsetof(shared_opts, common)},
    {ds_mode_specs, offsetof(shared_opts, mode)},
    {0}};

/* Open with ops and fill the shared part. */
static int open_dataset(const ds_dataset_ops *ops, const char *path, const ds_options *o,
                        int tvf, const char *key, ds_dataset **out, char **err) {
  shared_opts so;
  ds_row_window win;
  if (ds_opt_read(shared_groups, o, &so, err) || ds_row_window_parse(o, &win, err)) {
    ds_err_prefix(err, path);
    return -1;
  }
  ds_dataset *d = calloc(1, ops->size);
  if (!d) return ds_err(err, "out of memory");
  d->ops = ops;
  d->refs = 1;
  d->mode = tvf ? 0 : (int)so.mode;
  d->form = tvf ? DS_FORM_TVF : d->mode ? DS_FORM_WRITER : DS_FORM_CREATE;
  /* endpoint=, region=, ... for remote paths: current while it opens */
  const ds_vfs_remote_opts *was = ds_vfs_remote_use(&so.common.remote);
  int rc = ops->open(d, path, o, tvf, err);
  ds_vfs_remote_use(was);
  if (rc) {
    ds_dataset_unref(d);
    return -1;
  }
  d->max_value_bytes = (uint64_t)so.common.max_value_bytes;
  d->remote = so.common.remote;
  d->remote.endpoint = so.common.remote.endpoint ? strdup(so.common.remote.endpoint) : NULL;
  d->remote.region = so.common.remote.region ? strdup(so.common.remote.region) : NULL;
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
  const ds_vfs_remote_opts *was = ds_vfs_remote_use(&d->remote);
  int yes = d->stale || (d->ops->saw_change && d->ops->saw_change(d)) ||
            (ds_recheck_due(&d->checked_ns) && d->ops->changed(d));
  ds_vfs_remote_use(was);
  return yes;
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
    char *u = ds_dataset_usage(ops);
    ds_err(err, DS_NO_PATH, u ? u : ops->usage);
    free(u);
    return -1;
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

int ds_dataset_open_options(const ds_dataset_ops *ops, const char *path, const ds_options *o,
                            ds_dataset **out, char **err) {
  *out = NULL;
  char *abs = ds_path_absolute(path, err);
  if (!abs) return -1;
  int rc = open_dataset(ops, abs, o, 0, "", out, err);
  free(abs);
  return rc;
}

int ds_dataset_for_call(const ds_dataset_ops *ops, ds_dataset **cache,
                        sqlite3_value *const *args, char **path_arg,
                        char **options_arg, char **err) {
  const char *path, *opts;
  char *key;
  if (ds_tvf_call((const sqlite3_value *const *)args, ops->usage, ops->options, &path, &opts,
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
  free((char *)d->remote.endpoint);
  free((char *)d->remote.region);
  free(d->key);
  free(d->path);
  free(d);
}
