/* rowset.c - sets of row indexes and their ordered iteration (see
 * rowset.h). */
#include "rowset.h"

#include <stdlib.h>
#include <string.h>

#include "cancel.h"

static void reset(ds_rowset *rs, ds_rs_kind kind) {
  memset(rs, 0, sizeof *rs);
  rs->kind = kind;
  rs->lo = 0;
  rs->hi = UINT64_MAX;
  rs->limit = UINT64_MAX;
}

int ds_rowset_init_all(ds_rowset *rs, uint64_t n) {
  ds_range *r = malloc(sizeof *r);
  if (!r) return -1;
  r->lo = 0;
  r->hi = n;
  ds_rowset_init_ranges(rs, r, 1);
  return 0;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

void ds_rowset_init_list(ds_rowset *rs, uint64_t *ids, size_t n) {
  reset(rs, DS_RS_LIST);
  if (n > 1) qsort(ids, n, sizeof *ids, cmp_u64);
  size_t j = 0;
  for (size_t i = 0; i < n; i++)
    if (j == 0 || ids[i] != ids[j - 1]) ids[j++] = ids[i];
  rs->ids = ids;
  rs->nids = j;
}

void ds_rowset_init_one(ds_rowset *rs, uint64_t id) {
  reset(rs, DS_RS_LIST);
  rs->one = id;
  rs->ids = &rs->one;
  rs->nids = 1;
}

static int cmp_range(const void *a, const void *b) {
  const ds_range *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

void ds_rowset_init_ranges(ds_rowset *rs, ds_range *r, size_t n) {
  reset(rs, DS_RS_RANGES);
  if (n > 1) qsort(r, n, sizeof *r, cmp_range);
  size_t j = 0;
  for (size_t i = 0; i < n; i++) {
    if (r[i].lo >= r[i].hi) continue;
    if (j > 0 && r[i].lo <= r[j - 1].hi) {
      if (r[i].hi > r[j - 1].hi) r[j - 1].hi = r[i].hi;
    } else {
      r[j++] = r[i];
    }
  }
  rs->ranges = r;
  rs->nranges = j;
}

void ds_rowset_init_strided(ds_rowset *rs, uint64_t k, uint64_t *starts,
                            uint64_t *counts, size_t n) {
  reset(rs, DS_RS_STRIDED);
  /* insertion sort by start, keeping counts aligned (n is small) */
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && starts[j] < starts[j - 1]; j--) {
      uint64_t t = starts[j]; starts[j] = starts[j - 1]; starts[j - 1] = t;
      t = counts[j]; counts[j] = counts[j - 1]; counts[j - 1] = t;
    }
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (m == 0 || starts[i] != starts[m - 1]) {
      starts[m] = starts[i];
      counts[m++] = counts[i];
    }
  rs->k = k ? k : 1;
  rs->starts = starts;
  rs->counts = counts;
  rs->nstarts = m;
}

int ds_rowset_init_shards(ds_rowset *rs, int strided, const uint64_t *first,
                          const uint64_t *counts, size_t k,
                          const unsigned char *on) {
  size_t m = 0, cap = k ? k : 1;
  if (strided) {
    uint64_t *st = malloc(cap * sizeof *st), *ct = malloc(cap * sizeof *ct);
    if (!st || !ct) {
      free(st);
      free(ct);
      return -1;
    }
    for (size_t s = 0; s < k; s++)
      if (on[s]) {
        st[m] = s;
        ct[m++] = counts[s];
      }
    ds_rowset_init_strided(rs, k, st, ct, m);
    return 0;
  }
  ds_range *rg = malloc(cap * sizeof *rg);
  if (!rg) return -1;
  for (size_t s = 0; s < k; s++)
    if (on[s]) {
      rg[m].lo = first[s];
      rg[m++].hi = first[s] + counts[s];
    }
  ds_rowset_init_ranges(rs, rg, m);
  return 0;
}

void ds_rowset_clip(ds_rowset *rs, uint64_t lo, uint64_t hi) {
  if (lo > rs->lo) rs->lo = lo;
  if (hi < rs->hi) rs->hi = hi;
}

uint64_t ds_rowset_scan_end(const ds_rowset *rs) {
  if (!rs || rs->kind != DS_RS_RANGES || rs->desc || rs->limit != UINT64_MAX ||
      rs->nranges == 0)
    return 0;
  uint64_t hi = rs->ranges[rs->nranges - 1].hi;
  return hi < rs->hi ? hi : rs->hi;
}

int ds_rowset_contains(const ds_rowset *rs, uint64_t g) {
  if (g < rs->lo || g >= rs->hi) return 0;
  switch (rs->kind) {
    case DS_RS_RANGES:
      for (size_t i = 0; i < rs->nranges; i++)
        if (g >= rs->ranges[i].lo && g < rs->ranges[i].hi) return 1;
      return 0;
    case DS_RS_LIST: {
      size_t a = 0, b = rs->nids;
      while (a < b) {
        size_t m = a + (b - a) / 2;
        if (rs->ids[m] < g) a = m + 1; else b = m;
      }
      return a < rs->nids && rs->ids[a] == g;
    }
    case DS_RS_STRIDED:
      for (size_t i = 0; i < rs->nstarts; i++)
        if (g % rs->k == rs->starts[i] && g / rs->k < rs->counts[i]) return 1;
      return 0;
  }
  return 0;
}

void ds_rowset_free(ds_rowset *rs) {
  free(rs->ranges);
  if (rs->ids != &rs->one) free(rs->ids);
  free(rs->starts);
  free(rs->counts);
  memset(rs, 0, sizeof *rs);
}

void ds_rowiter_init(ds_rowiter *it, const ds_rowset *rs) {
  memset(it, 0, sizeof *it);
  it->rs = rs;
  it->skip = rs->offset;
}

/* RANGES: the clipped bounds of range i. */
static void range_bounds(const ds_rowset *rs, size_t i, uint64_t *a,
                         uint64_t *b) {
  *a = rs->ranges[i].lo > rs->lo ? rs->ranges[i].lo : rs->lo;
  *b = rs->ranges[i].hi < rs->hi ? rs->ranges[i].hi : rs->hi;
  if (*a > *b) *a = *b;
}

/* RANGES, ascending. Skips the offset arithmetically. */
static int next_ranges_asc(ds_rowiter *it, uint64_t *g) {
  const ds_rowset *rs = it->rs;
  for (;;) {
    if (it->i >= rs->nranges) return 0;
    uint64_t a, b;
    range_bounds(rs, it->i, &a, &b);
    if (!it->started) {
      it->cur = a;
      it->started = 1;
    }
    if (it->skip && it->cur < b) {
      uint64_t n = b - it->cur < it->skip ? b - it->cur : it->skip;
      it->cur += n;
      it->skip -= n;
    }
    if (it->cur < b) {
      *g = it->cur++;
      return 1;
    }
    it->i++;
    it->started = 0;
  }
}

/* RANGES, descending: it->i counts ranges from the end, cur is exclusive. */
static int next_ranges_desc(ds_rowiter *it, uint64_t *g) {
  const ds_rowset *rs = it->rs;
  for (;;) {
    if (it->i >= rs->nranges) return 0;
    uint64_t a, b;
    range_bounds(rs, rs->nranges - 1 - it->i, &a, &b);
    if (!it->started) {
      it->cur = b;
      it->started = 1;
    }
    if (it->skip && it->cur > a) {
      uint64_t n = it->cur - a < it->skip ? it->cur - a : it->skip;
      it->cur -= n;
      it->skip -= n;
    }
    if (it->cur > a) {
      *g = --it->cur;
      return 1;
    }
    it->i++;
    it->started = 0;
  }
}

/* LIST in either direction (offset handled by the caller). */
static int next_list(ds_rowiter *it, uint64_t *g) {
  const ds_rowset *rs = it->rs;
  while (it->i < rs->nids) {
    uint64_t v = rs->ids[rs->desc ? rs->nids - 1 - it->i : it->i];
    it->i++;
    if (v >= rs->lo && v < rs->hi) {
      *g = v;
      return 1;
    }
  }
  return 0;
}

/* STRIDED in either direction: rows grouped by j, starts in order. */
static int next_strided(ds_rowiter *it, uint64_t *g) {
  const ds_rowset *rs = it->rs;
  uint64_t maxc = 0;
  for (size_t s = 0; s < rs->nstarts; s++)
    if (rs->counts[s] > maxc) maxc = rs->counts[s];
  if (!it->started) {
    it->started = 1;
    it->i = 0;
    if (rs->desc) {
      uint64_t jmax = rs->hi == 0 ? 0 : (rs->hi - 1) / rs->k;
      it->cur = maxc == 0 ? UINT64_MAX : (jmax < maxc - 1 ? jmax : maxc - 1);
      if (rs->hi == 0) it->cur = UINT64_MAX;
    } else {
      it->cur = rs->lo / rs->k;
    }
  }
  while (it->cur != UINT64_MAX && it->cur < maxc) {
    if (!rs->desc && it->cur > (rs->hi - 1) / rs->k && rs->hi > 0) return 0;
    if (rs->hi == 0) return 0;
    while (it->i < rs->nstarts) {
      size_t s = rs->desc ? rs->nstarts - 1 - it->i : it->i;
      it->i++;
      if (it->cur >= rs->counts[s]) continue;
      uint64_t v = rs->starts[s] + it->cur * rs->k;
      if (v >= rs->lo && v < rs->hi) {
        *g = v;
        return 1;
      }
    }
    it->i = 0;
    if (rs->desc) {
      if (it->cur == 0 || it->cur * rs->k + rs->k <= rs->lo) return 0;
      it->cur--;
    } else {
      it->cur++;
    }
  }
  return 0;
}

uint64_t ds_rowiter_run(ds_rowiter *it, uint64_t max) {
  const ds_rowset *rs = it->rs;
  if (rs->kind != DS_RS_RANGES || rs->desc || !it->started || it->skip ||
      it->i >= rs->nranges || it->emitted >= rs->limit)
    return 0;
  uint64_t a, b;
  range_bounds(rs, it->i, &a, &b);
  uint64_t n = b > it->cur ? b - it->cur : 0;
  if (n > max) n = max;
  if (n > rs->limit - it->emitted) n = rs->limit - it->emitted;
  it->cur += n;
  it->emitted += n;
  return n;
}

static int next_raw(ds_rowiter *it, uint64_t *g) {
  switch (it->rs->kind) {
    case DS_RS_RANGES:
      return it->rs->desc ? next_ranges_desc(it, g) : next_ranges_asc(it, g);
    case DS_RS_LIST: return next_list(it, g);
    case DS_RS_STRIDED: return next_strided(it, g);
  }
  return 0;
}

int ds_rowiter_next(ds_rowiter *it, uint64_t *g) {
  if (it->emitted >= it->rs->limit) return 0;
  for (;;) {
    if (!next_raw(it, g)) return 0;
    if (it->skip) {
      it->skip--;
      if ((it->skip & 1023) == 0 && ds_cancel_check()) return 0; /* the scope reports it */
      continue;
    }
    it->emitted++;
    return 1;
  }
}
