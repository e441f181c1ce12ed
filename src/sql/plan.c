/* plan.c - shared xBestIndex planning and xFilter decoding for rowid
 * constraints, extra equality columns and LIMIT/OFFSET (see plan.h for the
 * encoding and the SQLite 3.40 LIMIT trap it avoids). */
#include "plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"

/* Which aConstraint entries a plan uses (-1 = none). */
typedef struct plan_pick {
  int arg[DS_PLAN_MAX_ARGS];
  int rowid_eq, lo, hi, limit, offset;
  int extra[DS_PLAN_MAX_EXTRA];
  int rowid_in, extra_in[DS_PLAN_MAX_EXTRA];
  int all_handled;     /* every non-LIMIT/OFFSET constraint consumed */
  int arg_unusable;    /* a required argument is present but unusable */
} plan_pick;

static int extra_index(const ds_plan_config *cfg, int column) {
  for (int k = 0; k < cfg->nextra; k++)
    if (cfg->extra[k].column == column) return k;
  return -1;
}

static int arg_index(const ds_plan_config *cfg, int column) {
  for (int a = 0; a < cfg->nargs; a++)
    if (cfg->arg_columns[a] == column) return a;
  return -1;
}

/* Walk the constraints once and pick what this plan answers. */
static void pick_constraints(sqlite3_index_info *info,
                             const ds_plan_config *cfg, plan_pick *p) {
  memset(p, -1, sizeof *p);
  p->rowid_in = 0;
  memset(p->extra_in, 0, sizeof p->extra_in);
  p->all_handled = 1;
  p->arg_unusable = 0;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    if (c->op == SQLITE_INDEX_CONSTRAINT_LIMIT) { if (c->usable) p->limit = i; continue; }
    if (c->op == SQLITE_INDEX_CONSTRAINT_OFFSET) { if (c->usable) p->offset = i; continue; }
    int a = arg_index(cfg, c->iColumn);
    if (a >= 0) {
      if (c->usable && c->op == SQLITE_INDEX_CONSTRAINT_EQ && p->arg[a] < 0) p->arg[a] = i;
      else if (!c->usable && a < cfg->nrequired_args) p->arg_unusable = 1;
      else p->all_handled = 0;
      continue;
    }
    if (!c->usable) { p->all_handled = 0; continue; }
    int *slot = NULL;
    if (c->iColumn < 0) {
      if (c->op == SQLITE_INDEX_CONSTRAINT_EQ) slot = &p->rowid_eq;
      else if (c->op == SQLITE_INDEX_CONSTRAINT_GT || c->op == SQLITE_INDEX_CONSTRAINT_GE) slot = &p->lo;
      else if (c->op == SQLITE_INDEX_CONSTRAINT_LT || c->op == SQLITE_INDEX_CONSTRAINT_LE) slot = &p->hi;
    } else {
      int k = extra_index(cfg, c->iColumn);
      if (k >= 0 && c->op == SQLITE_INDEX_CONSTRAINT_EQ) slot = &p->extra[k];
    }
    if (slot && *slot < 0) *slot = i;
    else p->all_handled = 0;
  }
  /* an argument present but unusable must not make the plan valid */
  for (int a = 0; a < cfg->nrequired_args; a++)
    if (p->arg[a] >= 0) p->arg_unusable = 0;
}

/* Fraction of rows a range bound keeps, exact when the value is known. */
static double bound_fraction(sqlite3_index_info *info, int i, int lower,
                             double nrows) {
  sqlite3_value *v = NULL;
  if (nrows >= 1 && sqlite3_vtab_rhs_value(info, i, &v) == SQLITE_OK && v &&
      (sqlite3_value_type(v) == SQLITE_INTEGER || sqlite3_value_type(v) == SQLITE_FLOAT)) {
    double x = sqlite3_value_double(v) / nrows;
    if (x < 0) x = 0;
    if (x > 1) x = 1;
    double f = lower ? 1 - x : x;
    return f < 1.0 / nrows ? 1.0 / nrows : f;
  }
  return 0.25;
}

/* Assign argv slot n to constraint i. */
static void use(sqlite3_index_info *info, int i, int *n) {
  info->aConstraintUsage[i].argvIndex = (*n)++;
  info->aConstraintUsage[i].omit = 1;
}

