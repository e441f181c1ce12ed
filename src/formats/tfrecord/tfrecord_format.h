/* tfrecord_format.h - TFRecord as the cross-format code sees it
 * (format.h): detection, bytes on disk, shard listing. */
#ifndef DS_TFRECORD_FORMAT_H
#define DS_TFRECORD_FORMAT_H

#include "formats/format.h"

extern const ds_format_bytes ds_tfrecord_format;

#endif
