/* schema.c - inferred or hand-given columns for record-like rows (see
 * schema.h). Fields are found through a hash table of their exact bytes
 * and names made unique through one of their case-folded names, so both
 * stay linear in the number of fields, however the names clash. */
#include "schema.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cancel.h"
#include "common.h"

/* Append an empty column (the array grows geometrically); NULL when out of
 * memory or past DS_SCHEMA_MAX_COLUMNS (then *full = 1). */
static ds_column *add_column(ds_schema *s, int *full) {
  if (s->n >= DS_SCHEMA_MAX_COLUMNS) {
    *full = 1;
    return NULL;
  }
  ds_column *c = ds_grow_cap(s->cols, &s->cap, s->n, sizeof *c, 16);
  if (!c) return NULL;
  s->cols = c;
  memset(&s->cols[s->n], 0, sizeof *s->cols);
  return &s->cols[s->n++];
}

/* FNV-1a of p[0..n), ASCII letters folded to lower case when `fold` (SQLite
 * compares column names ignoring ASCII case only). */
static uint64_t name_hash(const char *p, size_t n, int fold) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)p[i];
    if (fold && c >= 'A' && c <= 'Z') c = (unsigned char)(c + 32);
    h = (h ^ c) * 1099511628211ull;
  }
  return h;
}

/* Grow the field table (slots hold column index + 1; 0 is empty) to keep
 * it at most half full. */
static int grow_fields(ds_schema *s) {
  if (2 * (s->n + 1) <= s->nslots) return 0;
  size_t n = s->nslots ? 2 * s->nslots : 64;
  size_t *t = calloc(n, sizeof *t);
  if (!t) return -1;
  for (size_t i = 0; i < s->n; i++) {
    size_t k = (size_t)name_hash(s->cols[i].field, s->cols[i].field_len, 0) & (n - 1);
    while (t[k]) k = (k + 1) & (n - 1);
    t[k] = i + 1;
  }
  free(s->slots);
  s->slots = t;
  s->nslots = n;
  return 0;
}

int ds_schema_observe(ds_schema *s, const char *field, size_t len, ds_vtype t,
                      char **err) {
  if (ds_cancel_poll()) return ds_err(err, DS_CANCEL_MSG);
  if (grow_fields(s)) return ds_err(err, "out of memory");
  size_t k = (size_t)name_hash(field, len, 0) & (s->nslots - 1);
  for (; s->slots[k]; k = (k + 1) & (s->nslots - 1)) {
    ds_column *c = &s->cols[s->slots[k] - 1];
    if (c->field_len == len && memcmp(c->field, field, len) == 0) {
      c->types |= 1u << t;
      return 0;
    }
  }
  int full = 0;
  ds_column *c = add_column(s, &full);
  if (full)
    return ds_err(err, "more than %d distinct fields (SQLite tables hold at most "
                       "2000 columns): name the ones you need with columns='name "
                       "TYPE, ...'", DS_SCHEMA_MAX_COLUMNS);
  if (!c || !(c->field = malloc(len + 1))) return ds_err(err, "out of memory");
  memcpy(c->field, field, len);
  c->field[len] = 0;
  c->field_len = len;
  c->types = 1u << t;
  s->slots[k] = s->n;
  return 0;
}

/* Trim spaces from both ends of s[0..*n) in place. */
static const char *trim(const char *s, size_t *n) {
  while (*n && isspace((unsigned char)*s)) s++, (*n)--;
  while (*n && isspace((unsigned char)s[*n - 1])) (*n)--;
  return s;
}

/* The declaration type[0..n) makes (ignoring case; empty: none), or -1
 * when columns= does not accept it. */
static int known_type(const char *type, size_t n) {
  static const struct {
    const char *name;
    ds_decl decl;
  } types[] = {{"INTEGER", DS_DECL_INTEGER}, {"INT", DS_DECL_INTEGER},
               {"REAL", DS_DECL_REAL},       {"FLOAT", DS_DECL_REAL},
               {"DOUBLE", DS_DECL_REAL},     {"TEXT", DS_DECL_TEXT},
               {"BLOB", DS_DECL_BLOB},       {"NUMERIC", DS_DECL_NUMERIC},
               {"JSON", DS_DECL_JSON}};
  if (n == 0) return DS_DECL_NONE;
  for (size_t i = 0; i < sizeof types / sizeof *types; i++)
    if (strlen(types[i].name) == n && strncasecmp(types[i].name, type, n) == 0)
      return (int)types[i].decl;
  return -1;
}

/* The end of the name that starts columns= item p (a double-quoted name
 * runs to its closing quote, "" standing for one quote; a bare name to the
 * first space or comma), or NULL for a quote never closed. */
static const char *name_end(const char *p) {
  if (*p != '"') {
    while (*p && *p != ',' && !isspace((unsigned char)*p)) p++;
    return p;
  }
  for (p++; *p; p++)
    if (*p == '"' && *++p != '"') return p;
  return NULL;
}

