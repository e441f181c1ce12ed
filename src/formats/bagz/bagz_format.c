/* bagz_format.c - the bagz descriptor (bagz_format.h): a file is a bag
 * when it is named .bag / .bagz, has limits.NAME beside it, or ends in a
 * valid limits tail (bagz.md 2.1); a shard spec (@N, @*, a comma list,
 * posix:) when every file it names is one. Bytes on disk: every file and
 * its limits file; shards: the reader's, ranges from the limits. */
#include "bagz_format.h"

#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/mapped_file.h"
#include "core/shard_spec.h"
#include "core/vfs.h"
#include "formats/bagz/bagz.h"
#include "formats/detect.h"
#include "formats/format_files.h"
#include "formats/shards.h"

/* "dir/x.bagz" -> "dir/limits.x.bagz" (malloc'd). */
static char *bagz_limits_path(const char *path) {
  const char *base = ds_basename(path);
  return ds_strf("%.*slimits.%s", (int)(base - path), path, base);
}

/* The limits in [from, to) of fd are non-decreasing from *prev and none
 * passes `end`; *prev becomes the last one. 1 when they are. */
static int limits_consistent(const ds_vfs_file *f, uint64_t from, uint64_t to,
                             uint64_t end, uint64_t *prev) {
  uint8_t buf[8192];
  while (from < to) {
    size_t want = to - from < sizeof buf ? (size_t)(to - from) : sizeof buf;
    if (ds_vfs_pread(f, buf, want, from) != (ssize_t)want) return 0;
    for (size_t i = 0; i < want; i += 8) {
      uint64_t v = ds_le64(buf + i);
      if (v < *prev || v > end) return 0;
      *prev = v;
    }
    from += want;
  }
  return 1;
}

/* The file ends with a consistent tail-limits section: the u64 in its last
 * 8 bytes is the records/limits boundary B, B <= size - 8, (size - B) % 8
 * == 0, and every limit from byte B on is non-decreasing and at most B (the
 * last is B itself: the records end where the limits begin). A file whose
 * records take no bytes at all (a run of zero bytes, a .tar's zero blocks)
 * is not taken for a bag of empty records. */
static int bagz_tail_ok(const char *path) {
  ds_vfs_file f;
  if (ds_vfs_open(&f, NULL, path) != 0) return 0;
  uint8_t b[8];
  int ok = f.st.kind == DS_VFS_FILE && f.st.size >= 8 &&
           ds_vfs_pread(&f, b, 8, f.st.size - 8) == 8;
  uint64_t size = ok ? f.st.size : 0, end = ok ? ds_le64(b) : 0;
  uint64_t prev = 0;
  ok = ok && end > 0 && end <= size - 8 && (size - end) % 8 == 0 &&
       limits_consistent(&f, end, size, end, &prev);
  ds_vfs_close(&f);
  return ok;
}

/* One bagz file: 1 and *separate when it looks like one, else 0. */
static int bagz_file(const char *path, int *separate) {
  *separate = 0;
  if (!ds_fmt_is_file(path)) return 0;
  char *lp = bagz_limits_path(path);
  *separate = lp && ds_fmt_is_file(lp);
  free(lp);
  return *separate || ds_fmt_ends_with(path, ".bagz") ||
         ds_fmt_ends_with(path, ".bag") || bagz_tail_ok(path);
}

/* format.h detect_file */
static int detect_file(const char *path, unsigned *detail) {
  int sep;
  if (!bagz_file(path, &sep)) return 0;
  *detail = sep ? DS_BAGZ_DETECT_SEPARATE : 0;
  return 1;
}

/* Tell the seam the files and limits files of l are looked at next (a
 * remote set: probed in parallel, not one round trip per file). */
static void stat_shards(const ds_shard_list *l) {
  const char **v = calloc(2 * l->n + 1, sizeof *v);
  char **lim = calloc(l->n + 1, sizeof *lim);
  size_t n = 0;
  for (size_t i = 0; v && lim && i < l->n; i++) {
    v[n++] = l->paths[i];
    if ((lim[i] = bagz_limits_path(l->paths[i]))) v[n++] = lim[i];
  }
  if (v && lim) ds_vfs_stat_many(v, n);
  for (size_t i = 0; lim && i < l->n; i++) free(lim[i]);
  free(lim);
  free(v);
}