/* Use range constraint i (lower: >, >=; else <, <=): its argv slot, its
 * idxNum bits and idxStr text. Returns the fraction of rows it keeps. */
static double use_bound(sqlite3_index_info *info, int i, int lower, const ds_plan_config *cfg,
                        int *n, int *idx, ds_buf *desc) {
  int op = info->aConstraint[i].op;
  int incl = op == (lower ? SQLITE_INDEX_CONSTRAINT_GE : SQLITE_INDEX_CONSTRAINT_LE);
  use(info, i, n);
  *idx |= lower ? DS_PLAN_LO | (incl ? DS_PLAN_LO_INCL : 0) : DS_PLAN_HI | (incl ? DS_PLAN_HI_INCL : 0);
  ds_buf_puts(desc, lower ? (incl ? "rowid>= " : "rowid> ") : (incl ? "rowid<= " : "rowid< "));
  return bound_fraction(info, i, lower, cfg->nrows);
}

int ds_plan_best_index(sqlite3_index_info *info, const ds_plan_config *cfg) {
  plan_pick p;
  pick_constraints(info, cfg, &p);
  if (p.arg_unusable) return SQLITE_CONSTRAINT;
  int idx = 0, n = 1;
  double rows = cfg->nrows > 1 ? cfg->nrows : 1, setup = 0;
  ds_buf desc = {0};
  for (int a = 0; a < cfg->nargs; a++)
    if (p.arg[a] >= 0) { use(info, p.arg[a], &n); idx |= DS_PLAN_ARG(a); }
  if (p.rowid_eq >= 0) {
    p.rowid_in = sqlite3_vtab_in(info, p.rowid_eq, -1);
    if (p.rowid_in) sqlite3_vtab_in(info, p.rowid_eq, 1);
    use(info, p.rowid_eq, &n);
    idx |= p.rowid_in ? DS_PLAN_ROWID_EQ | DS_PLAN_ROWID_IN : DS_PLAN_ROWID_EQ;
    rows = p.rowid_in ? 10 : 1;
    if (!p.rowid_in) info->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
    ds_buf_puts(&desc, p.rowid_in ? "rowid IN " : "rowid= ");
  }
  if (p.lo >= 0) rows *= use_bound(info, p.lo, 1, cfg, &n, &idx, &desc);
  if (p.hi >= 0) rows *= use_bound(info, p.hi, 0, cfg, &n, &idx, &desc);
  for (int k = 0; k < cfg->nextra; k++) {
    if (p.extra[k] < 0) continue;
    p.extra_in[k] = sqlite3_vtab_in(info, p.extra[k], -1);
    if (p.extra_in[k]) sqlite3_vtab_in(info, p.extra[k], 1);
    use(info, p.extra[k], &n);
    idx |= p.extra_in[k] ? DS_PLAN_EXTRA_IN(k) : DS_PLAN_EXTRA_EQ(k);
    double r = cfg->extra[k].rows_per_value * (p.extra_in[k] ? 10 : 1);
    if (r < rows) rows = r;
    setup += cfg->extra[k].setup_cost;
    ds_buf_printf(&desc, "%s%s ", cfg->extra[k].name, p.extra_in[k] ? " IN" : "=");
  }
  int order_ok = info->nOrderBy == 0;
  if (info->nOrderBy == 1 && info->aOrderBy[0].iColumn < 0) {
    order_ok = info->orderByConsumed = 1;
    if (info->aOrderBy[0].desc) {
      idx |= DS_PLAN_DESC;
      ds_buf_puts(&desc, "DESC ");
    }
  }
  /* The LIMIT trap: push LIMIT/OFFSET only when SQLite has nothing left to
   * filter or sort, and no IN list can be split into one call per value
   * (sqlite3_vtab_in only reports the first 32 constraints). */
  if (p.all_handled && order_ok && info->nConstraint <= 32) {
    if (p.limit >= 0) {
      use(info, p.limit, &n);
      idx |= DS_PLAN_LIMIT;
      sqlite3_value *v = NULL;
      if (sqlite3_vtab_rhs_value(info, p.limit, &v) == SQLITE_OK && v &&
          sqlite3_value_int64(v) >= 0 && sqlite3_value_int64(v) < rows)
        rows = (double)sqlite3_value_int64(v);
      ds_buf_puts(&desc, "LIMIT ");
    }
    if (p.offset >= 0) {
      use(info, p.offset, &n);
      idx |= DS_PLAN_OFFSET;
      ds_buf_puts(&desc, "OFFSET ");
    }
  }
  info->idxNum = idx;
  info->estimatedRows = (sqlite3_int64)(rows < 1 ? 1 : rows);
  info->estimatedCost = setup + 1 + rows * cfg->row_cost;
  info->idxStr = desc.len ? sqlite3_mprintf("%.*s", (int)desc.len - 1, (char *)desc.data)
                          : sqlite3_mprintf("full scan");
  info->needToFreeIdxStr = 1;
  ds_buf_free(&desc);
  return SQLITE_OK;
}