/* The field a name [p, end) stands for, unquoted (malloc'd). */
static char *unquote_name(const char *p, const char *end) {
  if (*p != '"') return ds_strf("%.*s", (int)(end - p), p);
  char *out = malloc((size_t)(end - p));
  size_t n = 0;
  for (const char *q = p + 1; out && q < end - 1; q++) {
    out[n++] = *q;
    if (*q == '"') q++; /* "" -> " */
  }
  if (out) out[n] = 0;
  return out;
}

/* The same name to SQLite: equal ignoring ASCII case (as sqlite3_stricmp;
 * not strcasecmp, which follows the host's locale). */
static int same_sql_name(const char *a, size_t an, const char *b, size_t bn) {
  if (an != bn) return 0;
  for (size_t i = 0; i < an; i++) {
    unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
    if (x >= 'A' && x <= 'Z') x = (unsigned char)(x + 32);
    if (y >= 'A' && y <= 'Z') y = (unsigned char)(y + 32);
    if (x != y) return 0;
  }
  return 1;
}

int ds_schema_parse_columns(ds_schema *s, const char *spec, int writer, char **err) {
  const char *p = spec;
  size_t first = s->n;
  while (*p) {
    while (isspace((unsigned char)*p)) p++;
    const char *nend = name_end(p);
    if (!nend) return ds_err(err, "columns='%s': a quoted name has no closing quote", spec);
    const char *end = strchr(nend, ',');
    size_t type_len = end ? (size_t)(end - nend) : strlen(nend);
    const char *type = trim(nend, &type_len);
    if (nend == p) return ds_err(err, "empty column in columns='%s'", spec);
    int decl = known_type(type, type_len);
    if (decl < 0)
      return ds_err(err, "columns='%s': column '%.*s' has type '%.*s', not one of INTEGER, "
                         "REAL, TEXT, BLOB, NUMERIC, JSON or none (columns are separated by "
                         "commas; a name with spaces or commas goes in double quotes)",
                    spec, (int)(nend - p), p, (int)type_len, type);
    int full = 0;
    ds_column *c = add_column(s, &full);
    if (full)
      return ds_err(err, "columns= names more than %d columns", DS_SCHEMA_MAX_COLUMNS);
    if (!c || !(c->field = unquote_name(p, nend)) ||
        !(c->decltype = ds_strf("%.*s", (int)type_len, type)))
      return ds_err(err, "out of memory");
    c->field_len = strlen(c->field);
    c->decl = (ds_decl)decl;
    for (size_t i = first; i + 1 < s->n; i++)
      if (writer ? same_sql_name(s->cols[i].field, s->cols[i].field_len, c->field, c->field_len)
                 : (s->cols[i].field_len == c->field_len &&
                    memcmp(s->cols[i].field, c->field, c->field_len) == 0))
        return ds_err(err, "columns='%s': '%s' and '%s' name the same column "
                           "(SQL compares names ignoring ASCII case)",
                      spec, s->cols[i].field, c->field);
    p = end ? end + 1 : nend + strlen(nend);
  }
  if (s->n == 0) return ds_err(err, "columns='%s' names no column", spec);
  return 0;
}

const char *ds_schema_decltype(const ds_column *c) {
  if (c->decltype) return c->decltype;
  unsigned t = c->types & ~(1u << DS_V_NULL);
  unsigned ints = 1u << DS_V_INT | 1u << DS_V_BOOL;
  unsigned text = 1u << DS_V_TEXT | 1u << DS_V_LIST | 1u << DS_V_TUPLE |
                  1u << DS_V_SET | 1u << DS_V_MAP | 1u << DS_V_COMPLEX |
                  1u << DS_V_BIGINT | 1u << DS_V_UINT | 1u << DS_V_UNSUPPORTED;
  unsigned blob = 1u << DS_V_BYTES | 1u << DS_V_NDARRAY;
  if (t == 0) return "";
  if ((t & ~ints) == 0) return "INTEGER";
  if ((t & ~(ints | 1u << DS_V_FLOAT)) == 0) return "REAL";
  if ((t & ~text) == 0) return "TEXT";
  if ((t & ~blob) == 0) return "BLOB";
  return "";
}

/* SQLite's names of the row index: a column so named would hide it. */
static const char *const rowid_names[] = {"rowid", "oid", "_rowid_", NULL};

/* Is `name` a reserved name or a name of the row index (ignoring case)? */
static int reserved_name(const char *name, const char *const *reserved) {
  for (const char *const *r = rowid_names; *r; r++)
    if (strcasecmp(*r, name) == 0) return 1;
  for (const char *const *r = reserved; r && *r; r++)
    if (strcasecmp(*r, name) == 0) return 1;
  return 0;
}

