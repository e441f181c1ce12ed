/* datadings_format.h - datadings as the cross-format code sees it
 * (format.h): detection, bytes on disk, shard listing. */
#ifndef DS_DATADINGS_FORMAT_H
#define DS_DATADINGS_FORMAT_H

#include "formats/format.h"

extern const ds_format_bytes ds_datadings_format;

#endif
