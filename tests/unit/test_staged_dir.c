/* test_staged_dir.c - core/staged_dir.c with a toy format (one line per
 * row in rows.txt, written at finish): nothing visible before publish,
 * rollback to a mark truncates, abort leaves no temporary, mode=create
 * refuses an existing directory, mode=replace exchanges it whole, and a
 * second transaction after a publish restages the published rows plus its
 * own (aborted: the first publish stays). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"
#include "core/common.h"
#include "core/mapped_file.h"
#include "core/staged_dir.h"

static char tmp[64];

/* The toy writer: rows kept in memory, written out by finish. */
typedef struct toy {
  char *dir;
  int64_t rows[64];
  uint64_t n;
} toy;

static int toy_open(const char *dir, const void *cfg, void **w, char **err) {
  (void)cfg;
  toy *t = calloc(1, sizeof *t);
  if (!t || !(t->dir = strdup(dir))) {
    free(t);
    return ds_err(err, "out of memory");
  }
  *w = t;
  return 0;
}
static int toy_add(void *w, const ds_value *v, char **err) {
  toy *t = w;
  if (v->type != DS_V_INT) return ds_err(err, "row %llu: not an integer", (unsigned long long)t->n);
  t->rows[t->n++] = v->u.i;
  return 0;
}
static uint64_t toy_count(const void *w) { return ((const toy *)w)->n; }
static int toy_truncate(void *w, uint64_t n, char **err) {
  (void)err;
  ((toy *)w)->n = n;
  return 0;
}
static int toy_finish(void *w, char **err) {
  toy *t = w;
  char *p = ds_path_join(t->dir, "rows.txt");
  FILE *f = p ? fopen(p, "w") : NULL;
  free(p);
  if (!f) return ds_err(err, "cannot write rows.txt");
  for (uint64_t i = 0; i < t->n; i++) fprintf(f, "%lld\n", (long long)t->rows[i]);
  fclose(f);
  return 0;
}
static void toy_free(void *w) {
  toy *t = w;
  if (!t) return;
  free(t->dir);
  free(t);
}

/* The published rows (rows.txt of dir) added back to the toy writer. */
static int toy_replay(void *w, const char *dir, char **err) {
  char *p = ds_path_join(dir, "rows.txt");
  FILE *f = p ? fopen(p, "r") : NULL;
  free(p);
  if (!f) return ds_err(err, "cannot read rows.txt");
  long long x;
  int rc = 0;
  while (rc == 0 && fscanf(f, "%lld", &x) == 1) {
    ds_value v = {DS_V_INT, {.i = x}};
    rc = toy_add(w, &v, err);
  }
  fclose(f);
  return rc;
}

static const ds_dir_format TOY = {"toy", toy_open, toy_add, toy_count, toy_truncate,
                                  toy_finish, toy_free, toy_replay, NULL};

/* Content of DIR/rows.txt ("(absent)" when there is none). */
static const char *rows_of(const char *dir) {
  char path[256];
  snprintf(path, sizeof path, "%s/rows.txt", dir);
  return fx_small_text(path);
}

/* Entries of tmp holding ".ds-tmp." */
static int temporaries(void) {
  DIR *d = opendir(tmp);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) n += strstr(e->d_name, ".ds-tmp.") != NULL;
  if (d) closedir(d);
  return n;
}

static int add(ds_staged_dir *d, int64_t i) {
  ds_value v = {0};
  v.type = DS_V_INT;
  v.u.i = i;
  char *err = NULL;
  int rc = ds_staged_dir_add(d, &v, &err);
  free(err);
  return rc;
}

/* Open a stage and a staged directory on tmp/ds. */
static int open_writer(ds_stage_mode mode, ds_stage **s, ds_staged_dir **d, char **err) {
  char target[128];
  snprintf(target, sizeof target, "%s/ds", tmp);
  *s = NULL;
  *d = NULL;
  if (ds_stage_open(tmp, "ds", mode, s, err)) return -1;
  return ds_staged_dir_open(*s, target, &TOY, NULL, d, err);
}

