/* staged_dir.c - a directory dataset written through a stage (see
 * staged_dir.h). */
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/mapped_file.h"
#include "core/staged_dir.h"

struct ds_staged_dir {
  ds_stage *stage;
  char *path;              /* the target directory */
  const ds_dir_format *fmt;
  const void *cfg;
  void *w;                 /* the format writer of this transaction */
  const char *tmp;         /* its temporary directory (owned by the stage) */
  int published;
};

int ds_staged_dir_target(const char *path, char **dir, char **key, char **err) {
  size_t n = strlen(path);
  while (n > 1 && path[n - 1] == '/') n--; /* "data/train/" names data/train */
  char *p = strndup(path, n);
  if (!p) return ds_err(err, "out of memory");
  char *slash = strrchr(p, '/');
  *dir = slash ? strndup(p, (size_t)(slash - p) + (slash == p)) : strdup(".");
  *key = strdup(slash ? slash + 1 : p);
  free(p);
  if (!*dir || !*key) return ds_err(err, "out of memory");
  if (!**key || !strcmp(*key, ".") || !strcmp(*key, ".."))
    return ds_err(err, "%s: name a new directory for the dataset", path);
  return 0;
}

/* A format without a check of its own: any directory. */
static int any_dir(const char *path, char **err) {
  int is_dir = 0;
  if (ds_path_exists(path, &is_dir) && !is_dir)
    return ds_err(err, "%s: not a directory (mode=replace replaces only a "
                       "dataset directory; move it away first)", path);
  return 0;
}

int ds_staged_dir_open(ds_stage *stage, const char *path, const ds_dir_format *fmt,
                       const void *cfg, ds_staged_dir **out, char **err) {
  *out = NULL;
  ds_stage_set_own(stage, fmt->own ? fmt->own : any_dir);
  if (ds_stage_claim(stage, path, 1, err)) return -1;
  ds_staged_dir *d = calloc(1, sizeof *d);
  if (!d || !(d->path = strdup(path))) {
    free(d);
    return ds_err(err, "out of memory");
  }
  d->stage = stage;
  d->fmt = fmt;
  d->cfg = cfg;
  *out = d;
  return 0;
}

void ds_staged_dir_close(ds_staged_dir *d) {
  if (!d) return;
  ds_staged_dir_abort(d);
  free(d->path);
  free(d);
}

int ds_staged_dir_begin(ds_staged_dir *d, char **err) {
  if (d->w) return 0;
  if (ds_stage_dir(d->stage, d->fmt->name, &d->tmp, err)) return -1;
  if (d->fmt->open(d->tmp, d->cfg, &d->w, err)) {
    d->w = NULL;
    ds_err_prefix(err, d->path);
    return -1;
  }
  /* after a publish: the published rows first (abort frees the writer) */
  if (d->published && d->fmt->replay(d->w, d->path, err)) {
    ds_err_prefix(err, d->path);
    return -1;
  }
  return 0;
}

int ds_staged_dir_add(ds_staged_dir *d, const ds_value *v, char **err) {
  if (!d->w && ds_staged_dir_begin(d, err)) return -1;
  return d->fmt->add(d->w, v, err);
}

uint64_t ds_staged_dir_count(const ds_staged_dir *d) {
  return d->w ? d->fmt->count(d->w) : 0;
}

int ds_staged_dir_mark(ds_staged_dir *d, void **mark, char **err) {
  if (!d->w && ds_staged_dir_begin(d, err)) return -1;
  uint64_t *m = malloc(sizeof *m);
  if (!m) return ds_err(err, "out of memory");
  *m = d->fmt->count(d->w);
  *mark = m;
  return 0;
}

int ds_staged_dir_rollback_to(ds_staged_dir *d, const void *mark, char **err) {
  uint64_t n = *(const uint64_t *)mark;
  if (!d->w || d->fmt->count(d->w) == n) return 0;
  return d->fmt->truncate(d->w, n, err);
}

int ds_staged_dir_prepare(ds_staged_dir *d, char **err) {
  if (!d->w && ds_staged_dir_begin(d, err)) return -1;
  if (d->fmt->finish(d->w, err)) {
    ds_err_prefix(err, d->path);
    return -1;
  }
  if (ds_stage_final(d->stage, d->tmp, d->path, err)) return -1;
  return ds_stage_sync(d->stage, err);
}

int ds_staged_dir_publish(ds_staged_dir *d, char **err) {
  int rc = ds_stage_publish(d->stage, err); /* 1: published, with an error */
  if (rc < 0) return -1;
  d->fmt->free(d->w);
  d->w = NULL;
  d->tmp = NULL;
  d->published = 1;
  return rc;
}

void ds_staged_dir_abort(ds_staged_dir *d) {
  if (d->w) d->fmt->free(d->w);
  d->w = NULL;
  d->tmp = NULL;
  ds_stage_discard(d->stage);
}

const char *ds_staged_dir_published(const ds_staged_dir *d) {
  return d->published ? d->path : NULL;
}

const void *ds_staged_dir_config(const ds_staged_dir *d) { return d->cfg; }
void *ds_staged_dir_writer(const ds_staged_dir *d) { return d->w; }
