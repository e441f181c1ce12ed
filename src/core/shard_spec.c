/* shard_spec.c - expand shard specs into file lists and map global row
 * indexes to (shard, index) for concatenated and interleaved layouts. */
#include "shard_spec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "vfs.h"

#define DS_MAX_SHARDS 99999

/* Append a malloc'd path to the list (takes ownership). */
static int list_push(ds_shard_list *l, char *path, char **err) {
  if (!path) return ds_err(err, "out of memory");
  char **p = ds_grow(l->paths, l->n, sizeof *p);
  if (!p) {
    free(path);
    return ds_err(err, "out of memory");
  }
  l->paths = p;
  l->paths[l->n++] = path;
  return 0;
}

void ds_shard_list_free(ds_shard_list *l) {
  for (size_t i = 0; i < l->n; i++) free(l->paths[i]);
  free(l->paths);
  l->paths = NULL;
  l->n = 0;
}

/* Remove an optional file-system prefix ("posix:", "/posix:", ":").
 * A scheme the seam has a backend for (s3://, https://, ...) stays. Other
 * prefixes before the first ':' (with no '/' in them) are refused like
 * upstream refuses unregistered file systems. */
static int strip_fs_prefix(const char *elem, const char **rest, char **err) {
  size_t n;
  if (ds_vfs_backend_for(elem) != &ds_vfs_local) { /* http(s)://, s3://, gs:// */
    *rest = elem;
    return 0;
  }
  if (ds_vfs_split_prefix(elem, rest, &n) == 0) return 0;
  const char *start = elem[0] == '/' ? elem + 1 : elem;
  return ds_err(err,
                "%s: unsupported file system prefix '%.*s:' (only local "
                "files, optionally written 'posix:path')",
                elem, (int)n, start);
}

/* Copy s escaping glob metacharacters. */
static void glob_escape(ds_buf *b, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (strchr("*?[]\\", s[i])) ds_buf_append(b, "\\", 1);
    ds_buf_append(b, s + i, 1);
  }
}

/* 1 when a file prefix-NNNNN-of-NNNNN suffix (shard `shard`, or any
 * shard for NULL) exists. */
static int shards_match(const char *prefix, size_t plen, const char *suffix,
                        const char *shard, ds_vfs_names *keep) {
  ds_buf pat = {0};
  glob_escape(&pat, prefix, plen);
  ds_buf_puts(&pat, "-");
  ds_buf_puts(&pat, shard ? shard : "[0-9][0-9][0-9][0-9][0-9]");
  ds_buf_puts(&pat, "-of-[0-9][0-9][0-9][0-9][0-9]");
  glob_escape(&pat, suffix, strlen(suffix));
  if (ds_buf_append(&pat, "", 1)) {
    ds_buf_free(&pat);
    return -1;
  }
  ds_vfs_names g;
  int rc = ds_vfs_glob((const char *)pat.data, 0, &g);
  int e = errno;
  ds_buf_free(&pat);
  if (rc < 0 && e == ENOTSUP) return -2; /* a file system that cannot list */
  int found = rc == 0 && g.n > 0;
  if (rc == 0 && (!found || !keep)) ds_vfs_names_free(&g);
  if (found && keep) *keep = g;
  return found;
}

/* Find N for `prefix@*suffix`: the lexicographically last file matching
 * prefix-00000-of-NNNNN suffix. When there is none but other shards are
 * there, *partial = 1 (a writer may be replacing the set: its shard 0
 * comes last). */
static int resolve_star(const char *elem, const char *prefix, size_t plen,
                        const char *suffix, unsigned *count, int *partial,
                        char **err) {
  ds_vfs_names g;
  int found = shards_match(prefix, plen, suffix, "00000", &g);
  if (found == -2)
    return ds_err(err, "%s: %s", elem, ds_vfs_detail() ? ds_vfs_detail() : strerror(ENOTSUP));
  if (found < 0) return ds_err(err, "out of memory");
  if (!found) {
    if (partial && shards_match(prefix, plen, suffix, NULL, NULL) > 0) *partial = 1;
    return ds_err(err, "%s: no shard files found (looked for %.*s-00000-of-NNNNN%s)",
                  elem, (int)plen, prefix, suffix);
  }
  const char *last = g.v[g.n - 1];
  size_t off = plen + strlen("-00000-of-");
  unsigned n = 0;
  for (int i = 0; i < 5; i++) n = n * 10 + (unsigned)(last[off + i] - '0');
  ds_vfs_names_free(&g);
  if (n == 0) return ds_err(err, "%s: shard count 00000 found on disk", elem);
  *count = n;
  return 0;
}

