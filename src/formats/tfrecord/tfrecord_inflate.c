/* tfrecord_inflate.c - gzip / zlib files as a forward stream (see
 * tfrecord_inflate.h). The one file of the reader that includes ISA-L's
 * igzip. Compressed bytes come through a ds_view in 64 KiB pieces; the
 * decompressed bytes wait in a buffer [head, len) that is compacted before
 * it grows, so a request of n bytes needs at most n + 2 * CHUNK. */
#include <stdlib.h>
#include <string.h>

#include <isa-l/igzip_lib.h>

#include "core/cancel.h"
#include "core/upper_vectors.h"
#include "formats/tfrecord/tfrecord_inflate.h"

#define CHUNK ((size_t)64 << 10)

struct tfr_inflate {
  const ds_file *f;
  int zlib;
  uint64_t max;
  ds_view view;
  struct inflate_state st;
  uint64_t in_off;   /* compressed bytes given to igzip so far */
  int member_done;   /* the current gzip member / zlib stream ended */
  int finished;      /* no more bytes will come */
  ds_buf out;        /* decompressed bytes [head, out.len) are unread */
  size_t head;
  uint64_t pos;      /* stream offset of out.data[head] */
};

static void start_member(tfr_inflate *z) {
  isal_inflate_init(&z->st);
  z->st.crc_flag = z->zlib ? ISAL_ZLIB : ISAL_GZIP;
  z->member_done = 0;
}

int tfr_inflate_new(const ds_file *f, int zlib, uint64_t max, tfr_inflate **out,
                    char **err) {
  *out = NULL;
  tfr_inflate *z = calloc(1, sizeof *z);
  if (!z) return ds_err(err, "out of memory");
  z->f = f;
  z->zlib = zlib;
  z->max = max;
  z->view.max_ahead = CHUNK;
  tfr_inflate_rewind(z);
  *out = z;
  return 0;
}

void tfr_inflate_free(tfr_inflate *z) {
  if (!z) return;
  ds_view_free(&z->view);
  ds_buf_free(&z->out);
  free(z);
}

void tfr_inflate_rewind(tfr_inflate *z) {
  start_member(z);
  z->in_off = 0;
  z->finished = z->f->size == 0;
  z->out.len = 0;
  z->head = 0;
  z->pos = 0;
}

uint64_t tfr_inflate_pos(const tfr_inflate *z) { return z->pos; }

/* What igzip's error code means. */
static const char *why(int rc) {
  switch (rc) {
    case ISAL_INVALID_BLOCK: return "an invalid deflate block";
    case ISAL_INVALID_SYMBOL: return "an invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK: return "an invalid back reference";
    case ISAL_INVALID_WRAPPER: return "an invalid header";
    case ISAL_UNSUPPORTED_METHOD: return "an unsupported compression method";
    case ISAL_INCORRECT_CHECKSUM: return "a wrong checksum";
    case ISAL_NEED_DICT: return "a preset dictionary (not supported)";
    default: return "damaged bytes";
  }
}

/* A member ended: another gzip member may follow (its magic bytes), else
 * the file must end here. */
static int after_member(tfr_inflate *z, char **err) {
  const char *kind = z->zlib ? "zlib" : "gzip";
  if (z->in_off >= z->f->size) {
    z->finished = 1;
    return 0;
  }
  const uint8_t *m;
  if (!z->zlib && z->f->size - z->in_off >= 2 &&
      ds_view_read(&z->view, z->f, z->in_off, 2, &m, err) == 0 && m[0] == 0x1f &&
      m[1] == 0x8b) {
    start_member(z);
    return 0;
  }
  return ds_err(err, "%llu bytes after the end of the %s stream (at compressed "
                     "offset %llu)",
                (unsigned long long)(z->f->size - z->in_off), kind,
                (unsigned long long)z->in_off);
}

/* Decompress until at least `want` bytes are unread or the stream ends. */
static int fill(tfr_inflate *z, size_t want, char **err) {
  const char *kind = z->zlib ? "zlib" : "gzip";
  while (z->out.len - z->head < want && !z->finished) {
    if (z->head > 0 && z->out.cap - z->out.len < CHUNK) { /* compact */
      memmove(z->out.data, z->out.data + z->head, z->out.len - z->head);
      z->out.len -= z->head;
      z->head = 0;
    }
    size_t need = (want > CHUNK ? want : CHUNK) + CHUNK;
    if (z->out.cap < need && ds_buf_reserve(&z->out, need))
      return ds_err(err, "out of memory decompressing %zu bytes", want);
    if (z->member_done && after_member(z, err)) return -1;
    if (z->finished) break;
    if (z->st.avail_in == 0 && z->in_off < z->f->size) {
      uint64_t left = z->f->size - z->in_off;
      size_t k = left < CHUNK ? (size_t)left : CHUNK;
      const uint8_t *p;
      if (ds_view_read(&z->view, z->f, z->in_off, k, &p, err)) return -1;
      z->st.next_in = (uint8_t *)p;
      z->st.avail_in = (uint32_t)k;
      z->in_off += k;
    }
    size_t room = z->out.cap - z->out.len;
    if (room > UINT32_MAX) room = UINT32_MAX;
    uint32_t in_before = z->st.avail_in;
    z->st.next_out = z->out.data + z->out.len;
    z->st.avail_out = (uint32_t)room;
    int rc = isal_inflate(&z->st);
    ds_clear_upper_vectors();
    size_t produced = (size_t)(z->st.next_out - (z->out.data + z->out.len));
    z->out.len += produced;
    if (rc < 0 || rc == ISAL_NEED_DICT)
      return ds_err(err, "%s stream damaged: %s near compressed offset %llu", kind,
                    why(rc), (unsigned long long)(z->in_off - z->st.avail_in));
    /* no input left, none taken, nothing made, no end marker: cut */
    if (z->st.block_state != ISAL_BLOCK_FINISH && produced == 0 &&
        z->st.avail_in == in_before && z->in_off >= z->f->size)
      return ds_err(err, "%s stream cut short (the file ends at byte %llu "
                         "before the stream's end)",
                    kind, (unsigned long long)z->f->size);
    if (z->st.block_state == ISAL_BLOCK_FINISH) {
      /* what igzip did not use belongs to the next member */
      z->in_off -= z->st.avail_in;
      z->st.avail_in = 0;
      z->member_done = 1;
    }
  }
  return 0;
}

int tfr_inflate_read(tfr_inflate *z, size_t n, const uint8_t **p, size_t *got,
                     char **err) {
  if (n > z->max)
    return ds_err(err, "a read of %zu bytes is more than the limit of %llu", n,
                  (unsigned long long)z->max);
  if (fill(z, n, err)) return -1;
  size_t have = z->out.len - z->head;
  *got = have < n ? have : n;
  /* an empty stream never allocated its buffer */
  *p = z->out.data ? z->out.data + z->head : (const uint8_t *)"";
  z->head += *got;
  z->pos += *got;
  return 0;
}

int tfr_inflate_skip(tfr_inflate *z, uint64_t n, uint64_t *got, char **err) {
  *got = 0;
  while (*got < n) {
    if (ds_cancel_poll()) return ds_err(err, DS_CANCEL_MSG);
    uint64_t k = n - *got < CHUNK ? n - *got : CHUNK;
    if (fill(z, (size_t)k, err)) return -1;
    size_t have = z->out.len - z->head;
    size_t g = have < k ? have : (size_t)k;
    z->head += g;
    z->pos += g;
    *got += g;
    if (g < k) break;
  }
  return 0;
}
