/* sha256_hmac.c - SHA-256 from libmd and HMAC-SHA256 over it (RFC 2104:
 * H((K ^ opad) || H((K ^ ipad) || m)), keys longer than a block hashed
 * first). libmd has no HMAC; these few lines avoid linking libcrypto. */
#include "remote/sha256_hmac.h"

#include <sha2.h>
#include <string.h>

/* SHA-256 of one buffer. */
void ds_sha256(const void *p, size_t n, uint8_t out[DS_SHA256_LEN]) {
  SHA2_CTX c;
  SHA256Init(&c);
  SHA256Update(&c, (const uint8_t *)p, n);
  SHA256Final(out, &c);
}

/* HMAC-SHA256: the key padded (or hashed) to one 64-byte block. */
void ds_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
                    uint8_t out[DS_SHA256_LEN]) {
  uint8_t k[SHA256_BLOCK_LENGTH] = {0}, pad[SHA256_BLOCK_LENGTH];
  uint8_t inner[DS_SHA256_LEN];
  if (klen > sizeof k)
    ds_sha256(key, klen, k);
  else if (klen)
    memcpy(k, key, klen);
  SHA2_CTX c;
  for (size_t i = 0; i < sizeof k; i++) pad[i] = k[i] ^ 0x36;
  SHA256Init(&c);
  SHA256Update(&c, pad, sizeof pad);
  SHA256Update(&c, (const uint8_t *)msg, mlen);
  SHA256Final(inner, &c);
  for (size_t i = 0; i < sizeof k; i++) pad[i] = k[i] ^ 0x5c;
  SHA256Init(&c);
  SHA256Update(&c, pad, sizeof pad);
  SHA256Update(&c, inner, sizeof inner);
  SHA256Final(out, &c);
}

/* Lowercase hex, NUL-terminated. */
void ds_hex_lower(const uint8_t *p, size_t n, char *out) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digits[p[i] >> 4];
    out[2 * i + 1] = digits[p[i] & 15];
  }
  out[2 * n] = 0;
}

/* Hex SHA-256 of a buffer. */
void ds_sha256_hex(const void *p, size_t n, char out[DS_SHA256_HEX_LEN]) {
  uint8_t h[DS_SHA256_LEN];
  ds_sha256(p, n, h);
  ds_hex_lower(h, sizeof h, out);
}
