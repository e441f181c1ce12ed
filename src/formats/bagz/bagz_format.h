/* bagz_format.h - bagz as the cross-format code sees it (format.h):
 * detection, bytes on disk, shard listing. */
#ifndef DS_BAGZ_FORMAT_H
#define DS_BAGZ_FORMAT_H

#include "formats/format.h"

/* ds_detected.detail of a bag: every file has limits.NAME beside it. */
#define DS_BAGZ_DETECT_SEPARATE 1u

extern const ds_format_bytes ds_bagz_format;

#endif
