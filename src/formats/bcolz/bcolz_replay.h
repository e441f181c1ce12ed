/* bcolz_replay.h - every row of a bcolz table, in order, as the values the
 * writer takes back (S cells as BYTES, U as TEXT, datetime64 as ISO TEXT,
 * NaT as NULL, shaped cells as .npy arrays, objects decoded): what a writer
 * table restages when a second transaction adds to what it published. */
#ifndef DS_BCOLZ_REPLAY_H
#define DS_BCOLZ_REPLAY_H

#include <stddef.h>

#include "core/value.h"

/* Call fn(ctx, row) with the ncols values of each row of the table (or
 * carray) at `dir`. Stops at the first error (fn's or a read error naming
 * the file). */
int bcolz_each_row(const char *dir,
                   int (*fn)(void *ctx, const ds_value *row, char **err), void *ctx,
                   char **err);

#endif
