/* file_kind.c - magic numbers of common non-dataset files (see
 * file_kind.h). */
#include "file_kind.h"

#include <string.h>

#include "core/vfs.h"

/* A magic number: `len` bytes at `off`, and what a file holding them is. */
typedef struct kind_magic {
  size_t off, len;
  const char *bytes;
  const char *kind;
} kind_magic;

static const kind_magic magics[] = {
    {257, 5, "ustar", "a tar archive"},
    {0, 4, "PK\x03\x04", "a zip file (or .npz, .jar, ...)"},
    {0, 2, "\x1f\x8b", "a gzip file"},
    {0, 3, "BZh", "a bzip2 file"},
    {0, 6, "\xfd" "7zXZ\x00", "an xz file"},
    {0, 8, "\x89PNG\r\n\x1a\n", "a PNG image"},
    {0, 3, "\xff\xd8\xff", "a JPEG image"},
    {0, 4, "PAR1", "a Parquet file"},
    {0, 6, "\x93NUMPY", "a numpy .npy file"},
    {0, 8, "\x89HDF\r\n\x1a\n", "an HDF5 file"},
    {0, 16, "SQLite format 3", "an SQLite database"},
    {0, 5, "%PDF-", "a PDF document"},
    {0, 4, "\x7f" "ELF", "an executable (ELF)"},
};

const char *ds_file_kind(const uint8_t *head, size_t n) {
  for (size_t i = 0; i < sizeof magics / sizeof *magics; i++) {
    const kind_magic *m = &magics[i];
    if (m->off + m->len <= n && memcmp(head + m->off, m->bytes, m->len) == 0)
      return m->kind;
  }
  return NULL;
}

const char *ds_file_kind_of(const char *path) {
  uint8_t head[DS_FILE_KIND_HEAD];
  ds_vfs_file f;
  if (ds_vfs_open(&f, NULL, path) != 0) return NULL;
  ssize_t n = ds_vfs_pread(&f, head, sizeof head, 0);
  ds_vfs_close(&f);
  return n > 0 ? ds_file_kind(head, (size_t)n) : NULL;
}
