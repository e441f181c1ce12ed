/* test_stage_remote.c - core/stage_remote.c with a fake publisher whose
 * "bucket" is a local folder (targets are local paths, so the existence
 * checks go through the local backend): prepare completes every object
 * but the commit point and publish completes it; mode=create refuses what
 * exists; a replace of one object is fine, of several existing objects is
 * refused with nothing prepared, unless the commit point is missing; a
 * failed commit point deletes what prepare completed; freeing before the
 * publish (a rollback) deletes them and cancels every upload; a failed
 * upload leaves nothing; a folder's files go up deepest first; an early
 * upload (started while its file was written) is finished, not begun
 * again, kept by the cleanup, and aborted when the prepare fails. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/common.h"
#include "core/stage_remote.h"

/* The fake publisher's log and switches (its operations run on several
 * threads at once: core/parallel.c; mu guards the log). */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char order[1024]; /* basenames completed, space separated */
static int prepares, cancels, cleans, fail_prepare_at = -1;
static const char *fail_commit_of; /* a target whose commit fails */

typedef struct fake_up {
  char *target, *local;
  int done;
} fake_up;

static int f_prepare(const char *target, const char *local, void **up, char **err) {
  pthread_mutex_lock(&mu);
  int fail = prepares++ == fail_prepare_at;
  pthread_mutex_unlock(&mu);
  if (fail) return ds_err(err, "%s: upload failed (fake)", target);
  fake_up *u = calloc(1, sizeof *u);
  u->target = strdup(target);
  u->local = strdup(local);
  *up = u;
  return 0;
}

/* Copy the local file to the target: the object appears. */
static int f_commit(void *up, int create_only, char **err) {
  fake_up *u = up;
  if (fail_commit_of && strcmp(u->target, fail_commit_of) == 0)
    return ds_err(err, "%s: HTTP 403 AccessDenied (fake)", u->target);
  if (create_only && access(u->target, F_OK) == 0)
    return ds_err(err, "%s: HTTP 412 PreconditionFailed (fake)", u->target);
  char dir[256]; /* object storage has no folders: make the parents */
  snprintf(dir, sizeof dir, "%s", u->target);
  for (char *p = strchr(dir + 1, '/'); p; p = strchr(p + 1, '/')) {
    *p = 0;
    mkdir(dir, 0755);
    *p = '/';
  }
  FILE *in = fopen(u->local, "rb"), *out = fopen(u->target, "wb");
  char buf[256];
  size_t n;
  while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
  if (in) fclose(in);
  if (out) fclose(out);
  const char *b = strrchr(u->target, '/');
  pthread_mutex_lock(&mu);
  strcat(order, b ? b + 1 : u->target);
  strcat(order, " ");
  pthread_mutex_unlock(&mu);
  u->done = 1;
  return 0;
}

static void f_cancel(void *up) {
  fake_up *u = up;
  cancels += !u->done;
  free(u->target);
  free(u->local);
  free(u);
}

static int f_remove(const char *target, char **err) {
  (void)err;
  unlink(target);
  return 0;
}

static void *kept; /* the last keep a clean was given */
static int finishes;

static int f_clean(const char *target, void *keep, size_t *n, char **err) {
  (void)target;
  (void)err;
  pthread_mutex_lock(&mu);
  kept = keep;
  cleans++;
  pthread_mutex_unlock(&mu);
  *n = 0;
  return 0;
}

static void f_forget(const char *target) { (void)target; }

/* An early upload's finish: it is now as prepare's. */
static int f_finish(void *up, char **err) {
  (void)up;
  (void)err;
  pthread_mutex_lock(&mu);
  finishes++;
  pthread_mutex_unlock(&mu);
  return 0;
}

static const ds_vfs_publisher fake = {"fake",   f_prepare, f_commit, f_cancel, f_remove,
                                      f_clean, f_forget, NULL,     NULL,     NULL,
                                      f_finish};

/* An upload started while its file was written (what the early op makes). */
static void *early_up(const char *target, const char *local) {
  fake_up *u = calloc(1, sizeof *u);
  u->target = strdup(target);
  u->local = strdup(local);
  return u;
}

