/* options.c - parsing of `name=value` module options (see options.h). */
#include "options.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

/* Trim ASCII whitespace from both ends into a malloc'd copy of s[0..n). */
static char *trimmed(const char *s, size_t n) {
  while (n && isspace((unsigned char)*s)) s++, n--;
  while (n && isspace((unsigned char)s[n - 1])) n--;
  char *r = malloc(n + 1);
  if (r) {
    memcpy(r, s, n);
    r[n] = 0;
  }
  return r;
}

char *ds_dequote(const char *s) {
  size_t n = strlen(s);
  char *t = trimmed(s, n);
  if (!t) return NULL;
  n = strlen(t);
  char open = t[0], close = open == '[' ? ']' : open;
  if (n < 2 || !strchr("'\"`[", open) || t[n - 1] != close) return t;
  size_t j = 0;
  for (size_t i = 1; i < n - 1; i++) {
    t[j++] = t[i];
    if (t[i] == close && open != '[' && i + 1 < n - 1 && t[i + 1] == close) i++;
  }
  t[j] = 0;
  return t;
}

int ds_options_is_flag(const char *name) {
  /* the yes/no options of option_spec.c (test_option_spec checks that
   * every one is here) */
  static const char *const flags[] = {"anonymous", NULL};
  for (int i = 0; flags[i]; i++)
    if (strcmp(flags[i], name) == 0) return 1;
  return 0;
}

int ds_options_add(ds_options *o, const char *arg, char **err) {
  char *whole = ds_dequote(arg);
  if (!whole) return ds_err(err, "out of memory");
  char *eq = strchr(whole, '=');
  if (!eq) {
    char *flag = ds_dequote(whole);
    for (char *c = flag; c && *c; c++) *c = (char)tolower((unsigned char)*c);
    int rc = !flag ? ds_err(err, "out of memory")
             : ds_options_is_flag(flag)
                 ? ds_options_put(o, flag, "true", err) /* a bare yes/no option */
                 : ds_err(err, "option '%s' is not of the form name=value", whole);
    free(flag);
    free(whole);
    return rc;
  }
  *eq = 0;
  char *name = ds_dequote(whole);
  char *value = ds_dequote(eq + 1);
  free(whole);
  if (!name || !value) {
    free(name);
    free(value);
    return ds_err(err, "out of memory");
  }
  for (char *c = name; *c; c++) *c = (char)tolower((unsigned char)*c);
  int rc = 0;
  if (!*name) rc = ds_err(err, "an option has an empty name");
  else if (ds_options_get(o, name)) rc = ds_err(err, "option '%s' is given twice", name);
  if (rc == 0) {
    ds_option *p = ds_grow(o->items, o->n, sizeof *p);
    if (!p) rc = ds_err(err, "out of memory");
    else {
      o->items = p;
      o->items[o->n].name = name;
      o->items[o->n].value = value;
      o->n++;
      return 0;
    }
  }
  free(name);
  free(value);
  return rc;
}

int ds_options_put(ds_options *o, const char *name, const char *value, char **err) {
  ds_option *p = ds_grow(o->items, o->n, sizeof *p);
  if (!p) return ds_err(err, "out of memory");
  o->items = p;
  char *n = strdup(name), *v = strdup(value);
  if (!n || !v) {
    free(n);
    free(v);
    return ds_err(err, "out of memory");
  }
  o->items[o->n].name = n;
  o->items[o->n].value = v;
  o->n++;
  return 0;
}

int ds_options_add_list(ds_options *o, const char *list, char **err) {
  const char *p = list;
  while (*p) {
    const char *start = p;
    char quote = 0;
    for (; *p && (quote || *p != ','); p++) {
      if (quote && *p == quote) quote = 0;
      else if (!quote && (*p == '\'' || *p == '"')) quote = *p;
    }
    char *item = trimmed(start, (size_t)(p - start));
    if (!item) return ds_err(err, "out of memory");
    int rc = *item ? ds_options_add(o, item, err) : 0;
    free(item);
    if (rc) return rc;
    if (*p == ',') p++;
  }
  return 0;
}

const char *ds_options_get(const ds_options *o, const char *name) {
  for (size_t i = 0; i < o->n; i++)
    if (strcmp(o->items[i].name, name) == 0) return o->items[i].value;
  return NULL;
}

void ds_options_free(ds_options *o) {
  for (size_t i = 0; i < o->n; i++) {
    free(o->items[i].name);
    free(o->items[i].value);
  }
  free(o->items);
  o->items = NULL;
  o->n = 0;
}
