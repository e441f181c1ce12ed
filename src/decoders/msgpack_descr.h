/* msgpack_descr.h - a structured numpy dtype's description, as the .npy
 * header writes it (Python's repr of dtype.descr: "[('a', '<i4'), ('b',
 * '<f8', (2,))]"), packed as msgpack-numpy packs dtype.descr: lists and
 * tuples as msgpack arrays, str as str, ints as ints. So a structured
 * array read from msgpack-numpy is written back byte for byte. */
#ifndef DS_MSGPACK_DESCR_H
#define DS_MSGPACK_DESCR_H

#include <msgpack.h>

/* Pack the Python literal descr (lists, tuples, str literals with
 * Python's escapes, non-negative ints) into pk. 0, or -1 with *err naming
 * what is malformed. Nesting is capped at 64 levels. */
int ds_msgpack_pack_descr(msgpack_packer *pk, const char *descr, char **err);

#endif
