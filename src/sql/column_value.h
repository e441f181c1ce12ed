/* column_value.h - a value as a column declared with a type (columns=
 * 'name TYPE, ...' of the datadings, atlas and bagz records=tfexample
 * CREATE forms) gives it: SQLite's type affinity, as a native table of
 * that declared type would store the value, decided here once for every
 * module.
 *
 *   INTEGER, NUMERIC  text that is a well-formed number becomes INTEGER
 *                     (or REAL when it is not an integer or is beyond
 *                     int64); a REAL that is exactly an integer becomes
 *                     INTEGER; other text stays TEXT
 *   REAL              integers and numeric text become REAL
 *   TEXT              INTEGER and REAL become their text as SQLite writes
 *                     it (CAST(x AS TEXT))
 *   BLOB, none        the value as stored (no conversion)
 *   JSON              (not an SQLite type) the value's JSON text with the
 *                     JSON subtype: a string is quoted, bytes base64, an
 *                     array nested lists; nil or absent stays NULL
 * NULL and BLOB values never convert; NaN is NULL as everywhere. */
#ifndef DS_COLUMN_VALUE_H
#define DS_COLUMN_VALUE_H

#include "core/schema.h"
#include "core/value.h"
#include "sqlite_api.h"

/* Set the result of ctx to v as a column declared `decl` holds it
 * (DS_DECL_NONE: ds_value_result). */
void ds_value_result_decl(sqlite3_context *ctx, const ds_value *v, ds_decl decl);

/* Does text p[0..n) hold a number by SQLite's rule (optional spaces, sign,
 * digits with an optional '.' and exponent, spaces)? 1 and *i for an
 * integer that fits int64, 2 and *r for any other number, 0 when it is not
 * a number, -1 when out of memory. */
int ds_text_number(const uint8_t *p, size_t n, int64_t *i, double *r);

#endif
