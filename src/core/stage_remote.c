/* stage_remote.c - a stage's publish to object storage: local files
 * uploaded at prepare, completed at publish (stage_remote.h). */
#include "stage_remote.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapped_file.h" /* ds_path_join */
#include "parallel.h"
#include "vfs.h"
#include "vfs_each.h"

/* One object to publish. */
typedef struct robj_item {
  char *local, *target;
  int depth;  /* folder levels below its item (top-level files last) */
  int own;    /* the object was published by this writer: no If-None-Match */
  int done;   /* completed (it is visible) */
  void *up;   /* its upload once prepared */
} robj_item;

struct ds_rpub {
  const ds_vfs_publisher *p;
  robj_item *v;
  size_t n, cap;
  int create;
  int published;    /* all of them: the dataset is out */
  char **dirs;      /* the folders' final paths (their listings change) */
  size_t ndirs;
};

/* FNV-1a of "dir/key": a remote target's name in local file names. */
static uint64_t target_hash(const char *dir, const char *key) {
  uint64_t h = 0xcbf29ce484222325u;
  for (const char *p = dir; *p; p++) h = (h ^ (uint8_t)*p) * 0x100000001b3u;
  h = (h ^ '/') * 0x100000001b3u;
  for (const char *p = key; *p; p++) h = (h ^ (uint8_t)*p) * 0x100000001b3u;
  return h;
}

