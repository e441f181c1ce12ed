/* msgpack_encode.h - the shared value model into msgpack bytes, as
 * datadings' writer (Python msgpack + msgpack-numpy) encodes them
 * (datadings.md sections 2.2 and 3): the smallest int form, floats as
 * float64, str, bin, arrays, maps; a BYTES value that is a whole valid .npy
 * file and an NDARRAY become msgpack-numpy's 5-entry array map (C order,
 * dtype string as numpy's dtype.str); COMPLEX becomes msgpack-numpy's
 * {complex: true, data: repr(z)}. What msgpack-numpy cannot write here is
 * an error: structured or object arrays, datetime64/timedelta64, integers
 * outside [-2^63, 2^64). msgpack-c does the packing. Knows no SQLite. */
#ifndef DS_MSGPACK_ENCODE_H
#define DS_MSGPACK_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "core/common.h"
#include "core/value.h"

/* Append the msgpack encoding of v to out. */
int ds_msgpack_pack_value(ds_buf *out, const ds_value *v, char **err);

/* Append one str (UTF-8 bytes) to out, in the smallest str form. */
int ds_msgpack_pack_str(ds_buf *out, const uint8_t *p, size_t n, char **err);
/* Append a map header (fixmap / map16 / map32) or array header. */
int ds_msgpack_pack_map_header(ds_buf *out, size_t n, char **err);
int ds_msgpack_pack_array_header(ds_buf *out, size_t n, char **err);

/* Python's repr() of a complex number: "(1.5-2.25j)", "2j", "-0j",
 * "(nan+infj)", "(1e+300+1e-300j)". Appended to out (no NUL). */
int ds_python_complex_repr(ds_buf *out, double re, double im);

#endif
