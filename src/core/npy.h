/* npy.h - the NumPy .npy file format (versions 1.0, 2.0, 3.0): parse a
 * header, write one, and turn the data into JSON (what ndarray.tolist()
 * prints). Knows no SQLite; sql/npy_sql.c registers the npy_* SQL functions. */
#ifndef DS_NPY_H
#define DS_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "value.h"

#define DS_NPY_MAX_DIMS 32

/* datetime64 / timedelta64 units, in numpy's order. */
enum ds_npy_unit {
  DS_NPY_UNIT_GENERIC = -1, /* "<M8" with no unit: only NaT is meaningful */
  DS_NPY_UNIT_Y = 0, DS_NPY_UNIT_M, DS_NPY_UNIT_W, DS_NPY_UNIT_D,
  DS_NPY_UNIT_h, DS_NPY_UNIT_m, DS_NPY_UNIT_s, DS_NPY_UNIT_ms,
  DS_NPY_UNIT_us, DS_NPY_UNIT_ns, DS_NPY_UNIT_ps, DS_NPY_UNIT_fs,
  DS_NPY_UNIT_as
};

/* The value numpy uses for NaT (not a time). */
#define DS_NPY_NAT INT64_MIN

typedef struct ds_npy {
  const char *descr;   /* dtype text, e.g. "<f4" (points into descr_buf). A
                          simple dtype is normalised the way numpy's
                          dtype.str prints it ('|' for one-byte types, '='
                          made explicit); a structured dtype keeps the list
                          text as in the header, as UTF-8 (at most 255
                          bytes; a format 1.0/2.0 header is latin-1, and
                          its non-ASCII field names are converted, as
                          numpy decodes them). */
  char descr_buf[256];
  char kind;           /* 'b','i','u','f','c','S','U','V','M','m','O' */
  char byteorder;      /* '<', '>' or '|' */
  uint32_t itemsize;   /* bytes per element */
  int fortran_order;
  int ndim;
  uint64_t shape[DS_NPY_MAX_DIMS];
  uint64_t count;      /* product of shape (1 for 0-d) */
  const uint8_t *data; /* the element bytes inside the parsed blob */
  size_t data_len;     /* == count * itemsize (checked by parse); bytes
                          after it in the blob are ignored, as numpy does */
  int structured;      /* descr is a list of fields (kind 'V') */
  int has_object;      /* dtype is or contains 'O': then the data is a
                          pickle, data_len is all the bytes after the
                          header, and nothing here decodes it */
  int dt_unit;         /* kind 'M'/'m': enum ds_npy_unit */
  int64_t dt_mult;     /* kind 'M'/'m': unit multiplier ("[10s]" -> 10) */
  int version;         /* format major version: 1, 2 or 3 */
} ds_npy;

/* Parse a whole .npy blob. Every length is checked against n. */
int ds_npy_parse(const uint8_t *p, size_t n, ds_npy *out, char **err);

/* Append a .npy header (version 1.0, or 2.0 when the dict is too long for
 * 1.0, or 3.0 when descr holds non-ASCII field names) for a C-order or
 * Fortran-order array to out, padded with spaces and a final '\n' so that
 * the data starts at a multiple of 64 bytes, as numpy writes it. descr is a
 * simple dtype string ("<f4") or a structured list ("[('a', '<i4')]"); it is
 * checked with the same rules as ds_npy_parse. The caller appends the data
 * bytes. */
int ds_npy_write_header(ds_buf *out, const char *descr, int fortran_order,
                        int ndim, const uint64_t *shape, char **err);

/* Append the array as nested JSON lists (tolist()) to out. */
int ds_npy_to_json(const ds_npy *a, ds_buf *out, char **err);

/* The position in a->data (in elements) of the element at the logical,
 * C-order multi-index idx[0..a->ndim). -1 with *err when out of range. */
int ds_npy_offset(const ds_npy *a, const uint64_t *idx, uint64_t *pos,
                  char **err);

/* Element number `pos` (a position in a->data, see ds_npy_offset) as a
 * value by the Values table: BOOL, INT, UINT, FLOAT, COMPLEX, TEXT (U, and
 * M as ISO text), BYTES (S without trailing NULs, V), INT ticks for m; NaT
 * is NULL. Text and bytes point into a->data or into `scratch`, which the
 * caller frees. -1 with *err for dtypes that have no scalar form here. */
int ds_npy_element(const ds_npy *a, uint64_t pos, ds_value *v,
                   ds_buf *scratch, char **err);

/* Append numpy's ISO-8601 text for datetime64 value t at unit/mult
 * ("2021-03-04T05:06:07"). t must not be NaT. 0, or -1 with *err. */
int ds_npy_datetime_iso(ds_buf *out, int64_t t, int unit, int64_t mult,
                        char **err);

#endif
