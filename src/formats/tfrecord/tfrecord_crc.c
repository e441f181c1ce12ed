/* tfrecord_crc.c - CRC-32C over ISA-L (see tfrecord_crc.h). ISA-L's
 * crc32_iscsi neither inverts its seed nor its result: the standard
 * CRC-32C is ~crc32_iscsi(p, n, ~0) (checked against RFC 3720's vectors by
 * tests/unit/test_tfrecord.c). Short inputs (a record's 8 length bytes)
 * take the CPU's own CRC-32C instruction when it has one (x86-64 SSE4.2,
 * asked at run time), else ISA-L's table version. The one file that
 * includes ISA-L's crc.h. */
#include <limits.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <nmmintrin.h>
#define TFR_HW_CRC 1
#endif

#include <isa-l.h>
#include <isa-l/crc.h>

#include "core/lib_versions.h"
#include "core/upper_vectors.h"
#include "formats/tfrecord/tfrecord_crc.h"

/* Pieces of at most 1 GiB: crc32_iscsi's length is an int. */
#define CRC_PIECE ((size_t)1 << 30)
/* Up to this many bytes ISA-L's table version is faster than its
 * dispatched one (measured on AMD EPYC, ISA-L 2.30: 8 bytes 18 ns
 * against 50 ns; 64 bytes 275 ns against 42 ns), and the CPU's
 * instruction faster than both (8 bytes 1.6 ns; 64 bytes 4 ns against
 * ISA-L's 9; 268 bytes 30-55 ns against 20-38: ISA-L above SHORT_HW). */
#define SHORT 16
#define SHORT_HW 128

#ifdef TFR_HW_CRC
/* CRC-32C of n bytes from crc (not inverted), 8 bytes per instruction. */
__attribute__((target("sse4.2"))) static uint32_t crc_hw(const unsigned char *p, size_t n,
                                                         uint32_t crc) {
  uint64_t c = crc;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
  }
  crc = (uint32_t)c;
  for (; n > 0; p++, n--) crc = _mm_crc32_u8(crc, *p);
  return crc;
}
#endif

uint32_t tfr_crc32c(const void *p, size_t n) {
  const unsigned char *b = p;
  unsigned int crc = 0xffffffffu;
#ifdef TFR_HW_CRC
  if (n <= SHORT_HW && __builtin_cpu_supports("sse4.2")) return ~crc_hw(b, n, crc);
#endif
  if (n <= SHORT) /* a record's 8 length bytes */
    return ~(uint32_t)crc32_iscsi_base((unsigned char *)b, (int)n, crc);
  while (n > 0) {
    size_t k = n < CRC_PIECE ? n : CRC_PIECE;
    crc = crc32_iscsi((unsigned char *)b, (int)k, crc);
    b += k;
    n -= k;
  }
  ds_clear_upper_vectors(); /* a threads=1 scan: 2x faster */
  return ~(uint32_t)crc;
}

uint32_t tfr_crc32c_8(const uint8_t p[8]) {
#ifdef TFR_HW_CRC
  if (__builtin_cpu_supports("sse4.2")) return ~crc_hw(p, 8, 0xffffffffu);
#endif
  return ~(uint32_t)crc32_iscsi_base((unsigned char *)p, 8, 0xffffffffu);
}

/* core/lib_versions.h: ISA-L has no version call; the version of the
 * headers it was built against (the library's soname follows its major). */
#define TFR_STR2(x) #x
#define TFR_STR(x) TFR_STR2(x)
const char *ds_isal_version(void) {
  return TFR_STR(ISAL_MAJOR_VERSION) "." TFR_STR(ISAL_MINOR_VERSION) "." TFR_STR(
      ISAL_PATCH_VERSION);
}
