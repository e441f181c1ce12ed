/* stage_early.c - a staged file uploaded as it is written (stage_early.h). */
#include "stage_early.h"

#include <stdlib.h>
#include <string.h>

struct ds_stage_early {
  const ds_vfs_publisher *pub;
  const ds_vfs_remote_opts *ropts;
  ds_afile *f;
  char *target;
  void *up;      /* the upload once started */
  int off;       /* could not start: prepare uploads the file whole */
  uint64_t fed;  /* whole parts of bytes told to the publisher */
};

/* ds_afile's on_grow: start the upload at the first whole part, then tell
 * it each new whole part. */
static void on_grow(void *ctx, uint64_t on_disk) {
  ds_stage_early *e = ctx;
  if (e->off || on_disk < DS_EARLY_MIN) return;
  uint64_t whole = on_disk - on_disk % DS_EARLY_MIN;
  if (e->up && whole <= e->fed) return;
  if (!e->up) {
    const ds_vfs_remote_opts *was = e->ropts ? ds_vfs_remote_use(e->ropts) : NULL;
    char *err = NULL;
    if (e->pub->early(e->target, e->f->path, &e->up, &err)) {
      e->off = 1; /* prepare uploads it whole and reports any error */
      e->up = NULL;
    }
    free(err);
    if (e->ropts) ds_vfs_remote_use(was);
    if (e->off) return;
  }
  e->fed = whole;
  e->pub->feed(e->up, on_disk);
}

/* ds_afile's on_cut: the parts past size are sent again. */
static void on_cut(void *ctx, uint64_t size) {
  ds_stage_early *e = ctx;
  if (size < e->fed) e->fed = size - size % DS_EARLY_MIN;
  if (e->up) e->pub->cut(e->up, size);
}

ds_stage_early *ds_early_new(const ds_vfs_publisher *pub, const ds_vfs_remote_opts *ropts,
                             ds_afile *f, const char *target) {
  if (!pub->early) return NULL;
  ds_stage_early *e = calloc(1, sizeof *e);
  if (!e || !(e->target = strdup(target))) {
    free(e);
    return NULL;
  }
  e->pub = pub;
  e->ropts = ropts;
  e->f = f;
  f->on_grow = on_grow;
  f->on_cut = on_cut;
  f->hook_ctx = e;
  on_grow(e, f->size - f->nbuf); /* bytes already there */
  return e;
}

/* Remove f's hooks. */
static void unhook(ds_stage_early *e) {
  if (e->f && e->f->hook_ctx == e) {
    e->f->on_grow = NULL;
    e->f->on_cut = NULL;
    e->f->hook_ctx = NULL;
  }
}

void *ds_early_take(ds_stage_early *e, const char *target) {
  if (!e || !e->up || strcmp(e->target, target) != 0) return NULL;
  void *up = e->up;
  e->up = NULL;
  e->off = 1;
  unhook(e);
  return up;
}

void ds_early_free(ds_stage_early *e) {
  if (!e) return;
  unhook(e);
  if (e->up) {
    const ds_vfs_remote_opts *was = e->ropts ? ds_vfs_remote_use(e->ropts) : NULL;
    e->pub->cancel(e->up);
    if (e->ropts) ds_vfs_remote_use(was);
  }
  free(e->target);
  free(e);
}
