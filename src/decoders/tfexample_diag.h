/* tfexample_diag.h - why and where a record is not a tf.train.Example
 * (used by tfexample.c after protobuf-c, which says neither, refused it). */
#ifndef DS_TFEXAMPLE_DIAG_H
#define DS_TFEXAMPLE_DIAG_H

#include <stddef.h>
#include <stdint.h>

/* Set *err to "not a tf.train.Example: <what> at byte offset N" for the
 * first place where p[0..len) breaks the wire format or the Example
 * schema. Always returns -1. */
int ds_tfex_diagnose(const uint8_t *p, size_t len, char **err);

#endif