int main(void) {
  snprintf(tmp, sizeof tmp, "/tmp/ds_staged_dir_XXXXXX");
  if (!mkdtemp(tmp)) return 1;
  char target[128], *err = NULL;
  snprintf(target, sizeof target, "%s/ds", tmp);
  ds_stage *s;
  ds_staged_dir *d;

  /* target name of a path */
  char *dir = NULL, *key = NULL;
  CHECK(ds_staged_dir_target("a/b/train_atlas/", &dir, &key, &err) == 0);
  CHECK_STR(dir, "a/b");
  CHECK_STR(key, "train_atlas");
  free(dir);
  free(key);

  /* rows, a mark, a rollback to it, publish */
  CHECK(open_writer(DS_STAGE_CREATE, &s, &d, &err) == 0);
  CHECK(ds_staged_dir_begin(d, &err) == 0);
  CHECK(add(d, 1) == 0 && add(d, 2) == 0);
  void *mark = NULL;
  CHECK(ds_staged_dir_mark(d, &mark, &err) == 0);
  CHECK(add(d, 3) == 0);
  CHECK(ds_staged_dir_count(d) == 3);
  CHECK(ds_staged_dir_rollback_to(d, mark, &err) == 0);
  free(mark);
  CHECK(ds_staged_dir_count(d) == 2);
  CHECK(add(d, 4) == 0);
  CHECK(ds_staged_dir_published(d) == NULL);
  CHECK(ds_staged_dir_prepare(d, &err) == 0);
  CHECK_STR(rows_of(target), "(absent)"); /* nothing visible before publish */
  CHECK(ds_staged_dir_publish(d, &err) == 0);
  CHECK_STR(rows_of(target), "1\n2\n4\n");
  CHECK(ds_staged_dir_published(d) != NULL);
  CHECK(temporaries() == 0);
  /* a second transaction starts from the published rows; aborted, the
   * published directory stays as it was */
  CHECK(ds_staged_dir_begin(d, &err) == 0);
  CHECK(ds_staged_dir_count(d) == 3);
  CHECK(add(d, 5) == 0);
  ds_staged_dir_abort(d);
  CHECK(temporaries() == 0);
  CHECK_STR(rows_of(target), "1\n2\n4\n");
  /* ... committed, the directory holds both transactions' rows */
  CHECK(ds_staged_dir_begin(d, &err) == 0);
  CHECK(add(d, 6) == 0);
  CHECK(ds_staged_dir_prepare(d, &err) == 0);
  CHECK_STR(rows_of(target), "1\n2\n4\n"); /* nothing visible before publish */
  CHECK(ds_staged_dir_publish(d, &err) == 0);
  CHECK_STR(rows_of(target), "1\n2\n4\n6\n");
  CHECK(temporaries() == 0);
  ds_staged_dir_close(d);
  ds_stage_close(s);

  /* mode=create over the existing directory: refused, untouched */
  CHECK(open_writer(DS_STAGE_CREATE, &s, &d, &err) != 0);
  CHECK_CONTAINS(err, "exists");
  free(err);
  err = NULL;
  ds_staged_dir_close(d);
  ds_stage_close(s);
  CHECK_STR(rows_of(target), "1\n2\n4\n6\n");

  /* mode=replace: abort leaves the old directory and no temporary */
  CHECK(open_writer(DS_STAGE_REPLACE, &s, &d, &err) == 0);
  CHECK(add(d, 9) == 0);
  CHECK(temporaries() == 1);
  ds_staged_dir_abort(d);
  CHECK(temporaries() == 0);
  CHECK_STR(rows_of(target), "1\n2\n4\n6\n");
  /* ... then a transaction that publishes replaces it whole */
  CHECK(add(d, 7) == 0);
  CHECK(ds_staged_dir_prepare(d, &err) == 0);
  CHECK_STR(rows_of(target), "1\n2\n4\n6\n");
  CHECK(ds_staged_dir_publish(d, &err) == 0);
  CHECK_STR(rows_of(target), "7\n");
  CHECK(temporaries() == 0);
  ds_staged_dir_close(d);
  ds_stage_close(s);

  /* an error of the format's add comes back as is */
  CHECK(open_writer(DS_STAGE_REPLACE, &s, &d, &err) == 0);
  ds_value text = {0};
  text.type = DS_V_TEXT;
  CHECK(ds_staged_dir_add(d, &text, &err) != 0);
  CHECK_CONTAINS(err, "row 0: not an integer");
  free(err);
  err = NULL;
  ds_staged_dir_close(d);
  ds_stage_close(s);
  CHECK(temporaries() == 0);
  CHECK_STR(rows_of(target), "7\n");

  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
  if (system(cmd) != 0) return 1;
  return check_exit();
}
