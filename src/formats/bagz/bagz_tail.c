/* bagz_tail.c - is a bag with no valid limits tail a bag cut short (see
 * bagz_tail.h)? A bag ends with one u64 limit per record (where each
 * record ends), the last equal to where the limits start. Cut short, the
 * file ends inside or just after its limits: the values that remain still
 * run non-decreasing, none past their own start, but the last stops short
 * of where they start. Seen from the end, for each of the 8 ways a cut can
 * split a limit, the longest such run decides. */
#include "bagz_tail.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/cancel.h"
#include "core/common.h"

#define TAIL_CHUNK 8192u                  /* limits read at a time */
#define TAIL_MAX_LIMITS ((uint64_t)8 << 20) /* 64 MiB of limits at most */

/* The run of limits ending at byte `end`: where it starts (*start), its
 * last value (*last) and its length (return; 0: none, or too long to
 * tell where it starts, or a read failed). */
static uint64_t run_before(const ds_file *f, uint64_t end, uint8_t *buf, uint64_t *start,
                           uint64_t *last) {
  uint64_t next = UINT64_MAX, count = 0, q = end;
  while (q >= 8) {
    uint64_t k = q / 8 < TAIL_CHUNK ? q / 8 : TAIL_CHUNK;
    uint64_t lo = q - 8 * k;
    char *err = NULL;
    if (ds_file_read(f, lo, 8 * k, buf, &err) || ds_cancel_poll()) {
      free(err);
      return 0;
    }
    for (uint64_t i = k; i-- > 0;) {
      uint64_t pos = lo + 8 * i, v = ds_le64(buf + 8 * i);
      if (v > next || v > pos) return count;
      if (count == 0) *last = v;
      next = v;
      *start = pos;
      if (++count > TAIL_MAX_LIMITS) return 0;
    }
    q = lo;
  }
  return count;
}

int bagz_tail_cut(const ds_file *f, char *out, size_t n) {
  uint64_t size = f->size, best = 0, best_start = 0, best_last = 0, best_end = 0;
  uint8_t *buf = malloc(8 * TAIL_CHUNK);
  if (!buf) return 0;
  for (uint64_t stray = 0; stray < 8 && stray + 8 <= size; stray++) {
    uint64_t end = size - stray, start = 0, last = 0;
    uint64_t k = run_before(f, end, buf, &start, &last);
    if (k == 0) continue;
    /* the limits start at or after the last value (every limit is at most
     * where they start): the first position of the run that can */
    if (start < last) start += (last - start + 7) / 8 * 8;
    if (start >= end || last >= start) continue; /* no run, or a whole bag */
    if (last == 0) continue; /* limits of no record bytes: zeros, not a bag */
    k = (end - start) / 8;
    if (k > best) best = k, best_start = start, best_last = last, best_end = end;
  }
  free(buf);
  if (best == 0) return 0;
  snprintf(out, n, "limits tail cut: the file has %llu bytes, a whole bag would have at "
           "least %llu; the %llu limits left (bytes %llu to %llu) end at byte %llu, short "
           "of byte %llu where the records end, so the last limit is gone and no record "
           "can be located",
           (unsigned long long)size, (unsigned long long)(best_start + 8 * (best + 1)),
           (unsigned long long)best, (unsigned long long)best_start,
           (unsigned long long)best_end, (unsigned long long)best_last,
           (unsigned long long)best_start);
  return 1;
}