static char tmp[64];

/* tmp/name (a static buffer of its own: the program makes fewer than 128). */
static const char *at(const char *name) {
  static char b[128][256];
  static int k;
  if (k == 128) abort();
  snprintf(b[k], sizeof b[k], "%s/%s", tmp, name);
  return b[k++];
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

static int has(const char *path) { return access(path, F_OK) == 0; }

static void reset(void) {
  order[0] = 0;
  prepares = cancels = cleans = finishes = 0;
  kept = NULL;
  fail_prepare_at = -1;
  fail_commit_of = NULL;
}

int main(void) {
  snprintf(tmp, sizeof tmp, "/tmp/ds_stage_remote_XXXXXX");
  if (!mkdtemp(tmp)) return 1;
  mkdir(at("bkt"), 0755);
  put(at("l0"), "zero");
  put(at("l1"), "one");
  put(at("l2"), "two");
  char *err = NULL;
  ds_rpub *r = NULL;

  /* create, three objects (publish order: s1 and s2, then s0 the commit point) */
  reset();
  ds_rpub_item three[] = {{at("l1"), 0, at("bkt/s1"), NULL}, {at("l2"), 0, at("bkt/s2"), NULL},
                          {at("l0"), 0, at("bkt/s0"), NULL}};
  CHECK(ds_rpub_prepare(&fake, three, 3, NULL, 0, 1, &r, &err) == 0);
  CHECK(has(at("bkt/s1")) && has(at("bkt/s2")));
  CHECK(!has(at("bkt/s0"))); /* the commit point waits for publish */
  CHECK(cleans == 3);        /* leftovers looked for at every name */
  CHECK(ds_rpub_commit(r, &err) == 0);
  /* s1 and s2 completed at once (either first), the commit point last */
  CHECK_MSG(strcmp(order, "s1 s2 s0 ") == 0 || strcmp(order, "s2 s1 s0 ") == 0, "order %s",
            order);
  ds_rpub_free(r);
  CHECK(cancels == 0);

  /* create over an existing object: refused, nothing uploaded */
  reset();
  CHECK(ds_rpub_prepare(&fake, three, 3, NULL, 0, 1, &r, &err) == -1);
  CHECK_CONTAINS(err, "appeared after CREATE");
  CHECK(prepares == 0);
  free(err);
  err = NULL;

  /* replace of several existing objects: refused (mixed window) */
  reset();
  CHECK(ds_rpub_prepare(&fake, three, 3, NULL, 0, 0, &r, &err) == -1);
  CHECK_CONTAINS(err, "mixed");
  CHECK_CONTAINS(err, "new name or prefix");
  CHECK(prepares == 0);
  free(err);
  err = NULL;

  /* ... unless the commit point is missing (a killed COMMIT's leftovers) */
  reset();
  unlink(at("bkt/s0"));
  put(at("bkt/s1"), "old");
  CHECK(ds_rpub_prepare(&fake, three, 3, NULL, 0, 0, &r, &err) == 0);
  CHECK(ds_rpub_commit(r, &err) == 0);
  ds_rpub_free(r);
  CHECK_MSG(strcmp(order, "s1 s2 s0 ") == 0 || strcmp(order, "s2 s1 s0 ") == 0, "order %s",
            order);

  /* replace of one object: fine, the new bytes */
  reset();
  ds_rpub_item one[] = {{at("l2"), 0, at("bkt/s0"), NULL}};
  CHECK(ds_rpub_prepare(&fake, one, 1, NULL, 0, 0, &r, &err) == 0);
  CHECK(ds_rpub_commit(r, &err) == 0);
  ds_rpub_free(r);
  FILE *f = fopen(at("bkt/s0"), "rb");
  char got[16] = "";
  if (f) {
    CHECK(fgets(got, sizeof got, f) != NULL);
    fclose(f);
  }
  CHECK_STR(got, "two");

  /* the commit point fails: what prepare completed is deleted again */
  reset();
  ds_rpub_item fresh[] = {{at("l1"), 0, at("bkt/n1"), NULL}, {at("l0"), 0, at("bkt/n0"), NULL}};
  fail_commit_of = at("bkt/n0");
  CHECK(ds_rpub_prepare(&fake, fresh, 2, NULL, 0, 1, &r, &err) == 0);
  CHECK(has(at("bkt/n1")));
  CHECK(ds_rpub_commit(r, &err) == -1);
  CHECK_CONTAINS(err, "nothing was published");
  CHECK_CONTAINS(err, "AccessDenied");
  CHECK(!has(at("bkt/n1")) && !has(at("bkt/n0")));
  free(err);
  err = NULL;
  ds_rpub_free(r);
  CHECK(cancels == 1); /* the commit point's upload */

  /* a rollback after prepare: completed objects deleted, uploads cancelled */
  reset();
  CHECK(ds_rpub_prepare(&fake, fresh, 2, NULL, 0, 1, &r, &err) == 0);
  CHECK(has(at("bkt/n1")));
  ds_rpub_free(r);
  CHECK(!has(at("bkt/n1")) && !has(at("bkt/n0")));
  CHECK(cancels == 1);

  /* an upload fails: nothing completed, the one before cancelled */
  reset();
  fail_prepare_at = 1;
  CHECK(ds_rpub_prepare(&fake, fresh, 2, NULL, 0, 1, &r, &err) == -1);
  CHECK_CONTAINS(err, "upload failed");
  CHECK(!has(at("bkt/n1")) && !has(at("bkt/n0")));
  CHECK(cancels == 1);
  CHECK(r == NULL);
  free(err);
  err = NULL;

  /* an early upload: prepare finishes it (no new upload), the cleanup
   * of killed writers' uploads keeps it, the commit completes it */
  reset();
  void *e1 = early_up(at("bkt/e1"), at("l1"));
  ds_rpub_item early[] = {{at("l1"), 0, at("bkt/e1"), e1}};
  if (CHECK(ds_rpub_prepare(&fake, early, 1, NULL, 0, 1, &r, &err) == 0)) {
    CHECK(finishes == 1 && prepares == 0);
    CHECK(kept == e1);
    CHECK(ds_rpub_commit(r, &err) == 0);
    ds_rpub_free(r);
  }
  CHECK(has(at("bkt/e1")) && cancels == 0);
  /* ... refused (mode=create over what exists): the early upload aborted */
  reset();
  void *e2 = early_up(at("bkt/e1"), at("l2"));
  ds_rpub_item refused[] = {{at("l2"), 0, at("bkt/e1"), e2}};
  CHECK(ds_rpub_prepare(&fake, refused, 1, NULL, 0, 1, &r, &err) == -1);
  CHECK(finishes == 0 && cancels == 1);
  free(err);
  err = NULL;
  /* ... an item never reached (a folder before it fails): aborted too */
  reset();
  void *e3 = early_up(at("bkt/e3"), at("l0"));
  ds_rpub_item unreached[] = {{at("nofolder"), 1, at("bkt/nf"), NULL},
                              {at("l0"), 0, at("bkt/e3"), e3}};
  CHECK(ds_rpub_prepare(&fake, unreached, 2, NULL, 0, 1, &r, &err) == -1);
  CHECK(cancels == 1);
  free(err);
  err = NULL;

  /* a folder: deeper files first, the top-level ones last */
  reset();
  mkdir(at("d"), 0755);
  mkdir(at("d/sub"), 0755);
  put(at("d/top"), "t");
  put(at("d/sub/deep"), "d");
  ds_rpub_item dir[] = {{at("d"), 1, at("bkt/ds"), NULL}};
  if (CHECK(ds_rpub_prepare(&fake, dir, 1, NULL, 0, 1, &r, &err) == 0)) {
    CHECK(ds_rpub_commit(r, &err) == 0);
    ds_rpub_free(r);
  }
  CHECK_STR(order, "deep top ");
  CHECK(has(at("bkt/ds/sub/deep")) && has(at("bkt/ds/top")));

  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
  CHECK(system(cmd) == 0);
  return check_exit();
}