/* format.h detect_pattern: a shard spec, whose files must all be bagz
 * files. */
static int detect_pattern(const char *path, unsigned *detail, char **err) {
  if (!strchr(path, '@') && !strchr(path, ',') && !strchr(path, ':')) return 0;
  ds_shard_list l;
  if (ds_shard_spec_expand(path, &l, err)) return -1;
  stat_shards(&l);
  int all_separate = 1, rc = 0;
  for (size_t i = 0; i < l.n && rc == 0; i++) {
    int sep;
    if (!bagz_file(l.paths[i], &sep)) {
      if (!ds_fmt_is_file(l.paths[i]))
        rc = ds_fmt_path_problem(l.paths[i], err), ds_err_prefix(err, path);
      else
        rc = ds_err(err, "%s: not a dataset: %s is not a bagz file (looked for a "
                         ".bag or .bagz name, limits.%s beside it, or a valid "
                         "limits tail)",
                    path, l.paths[i], ds_basename(l.paths[i]));
    }
    all_separate &= sep;
  }
  ds_shard_list_free(&l);
  if (rc) return -1;
  *detail = all_separate ? DS_BAGZ_DETECT_SEPARATE : 0;
  return 1;
}

/* format.h file_bytes: bagz file `file` and, when the limits are
 * separate, its limits file. */
static uint64_t file_bytes(const char *file, unsigned detail) {
  uint64_t total = ds_fmt_file_size(file);
  char *lp = (detail & DS_BAGZ_DETECT_SEPARATE) ? bagz_limits_path(file) : NULL;
  if (lp) total += ds_fmt_file_size(lp);
  free(lp);
  return total;
}

/* A bag and the io its limits are read through (pread, see bagz_io). */
typedef struct {
  bagz_reader *r;
  bagz_io io;
} bagz_ranges;

/* shards.h ds_range_bytes_fn: the records of rows [a, b). */
static int range_bytes(void *reader, size_t shard, uint64_t first, uint64_t a,
                       uint64_t b, uint64_t *bytes, char **err) {
  (void)first;
  bagz_ranges *br = reader;
  uint64_t start, end, s2, e2;
  if (bagz_stored_range(br->r, &br->io, shard, a, &start, &e2, err) ||
      bagz_stored_range(br->r, &br->io, shard, b - 1, &s2, &end, err))
    return -1;
  *bytes = end >= start ? end - start : 0;
  return 0;
}

/* format.h list_shards: limits= and layout= from the options, else the
 * limits detection found. */
static int list_shards(const char *path, const ds_detected *d,
                       const ds_shards_options *o, ds_shard_listing *l, char **err) {
  bagz_options bo = {BAGZ_COMPRESSION_AUTO,
                     o->limits_given ? o->limits
                     : (d->detail & DS_BAGZ_DETECT_SEPARATE) ? BAGZ_LIMITS_SEPARATE
                                                              : BAGZ_LIMITS_TAIL,
                     o->layout, NULL};
  bagz_reader *r;
  if (bagz_open(path, &bo, &r, err)) return -1;
  int rc = 0;
  bagz_ranges br = {.r = r};
  l->nshards = r->nshards;
  l->total_rows = bagz_count(r);
  l->layout = o->layout;
  for (size_t i = 0; i < r->nshards && rc == 0; i++) {
    const bagz_shard *s = &r->shards[i];
    int inter = o->layout == DS_LAYOUT_INTERLEAVED;
    ds_shard_info si = {i, s->data.path, s->count, inter ? i : r->map.first[i],
                        inter ? r->nshards : 1,
                        s->data.size + (s->limits == &s->limits_file ? s->limits_file.size : 0),
                        NULL};
    rc = ds_shards_add(l, &si, o->split_rows, range_bytes, &br, err);
  }
  bagz_io_free(&br.io);
  bagz_close(r);
  return rc;
}

const ds_format_bytes ds_bagz_format = DS_FILE_FORMAT(
    "bagz", detect_file, detect_pattern,
    "a .bag or .bagz name, limits.{} beside it, or a valid limits tail (bagz)",
    ds_shard_spec_expand, file_bytes, list_shards);
