/* codec.c - zstd decompression with optional dictionaries and reusable
 * contexts (see codec.h). Every frame is sized before anything is
 * allocated, and never trusted past the context's max_out or the output
 * buffer's max (max_value_bytes), whichever is smaller. */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createDDict_byReference */
#include "codec.h"
#include "core/lib_versions.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>

/* Output buffers start this big, so most records decode in one call. */
#define DS_ZSTD_MIN_BUFFER (128 * 1024)

struct ds_zstd_dict {
  ZSTD_DDict *ddict; /* over bytes, by reference */
  uint8_t *bytes;    /* the dictionary as given (owned) */
  size_t n;
  uint64_t serial;   /* unique in the process: what a window names */
};

/* Serials of dictionaries (never 0): a freed dictionary's address may be
 * handed out again, its serial never. */
static _Atomic uint64_t next_serial = 1;

int ds_zstd_dict_new(const void *data, size_t n, ds_zstd_dict **out,
                     char **err) {
  *out = NULL;
  ds_zstd_dict *d = calloc(1, sizeof *d);
  if (!d || !(d->bytes = malloc(n ? n : 1))) {
    free(d);
    return ds_err(err, "out of memory");
  }
  memcpy(d->bytes, data, n);
  d->n = n;
  /* the content type is auto-detected: a blob with the dictionary magic is
   * a trained dictionary, anything else raw content, as upstream creates
   * them */
  d->ddict = ZSTD_createDDict_byReference(d->bytes, n);
  if (!d->ddict) {
    free(d->bytes);
    free(d);
    return ds_err(err, "not a usable zstd dictionary (%zu bytes)", n);
  }
  d->serial = next_serial++;
  *out = d;
  return 0;
}

void ds_zstd_dict_free(ds_zstd_dict *d) {
  if (!d) return;
  ZSTD_freeDDict(d->ddict);
  free(d->bytes);
  free(d);
}

unsigned ds_zstd_frame_dict_id(const void *src, size_t n) {
  return ZSTD_getDictID_fromFrame(src, n);
}

uint64_t ds_zstd_content_size(const void *src, size_t n) {
  unsigned long long s = ZSTD_getFrameContentSize(src, n);
  return s == ZSTD_CONTENTSIZE_ERROR || s == ZSTD_CONTENTSIZE_UNKNOWN ? 0 : s;
}

void ds_zstd_ctx_init(ds_zstd_ctx *c, const ds_zstd_dict *dict) {
  memset(c, 0, sizeof *c);
  c->dict = dict;
  c->max_out = DS_MAX_VALUE_BYTES;
}

void ds_zstd_ctx_free(ds_zstd_ctx *c) {
  ZSTD_freeDCtx(c->dctx);
  c->dctx = NULL;
  ZSTD_freeDDict(c->wddict);
  c->wddict = NULL;
  c->wfor = 0;
  free(c->win);
  c->win = NULL;
  c->win_cap = 0;
}

/* The contiguous window for a frame of `size` bytes (see codec.h): *dst
 * right after the window's copy of the dictionary, and the DDict over that
 * copy. 0 when the context does not use one (not asked, no or too large a
 * dictionary, too large a frame, out of memory): decode as usual. */
static int use_window(ds_zstd_ctx *c, uint64_t size, uint8_t **dst, size_t *dcap,
                      const ZSTD_DDict **dd) {
  const ds_zstd_dict *d = c->dict;
  if (!c->contiguous || !d || d->n > DS_ZSTD_CONTIG_DICT || size > DS_ZSTD_CONTIG_OUT)
    return 0;
  /* room for the frame plus slack for zstd's fast copy loops */
  size_t want = d->n + (size_t)size + 64;
  if (c->wfor != d->serial || c->win_cap < want) {
    ZSTD_freeDDict(c->wddict);
    c->wddict = NULL;
    c->wfor = 0;
    if (c->win_cap < want) { /* grows by half again, at least 64 KiB of output */
      size_t cap = d->n + 65536;
      if (cap < want) cap = want;
      if (cap < c->win_cap + c->win_cap / 2) cap = c->win_cap + c->win_cap / 2;
      free(c->win);
      c->win_cap = 0;
      if (!(c->win = malloc(cap))) return 0;
      c->win_cap = cap;
    }
    memcpy(c->win, d->bytes, d->n);
    if (!(c->wddict = ZSTD_createDDict_byReference(c->win, d->n))) return 0;
    c->wfor = d->serial;
  }
  *dst = c->win + d->n;
  *dcap = c->win_cap - d->n;
  *dd = c->wddict;
  return 1;
}

