/* option_spec.c - binding, checking and describing module options from
 * their specs (see option_spec.h). */
#include "option_spec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/codec.h"
#include "core/common.h"
#include "core/decimal.h"

static const char *const url_styles[] = {"auto", "path", "virtual", NULL};
static const char *const on_off[] = {"on", "off", NULL};
static const char *const yes_no[] = {"false", "true", "0", "1", "no", "yes", NULL};

const ds_opt_spec ds_common_option_specs[] = {
    {.name = "max_value_bytes", .forms = DS_FORMS_ALL, .kind = DS_OPT_INT, .min = 1,
     .max = (int64_t)1 << 62, .def = (int64_t)DS_MAX_VALUE_BYTES, .def_text = "1073741824 (1 GiB)",
     .help = "the largest value, record, block or chunk a file may make us allocate",
     .at = offsetof(ds_common_opts, max_value_bytes)},
    /* remote paths (s3://, gs://, http(s)://): what is not secret */
    {.name = "endpoint", .forms = DS_FORMS_ALL, .kind = DS_OPT_TEXT,
     .def_text = "AWS_ENDPOINT_URL (s3), GS_ENDPOINT_URL (gs), else the provider's",
     .help = "remote paths: the S3-compatible server's URL (http[s]://host[:port])",
     .at = offsetof(ds_common_opts, remote.endpoint)},
    {.name = "region", .forms = DS_FORMS_ALL, .kind = DS_OPT_TEXT,
     .def_text = "AWS_REGION, AWS_DEFAULT_REGION, the profile's, else us-east-1",
     .help = "remote paths: the S3 region requests are signed for",
     .at = offsetof(ds_common_opts, remote.region)},
    {.name = "url_style", .forms = DS_FORMS_ALL, .kind = DS_OPT_ENUM, .names = url_styles,
     .def = 0, .help = "remote paths: bucket in the host name (virtual) or the path (path)",
     .at = offsetof(ds_common_opts, remote.url_style)},
    {.name = "anonymous", .forms = DS_FORMS_ALL, .kind = DS_OPT_ENUM, .names = yes_no,
     .def = 0, .help = "remote paths: send no credentials (public buckets)",
     .at = offsetof(ds_common_opts, remote.anonymous)},
    {.name = "retries", .forms = DS_FORMS_ALL, .kind = DS_OPT_INT, .min = 0, .max = 100,
     .def = -1, .def_text = "4 (DATASETS_REMOTE_RETRIES)",
     .help = "remote paths: more tries of a request after a transient failure",
     .at = offsetof(ds_common_opts, remote.retries)},
    {.name = "timeout_ms", .forms = DS_FORMS_ALL, .kind = DS_OPT_INT, .min = 1,
     .max = 3600000, .def = -1, .def_text = "30000 (DATASETS_REMOTE_TIMEOUT_MS)",
     .help = "remote paths: one try's time limit, connect to last byte",
     .at = offsetof(ds_common_opts, remote.timeout_ms)},
    {.name = "remote_cache", .forms = DS_FORMS_ALL, .kind = DS_OPT_ENUM, .names = on_off,
     .def = -1, .def_text = "on (DATASETS_REMOTE_CACHE=off turns it off)",
     .help = "remote paths: keep index bytes in the local disk cache (README \"Remote datasets\")",
     .at = offsetof(ds_common_opts, remote.remote_cache)},
    {0}};

static const char *const false_true[] = {"false", "true", NULL};

int ds_opt_is_yes_no(const ds_opt_spec *s) { return s->names == yes_no; }

/* The names an ENUM or BOOL spec takes, by position. */
static const char *const *names_of(const ds_opt_spec *s) {
  return s->kind == DS_OPT_BOOL ? false_true : s->names;
}

/* The spec named `name` that groups hold (NULL: none). */
static const ds_opt_spec *find(const ds_opt_group *groups, const char *name) {
  for (const ds_opt_group *g = groups; g->specs; g++)
    for (const ds_opt_spec *s = g->specs; s->name; s++)
      if (strcmp(s->name, name) == 0) return s;
  return NULL;
}

/* 1 when the spec named `name` taking `form` is in groups. */
static int takes(const ds_opt_group *groups, unsigned form, const char *name) {
  for (const ds_opt_group *g = groups; g->specs; g++)
    for (const ds_opt_spec *s = g->specs; s->name; s++)
      if ((s->forms & form) && strcmp(s->name, name) == 0) return 1;
  return 0;
}

int ds_opt_check(const ds_opt_group *groups, unsigned form, const ds_options *o,
                 char **err) {
  for (size_t i = 0; i < o->n; i++) {
    const char *name = o->items[i].name;
    if (takes(groups, form, name)) continue;
    const ds_opt_spec *s = find(groups, name);
    if (form == DS_FORM_TVF && s && (s->forms & DS_FORM_CREATE))
      return ds_err(err, "option '%s' is only for the CREATE form (CREATE VIRTUAL TABLE t "
                         "USING module('path', %s=...)): the table-valued form has fixed "
                         "columns", name, name);
    ds_buf names = {0};
    for (const ds_opt_group *g = groups; g->specs; g++)
      for (const ds_opt_spec *k = g->specs; k->name; k++)
        if (k->forms & form) ds_buf_printf(&names, "%s%s", names.len ? ", " : "", k->name);
    ds_buf_append(&names, "", 1);
    ds_err(err, "unknown option '%s' (known options: %s)", name,
           names.data ? (char *)names.data : "");
    ds_buf_free(&names);
    return -1;
  }
  return 0;
}

