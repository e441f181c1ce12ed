/* http_parse.c - header values and error bodies of HTTP responses. */
#include "remote/http_parse.h"

#include <string.h>

/* Skip blanks. */
static size_t blanks(const char *v, size_t i, size_t n) {
  while (i < n && (v[i] == ' ' || v[i] == '\t')) i++;
  return i;
}

/* A decimal number (at most 19 digits: no overflow). */
static int number(const char *v, size_t *i, size_t n, uint64_t *out) {
  size_t start = *i;
  uint64_t x = 0;
  while (*i < n && v[*i] >= '0' && v[*i] <= '9' && *i - start < 19)
    x = x * 10 + (uint64_t)(v[(*i)++] - '0');
  if (*i == start || (*i < n && v[*i] >= '0' && v[*i] <= '9')) return -1;
  *out = x;
  return 0;
}

int ds_http_parse_content_range(const char *v, size_t n, uint64_t *first,
                                uint64_t *last, uint64_t *total) {
  size_t i = blanks(v, 0, n);
  if (n - i < 6 || strncmp(v + i, "bytes", 5) != 0) return -1;
  i = blanks(v, i + 5, n);
  if (i < n && v[i] == '*') {
    *first = *last = DS_HTTP_SIZE_UNKNOWN;
    i = blanks(v, i + 1, n);
  } else {
    if (number(v, &i, n, first) || i >= n || v[i++] != '-' ||
        number(v, &i, n, last) || *last < *first)
      return -1;
  }
  if (i >= n || v[i++] != '/') return -1;
  if (i < n && v[i] == '*') {
    if (*first == DS_HTTP_SIZE_UNKNOWN) return -1; /* "* / *" means nothing */
    *total = DS_HTTP_SIZE_UNKNOWN;
    i++;
  } else if (number(v, &i, n, total)) {
    return -1;
  } else if (*first != DS_HTTP_SIZE_UNKNOWN && *last >= *total) {
    return -1;
  }
  i = blanks(v, i, n);
  while (i < n && (v[i] == '\r' || v[i] == '\n')) i++;
  return i == n ? 0 : -1;
}

long ds_http_parse_retry_after(const char *v, size_t n) {
  size_t i = blanks(v, 0, n);
  uint64_t s;
  if (number(v, &i, n, &s)) return -1;
  i = blanks(v, i, n);
  while (i < n && (v[i] == '\r' || v[i] == '\n')) i++;
  if (i != n) return -1;
  return s > 86400 ? 86400L * 1000 : (long)s * 1000;
}

void ds_http_xml_error_code(const char *body, size_t n, char *out, size_t cap) {
  out[0] = 0;
  if (!body || cap == 0) return;
  const char *tag = "<Code>";
  for (size_t i = 0; i + 6 <= n; i++) {
    if (memcmp(body + i, tag, 6) != 0) continue;
    size_t j = i + 6, o = 0;
    while (j < n && body[j] != '<' && o + 1 < cap) {
      char c = body[j++];
      if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
          (c >= '0' && c <= '9') || c == '.')
        out[o++] = c;
    }
    out[o] = 0;
    return;
  }
}

void ds_http_url_for_message(const char *url, char *out, size_t cap) {
  if (cap == 0) return;
  size_t o = 0;
  const char *p = url, *scheme = strstr(url, "://");
  if (scheme) {
    size_t k = (size_t)(scheme - url) + 3;
    for (size_t i = 0; i < k && o + 1 < cap; i++) out[o++] = url[i];
    p = url + k;
    /* user info: up to an '@' before the first '/', '?' or '#' */
    size_t auth = strcspn(p, "/?#");
    const char *at = memchr(p, '@', auth);
    if (at) {
      /* the last '@' of the authority ends the user info */
      for (const char *q = at; q < p + auth; q++)
        if (*q == '@') at = q;
      p = at + 1;
    }
  }
  while (*p && *p != '?' && *p != '#' && o + 1 < cap) out[o++] = *p++;
  out[o] = 0;
}

int ds_http_expected_range(int suffix, uint64_t offset, uint64_t length,
                           uint64_t total, uint64_t *first, uint64_t *last) {
  if (total == 0 || length == 0) return -1;
  if (suffix) {
    *first = total > length ? total - length : 0;
    *last = total - 1;
    return 0;
  }
  if (offset >= total) return -1;
  *first = offset;
  *last = (length > total - offset ? total : offset + length) - 1;
  return 0;
}
