/* open_stable.c - opens of multi-file datasets that see a concurrent
 * replace and retry, and the opening of a spec's list of files through
 * them (see open_stable.h). */
#include "open_stable.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "vfs.h"

int ds_path_set_add(ds_path_set *s, const char *path) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 8;
    char **p = realloc(s->paths, cap * sizeof *p);
    if (!p) return -1;
    s->paths = p;
    ds_path_id *q = realloc(s->ids, cap * sizeof *q);
    if (!q) return -1;
    s->ids = q;
    s->cap = cap;
  }
  if (!(s->paths[s->n] = strdup(path))) return -1;
  memset(&s->ids[s->n], 0, sizeof s->ids[s->n]);
  s->n++;
  return 0;
}

void ds_path_set_free(ds_path_set *s) {
  for (size_t i = 0; i < s->n; i++) free(s->paths[i]);
  free(s->paths);
  free(s->ids);
  memset(s, 0, sizeof *s);
}

/* What path is now. */
static ds_path_id look(const char *path) {
  ds_path_id id = {0, 0, 0, 0, 0};
  ds_vfs_info st;
  if (ds_vfs_stat(path, &st) != 0) return id;
  id.dev = st.dev;
  id.ino = st.ino;
  if (st.kind == DS_VFS_DIR) {
    id.kind = 2;
  } else {
    id.kind = 1;
    id.size = st.size;
    id.mtime_ns = st.mtime_ns;
  }
  return id;
}

/* Record what every path of s is now. */
static void look_all(ds_path_set *s) {
  ds_vfs_stat_many((const char *const *)s->paths, s->n); /* remote: in parallel */
  for (size_t i = 0; i < s->n; i++) s->ids[i] = look(s->paths[i]);
}

/* 1 when every path of s is what look_all saw. */
static int unchanged(const ds_path_set *s) {
  for (size_t i = s->n; i-- > 0;) {
    ds_path_id a = look(s->paths[i]), *b = &s->ids[i];
    if (a.kind != b->kind || a.dev != b->dev || a.ino != b->ino || a.size != b->size ||
        a.mtime_ns != b->mtime_ns)
      return 0;
  }
  return 1;
}

/* Wait a little before try `n` (1, 2, 4 ... ms): a replace in progress
 * gets time to finish. */
static void back_off(int n) {
  struct timespec ts = {0, 1000000L << (n < 6 ? n - 1 : 5)};
  nanosleep(&ts, NULL);
}

int ds_shard_set_incomplete(const ds_path_set *set, size_t step, const char *spec) {
  size_t missing = 0;
  for (size_t i = 0; i < set->n; i += step) missing += set->ids[i].kind == 0;
  return missing > 0 && (missing < set->n / step || strstr(spec, "@*") != NULL);
}

int ds_open_stable(const char *name, const ds_open_steps *steps, void *ctx, char **err) {
  int waits = 0; /* tries spent waiting for an incomplete set */
  for (int t = 0; t < DS_OPEN_TRIES; t++) {
    if (t) back_off(t);
    ds_path_set set = {0};
    char *e = NULL;
    int rc = steps->paths(ctx, &set, &e);
    if (rc > 0 && waits < DS_OPEN_WAITS && t + 1 < DS_OPEN_TRIES) { /* incomplete */
      ds_path_set_free(&set);
      free(e);
      waits++;
      continue;
    }
    if (rc) {
      ds_path_set_free(&set);
      free(*err);
      *err = e;
      return -1;
    }
    look_all(&set);
    rc = steps->open(ctx, &e);
    int same = unchanged(&set);
    int wait = rc && same && steps->incomplete && waits < DS_OPEN_WAITS &&
               t + 1 < DS_OPEN_TRIES && steps->incomplete(ctx, &set);
    ds_path_set_free(&set);
    if (rc == 0 && same && !steps->stale(ctx)) return 0;
    if (rc == 0) steps->close(ctx);
    if (rc && same && !wait) { /* not a change: the open's own error */
      free(*err);
      *err = e;
      return -1;
    }
    waits += wait;
    free(e);
  }
  return ds_err_changed(err, name);
}

/* ds_open_stable's context of ds_open_files_stable: the steps, the
 * files of the current try and the reader they opened. */
typedef struct files_opening {
  const ds_files_steps *st;
  const char *spec;
  const void *arg;
  ds_shard_list files;
  void *reader;
} files_opening;

/* ds_open_steps.paths: the data files, each followed by its side files. */
static int files_paths(void *ctx, ds_path_set *set, char **err) {
  files_opening *o = ctx;
  ds_shard_list_free(&o->files);
  int rc = o->st->expand(o->spec, o->arg, &o->files, err);
  for (size_t i = 0; rc == 0 && i < o->files.n; i++)
    if (ds_path_set_add(set, o->files.paths[i]) ||
        (o->st->side && o->st->side(o->arg, o->files.paths[i], set)))
      rc = ds_err(err, "out of memory");
  return rc;
}

/* ds_open_steps.open */
static int files_open(void *ctx, char **err) {
  files_opening *o = ctx;
  return o->st->open(o->spec, o->arg, &o->files, &o->reader, err);
}

/* ds_open_steps.stale */
static int files_stale(void *ctx) {
  files_opening *o = ctx;
  return o->st->stale(o->reader);
}

/* ds_open_steps.close */
static void files_close(void *ctx) {
  files_opening *o = ctx;
  o->st->close(o->reader);
  o->reader = NULL;
}

/* ds_open_steps.incomplete */
static int files_incomplete(void *ctx, const ds_path_set *set) {
  files_opening *o = ctx;
  return o->st->incomplete && o->st->incomplete(o->spec, o->arg, set);
}

void *ds_open_files_stable(const char *spec, const ds_files_steps *steps, const void *arg,
                           char **err) {
  static const ds_open_steps open_steps = {files_paths, files_open, files_stale, files_close,
                                           files_incomplete};
  files_opening o = {steps, spec, arg, {NULL, 0}, NULL};
  int rc = ds_open_stable(spec, &open_steps, &o, err);
  ds_shard_list_free(&o.files);
  return rc ? NULL : o.reader;
}

int ds_files_expand_spec(const char *spec, const void *arg, ds_shard_list *files, char **err) {
  (void)arg;
  int partial = 0;
  if (ds_shard_spec_expand_partial(spec, files, &partial, err)) return partial ? 1 : -1;
  return 0;
}

int ds_err_changed(char **err, const char *name) {
  return ds_err(err, "%s: the dataset changed while it was read (another program "
                     "replaced its files meanwhile); run the query again",
                name);
}
