/* schema.c - inferred or hand-given columns for record-like rows (see
 * schema.h). */
#include "schema.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common.h"

/* Append an empty column; NULL when out of memory. */
static ds_column *add_column(ds_schema *s) {
  ds_column *c = realloc(s->cols, (s->n + 1) * sizeof *c);
  if (!c) return NULL;
  s->cols = c;
  memset(&c[s->n], 0, sizeof *c);
  return &c[s->n++];
}

int ds_schema_observe(ds_schema *s, const char *field, size_t len, ds_vtype t,
                      char **err) {
  for (size_t i = 0; i < s->n; i++)
    if (s->cols[i].field_len == len && memcmp(s->cols[i].field, field, len) == 0) {
      s->cols[i].types |= 1u << t;
      return 0;
    }
  ds_column *c = add_column(s);
  if (!c || !(c->field = malloc(len + 1))) return ds_err(err, "out of memory");
  memcpy(c->field, field, len);
  c->field[len] = 0;
  c->field_len = len;
  c->types = 1u << t;
  return 0;
}

/* Trim spaces from both ends of s[0..*n) in place. */
static const char *trim(const char *s, size_t *n) {
  while (*n && isspace((unsigned char)*s)) s++, (*n)--;
  while (*n && isspace((unsigned char)s[*n - 1])) (*n)--;
  return s;
}

/* Is type[0..n) a type columns= accepts (ignoring case; empty: none)? */
static int known_type(const char *type, size_t n) {
  static const char *const types[] = {"INTEGER", "INT", "REAL", "FLOAT", "DOUBLE",
                                      "TEXT", "BLOB", "NUMERIC", "JSON", NULL};
  if (n == 0) return 1;
  for (const char *const *t = types; *t; t++)
    if (strlen(*t) == n && strncasecmp(*t, type, n) == 0) return 1;
  return 0;
}

int ds_schema_parse_columns(ds_schema *s, const char *spec, char **err) {
  const char *p = spec;
  while (*p) {
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    const char *item = trim(p, &n);
    if (n == 0) return ds_err(err, "empty column in columns='%s'", spec);
    size_t name_len = 0;
    while (name_len < n && !isspace((unsigned char)item[name_len])) name_len++;
    size_t type_len = n - name_len;
    const char *type = trim(item + name_len, &type_len);
    if (!known_type(type, type_len))
      return ds_err(err, "columns='%s': column '%.*s' has type '%.*s', not one of INTEGER, "
                         "REAL, TEXT, BLOB, NUMERIC, JSON or none (columns are separated by commas)",
                    spec, (int)name_len, item, (int)type_len, type);
    ds_column *c = add_column(s);
    if (!c || !(c->field = ds_strf("%.*s", (int)name_len, item)) ||
        !(c->decltype = ds_strf("%.*s", (int)type_len, type)))
      return ds_err(err, "out of memory");
    c->field_len = name_len;
    p = end ? end + 1 : p + strlen(p);
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

/* Is `name` used (ignoring case) by a named column before `upto`, by a
 * reserved name or by a name of the row index? */
static int taken(const ds_schema *s, size_t upto, const char *name,
                 const char *const *reserved) {
  for (const char *const *r = rowid_names; *r; r++)
    if (strcasecmp(*r, name) == 0) return 1;
  for (size_t i = 0; i < upto; i++)
    if (s->cols[i].name && strcasecmp(s->cols[i].name, name) == 0) return 1;
  for (const char *const *r = reserved; r && *r; r++)
    if (strcasecmp(*r, name) == 0) return 1;
  return 0;
}

int ds_schema_name_columns(ds_schema *s, const char *const *reserved,
                           char **err) {
  for (size_t i = 0; i < s->n; i++) {
    ds_column *c = &s->cols[i];
    free(c->name);
    c->name = strdup(c->field);
    for (int k = 2; c->name && taken(s, i, c->name, reserved); k++) {
      free(c->name);
      c->name = ds_strf("%s_%d", c->field, k);
    }
    if (!c->name) return ds_err(err, "out of memory");
  }
  return 0;
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
  s->cols = NULL;
  s->n = 0;
}
