/* sha256_hmac.h - SHA-256 (libmd's <sha2.h>) and HMAC-SHA256 on top of
 * it (RFC 2104), with lowercase hex output: what Signature V4 needs. */
#ifndef DS_SHA256_HMAC_H
#define DS_SHA256_HMAC_H

#include <stddef.h>
#include <stdint.h>

#define DS_SHA256_LEN 32
/* Lowercase hex of a SHA-256: 64 characters and the NUL. */
#define DS_SHA256_HEX_LEN 65

/* SHA-256 of n bytes at p. */
void ds_sha256(const void *p, size_t n, uint8_t out[DS_SHA256_LEN]);
/* HMAC-SHA256 of msg under key (any key length). */
void ds_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
                    uint8_t out[DS_SHA256_LEN]);
/* Lowercase hex of n bytes into out (2n + 1 bytes, NUL-terminated). */
void ds_hex_lower(const uint8_t *p, size_t n, char *out);
/* Hex SHA-256 of n bytes at p (the payload hash of a request). */
void ds_sha256_hex(const void *p, size_t n, char out[DS_SHA256_HEX_LEN]);

#endif
