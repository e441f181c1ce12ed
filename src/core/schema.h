/* schema.h - the columns of a virtual table whose rows are records with
 * named fields (datadings samples, atlas dict examples): inferred from the
 * first rows in first-seen order, or given by hand ('label INTEGER, image
 * BLOB'), then written as the CREATE TABLE text SQLite needs.
 *
 * Column names are the field names, quoted; a name equal (ignoring case, as
 * SQLite compares names) to an earlier column, a reserved name or a name
 * of the row index (rowid, oid, _rowid_) gets a "_2", "_3", ... suffix. The declared type follows the values seen:
 * integers INTEGER, floats (or floats and integers) REAL, text and JSON
 * containers TEXT, bytes and arrays BLOB, anything mixed no type. */
#ifndef DS_SCHEMA_H
#define DS_SCHEMA_H

#include <stddef.h>

#include "value.h"

/* The type a columns= entry declares, parsed once (the SQLite layer
 * converts values by it: sql/column_value.h). Inferred columns declare
 * nothing (DS_DECL_NONE): their type describes the values seen. */
typedef enum ds_decl {
  DS_DECL_NONE = 0, /* no type given, or inferred */
  DS_DECL_INTEGER,  /* INTEGER, INT */
  DS_DECL_REAL,     /* REAL, FLOAT, DOUBLE */
  DS_DECL_TEXT,
  DS_DECL_BLOB,
  DS_DECL_NUMERIC,
  DS_DECL_JSON
} ds_decl;

typedef struct ds_column {
  char *name;       /* the SQL column name (unquoted) */
  char *field;      /* the field it reads */
  size_t field_len;
  unsigned types;   /* bit (1 << ds_vtype) for every type seen */
  char *decltype;   /* given by hand, or NULL to infer from types */
  ds_decl decl;     /* what decltype declares (NONE when inferred) */
} ds_column;

typedef struct ds_schema {
  ds_column *cols;
  size_t n, cap;
  size_t *slots;  /* fields by hash (column index + 1), for observe */
  size_t nslots;
} ds_schema;

/* At most this many columns come from fields or columns=: SQLite allows
 * 2000 in a table, and the tables add a few of their own. Observing one
 * more distinct field is an error, found at once. */
#define DS_SCHEMA_MAX_COLUMNS 1990

/* Record that field[0..len) held a value of type t (adds it on first
 * sight; constant time). Stops with DS_CANCEL_MSG when a core/cancel.h
 * scope asks. */
int ds_schema_observe(ds_schema *s, const char *field, size_t len, ds_vtype t,
                      char **err);
/* Columns from 'name TYPE, name TYPE, ...' (TYPE optional; one of
 * INTEGER, INT, REAL, FLOAT, DOUBLE, TEXT, BLOB, NUMERIC, JSON, any case:
 * anything else, such as a missing comma, is an error); sets decl. A name
 * in double quotes ("a,b", "say ""hi""") may hold spaces, commas and
 * quotes (written "" inside); it names the field as unquoted.
 * A name given twice is an error; for a writer (writer=1) also names equal
 * ignoring ASCII case (one SQL column, two fields written), while a
 * reader's names are fields of the data, where case counts ("Label" and
 * "label" are two fields; the second column is named label_2). */
int ds_schema_parse_columns(ds_schema *s, const char *spec, int writer, char **err);
/* The declared type of a column: "INTEGER", "REAL", "TEXT", "BLOB" or "". */
const char *ds_schema_decltype(const ds_column *c);
/* Give every column a unique SQL name, avoiding `reserved` names
 * (NULL-terminated, compared ignoring case): linear in the columns. */
int ds_schema_name_columns(ds_schema *s, const char *const *reserved,
                           char **err);
/* A name not used by any column nor by `reserved`: `want`, else "_want",
 * "__want", ... (malloc'd). */
char *ds_schema_free_name(const ds_schema *s, const char *want,
                          const char *const *reserved);
/* "CREATE TABLE x(<lead>, "col" TYPE, ..., <tail>)" (malloc'd); lead and
 * tail are column definitions written as given (either may be NULL). */
char *ds_schema_sql(const ds_schema *s, const char *lead, const char *tail);
void ds_schema_free(ds_schema *s);

#endif
