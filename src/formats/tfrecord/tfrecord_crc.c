/* tfrecord_crc.c - CRC-32C over ISA-L (see tfrecord_crc.h). ISA-L's
 * crc32_iscsi neither inverts its seed nor its result: the standard
 * CRC-32C is ~crc32_iscsi(p, n, ~0) (checked against RFC 3720's vectors by
 * tests/unit/test_tfrecord.c). The one file that includes ISA-L's crc.h. */
#include <limits.h>

#include <isa-l.h>
#include <isa-l/crc.h>

#include "core/lib_versions.h"
#include "formats/tfrecord/tfrecord_crc.h"

/* Pieces of at most 1 GiB: crc32_iscsi's length is an int. */
#define CRC_PIECE ((size_t)1 << 30)
/* Up to this many bytes ISA-L's table version is faster than its
 * dispatched one (measured on AMD EPYC, ISA-L 2.30: 8 bytes 18 ns
 * against 50 ns; 64 bytes 275 ns against 42 ns). */
#define SHORT 16

uint32_t tfr_crc32c(const void *p, size_t n) {
  const unsigned char *b = p;
  unsigned int crc = 0xffffffffu;
  if (n <= SHORT) /* a record's 8 length bytes */
    return ~(uint32_t)crc32_iscsi_base((unsigned char *)b, (int)n, crc);
  while (n > 0) {
    size_t k = n < CRC_PIECE ? n : CRC_PIECE;
    crc = crc32_iscsi((unsigned char *)b, (int)k, crc);
    b += k;
    n -= k;
  }
  return ~(uint32_t)crc;
}

/* core/lib_versions.h: ISA-L has no version call; the version of the
 * headers it was built against (the library's soname follows its major). */
#define TFR_STR2(x) #x
#define TFR_STR(x) TFR_STR2(x)
const char *ds_isal_version(void) {
  return TFR_STR(ISAL_MAJOR_VERSION) "." TFR_STR(ISAL_MINOR_VERSION) "." TFR_STR(
      ISAL_PATCH_VERSION);
}