/* $TMPDIR, else /tmp. */
static const char *tmp_root(void) {
  const char *t = getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

char *ds_rpub_local_dir(const char *dir, const char *key, char **err) {
  char *tmpl = ds_strf("%s/ds-remote-stage.%016llx.XXXXXX", tmp_root(),
                       (unsigned long long)target_hash(dir, key));
  if (!tmpl) return ds_err(err, "out of memory"), NULL;
  if (!mkdtemp(tmpl)) {
    ds_err(err, "%s: cannot create a local folder to stage the files in: %s", tmpl,
           strerror(errno));
    free(tmpl);
    return NULL;
  }
  return tmpl;
}

char *ds_rpub_lock_path(const char *dir, const char *key) {
  return ds_strf("%s/.ds-remote.%016llx.ds-lock", tmp_root(),
                 (unsigned long long)target_hash(dir, key));
}

int ds_rpub_clean_stale(const char *dir, const char *key, const char *mine, char **err) {
  char *prefix = ds_strf("ds-remote-stage.%016llx.", (unsigned long long)target_hash(dir, key));
  if (!prefix) return ds_err(err, "out of memory");
  ds_vfs_list *l = ds_vfs_list_open(NULL, tmp_root());
  int rc = 0;
  const char *name;
  while (l && rc == 0 && (name = ds_vfs_list_next(l)) != NULL) {
    if (strncmp(name, prefix, strlen(prefix)) != 0) continue;
    char *p = ds_path_join(tmp_root(), name);
    if (!p) rc = ds_err(err, "out of memory");
    else if (strcmp(p, mine) != 0) rc = ds_remove_tree(p, err);
    free(p);
  }
  if (l) ds_vfs_list_close(l);
  free(prefix);
  return rc;
}

/* Add an object to r (with its early upload, owned from now on). */
static int add(ds_rpub *r, const char *local, const char *target, int depth, void *early,
               char **err) {
  robj_item *v = ds_grow_cap(r->v, &r->cap, r->n, sizeof *v, 8);
  if (!v) {
    if (early) r->p->cancel(early);
    return ds_err(err, "out of memory");
  }
  r->v = v;
  memset(&v[r->n], 0, sizeof *v);
  v[r->n].local = strdup(local);
  v[r->n].target = strdup(target);
  v[r->n].depth = depth;
  v[r->n].up = early;
  if (!v[r->n].local || !v[r->n].target) {
    free(v[r->n].local);
    free(v[r->n].target);
    if (early) r->p->cancel(early);
    return ds_err(err, "out of memory");
  }
  r->n++;
  return 0;
}

typedef struct walk {
  ds_rpub *r;
  const char *target;
  int depth;
} walk;

/* ds_vfs_entry_fn: a folder's files as objects under target/. */
static int walk_entry(void *ctx, const char *path, const char *name, const ds_vfs_info *st,
                      char **err) {
  walk *w = ctx;
  char *t = ds_strf("%s/%s", w->target, name);
  if (!t) return ds_err(err, "out of memory");
  int rc = 0;
  if (st && st->kind == DS_VFS_DIR) {
    walk sub = {w->r, t, w->depth + 1};
    rc = ds_vfs_each(path, walk_entry, &sub, err);
  } else if (st && st->kind == DS_VFS_FILE) {
    rc = add(w->r, path, t, w->depth, NULL, err);
  } else {
    rc = ds_err(err, "%s: only files and folders can be uploaded", path);
  }
  free(t);
  return rc;
}

/* Deeper objects first, the rest in their order (a stable sort). */
static void order_by_depth(robj_item *v, size_t from, size_t to) {
  for (size_t i = from + 1; i < to; i++)
    for (size_t j = i; j > from && v[j - 1].depth < v[j].depth; j--) {
      robj_item x = v[j];
      v[j] = v[j - 1];
      v[j - 1] = x;
    }
}

/* 1 when something is at path, 0 when not, -1 with *err when we cannot
 * tell (a network or permission error: never taken for "absent"). */
static int exists(const ds_vfs_publisher *p, const char *path, char **err) {
  ds_vfs_info st;
  p->forget(path);
  if (ds_vfs_lstat(path, &st) == 0) return 1;
  if (errno == ENOENT || errno == ENOTDIR) return 0;
  const char *d = ds_vfs_detail();
  return ds_err(err, "%s: cannot tell whether it exists: %s", path, d ? d : strerror(errno));
}

/* The answers of exists() for many paths, asked at once. */
typedef struct exists_set {
  const ds_vfs_publisher *p;
  const robj_item *v;
  int *there;  /* exists()'s answer for v[i].target */
  char **errs; /* its error (-1) */
} exists_set;

/* ds_task_fn: exists() of one target. */
static void exists_task(void *ctx, size_t i) {
  exists_set *x = ctx;
  x->there[i] = exists(x->p, x->v[i].target, &x->errs[i]);
}

/* 1 when path is one of olds. */
static int among(const char *path, char *const *olds, size_t nolds) {
  for (size_t i = 0; i < nolds; i++)
    if (strcmp(olds[i], path) == 0) return 1;
  return 0;
}

/* 1 when an old path that is none of r's targets exists (it would have to
 * be deleted: refused), or when we cannot tell. */
static int stray_old(ds_rpub *r, char *const *olds, size_t nolds) {
  for (size_t i = 0; i < nolds; i++) {
    int mine = 0;
    for (size_t k = 0; k < r->n && !mine; k++) mine = strcmp(r->v[k].target, olds[i]) == 0;
    if (!mine && exists(r->p, olds[i], NULL) != 0) return 1;
  }
  return 0;
}

/* The checks of the top of stage_remote.h: which objects exist, and
 * whether publishing them can be made safe. */
static int check_targets(ds_rpub *r, const ds_rpub_item *items, size_t n, char *const *olds,
                         size_t nolds, char **err) {
  const char *there = NULL;
  /* every target asked at once (one round trip, not one per object) */
  int *ans = calloc(r->n, sizeof *ans);
  char **errs = calloc(r->n, sizeof *errs);
  if (!ans || !errs) {
    free(ans);
    free(errs);
    return ds_err(err, "out of memory");
  }
  exists_set x = {r->p, r->v, ans, errs};
  ds_parallel(r->n, exists_task, &x);
  int rc = 0;
  for (size_t i = 0; i < r->n && rc == 0; i++) {
    robj_item *o = &r->v[i];
    int e = ans[i];
    if (e < 0) {
      rc = ds_err(err, "%s", errs[i] ? errs[i] : "out of memory");
      break;
    }
    o->own = among(o->target, olds, nolds);
    for (size_t k = 0; k < n && !o->own; k++)
      o->own = items[k].is_dir && among(items[k].final, olds, nolds) &&
               strncmp(o->target, items[k].final, strlen(items[k].final)) == 0;
    if (!e) continue;
    if (r->create && !o->own)
      rc = ds_err(err, "%s: appeared after CREATE (mode=create never overwrites: "
                       "nothing was published)",
                  o->target);
    else
      there = o->target;
  }
  for (size_t i = 0; i < r->n; i++) free(errs[i]);
  free(errs);
  free(ans);
  if (rc) return -1;
  for (size_t k = 0; k < n && !there; k++) /* a folder's old objects */
    if (items[k].is_dir) {
      int e = exists(r->p, items[k].final, err);
      if (e < 0) return -1;
      if (e) there = items[k].final;
    }
  for (size_t i = 0; i < nolds && !there; i++) {
    int mine = 0;
    for (size_t k = 0; k < r->n && !mine; k++) mine = strcmp(r->v[k].target, olds[i]) == 0;
    if (mine) continue;
    int e = exists(r->p, olds[i], err);
    if (e < 0) return -1;
    if (e) there = olds[i];
  }
  /* objects of an unreadable set (no commit point: a writer killed in
   * its COMMIT left them) may be overwritten in any order: no reader can
   * combine them, before or after */
  int cp_file = !items[n - 1].is_dir;
  if (there && r->n > 1 && cp_file && !r->create && !stray_old(r, olds, nolds)) {
    int e = exists(r->p, r->v[r->n - 1].target, err);
    if (e < 0) return -1;
    if (!e) there = NULL;
  }
  if (there && (r->n > 1 || strcmp(there, r->v[0].target) != 0))
    return ds_err(err, "%s: exists, and replacing a dataset of %zu object%s on object storage "
                       "is refused: objects change one at a time there (no rename), so a "
                       "reader could see old and new objects mixed. Write to a new name or "
                       "prefix and point the readers to it, or delete the old objects and "
                       "write with mode=create (nothing was uploaded)",
                  there, r->n > nolds ? r->n : nolds, (r->n > nolds ? r->n : nolds) == 1 ? "" : "s");
  return 0;
}

static int complete_range(ds_rpub *r, size_t from, size_t end, char **err);

/* The per-object steps of one round, run at once (parallel.h): each
 * object's answer in rcs, its error in errs. */
typedef struct round {
  ds_rpub *r;
  size_t base; /* task i is object base + i */
  int *rcs;
  char **errs;
} round;

/* A round's arrays for r's objects; -1 when out of memory. */
static int round_new(round *x, ds_rpub *r) {
  x->r = r;
  x->base = 0;
  x->rcs = calloc(r->n, sizeof *x->rcs);
  x->errs = calloc(r->n, sizeof *x->errs);
  if (x->rcs && x->errs) return 0;
  free(x->rcs);
  free(x->errs);
  return -1;
}

/* The first failure of a round (in object order) into *err, the round
 * freed: 0 when every object's step went well. */
static int round_end(round *x, size_t n, char **err) {
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    if (x->rcs[i] && rc == 0)
      rc = ds_err(err, "%s", x->errs[i] ? x->errs[i] : "out of memory");
    free(x->errs[i]);
  }
  free(x->rcs);
  free(x->errs);
  return rc;
}

