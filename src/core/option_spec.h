/* option_spec.h - one declarative spec per module option: its name, the
 * forms that take it, its kind (integer with a range, count, enum with
 * names, false|true, text, fraction), its default, a one-line help and
 * where it goes (offsetof into the struct it is bound into). From the specs come the
 * binding of a table's options into a struct (one pass, which also gives
 * the "unknown option", range and enum errors), the "known options" list
 * of those errors (only what the form takes), the usage texts of the
 * modules and the rows of datasets_help() (vtab/help.c).
 *
 * A module's options are a NULL-terminated list of groups (ds_opt_group):
 * each group a spec table and the offset of its struct inside the
 * module's bound struct, so the options every module shares
 * (max_value_bytes, the row window's, mode=) have one spec each. */
#ifndef DS_OPTION_SPEC_H
#define DS_OPTION_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "core/options.h"
#include "core/vfs.h"

/* The forms an option may be given in (ds_opt_spec.forms, a bit set). */
enum {
  DS_FORM_TVF = 1,     /* the table-valued form: module('path', 'a=1,...') */
  DS_FORM_CREATE = 2,  /* CREATE VIRTUAL TABLE ... USING module('path', a=1) */
  DS_FORM_WRITER = 4,  /* the CREATE form with mode=create|replace */
  DS_FORM_INFO = 8,    /* dataset_info(path, options) */
  DS_FORM_SHARDS = 16, /* dataset_shards(path, options) */
  DS_FORMS_READ = DS_FORM_TVF | DS_FORM_CREATE | DS_FORM_INFO | DS_FORM_SHARDS,
  DS_FORMS_ALL = DS_FORMS_READ | DS_FORM_WRITER,
  DS_FORMS_CREATE = DS_FORM_CREATE | DS_FORM_WRITER | DS_FORM_INFO | DS_FORM_SHARDS
};

typedef enum ds_opt_kind {
  DS_OPT_INT,      /* decimal integer in [min, max] -> int64_t */
  DS_OPT_COUNT,    /* the same, or `all` (INT64_MAX) -> int64_t */
  DS_OPT_ENUM,     /* one of names (any case) -> int64_t, its position */
  DS_OPT_BOOL,     /* false or true (any case) -> int64_t 0 or 1: an enum
                      whose names the kind gives */
  DS_OPT_TEXT,     /* any text (a path, a column list) -> const char *
                      (points into the ds_options; NULL when absent) */
  DS_OPT_FRACTION  /* a decimal in (0, 1] -> double (def_real) */
} ds_opt_kind;

typedef struct ds_opt_spec {
  const char *name;         /* NULL ends a table */
  unsigned forms;           /* DS_FORM_* bits */
  ds_opt_kind kind;
  int64_t min, max;         /* DS_OPT_INT, DS_OPT_COUNT */
  const char *const *names; /* DS_OPT_ENUM, NULL-terminated */
  int64_t def;              /* INT, COUNT, ENUM, BOOL (a position; -1: none) */
  double def_real;          /* FRACTION */
  const char *def_text;     /* the default as documented (NULL: from def) */
  const char *help;         /* one line */
  size_t at;                /* offsetof into the group's struct */
} ds_opt_spec;

typedef struct ds_opt_group {
  const ds_opt_spec *specs; /* NULL ends a list of groups */
  size_t base;              /* offset of the group's struct in the bound one */
} ds_opt_group;

/* The options every module takes in every form: max_value_bytes (the
 * largest value, record, block or chunk a file may make us allocate). */
typedef struct ds_common_opts {
  int64_t max_value_bytes;
  ds_vfs_remote_opts remote; /* endpoint=, region=, ... (remote paths) */
} ds_common_opts;
extern const ds_opt_spec ds_common_option_specs[];

/* 1 when spec s is a yes/no option (which options.c's flag list must
 * name: a bare `name` argument switches it on). */
int ds_opt_is_yes_no(const ds_opt_spec *s);

/* Fail naming the first option of o no spec of groups takes in `form`
 * (one DS_FORM_* bit); the message lists those that apply. An option
 * only the CREATE form takes, given to the table-valued one, says so. */
int ds_opt_check(const ds_opt_group *groups, unsigned form, const ds_options *o,
                 char **err);
/* Every spec of groups into out (base + group base + spec offset): the
 * given value or the default; range and enum errors name the option. */
int ds_opt_read(const ds_opt_group *groups, const ds_options *o, void *out, char **err);
/* ds_opt_check, then ds_opt_read: the one pass a module makes. */
int ds_opt_bind(const ds_opt_group *groups, unsigned form, const ds_options *o, void *out,
                char **err);
/* The text given for spec s (NULL when absent). */
const char *ds_opt_given(const ds_options *o, const ds_opt_spec *s);
/* The default of s as shown to users ("2", "auto", "" for none). */
void ds_opt_default_text(const ds_opt_spec *s, char *buf, size_t n);
/* What s takes as shown to users: "auto|none|zstd", "1..2", "N|all",
 * "<text>". Written into buf. */
void ds_opt_values_text(const ds_opt_spec *s, char *buf, size_t n);
/* "call; options: a=x|y, b=1..2, ..." for the options groups take in any
 * of `forms` (malloc'd; NULL when out of memory). */
char *ds_opt_usage(const char *call, const ds_opt_group *groups, unsigned forms);

#endif
