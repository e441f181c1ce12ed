/* value_sql.h - hand a ds_value to SQLite as a function or column result,
 * following the Values table of docs/INTERFACE.md (see value.h). */
#ifndef DS_VALUE_SQL_H
#define DS_VALUE_SQL_H

#include "sqlite_api.h"
#include "core/value.h"

/* The subtype SQLite's JSON functions recognise on JSON text ('J'). */
#define DS_JSON_SUBTYPE 74

/* SQLite 3.45 asks functions that set a subtype to say so; older versions
 * ignore the flag bit, so it is safe to pass everywhere. */
#ifndef SQLITE_RESULT_SUBTYPE
#define SQLITE_RESULT_SUBTYPE 0x001000000
#endif

/* Set the result of ctx to v: NULL, INTEGER, REAL (NaN -> NULL), TEXT
 * (UINT above INT64_MAX and BIGINT outside int64 as exact decimal), BLOB
 * (bytes, or a whole .npy file for NDARRAY), or JSON text with subtype 'J'
 * for LIST/TUPLE/SET/MAP/COMPLEX. Data is always copied
 * (SQLITE_TRANSIENT). On failure the result is an SQL error. */
void ds_value_result(sqlite3_context *ctx, const ds_value *v);
/* Set the result of ctx to the JSON text of v (any type, as inside JSON:
 * bytes base64, arrays nested lists, NaN null) with subtype 'J'. */
void ds_value_result_json(sqlite3_context *ctx, const ds_value *v);
/* UTF-8 text p[0..n) as a TEXT result (NUL-terminated for SQLite when it
 * holds no U+0000, so length() and friends make no second copy). */
void ds_result_text(sqlite3_context *ctx, const uint8_t *p, size_t n);

/* Set the result of ctx to JSON text (copied) with the 'J' subtype. */
void ds_result_json(sqlite3_context *ctx, const ds_buf *json);

/* JSON text can be far bigger than the value it prints: cap a result
 * buffer at SQLite's length limit (what SQLite would refuse anyway), and
 * after a failed write replace *err with that reason when the cap was hit. */
void ds_json_limit(sqlite3_context *ctx, ds_buf *b);
void ds_json_over(const ds_buf *b, char **err);

#endif