/* ds_task_fn: object i's uploads that a killed writer left at its name
 * aborted (its own early upload kept), then its file uploaded (the parts
 * not sent yet; a file not followed, whole). */
static void upload_task(void *ctx, size_t i) {
  round *x = ctx;
  ds_rpub *r = x->r;
  robj_item *o = &r->v[i];
  size_t aborted;
  if (r->p->clean(o->target, o->up, &aborted, &x->errs[i]) < 0) {
    x->rcs[i] = -1;
    return;
  }
  free(x->errs[i]); /* a server that cannot list them: nothing done */
  x->errs[i] = NULL;
  x->rcs[i] = o->up ? r->p->finish(o->up, &x->errs[i])
                    : r->p->prepare(o->target, o->local, &o->up, &x->errs[i]);
}

/* Every object uploaded (invisible), all of them at once. */
static int upload_all(ds_rpub *r, char **err) {
  round x;
  if (round_new(&x, r)) return ds_err(err, "out of memory");
  ds_parallel(r->n, upload_task, &x);
  return round_end(&x, r->n, err);
}

int ds_rpub_prepare(const ds_vfs_publisher *p, const ds_rpub_item *items, size_t n,
                    char *const *olds, size_t nolds, int create, ds_rpub **out,
                    char **err) {
  *out = NULL;
  ds_rpub *r = calloc(1, sizeof *r);
  if (!r) {
    for (size_t k = 0; k < n; k++)
      if (items[k].early) p->cancel(items[k].early);
    return ds_err(err, "out of memory");
  }
  r->p = p;
  r->create = create;
  int rc = 0;
  size_t k = 0;
  for (; k < n && rc == 0; k++) {
    if (!items[k].is_dir) {
      rc = add(r, items[k].local, items[k].final, 0, items[k].early, err);
      continue;
    }
    char **d = realloc(r->dirs, (r->ndirs + 1) * sizeof *d);
    if (!d || !(d[r->ndirs] = strdup(items[k].final))) {
      if (d) r->dirs = d;
      rc = ds_err(err, "out of memory");
      break;
    }
    r->dirs = d;
    r->ndirs++;
    size_t from = r->n;
    walk w = {r, items[k].final, 0};
    rc = ds_vfs_each(items[k].local, walk_entry, &w, err);
    if (rc == 0) order_by_depth(r->v, from, r->n);
    if (rc == 0 && r->n == from)
      rc = ds_err(err, "%s: an empty folder cannot be published on object storage",
                  items[k].final);
  }
  for (; k < n; k++) /* not reached: their early uploads aborted */
    if (items[k].early) p->cancel(items[k].early);
  if (rc == 0 && r->n == 0) rc = ds_err(err, "nothing to publish");
  if (rc == 0) rc = check_targets(r, items, n, olds, nolds, err);
  if (rc == 0) rc = upload_all(r, err);
  /* every object but the commit point appears now: what is left for the
   * commit step is one request */
  if (rc == 0) rc = complete_range(r, 0, r->n - 1, err);
  if (rc) {
    ds_rpub_free(r);
    return -1;
  }
  *out = r;
  return 0;
}

