/* tfrecord_set.c - several TFRecord files as one dataset (see
 * tfrecord_set.h). */
#include <stdlib.h>
#include <string.h>

#include "core/open_stable.h"
#include "core/vfs.h"
#include "formats/tfrecord/tfrecord_idx.h"
#include "formats/tfrecord/tfrecord_set.h"

/* ds_open_files_stable's arg: the options, and the set opened into. */
typedef struct opening {
  const tfrecord_options *o;
  tfrecord_set *set;
} opening;

/* 1 when path has a glob metacharacter and names no file. */
static int is_glob(const char *path) {
  return strpbrk(path, "*?[") != NULL && !ds_vfs_exists(path);
}

/* The spec's files with each glob element replaced by its matches (sorted
 * by name); a glob that matches nothing is an error. */
static int expand_globs(ds_shard_list *l, char **err) {
  ds_shard_list out = {NULL, 0};
  for (size_t i = 0; i < l->n; i++) {
    char **p;
    if (!is_glob(l->paths[i])) {
      if (!(p = ds_grow(out.paths, out.n, sizeof *p))) goto oom;
      out.paths = p;
      out.paths[out.n++] = l->paths[i];
      l->paths[i] = NULL;
      continue;
    }
    ds_vfs_names g = {0};
    if (ds_vfs_glob(l->paths[i], 0, &g) != 0) {
      ds_err(err, "%s: matches no file", l->paths[i]);
      ds_shard_list_free(&out);
      return -1;
    }
    for (size_t k = 0; k < g.n; k++) {
      if (!(p = ds_grow(out.paths, out.n, sizeof *p))) {
        ds_vfs_names_free(&g);
        goto oom;
      }
      out.paths = p;
      out.paths[out.n++] = g.v[k];
      g.v[k] = NULL;
    }
    ds_vfs_names_free(&g);
  }
  ds_shard_list_free(l);
  *l = out;
  return 0;
oom:
  ds_shard_list_free(&out);
  return ds_err(err, "out of memory");
}

int tfrecord_set_paths(const char *spec, ds_shard_list *out, char **err) {
  if (ds_shard_spec_expand(spec, out, err)) return -1;
  if (expand_globs(out, err)) {
    ds_shard_list_free(out);
    return -1;
  }
  return 0;
}

/* ds_files_steps.expand: the spec's files, globs expanded (1: an @* set
 * found without its shard 0). */
static int opening_expand(const char *spec, const void *arg, ds_shard_list *files,
                          char **err) {
  int rc = ds_files_expand_spec(spec, arg, files, err);
  return rc ? rc : expand_globs(files, err);
}

/* Close the files opened so far. */
static void close_files(tfrecord_set *s) {
  for (size_t i = 0; i < s->n; i++) tfrecord_close(&s->files[i]);
  free(s->files);
  s->files = NULL;
  s->n = 0;
}

/* ds_files_steps.open: the files into the set (*reader). */
static int opening_open(const char *spec, const void *arg, const ds_shard_list *files,
                        void **reader, char **err) {
  const opening *o = arg;
  tfrecord_set *s = o->set;
  if (files->n == 0) return ds_err(err, "%s: names no file", spec);
  if (!(s->files = calloc(files->n, sizeof *s->files))) return ds_err(err, "out of memory");
  for (size_t i = 0; i < files->n; i++) {
    if (tfrecord_open(&s->files[i], files->paths[i], o->o, err)) {
      close_files(s);
      return -1;
    }
    s->n = i + 1;
  }
  *reader = s;
  return 0;
}

/* ds_files_steps.stale */
static int opening_stale(const void *s) { return tfrecord_set_stale(s); }

/* ds_files_steps.close */
static void opening_close(void *s) { close_files(s); }

/* ds_files_steps.incomplete: the shard set's rule, one path per file. */
static int opening_incomplete(const char *spec, const void *arg, const ds_path_set *set) {
  (void)arg;
  return ds_shard_set_incomplete(set, 1, spec);
}

