/* tfrecord_idx.c - the DALI / vahidk `.idx` sidecar (see tfrecord_idx.h). */
#include <stdlib.h>
#include <string.h>

#include "formats/tfrecord/tfrecord_frame.h"
#include "formats/tfrecord/tfrecord_idx.h"

char *tfrecord_idx_path(const char *path) { return ds_strf("%s.idx", path); }

/* A decimal number at p[*i] (digits only, no overflow); 0 ok. */
static int number(const uint8_t *p, size_t n, size_t *i, uint64_t *out) {
  size_t start = *i;
  uint64_t v = 0;
  while (*i < n && p[*i] >= '0' && p[*i] <= '9') {
    unsigned d = p[*i] - '0';
    if (v > (UINT64_MAX - d) / 10) return -1;
    v = v * 10 + d;
    (*i)++;
  }
  *out = v;
  return *i > start ? 0 : -1;
}

/* Spaces and tabs (not newlines) at p[*i]; how many. */
static size_t blanks(const uint8_t *p, size_t n, size_t *i) {
  size_t k = 0;
  while (*i < n && (p[*i] == ' ' || p[*i] == '\t')) (*i)++, k++;
  return k;
}

/* The header of the record at off must give data length len. */
static int check_header(const tfrecord_file *t, const char *name, uint64_t line,
                        uint64_t off, uint64_t len, char **err) {
  uint8_t h[TFR_HEADER];
  if (ds_file_read(&t->file, off, TFR_HEADER, h, err)) return -1;
  uint64_t n;
  uint32_t s, c;
  if (tfr_frame_parse(h, &n, &s, &c))
    return ds_err(err, "%s: line %llu: no record header at offset %llu of %s "
                       "(length CRC mismatch)",
                  name, (unsigned long long)line, (unsigned long long)off, t->file.path);
  if (n != len)
    return ds_err(err, "%s: line %llu: the record at offset %llu of %s has %llu "
                       "bytes of data, the sidecar says %llu",
                  name, (unsigned long long)line, (unsigned long long)off, t->file.path,
                  (unsigned long long)n, (unsigned long long)len);
  return 0;
}

int tfrecord_idx_use(tfrecord_file *t, const char *name, const uint8_t *p,
                     size_t n, char **err) {
  if (t->compression != TFRECORD_NONE)
    return ds_err(err, "%s: %s is %s-compressed: an .idx sidecar indexes "
                       "uncompressed files only",
                  name, t->file.path, tfrecord_compression_name(t->compression));
  uint64_t *offs = NULL, count = 0, next = 0;
  size_t cap = 0, i = 0;
  uint64_t line = 0, last_line = 0;
  int rc = 0;
  while (i < n && rc == 0) {
    line++;
    uint64_t off, size;
    blanks(p, n, &i);
    if (i < n && (p[i] == '\n' || p[i] == '\r')) { /* an empty line */
      if (p[i] == '\r' && i + 1 < n && p[i + 1] == '\n') i++;
      i++;
      continue;
    }
    if (number(p, n, &i, &off) || blanks(p, n, &i) == 0 || number(p, n, &i, &size)) {
      rc = ds_err(err, "%s: line %llu: not \"<offset> <size>\"", name,
                  (unsigned long long)line);
      break;
    }
    blanks(p, n, &i);
    if (i < n && p[i] == '\r') i++;
    if (i < n && p[i] != '\n') {
      rc = ds_err(err, "%s: line %llu: not \"<offset> <size>\"", name,
                  (unsigned long long)line);
      break;
    }
    i++;
    if (off != next)
      rc = ds_err(err, "%s: line %llu: offset %llu, but the record before ends at %llu",
                  name, (unsigned long long)line, (unsigned long long)off,
                  (unsigned long long)next);
    else if (size < TFR_OVERHEAD)
      rc = ds_err(err, "%s: line %llu: a record of %llu bytes (a record has at "
                       "least 16)",
                  name, (unsigned long long)line, (unsigned long long)size);
    else if (size > t->file.size || off > t->file.size - size)
      rc = ds_err(err, "%s: line %llu: the record at offset %llu (%llu bytes) runs "
                       "past the end of %s (%llu bytes)",
                  name, (unsigned long long)line, (unsigned long long)off,
                  (unsigned long long)size, t->file.path,
                  (unsigned long long)t->file.size);
    if (rc) break;
    if (count + 1 >= cap) { /* this record's entry and the end's */
      size_t nc = cap ? cap * 2 : 1024;
      uint64_t *a = realloc(offs, nc * sizeof *a);
      if (!a) {
        rc = ds_err(err, "out of memory");
        break;
      }
      offs = a;
      cap = nc;
    }
    last_line = line;
    offs[count] = off;
    count++;
    next = off + size;
    offs[count] = next; /* records follow each other: the next one's start */
  }
  if (rc == 0 && !offs && !(offs = malloc(sizeof *offs))) /* an empty sidecar */
    rc = ds_err(err, "out of memory");
  if (rc == 0 && count == 0) offs[0] = 0;
  if (rc == 0 && next != t->file.size)
    rc = ds_err(err, "%s: its records end at offset %llu, %s has %llu bytes", name,
                (unsigned long long)next, t->file.path, (unsigned long long)t->file.size);
  if (rc == 0 && count > 0)
    rc = check_header(t, name, 1, offs[0], offs[1] - offs[0] - TFR_OVERHEAD, err);
  if (rc == 0 && count > 1)
    rc = check_header(t, name, last_line, offs[count - 1],
                      offs[count] - offs[count - 1] - TFR_OVERHEAD, err);
  if (rc) {
    free(offs);
    return -1;
  }
  free(t->offsets);
  free(t->tail_err);
  t->offsets = offs;
  t->count = count;
  t->tail_err = NULL;
  t->indexed = 1;
  return 0;
}

int tfrecord_idx_load(tfrecord_file *t, const char *idx_path, char **err) {
  int is_dir = 0;
  if (!ds_path_exists(idx_path, &is_dir) || is_dir) return 1;
  ds_file f;
  if (ds_file_load_index(&f, idx_path, err)) return -1;
  int rc = tfrecord_idx_use(t, idx_path, f.data, (size_t)f.size, err);
  ds_file_close(&f);
  return rc;
}
