/* atlas_format.h - atlas as the cross-format code sees it (format.h):
 * detection, bytes on disk, shard listing. */
#ifndef DS_ATLAS_FORMAT_H
#define DS_ATLAS_FORMAT_H

#include "formats/format.h"

/* ds_detected.detail of an atlas directory: a bare shard, not a root. */
#define DS_ATLAS_DETECT_SHARD 1u

extern const ds_format_bytes ds_atlas_format;

#endif
