/* atlas_replay.h - every example of an atlas dataset, in order, as the
 * values the writer takes (the decoded block pickles): what a writer
 * table restages when a second transaction adds to what it published. */
#ifndef DS_ATLAS_REPLAY_H
#define DS_ATLAS_REPLAY_H

#include "core/value.h"

/* Call fn(ctx, example) for each example of the dataset at `dir`. Stops at
 * the first error (fn's or a read error naming the file). */
int atlas_each_example(const char *dir, int (*fn)(void *ctx, const ds_value *ex, char **err),
                       void *ctx, char **err);

#endif
