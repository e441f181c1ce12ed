/* msgpack_numpy.h - msgpack-numpy's maps inside a datadings sample (bin
 * keys only, as upstream's decoder recognises them; datadings.md 3.3-3.4):
 *   {nd: true, type, kind, shape, data}  -> DS_V_NDARRAY (.npy bytes)
 *   {nd: <other>, type, data}            -> numpy scalar by dtype
 *   {complex: true, data: "(1+2j)"}      -> DS_V_COMPLEX
 * Used by msgpack_value.c's conversion. Knows no SQLite. */
#ifndef DS_MSGPACK_NUMPY_H
#define DS_MSGPACK_NUMPY_H

#include <msgpack.h>
#include <stddef.h>
#include <stdint.h>

#include "core/value.h"

/* A map in one of msgpack-numpy's forms as a value in `a`: 0 done, 1 when
 * it is none of them (or misses a required entry: then it is a plain map),
 * -1 with *err ("msgpack-numpy: ...") when it is one but malformed. */
int ds_msgpack_numpy_value(const msgpack_object *o, ds_arena *a, ds_value *out,
                           char **err);

/* The value of the last entry of map o whose key is the bin `name`
 * (msgpack-numpy's keys), or NULL. */
const msgpack_object *ds_msgpack_bin_entry(const msgpack_object *o, const char *name);

/* Bytes of a str or bin object (never NULL, "" when empty). */
const uint8_t *ds_msgpack_bytes(const msgpack_object *o, size_t *n);

/* Python's complex() on repr text such as "(1.5-2.25j)", "2j", "-0j",
 * "(nan+infj)" (datadings.md 3.3; also "(3)", "j", "1-j"). 0 with *re and
 * *im set, -1 when the text is malformed. */
int ds_msgpack_parse_complex(const char *s, size_t n, double *re, double *im);

#endif