/* Is `name` used (ignoring case) by a named column before `upto`, or by a
 * reserved name? (Linear: for single questions, not for naming.) */
static int taken(const ds_schema *s, size_t upto, const char *name,
                 const char *const *reserved) {
  for (size_t i = 0; i < upto; i++)
    if (s->cols[i].name && strcasecmp(s->cols[i].name, name) == 0) return 1;
  return reserved_name(name, reserved);
}

/* The names given so far, by case-folded hash: each slot holds a column
 * index + 1 (0: empty), and `next` the suffix to try next for a field
 * whose name clashed (so n equal names cost n steps, not n^2). */
typedef struct name_set {
  size_t *slots;
  size_t mask;
} name_set;

/* Slot of `name` in the set, or of the empty slot where it would go. */
static size_t name_slot(const name_set *ns, const ds_schema *s, const char *name) {
  size_t k = (size_t)name_hash(name, strlen(name), 1) & ns->mask;
  while (ns->slots[k] && strcasecmp(s->cols[ns->slots[k] - 1].name, name) != 0)
    k = (k + 1) & ns->mask;
  return k;
}

int ds_schema_name_columns(ds_schema *s, const char *const *reserved,
                           char **err) {
  name_set ns = {0};
  size_t n = 64;
  while (n < 4 * s->n) n *= 2;
  ns.slots = calloc(n, sizeof *ns.slots);
  int *next = calloc(s->n ? s->n : 1, sizeof *next); /* per column: next suffix */
  if (!ns.slots || !next) {
    free(ns.slots);
    free(next);
    return ds_err(err, "out of memory");
  }
  ns.mask = n - 1;
  int rc = 0;
  for (size_t i = 0; i < s->n && rc == 0; i++) {
    ds_column *c = &s->cols[i];
    free(c->name);
    c->name = strdup(c->field);
    size_t k = c->name ? name_slot(&ns, s, c->name) : 0;
    /* a clash: continue from the suffix the first holder of this name
     * reached (kept on that holder), not from _2 again */
    size_t owner = c->name && ns.slots[k] ? ns.slots[k] - 1 : SIZE_MAX;
    int suffix = owner != SIZE_MAX && next[owner] ? next[owner] : 2;
    while (c->name && (ns.slots[k] || reserved_name(c->name, reserved))) {
      free(c->name);
      c->name = ds_strf("%s_%d", c->field, suffix++);
      if (c->name) k = name_slot(&ns, s, c->name);
      if ((suffix & 255) == 0 && ds_cancel_check()) rc = ds_err(err, DS_CANCEL_MSG);
      if (rc) break;
    }
    if (owner != SIZE_MAX) next[owner] = suffix;
    if (!c->name && !rc) rc = ds_err(err, "out of memory");
    if (rc == 0) ns.slots[k] = i + 1;
    if (rc == 0 && (i & 255) == 0 && ds_cancel_check()) rc = ds_err(err, DS_CANCEL_MSG);
  }
  free(ns.slots);
  free(next);
  return rc;
}

char *ds_schema_free_name(const ds_schema *s, const char *want,
                          const char *const *reserved) {
  char *name = strdup(want);
  while (name && taken(s, s->n, name, reserved)) {
    char *longer = ds_strf("_%s", name);
    free(name);
    name = longer;
  }
  return name;
}

/* Append a name as an SQL identifier in double quotes. */
static void put_ident(ds_buf *b, const char *name) {
  ds_buf_puts(b, "\"");
  for (const char *p = name; *p; p++) {
    if (*p == '"') ds_buf_puts(b, "\""); /* "" inside a quoted name */
    ds_buf_append(b, p, 1);
  }
  ds_buf_puts(b, "\"");
}

char *ds_schema_sql(const ds_schema *s, const char *lead, const char *tail) {
  ds_buf b = {0};
  ds_buf_puts(&b, "CREATE TABLE x(");
  int first = 1;
  if (lead) {
    ds_buf_puts(&b, lead);
    first = 0;
  }
  for (size_t i = 0; i < s->n; i++) {
    if (!first) ds_buf_puts(&b, ", ");
    first = 0;
    put_ident(&b, s->cols[i].name);
    const char *t = ds_schema_decltype(&s->cols[i]);
    if (*t) ds_buf_printf(&b, " %s", t);
  }
  if (tail) ds_buf_printf(&b, "%s%s", first ? "" : ", ", tail);
  ds_buf_puts(&b, ")");
  if (ds_buf_append(&b, "", 1)) {
    ds_buf_free(&b);
    return NULL;
  }
  return (char *)b.data;
}

void ds_schema_free(ds_schema *s) {
  for (size_t i = 0; i < s->n; i++) {
    free(s->cols[i].name);
    free(s->cols[i].field);
    free(s->cols[i].decltype);
  }
  free(s->cols);
  free(s->slots);
  memset(s, 0, sizeof *s);
}