/* One spec's value (given text v, or NULL for the default) into p. */
static int read_one(const ds_opt_spec *s, const char *v, void *p, char **err) {
  switch (s->kind) {
  case DS_OPT_TEXT: *(const char **)p = v; return 0;
  case DS_OPT_FRACTION: {
    double d = s->def_real;
    if (v) {
      char *end;
      d = ds_strtod(v, &end);
      if (end == v || *end || !(d > 0 && d <= 1))
        return ds_err(err, "option %s must be a fraction in (0, 1], not '%s'", s->name, v);
    }
    *(double *)p = d;
    return 0;
  }
  case DS_OPT_ENUM:
  case DS_OPT_BOOL: {
    const char *const *names = names_of(s);
    int64_t x = s->def;
    if (v) {
      x = -1;
      for (int i = 0; names[i] && x < 0; i++)
        if (strcasecmp(v, names[i]) == 0) x = i;
      if (x < 0) {
        char names[256];
        ds_opt_values_text(s, names, sizeof names);
        return ds_err(err, "option %s='%s' is not one of %s", s->name, v, names);
      }
    }
    *(int64_t *)p = x;
    return 0;
  }
  case DS_OPT_INT:
  case DS_OPT_COUNT: {
    int64_t x = s->def;
    if (v && s->kind == DS_OPT_COUNT && strcasecmp(v, "all") == 0) {
      x = INT64_MAX;
    } else if (v) {
      char *end;
      errno = 0;
      long long y = strtoll(v, &end, 10);
      if (errno || end == v || *end || y < s->min || y > s->max)
        return ds_err(err, "option %s='%s' must be an integer from %lld to %lld", s->name, v,
                      (long long)s->min, (long long)s->max);
      x = y;
    }
    *(int64_t *)p = x;
    return 0;
  }
  }
  return 0;
}

int ds_opt_read(const ds_opt_group *groups, const ds_options *o, void *out, char **err) {
  for (const ds_opt_group *g = groups; g->specs; g++)
    for (const ds_opt_spec *s = g->specs; s->name; s++)
      if (read_one(s, ds_options_get(o, s->name), (char *)out + g->base + s->at, err))
        return -1;
  return 0;
}

int ds_opt_bind(const ds_opt_group *groups, unsigned form, const ds_options *o, void *out,
                char **err) {
  return ds_opt_check(groups, form, o, err) || ds_opt_read(groups, o, out, err) ? -1 : 0;
}

const char *ds_opt_given(const ds_options *o, const ds_opt_spec *s) {
  return ds_options_get(o, s->name);
}

void ds_opt_default_text(const ds_opt_spec *s, char *buf, size_t n) {
  if (s->def_text) snprintf(buf, n, "%s", s->def_text);
  else if (s->kind == DS_OPT_ENUM || s->kind == DS_OPT_BOOL)
    snprintf(buf, n, "%s", s->def >= 0 ? names_of(s)[s->def] : "");
  else if (s->kind == DS_OPT_FRACTION) snprintf(buf, n, "%g", s->def_real);
  else if (s->kind == DS_OPT_TEXT) snprintf(buf, n, "%s", "");
  else snprintf(buf, n, "%lld", (long long)s->def);
}

void ds_opt_values_text(const ds_opt_spec *s, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = 0;
  switch (s->kind) {
  case DS_OPT_ENUM:
  case DS_OPT_BOOL:
    for (int i = 0; names_of(s)[i] && k < n; i++)
      k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? "|" : "", names_of(s)[i]);
    break;
  case DS_OPT_INT:
    if (s->max - s->min <= 3) {
      for (int64_t i = s->min; i <= s->max && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i > s->min ? "|" : "", (long long)i);
    } else {
      snprintf(buf, n, "N");
    }
    break;
  case DS_OPT_COUNT: snprintf(buf, n, "N|all"); break;
  case DS_OPT_FRACTION: snprintf(buf, n, "F"); break;
  case DS_OPT_TEXT: snprintf(buf, n, "..."); break;
  }
}

char *ds_opt_usage(const char *call, const ds_opt_group *groups, unsigned forms) {
  ds_buf b = {0};
  ds_buf_puts(&b, call);
  int first = 1;
  for (const ds_opt_group *g = groups; g && g->specs; g++)
    for (const ds_opt_spec *s = g->specs; s->name; s++) {
      if (!(s->forms & forms)) continue;
      char values[256];
      ds_opt_values_text(s, values, sizeof values);
      ds_buf_printf(&b, "%s%s=%s", first ? "; options: " : ", ", s->name, values);
      first = 0;
    }
  if (ds_buf_append(&b, "", 1)) {
    ds_buf_free(&b);
    return NULL;
  }
  return (char *)b.data;
}