/* The context, created on first use. */
static ZSTD_DCtx *dctx_of(ds_zstd_ctx *c, char **err) {
  if (!c->dctx) {
    c->dctx = ZSTD_createDCtx();
    if (!c->dctx) ds_err(err, "out of memory");
  }
  return c->dctx;
}

/* A frame failed to decode for want of the right dictionary: set *err to
 * say so and return 1; else 0. A frame names its dictionary's ID (0 for
 * raw-content dictionaries, which leave only the guess). */
static int dict_mismatch(const ds_zstd_ctx *c, const uint8_t *src, size_t n,
                         size_t code, char **err) {
  unsigned want = ZSTD_getDictID_fromFrame(src, n);
  unsigned have = c->dict ? ZSTD_getDictID_fromDDict(c->dict->ddict) : 0;
  if (want && !c->dict)
    ds_err(err, "the frames need zstd dictionary ID %u: pass dictionary=", want);
  else if (want && have && want != have)
    ds_err(err, "the frames need zstd dictionary ID %u, but the dictionary "
                "given has ID %u", want, have);
  else if (!want && !c->dict && ZSTD_getErrorCode(code) == ZSTD_error_corruption_detected)
    ds_err(err, "zstd: %s (if the bag was written with a dictionary, pass "
                "dictionary=)", ZSTD_getErrorName(code));
  else
    return 0;
  return 1;
}

/* Frames without a content size: stream them, growing the output, until
 * all input is consumed at a frame boundary (concatenated frames join). */
static int decompress_stream(ds_zstd_ctx *c, ZSTD_DCtx *d, const uint8_t *src,
                             size_t n, uint64_t cap, ds_buf *out, char **err) {
  ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
  if (c->dict) ZSTD_DCtx_refDDict(d, c->dict->ddict);
  ZSTD_inBuffer in = {src, n, 0};
  out->len = 0;
  for (;;) {
    /* room for more output, never past cap + 1 (one byte over proves it) */
    uint64_t want = (uint64_t)out->len + 131072;
    if (want > cap + 1) want = cap + 1;
    if (out->cap - out->len < 65536 && want > out->cap) {
      /* grow geometrically, but never past cap + 1 (it may pass the
       * buffer's own max by that one byte) */
      size_t max = out->max;
      out->max = cap + 1 < SIZE_MAX ? (size_t)(cap + 1) : 0;
      int rc = ds_buf_reserve(out, (size_t)want);
      out->max = max;
      if (rc) return ds_err(err, "out of memory");
    }
    ZSTD_outBuffer ob = {out->data, out->cap, out->len};
    size_t ret = ZSTD_decompressStream(d, &ob, &in);
    if (ZSTD_isError(ret)) {
      if (dict_mismatch(c, src, n, ret, err)) return -1;
      return ds_err(err, "zstd: %s", ZSTD_getErrorName(ret));
    }
    out->len = ob.pos;
    if (out->len > cap)
      return ds_err(err, "zstd frame decompresses to more than max_value_bytes=%llu "
                    "bytes", (unsigned long long)cap);
    if (in.pos < in.size) continue;      /* more input (maybe another frame) */
    if (ret == 0) return 0;              /* every frame complete */
    if (ob.pos < ob.size)                /* zstd wants input we do not have */
      return ds_err(err, "truncated zstd frame (%zu bytes)", n);
  }
}

/* A frame failed to decode: say whether it is cut short, followed by other
 * bytes, or corrupt inside. Only runs on the error path, so the hot path
 * parses each frame header once. (Trailing skippable or empty frames decode
 * fine and are accepted, as the zstd tool accepts them.) */