int ds_plan_int_value(sqlite3_value *v, int64_t *out) {
  int t = sqlite3_value_numeric_type(v);
  if (t == SQLITE_INTEGER) {
    *out = sqlite3_value_int64(v);
    return 1;
  }
  if (t == SQLITE_FLOAT) {
    double d = sqlite3_value_double(v);
    if (d == floor(d) && d >= -9.2e18 && d <= 9.2e18) {
      *out = (int64_t)d;
      return 1;
    }
  }
  return 0;
}

/* Apply one range bound to [lo, hi) following SQLite's comparison rules:
 * NULL matches nothing, numbers compare numerically, TEXT and BLOB are
 * greater than every number. */
static void apply_bound(ds_plan_args *a, sqlite3_value *v, int lower,
                        int inclusive) {
  int t = sqlite3_value_numeric_type(v);
  if (t == SQLITE_NULL) { a->empty = 1; return; }
  if (t == SQLITE_TEXT || t == SQLITE_BLOB) {
    if (lower) a->empty = 1; /* rowid > 'text' is never true */
    return;
  }
  double d = t == SQLITE_INTEGER ? (double)sqlite3_value_int64(v) : sqlite3_value_double(v);
  if (t == SQLITE_INTEGER) {
    int64_t x = sqlite3_value_int64(v);
    if (lower) {
      int64_t b = inclusive ? x : (x == INT64_MAX ? x : x + 1);
      if (!inclusive && x == INT64_MAX) { a->empty = 1; return; }
      if (b > 0 && (uint64_t)b > a->lo) a->lo = (uint64_t)b;
    } else {
      if (x < 0 || (!inclusive && x == 0)) { a->empty = 1; return; }
      uint64_t b = inclusive ? (uint64_t)x + 1 : (uint64_t)x;
      if (b < a->hi) a->hi = b;
    }
    return;
  }
  if (isnan(d)) { a->empty = 1; return; }
  if (lower) {
    double b = inclusive ? ceil(d) : floor(d) + 1;
    if (b > 1.8e19) { a->empty = 1; return; }
    if (b > 0 && (uint64_t)b > a->lo) a->lo = (uint64_t)b;
  } else {
    double b = inclusive ? floor(d) + 1 : ceil(d);
    if (b <= 0) { a->empty = 1; return; }
    if (b < 1.8e19 && (uint64_t)b < a->hi) a->hi = (uint64_t)b;
  }
}

/* Collect one rowid value into a->ids. */
static int add_id(void *ctx, sqlite3_value *v) {
  ds_plan_args *a = ctx;
  int64_t x;
  if (!ds_plan_int_value(v, &x) || x < 0) return 0;
  if (a->nids == 0) { /* the common point lookup: no allocation */
    a->one = (uint64_t)x;
    a->ids = &a->one;
    a->nids = 1;
    return 0;
  }
  /* grows geometrically: a list of 100,000 values is 18 reallocations */
  uint64_t *p = a->ids == &a->one ? malloc(2 * sizeof *p) : ds_grow(a->ids, a->nids, sizeof *p);
  if (!p) return SQLITE_NOMEM;
  if (a->ids == &a->one) p[0] = a->one;
  a->ids = p;
  a->ids[a->nids++] = (uint64_t)x;
  return 0;
}

