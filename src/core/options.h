/* options.h - the `name=value` options every module takes, either as
 * separate CREATE VIRTUAL TABLE arguments or as one comma-separated string
 * in the table-valued form. Quotes around names, values or a whole
 * argument are optional. A repeated option is an error that names it. What
 * an option means (its kind, range, default, the forms that take it) is
 * its spec's (core/option_spec.h), which binds the parsed options. */
#ifndef DS_OPTIONS_H
#define DS_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

typedef struct ds_option {
  char *name;
  char *value;
} ds_option;

typedef struct ds_options {
  ds_option *items;
  size_t n;
} ds_options;

/* A copy of s without surrounding '...', "...", `...` or [...] quotes
 * (doubled quote characters inside are undone). malloc'd. */
char *ds_dequote(const char *s);

/* 1 when a bare `name` (lower case) argument means name=true: the
 * yes/no options (`anonymous`). */
int ds_options_is_flag(const char *name);

/* Add one `name=value` argument (possibly quoted as a whole), or a bare
 * yes/no option's name (= true). */
int ds_options_add(ds_options *o, const char *arg, char **err);
/* Add option `name` with `value` as they are (already parsed: copied). */
int ds_options_put(ds_options *o, const char *name, const char *value, char **err);
/* Add every option of a comma-separated `a=1, b='x,y'` string. */
int ds_options_add_list(ds_options *o, const char *list, char **err);
/* The value of `name`, or NULL when absent. */
const char *ds_options_get(const ds_options *o, const char *name);
void ds_options_free(ds_options *o);

#endif
