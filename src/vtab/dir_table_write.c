/* dir_table_write.c - what the atlas and bcolz writer tables share (see
 * dir_table_write.h). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/common.h"
#include "core/npy.h"
#include "vtab/dir_table_write.h"

/* The staged directory, its configuration, and the stage's steps. */
typedef struct dir_writer {
  ds_staged_dir *d;
  const ds_dir_format *fmt;
  void *cfg;
  void (*free_cfg)(void *);
} dir_writer;

/* Close the staged directory (its temporaries) and free the configuration. */
static void dir_close(void *vw) {
  dir_writer *w = vw;
  if (!w) return;
  ds_staged_dir_close(w->d);
  if (w->free_cfg) w->free_cfg(w->cfg);
  free(w);
}

/* The stage's steps, on the dir_writer's staged directory. */
DS_TABLE_WRITER_FMT(dir_fmt, ds_staged_dir, ((dir_writer *)w)->d, dir_close,
                    ds_staged_dir_published);

/* ds_table_writer_spec.open: the staged directory, in the dir_writer. */
static int open_writer(ds_stage *stage, const char *path, void *ctx, void **w, char **err) {
  dir_writer *d = ctx;
  if (ds_staged_dir_open(stage, path, d->fmt, d->cfg, &d->d, err)) return -1;
  *w = d;
  return 0;
}

int ds_dir_write_open(const char *path, const ds_options *o, int mode,
                      const ds_opt_group *options, const ds_dir_format *fmt,
                      void *cfg, void (*free_cfg)(void *), ds_table_writer **out,
                      char **err) {
  dir_writer *w = calloc(1, sizeof *w);
  if (!w) {
    if (free_cfg) free_cfg(cfg);
    return ds_err(err, "out of memory");
  }
  w->fmt = fmt;
  w->cfg = cfg;
  w->free_cfg = free_cfg;
  ds_table_writer_spec spec = {&dir_fmt, options, ds_staged_dir_target, open_writer, w};
  int rc = ds_table_writer_open(path, o, mode, &spec, out, err);
  if (rc) dir_close(w); /* failed, or the table's writer exists (reconnect) */
  return rc < 0 ? -1 : 0;
}

ds_staged_dir *ds_dir_write_target(ds_table_writer *tw) { return ((dir_writer *)tw->w)->d; }

int ds_dir_write_json_column(const ds_column *c) {
  return c->decltype && strcasecmp(c->decltype, "JSON") == 0;
}

int ds_dir_write_value(sqlite3_value *v, int json_column, ds_decl decl, ds_arena *a,
                       ds_value *out, char **err) {
  if (ds_value_from_sql_decl(v, json_column ? DS_DECL_NONE : decl, out, err)) return -1;
  if (out->type == DS_V_TEXT && (json_column || ds_sql_is_json(v)))
    return ds_value_from_json((const char *)out->u.s.p, out->u.s.n, a, out, err);
  if (out->type == DS_V_BYTES) {
    ds_npy npy;
    char *e = NULL;
    if (ds_npy_parse(out->u.s.p, out->u.s.n, &npy, &e) == 0) out->type = DS_V_NDARRAY;
    free(e); /* not a valid .npy: plain bytes */
  }
  return 0;
}
