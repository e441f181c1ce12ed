/* bcolz_format.h - bcolz as the cross-format code sees it (format.h):
 * detection, bytes on disk, shard listing. */
#ifndef DS_BCOLZ_FORMAT_H
#define DS_BCOLZ_FORMAT_H

#include "formats/format.h"

/* ds_detected.detail of a bcolz directory: a ctable (else a carray). */
#define DS_BCOLZ_DETECT_CTABLE 1u

extern const ds_format_bytes ds_bcolz_format;

#endif
