/* fixture.h - file and value helpers the unit tests share: whole files
 * in memory, comparing files, fresh temporary directories, JSON text of a
 * value. Header-only (static inline), included after check.h. */
#ifndef DS_TEST_FIXTURE_H
#define DS_TEST_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include "core/common.h"
#include "core/value.h"
#include "core/value_json.h"

/* The whole file in a malloc'd buffer, its size in *n; NULL (and *n 0)
 * when it cannot be opened. */
static inline uint8_t *fx_slurp(const char *path, size_t *n) {
  *n = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(len > 0 ? (size_t)len : 1);
  *n = b && len > 0 ? fread(b, 1, (size_t)len, f) : 0;
  fclose(f);
  return b;
}

/* 1 when both files exist with the same bytes. */
static inline int fx_same_file(const char *a, const char *b) {
  size_t na, nb;
  uint8_t *pa = fx_slurp(a, &na), *pb = fx_slurp(b, &nb);
  int same = pa && pb && na == nb && memcmp(pa, pb, na) == 0;
  free(pa);
  free(pb);
  return same;
}

/* A fresh empty directory "<root>/<n>" (malloc'd), n counting up. */
static inline char *fx_new_dir(const char *root) {
  static int seq;
  char *d = ds_strf("%s/%d", root, seq++);
  if (d) mkdir(d, 0755);
  return d;
}

/* A new temporary directory /tmp/ds-<name>-XXXXXX into out (at least 64
 * bytes); 0, or -1 with a FAIL line naming the test file when none can be
 * made (the test then ends). */
static inline int fx_temp_dir(char *out, size_t cap, const char *name, const char *file) {
  snprintf(out, cap, "/tmp/ds-%s-XXXXXX", name);
  if (mkdtemp(out)) return 0;
  printf("FAIL %s: no temporary directory\n", file);
  return -1;
}

/* Remove a temporary tree made by a test; -1 (and says so) when it
 * cannot. */
static inline int fx_remove_tree(const char *path) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
  if (system(cmd) == 0) return 0;
  printf("    could not remove %s\n", path);
  return -1;
}

/* Entries of dir whose names start with '.' (a writer's temporaries and
 * locks), "." and ".." aside. */
static inline int fx_hidden_entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL)
    if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  if (d) closedir(d);
  return n;
}

/* The first 255 bytes of a small text file ("(absent)" when there is
 * none), in a static buffer. */
static inline const char *fx_small_text(const char *path) {
  static char buf[256];
  FILE *f = fopen(path, "r");
  if (!f) return "(absent)";
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  return buf;
}

/* The JSON text of v (malloc'd), or a copy of on_error when it cannot be
 * written. */
static inline char *fx_json_of(const ds_value *v, const char *on_error) {
  ds_buf b = {0};
  char *err = NULL;
  if (ds_value_json(&b, v, &err) || ds_buf_append(&b, "", 1)) {
    free(err);
    ds_buf_free(&b);
    return strdup(on_error);
  }
  return (char *)b.data;
}

#endif
