/* npy_sql.h - the npy_* SQL functions over .npy BLOBs (docs/INTERFACE.md,
 * "Array helper functions"): npy_shape, npy_dtype, npy_size, npy_json,
 * npy_get, npy_sum, npy_min, npy_max, npy_mean. */
#ifndef DS_NPY_SQL_H
#define DS_NPY_SQL_H

#include "sqlite_api.h"

/* Register every npy_* function on db. Returns an SQLite result code
 * (SQLITE_OK on success). */
int ds_npy_register_functions(sqlite3 *db);

#endif