static int explain_failure(const ds_zstd_ctx *c, const uint8_t *src, size_t n,
                           size_t code, char **err) {
  if (dict_mismatch(c, src, n, code, err)) return -1;
  size_t framed = ZSTD_findFrameCompressedSize(src, n);
  if (ZSTD_isError(framed))
    return ds_err(err, "truncated or corrupt zstd frame (%zu bytes): %s", n,
                  ZSTD_getErrorName(framed));
  if (framed != n)
    return ds_err(err, "%zu bytes follow the zstd frame (%zu of %zu bytes)",
                  n - framed, framed, n);
  return ds_err(err, "zstd: %s", ZSTD_getErrorName(code));
}

int ds_zstd_decompress(ds_zstd_ctx *c, const uint8_t *src, size_t n,
                       ds_buf *out, char **err) {
  ZSTD_DCtx *d = dctx_of(c, err);
  if (!d) return -1;
  unsigned long long size = ZSTD_getFrameContentSize(src, n);
  if (size == ZSTD_CONTENTSIZE_ERROR)
    return ds_err(err, n < 4 ? "truncated zstd frame (%zu bytes)"
                             : "not a zstd frame (%zu bytes, bad magic or header)",
                  n);
  /* the context's cap, or the buffer's when smaller (max_value_bytes) */
  uint64_t cap = out->max && out->max < c->max_out ? out->max : c->max_out;
  if (size == ZSTD_CONTENTSIZE_UNKNOWN) return decompress_stream(c, d, src, n, cap, out, err);
  if (size > cap)
    return ds_err(err, "zstd frame claims %llu bytes, more than max_value_bytes=%llu",
                  size, (unsigned long long)cap);
  /* Every block has a 3-byte header and yields at most ZSTD_BLOCKSIZE_MAX
   * bytes: refuse a declared size the frame cannot hold before allocating. */
  if (size / ZSTD_BLOCKSIZE_MAX > n / 3 + 1)
    return ds_err(err, "zstd frame of %zu bytes cannot hold the %llu bytes it declares",
                  n, size);
  uint8_t *dst;
  size_t dcap;
  const ZSTD_DDict *dd = c->dict ? c->dict->ddict : NULL;
  int in_window = use_window(c, size, &dst, &dcap, &dd);
  if (!in_window && (size >= out->cap || !out->cap)) {
    /* (a buffer the caller sized itself is left as it is; a capped one
     * never grows past its max) */
    size_t min = out->max && out->max < DS_ZSTD_MIN_BUFFER ? out->max : DS_ZSTD_MIN_BUFFER;
    if (!out->cap && ds_buf_reserve(out, min)) return ds_err(err, "out of memory");
    if (ds_buf_reserve(out, size ? (size_t)size : 1)) return ds_err(err, "out of memory");
  }
  if (!in_window) {
    dst = out->data;
    dcap = out->cap;
  }
  /* Decode with all the room the buffer has, not just the declared size:
   * zstd's fast copy loops need slack at the end of the output. A second
   * frame after the first then shows up as more bytes than declared. */
  size_t got = dd ? ZSTD_decompress_usingDDict(d, dst, dcap, src, n, dd)
                  : ZSTD_decompressDCtx(d, dst, dcap, src, n);
  if (ZSTD_isError(got)) return explain_failure(c, src, n, got, err);
  if (got != size) { /* more frames followed the first one */
    size_t framed = ZSTD_findFrameCompressedSize(src, n);
    if (!ZSTD_isError(framed) && framed < n)
      return ds_err(err, "%zu bytes follow the zstd frame (%zu of %zu bytes)",
                    n - framed, framed, n);
    return ds_err(err, "zstd frame gave %zu bytes but declares %llu", got, size);
  }
  if (in_window) {
    if (ds_buf_reserve(out, got ? got : 1)) return ds_err(err, "out of memory");
    memcpy(out->data, dst, got);
  }
  out->len = got;
  return 0;
}

const char *ds_zstd_version(void) { return ZSTD_versionString(); }