/* The readers' caches of the folders forgotten (their listings changed). */
static void forget_dirs(ds_rpub *r) {
  for (size_t i = 0; i < r->ndirs; i++) r->p->forget(r->dirs[i]);
}

/* Delete the objects completed so far (they are new: only a dataset none
 * of whose objects existed gets here with more than one); 0 when all
 * went. */
static int undo_completed(ds_rpub *r) {
  size_t undone = 0, n = 0;
  for (size_t i = 0; i < r->n; i++) n += r->v[i].done;
  if (n == 0) return 0;
  n = 0;
  for (size_t i = 0; i < r->n; i++) {
    if (!r->v[i].done) continue;
    n++;
    undone += r->p->remove(r->v[i].target, NULL) == 0;
    r->v[i].done = 0;
  }
  forget_dirs(r);
  return undone == n ? 0 : -1;
}

/* ds_task_fn: complete object i. */
static void complete_task(void *ctx, size_t i) {
  round *x = ctx;
  i += x->base;
  robj_item *o = &x->r->v[i];
  x->rcs[i] = x->r->p->commit(o->up, x->r->create && !o->own, &x->errs[i]);
  if (x->rcs[i] == 0) o->done = 1;
}

/* Complete the uploads of objects [from, end) all at once: either all
 * but the commit point (no reader sees a whole set without it, whatever
 * their order), or the commit point alone. On failure the ones completed
 * are deleted again: -1, nothing published. */
static int complete_range(ds_rpub *r, size_t from, size_t end, char **err) {
  round x;
  if (round_new(&x, r)) return ds_err(err, "out of memory");
  x.base = from;
  ds_parallel(end - from, complete_task, &x);
  size_t had = 0;
  for (size_t i = 0; i < end; i++) had += r->v[i].done;
  if (round_end(&x, end, err) == 0) {
    forget_dirs(r);
    return 0;
  }
  int gone = undo_completed(r);
  ds_err_prefix(err, had == 0 ? "nothing was published"
                     : gone == 0 ? "nothing was published (the objects completed with "
                                   "this one were deleted again)"
                                 : "nothing was published, but some objects completed "
                                   "with this one could not be deleted again");
  return -1;
}

int ds_rpub_commit(ds_rpub *r, char **err) {
  if (complete_range(r, r->n - 1, r->n, err)) return -1;
  r->published = 1;
  return 0;
}

void ds_rpub_free(ds_rpub *r) {
  if (!r) return;
  if (!r->published) undo_completed(r); /* rolled back: what was completed */
  for (size_t i = 0; i < r->ndirs; i++) free(r->dirs[i]);
  free(r->dirs);
  for (size_t i = 0; i < r->n; i++) {
    if (r->v[i].up) r->p->cancel(r->v[i].up);
    free(r->v[i].local);
    free(r->v[i].target);
  }
  free(r->v);
  free(r);
}
