/* bagz_tail.h - a diagnosis for a bag whose limits tail does not check
 * out: does the file look like a bag whose end was cut off? Only for the
 * error message: without its last limit nothing says where a bag's
 * records end, so nothing is read from such a file. */
#ifndef DS_BAGZ_TAIL_H
#define DS_BAGZ_TAIL_H

#include <stddef.h>

#include "core/mapped_file.h"

/* When the end of f is a run of limits (u64 values, non-decreasing, none
 * past where the run starts, maybe followed by 1-7 stray bytes of a limit
 * cut in two) whose last value stops short of where the run starts, the
 * file is a bag that lost at least its last limit: write "limits tail cut:
 * ..." (where the run starts and ends, the least size a whole bag would
 * have) into out and return 1. Else 0 (out untouched). Reads at most the
 * last 64 MiB of the file, backwards. */
int bagz_tail_cut(const ds_file *f, char *out, size_t n);

#endif