int ds_plan_each_value(sqlite3_value *v, int is_in,
                       int (*fn)(void *ctx, sqlite3_value *v), void *ctx) {
  if (!is_in) return fn(ctx, v);
  sqlite3_value *x = NULL;
  int rc;
  for (rc = sqlite3_vtab_in_first(v, &x); rc == SQLITE_OK && x;
       rc = sqlite3_vtab_in_next(v, &x)) {
    int r = fn(ctx, x);
    if (r) return r;
  }
  return rc == SQLITE_DONE || rc == SQLITE_OK ? 0 : rc;
}

/* Set the flag of one integer value (see ds_plan_flag_ints). */
typedef struct flag_ctx {
  unsigned char *on;
  uint64_t first;
  size_t n;
} flag_ctx;

static int flag_int(void *ctx, sqlite3_value *v) {
  flag_ctx *f = ctx;
  int64_t x;
  if (ds_plan_int_value(v, &x) && x >= 0 && (uint64_t)x >= f->first &&
      (uint64_t)x - f->first < f->n)
    f->on[(uint64_t)x - f->first] = 1;
  return 0;
}

unsigned char *ds_plan_flag_ints_from(sqlite3_value *v, int is_in, uint64_t first,
                                      size_t n) {
  flag_ctx f = {calloc(n ? n : 1, 1), first, n};
  if (f.on) ds_plan_each_value(v, is_in, flag_int, &f);
  return f.on;
}

unsigned char *ds_plan_flag_ints(sqlite3_value *v, int is_in, size_t n) {
  return ds_plan_flag_ints_from(v, is_in, 0, n);
}

int ds_plan_decode(int idx, int argc, sqlite3_value **argv, int nargs,
                   ds_plan_args *a, char **err) {
  memset(a, 0, sizeof *a);
  a->hi = UINT64_MAX;
  a->limit = UINT64_MAX;
  a->desc = (idx & DS_PLAN_DESC) != 0;
  int n = 0;
#define NEXT_ARG() (n < argc ? argv[n++] : NULL)
  for (int i = 0; i < nargs && i < DS_PLAN_MAX_ARGS; i++)
    if (idx & DS_PLAN_ARG(i)) a->args[i] = NEXT_ARG();
  if (idx & DS_PLAN_ROWID_EQ) {
    sqlite3_value *v = NEXT_ARG();
    a->has_ids = 1;
    if (v && ds_plan_each_value(v, (idx & DS_PLAN_ROWID_IN) != 0, add_id, a))
      return ds_err(err, "out of memory reading a rowid IN list");
  }
  if (idx & DS_PLAN_LO) {
    sqlite3_value *v = NEXT_ARG();
    if (v) apply_bound(a, v, 1, (idx & DS_PLAN_LO_INCL) != 0);
  }
  if (idx & DS_PLAN_HI) {
    sqlite3_value *v = NEXT_ARG();
    if (v) apply_bound(a, v, 0, (idx & DS_PLAN_HI_INCL) != 0);
  }
  for (int k = 0; k < DS_PLAN_MAX_EXTRA; k++) {
    if (!(idx & (DS_PLAN_EXTRA_EQ(k) | DS_PLAN_EXTRA_IN(k)))) continue;
    a->extra[k] = NEXT_ARG();
    a->extra_in[k] = (idx & DS_PLAN_EXTRA_IN(k)) != 0;
  }
  if (idx & DS_PLAN_LIMIT) {
    sqlite3_value *v = NEXT_ARG();
    if (v && sqlite3_value_int64(v) >= 0) a->limit = (uint64_t)sqlite3_value_int64(v);
  }
  if (idx & DS_PLAN_OFFSET) {
    sqlite3_value *v = NEXT_ARG();
    if (v && sqlite3_value_int64(v) > 0) a->offset = (uint64_t)sqlite3_value_int64(v);
  }
#undef NEXT_ARG
  if (a->lo >= a->hi) a->empty = 1;
  return 0;
}

void ds_plan_args_free(ds_plan_args *a) {
  if (a->ids != &a->one) free(a->ids);
  a->ids = NULL;
  a->nids = 0;
}
