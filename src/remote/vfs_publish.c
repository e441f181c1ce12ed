/* vfs_publish.c - the publishers of s3:// and gs:// (core/vfs_publish.h)
 * over the multipart upload of s3_upload.h, its parts sent by s3_parts.h
 * (several in flight). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "core/vfs.h"
#include "core/vfs_publish.h"
#include "remote/remote_cache.h"
#include "remote/remote_probe.h"
#include "remote/s3_parts.h"
#include "remote/s3_upload.h"

/* One upload: its object, the parts being sent (an early upload, until
 * finished) and the multipart upload prepared for it. */
typedef struct upload {
  ds_robj obj;
  char *local;
  ds_s3_parts *parts;
  ds_s3_mpu mpu;
  int committed;
} upload;

static int p_prepare(const char *target, const char *local, void **up, char **err) {
  *up = NULL;
  upload *u = calloc(1, sizeof *u);
  if (!u) return ds_err(err, "out of memory");
  if (ds_robj_make(target, &u->obj, err)) {
    free(u);
    return -1;
  }
  ds_vfs_info st;
  ds_s3_parts *parts = NULL;
  int rc = 0;
  if (ds_vfs_stat(local, &st) != 0)
    rc = ds_err(err, "%s: cannot read the staged file: %s", local, strerror(errno));
  else if ((rc = ds_s3_parts_start(&u->obj, local, &parts, err)) == 0)
    rc = ds_s3_parts_finish(parts, st.size, &u->mpu, err);
  ds_s3_parts_free(parts);
  if (rc) {
    ds_robj_free(&u->obj);
    free(u);
    return -1;
  }
  *up = u;
  return 0;
}

static int p_commit(void *up, int create_only, char **err) {
  upload *u = up;
  if (u->committed) return 0;
  if (ds_s3_mpu_complete(&u->obj, &u->mpu, create_only ? "*" : NULL, err)) return -1;
  u->committed = 1;
  ds_probe_forget(u->obj.url);
  ds_rcache_drop(&u->obj); /* a fresh entry must not outlive what it describes */
  return 0;
}

static void p_cancel(void *up) {
  upload *u = up;
  if (!u) return;
  ds_s3_parts_free(u->parts); /* an early upload not finished: aborted */
  if (!u->committed && u->mpu.upload_id) ds_s3_mpu_abort(&u->obj, u->mpu.upload_id, NULL);
  ds_s3_mpu_free(&u->mpu);
  ds_robj_free(&u->obj);
  free(u->local);
  free(u);
}

static int p_early(const char *target, const char *local, void **up, char **err) {
  *up = NULL;
  upload *u = calloc(1, sizeof *u);
  if (!u || !(u->local = strdup(local))) {
    free(u);
    return ds_err(err, "out of memory");
  }
  if (ds_robj_make(target, &u->obj, err)) {
    free(u->local);
    free(u);
    return -1;
  }
  if (ds_s3_parts_start(&u->obj, local, &u->parts, err)) {
    p_cancel(u);
    return -1;
  }
  *up = u;
  return 0;
}

static void p_feed(void *up, uint64_t final) {
  upload *u = up;
  if (u->parts) ds_s3_parts_feed(u->parts, final);
}

static void p_cut(void *up, uint64_t size) {
  upload *u = up;
  if (u->parts) ds_s3_parts_cut(u->parts, size);
}

static int p_finish(void *up, char **err) {
  upload *u = up;
  ds_vfs_info st;
  int rc;
  if (ds_vfs_stat(u->local, &st) != 0)
    rc = ds_err(err, "%s: cannot read the staged file: %s", u->local, strerror(errno));
  else
    rc = ds_s3_parts_finish(u->parts, st.size, &u->mpu, err);
  ds_s3_parts_free(u->parts); /* aborted on failure */
  u->parts = NULL;
  return rc;
}

/* The upload id of an upload of ours (NULL when none yet). */
static const char *upload_id_of(void *up) {
  upload *u = up;
  if (!u) return NULL;
  return u->parts ? ds_s3_parts_upload_id(u->parts) : u->mpu.upload_id;
}

static int p_remove(const char *target, char **err) {
  ds_robj o;
  if (ds_robj_make(target, &o, err)) return -1;
  int rc = ds_s3_delete(&o, err);
  ds_probe_forget(o.url);
  ds_rcache_drop(&o);
  ds_robj_free(&o);
  return rc;
}

static int p_clean(const char *target, void *keep, size_t *n, char **err) {
  *n = 0;
  ds_robj o;
  if (ds_robj_make(target, &o, err)) return -1;
  int rc = ds_s3_abort_open(&o, upload_id_of(keep), n, err);
  ds_robj_free(&o);
  return rc;
}

static void p_forget(const char *target) {
  ds_robj o;
  if (ds_robj_make(target, &o, NULL)) return;
  ds_probe_forget(o.url);
  ds_rcache_drop(&o);
  ds_robj_free(&o);
}

const ds_vfs_publisher ds_vfs_s3_publisher = {"s3",    p_prepare, p_commit, p_cancel,
                                              p_remove, p_clean,   p_forget, p_early,
                                              p_feed,   p_cut,     p_finish};
const ds_vfs_publisher ds_vfs_gs_publisher = {"gs",    p_prepare, p_commit, p_cancel,
                                              p_remove, p_clean,   p_forget, p_early,
                                              p_feed,   p_cut,     p_finish};
