/* bcolz_cell_write.h - one cell of the bcolz writer (bcolz_cell_write.c):
 * a column's declared type parsed (numpy dtype strings through the
 * reader's dtype grammar, SQL type names), upstream's column-name rule,
 * and a value turned into the cell's bytes. Plain C: knows bytes. */
#ifndef DS_BCOLZ_CELL_WRITE_H
#define DS_BCOLZ_CELL_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "core/common.h"
#include "core/value.h"
#include "formats/bcolz/bcolz.h"

/* A column's declared type: the dtype (bcolz.h) and whether its S/U width
 * is still to be found (SQL TEXT / BLOB, or "S" / "U" without a size). */
typedef struct bcolz_wtype {
  bcolz_dtype dt;
  int width_unknown;
  uint64_t chunklen;     /* this column's chunklen; 0: the options' rule */
} bcolz_wtype;

/* Parse a column type (the types bcolz_writer.h lists); errors name it. */
int bcolz_write_parse_type(const char *spec, bcolz_wtype *out, char **err);
/* upstream's column-name rule: a Python identifier (letters, digits, '_',
 * non-ASCII letters; not starting with a digit), not a Python keyword. */
int bcolz_write_check_name(const char *name, char **err);

/* One value as the bytes of a cell of type dt (dt->atom bytes at out; for
 * 'O' the pickle goes to obj). Exposed for tests. Errors say why the
 * value does not fit. */
int bcolz_cell_encode(const bcolz_dtype *dt, const ds_value *v, uint8_t *out,
                      ds_buf *obj, char **err);

/* Can v be an S or U cell (of any width) and read back as itself? 0, or
 * -1 with *err: NULL, not text or bytes, or ending in a NUL (numpy drops
 * trailing NULs). */
int bcolz_cell_text_check(const bcolz_dtype *dt, const ds_value *v, char **err);

#endif