/* Expand one element (without fs prefix) into the list. */
static int expand_element(const char *orig, const char *elem,
                          ds_shard_list *out, int *partial, char **err) {
  const char *slash = strrchr(elem, '/');
  const char *at = strchr(slash ? slash + 1 : elem, '@');
  if (!at) return list_push(out, strdup(elem), err);
  size_t plen = (size_t)(at - elem);
  const char *p = at + 1;
  unsigned n = 0;
  const char *suffix;
  if (*p == '*') {
    suffix = p + 1;
    if (resolve_star(orig, elem, plen, suffix, &n, partial, err)) return -1;
  } else {
    size_t digits = 0;
    int too_many = 0;
    while (p[digits] >= '0' && p[digits] <= '9') {
      n = n * 10 + (unsigned)(p[digits] - '0');
      if (n > DS_MAX_SHARDS) {
        too_many = 1; /* stays a plain name; keep n from overflowing */
        n = DS_MAX_SHARDS + 1;
      }
      digits++;
    }
    if (digits == 0 || too_many || n == 0)
      return list_push(out, strdup(elem), err);
    suffix = p + digits;
  }
  for (unsigned i = 0; i < n; i++)
    if (list_push(out, ds_strf("%.*s-%05u-of-%05u%s", (int)plen, elem, i, n,
                               suffix),
                  err))
      return -1;
  return 0;
}

int ds_shard_spec_expand(const char *spec, ds_shard_list *out, char **err) {
  return ds_shard_spec_expand_partial(spec, out, NULL, err);
}

int ds_shard_spec_expand_partial(const char *spec, ds_shard_list *out, int *partial,
                                 char **err) {
  memset(out, 0, sizeof *out);
  if (partial) *partial = 0;
  if (*spec && ds_vfs_exists(spec)) /* a file so named wins over the syntax */
    return list_push(out, strdup(spec), err);
  char *copy = strdup(spec);
  if (!copy) return ds_err(err, "out of memory");
  int rc = 0;
  for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && rc == 0;
       tok = strtok_r(NULL, ",", &save)) {
    const char *rest;
    rc = strip_fs_prefix(tok, &rest, err);
    if (rc == 0 && *rest) rc = expand_element(tok, rest, out, partial, err);
  }
  free(copy);
  if (rc == 0 && out->n == 0) rc = ds_err(err, "'%s' names no file", spec);
  if (rc) ds_shard_list_free(out);
  return rc;
}

int ds_shard_map_init(ds_shard_map *m, ds_layout layout,
                      const uint64_t *counts, size_t nshards, char **err) {
  memset(m, 0, sizeof *m);
  m->layout = layout;
  m->nshards = nshards;
  m->counts = malloc((nshards ? nshards : 1) * sizeof *m->counts);
  m->first = malloc((nshards ? nshards : 1) * sizeof *m->first);
  if (!m->counts || !m->first) {
    ds_shard_map_free(m);
    return ds_err(err, "out of memory");
  }
  uint64_t total = 0;
  for (size_t j = 0; j < nshards; j++) {
    m->counts[j] = counts[j];
    m->first[j] = total;
    total += counts[j];
  }
  m->total = total;
  if (layout == DS_LAYOUT_INTERLEAVED) {
    for (size_t j = 1; j < nshards; j++) {
      if (counts[j] > counts[j - 1]) {
        ds_shard_map_free(m);
        return ds_err(err,
                      "interleaved layout needs non-increasing shard sizes, "
                      "but shard %zu has %llu rows and shard %zu has %llu",
                      j - 1, (unsigned long long)counts[j - 1], j,
                      (unsigned long long)counts[j]);
      }
      if (counts[0] - counts[j] > 1) {
        ds_shard_map_free(m);
        return ds_err(err,
                      "interleaved layout needs shard sizes within 1 of each "
                      "other, but shard 0 has %llu rows and shard %zu has %llu",
                      (unsigned long long)counts[0], j,
                      (unsigned long long)counts[j]);
      }
    }
  }
  return 0;
}

void ds_shard_map_free(ds_shard_map *m) {
  free(m->counts);
  free(m->first);
  memset(m, 0, sizeof *m);
}

void ds_shard_map_locate(const ds_shard_map *m, uint64_t g, size_t *shard,
                         uint64_t *index) {
  if (m->layout == DS_LAYOUT_INTERLEAVED) {
    *shard = (size_t)(g % m->nshards);
    *index = g / m->nshards;
    return;
  }
  /* last shard whose first row is <= g and that is not empty */
  size_t lo = 0, hi = m->nshards;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (m->first[mid] <= g) lo = mid; else hi = mid;
  }
  while (lo + 1 < m->nshards && m->first[lo] + m->counts[lo] <= g) lo++;
  *shard = lo;
  *index = g - m->first[lo];
}

uint64_t ds_shard_map_global(const ds_shard_map *m, size_t shard,
                             uint64_t index) {
  if (m->layout == DS_LAYOUT_INTERLEAVED) return index * m->nshards + shard;
  return m->first[shard] + index;
}
