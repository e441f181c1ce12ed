/* file_kind.h - what a file that is not a dataset looks like, from the
 * magic numbers of its first bytes (a tar archive, a zip file, gzip, a
 * PNG image, an SQLite database, ...), for error messages that tell a
 * user "not a bagz file: it looks like a tar archive" instead of
 * describing it as a damaged bag. Plain C: knows bytes. */
#ifndef DS_FILE_KIND_H
#define DS_FILE_KIND_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of a file's head ds_file_kind looks at (at most). */
#define DS_FILE_KIND_HEAD 512

/* "a tar archive", "a zip file", ... for the first n bytes of a file, or
 * NULL when no known magic number matches. */
const char *ds_file_kind(const uint8_t *head, size_t n);

/* The same for the file at `path` (reads its first DS_FILE_KIND_HEAD
 * bytes); NULL when unknown or unreadable. */
const char *ds_file_kind_of(const char *path);

#endif
