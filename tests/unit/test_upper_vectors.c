/* test_upper_vectors.c - the vector registers are left clean after the
 * ISA-L calls (src/core/upper_vectors.c): after tfr_crc32c over a record
 * long enough for ISA-L's AVX-512 code, the processor's XINUSE bitmap
 * (XGETBV with ECX=1) shows no dirty upper halves of ymm/zmm0-15 (bits 2
 * and 6), which the SSE code after it would pay for. The control, ISA-L
 * called directly, shows whether this CPU's ISA-L dirties them at all
 * (when not, or without XGETBV1, the check cannot fail here and says so). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <isa-l/crc.h>

#include "check.h"
#include "core/upper_vectors.h"
#include "formats/tfrecord/tfrecord_crc.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>

/* 1 when XGETBV with ECX=1 (XINUSE) is there. */
static int has_xinuse(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE)) return 0;
  if (!__get_cpuid_count(0xd, 1, &a, &b, &c, &d)) return 0;
  return (a >> 2) & 1;
}

/* XINUSE's bits 2 (AVX: ymm0-15's upper 128) and 6 (ZMM_Hi256). */
static unsigned dirty_upper(void) {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
  (void)hi;
  return lo & ((1u << 2) | (1u << 6));
}
#endif

int main(void) {
  static uint8_t rec[4096];
  for (size_t i = 0; i < sizeof rec; i++) rec[i] = (uint8_t)(i * 7 + 3);
  /* the CRC is right either way: against ISA-L's own */
  uint32_t want = ~(uint32_t)crc32_iscsi(rec, (int)sizeof rec, 0xffffffffu);
  CHECK(tfr_crc32c(rec, sizeof rec) == want);
#if defined(__x86_64__) && defined(__GNUC__)
  if (has_xinuse()) {
    crc32_iscsi(rec, (int)sizeof rec, 0xffffffffu);
    unsigned control = dirty_upper();
    ds_clear_upper_vectors();
    unsigned cleared = dirty_upper();
    volatile uint32_t sink = tfr_crc32c(rec, sizeof rec);
    (void)sink;
    unsigned after = dirty_upper();
    printf("# XINUSE upper bits: ISA-L alone 0x%x, cleared 0x%x, after tfr_crc32c 0x%x%s\n",
           control, cleared, after,
           control ? "" : " (this CPU's ISA-L leaves them clean: the checks cannot fail here)");
    CHECK(cleared == 0);
    CHECK(after == 0);
  } else {
    printf("# no XGETBV1 here: the state cannot be read\n");
  }
#endif
  return check_exit();
}