int tfrecord_set_open(tfrecord_set *s, const char *spec, const tfrecord_options *o,
                      int use_idx, char **err) {
  static const ds_files_steps steps = {opening_expand, NULL,          opening_open,
                                       opening_stale,  opening_close, opening_incomplete};
  memset(s, 0, sizeof *s);
  s->use_idx = use_idx;
  opening op = {o, s};
  return ds_open_files_stable(spec, &steps, &op, err) ? 0 : -1;
}

void tfrecord_set_close(tfrecord_set *s) {
  close_files(s);
  if (s->mapped) ds_shard_map_free(&s->map);
  memset(s, 0, sizeof *s);
}

int tfrecord_set_stale(const tfrecord_set *s) {
  for (size_t i = 0; i < s->n; i++)
    if (ds_file_stale(&s->files[i].file)) return 1;
  return 0;
}

uint64_t tfrecord_set_rows(const tfrecord_set *s, size_t i) {
  return s->files[i].count + (s->files[i].tail_err != NULL);
}

int tfrecord_set_index(tfrecord_set *s, char **err) {
  if (s->mapped) return 0;
  for (size_t i = 0; i < s->n; i++) {
    tfrecord_file *t = &s->files[i];
    if (t->indexed) continue;
    if (s->use_idx && t->compression == TFRECORD_NONE) {
      char *ip = tfrecord_idx_path(t->file.path);
      char *why = NULL;
      if (!ip) return ds_err(err, "out of memory");
      tfrecord_idx_load(t, ip, &why); /* refused or absent: index below */
      free(why);
      free(ip);
    }
    if (tfrecord_index(t, err)) return -1;
  }
  uint64_t *counts = malloc((s->n ? s->n : 1) * sizeof *counts);
  if (!counts) return ds_err(err, "out of memory");
  s->damaged = 0;
  for (size_t i = 0; i < s->n; i++) {
    counts[i] = tfrecord_set_rows(s, i);
    if (s->files[i].tail_err) s->damaged = 1;
  }
  int rc = ds_shard_map_init(&s->map, DS_LAYOUT_CONCATENATED, counts, s->n, err);
  free(counts);
  if (rc == 0) s->mapped = 1;
  return rc;
}

int tfrecord_set_row_damaged(const tfrecord_set *s, uint64_t g, char **err) {
  size_t shard;
  uint64_t i;
  if (!s->mapped || !s->damaged || g >= s->map.total) return 0;
  ds_shard_map_locate(&s->map, g, &shard, &i);
  const tfrecord_file *t = &s->files[shard];
  if (i < t->count || !t->tail_err) return 0;
  ds_err(err, "%s", t->tail_err);
  return 1;
}

int tfrecord_set_read(const tfrecord_set *s, tfrecord_cursor *cursors, uint64_t g,
                      tfrecord_rec *r, char **err) {
  if (!s->mapped) return ds_err(err, "tfrecord: the set is not indexed");
  if (g >= s->map.total)
    return ds_err(err, "row %llu is past the last record (%llu records)",
                  (unsigned long long)g, (unsigned long long)s->map.total);
  size_t shard;
  uint64_t i;
  ds_shard_map_locate(&s->map, g, &shard, &i);
  return tfrecord_set_read_in(s, cursors, shard, i, r, err);
}

int tfrecord_set_read_in(const tfrecord_set *s, tfrecord_cursor *cursors, size_t shard,
                         uint64_t i, tfrecord_rec *r, char **err) {
  if (!s->mapped || shard >= s->n) return ds_err(err, "tfrecord: the set is not indexed");
  tfrecord_cursor *c = &cursors[shard];
  if (!c->t && tfrecord_cursor_init(c, &s->files[shard], err)) return -1;
  return tfrecord_read_at(c, i, r, err);
}
