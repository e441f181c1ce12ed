/* test_option_spec.c - core/option_spec.h: binding options into a struct
 * from specs, the "unknown option" list per form, range, enum, count and
 * fraction errors, defaults, and the usage text. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/option_spec.h"
#include "formats/bagz/bagz.h"

/* The remote options every module takes after max_value_bytes
 * (core/option_spec.c). */
#define REMOTE ", endpoint, region, url_style, anonymous, retries, timeout_ms, remote_cache"
#include "vtab/atlas_options.h"
#include "vtab/bagz_options.h"

typedef struct test_opts {
  int64_t level, kind, infer;
  const char *path;
  double frac;
  ds_common_opts common;
} test_opts;

static const char *const kinds[] = {"tail", "separate", NULL};
static const ds_opt_spec own[] = {
    {.name = "level", .forms = DS_FORMS_ALL, .kind = DS_OPT_INT, .min = 1, .max = 9, .def = 5,
     .help = "a level", .at = offsetof(test_opts, level)},
    {.name = "kind", .forms = DS_FORMS_READ, .kind = DS_OPT_ENUM, .names = kinds, .def = 0,
     .help = "a kind", .at = offsetof(test_opts, kind)},
    {.name = "infer", .forms = DS_FORMS_CREATE, .kind = DS_OPT_COUNT, .min = 0,
     .max = INT64_MAX, .def = 100, .help = "rows", .at = offsetof(test_opts, infer)},
    {.name = "path", .forms = DS_FORM_WRITER, .kind = DS_OPT_TEXT, .help = "a file",
     .at = offsetof(test_opts, path)},
    {.name = "frac", .forms = DS_FORM_WRITER, .kind = DS_OPT_FRACTION, .def_real = 0.5,
     .help = "a fraction", .at = offsetof(test_opts, frac)},
    {0}};
static const ds_opt_group groups[] = {
    {own, 0}, {ds_common_option_specs, offsetof(test_opts, common)}, {0}};
/* A BOOL option alone: its names come from the kind. */
static const ds_opt_spec flag_specs[] = {
    {.name = "check", .forms = DS_FORMS_ALL, .kind = DS_OPT_BOOL, .def = 1, .help = "a check"},
    {0}};
static const ds_opt_group flag_groups[] = {{flag_specs, 0}, {0}};

/* Bind `list` to flag_groups: the return code, *x and *err. */
static int bind_flag(const char *list, int64_t *x, char **err) {
  ds_options o = {0};
  free(*err);
  *err = NULL;
  *x = -7;
  int rc = ds_options_add_list(&o, list, err);
  if (rc == 0) rc = ds_opt_bind(flag_groups, DS_FORM_TVF, &o, x, err);
  ds_options_free(&o);
  return rc;
}

/* Bind `list` in `form`: the return code, *v and *err. */
static int bind(const char *list, unsigned form, test_opts *v, char **err) {
  ds_options o = {0};
  free(*err);
  *err = NULL;
  memset(v, 0xab, sizeof *v);
  int rc = ds_options_add_list(&o, list, err);
  if (rc == 0) rc = ds_opt_bind(groups, form, &o, v, err);
  ds_options_free(&o);
  return rc;
}

int main(void) {
  test_opts v;
  char *err = NULL;
  /* defaults */
  CHECK(bind("", DS_FORM_CREATE, &v, &err) == 0);
  CHECK(v.level == 5 && v.kind == 0 && v.infer == 100 && v.path == NULL && v.frac == 0.5);
  CHECK(v.common.max_value_bytes == (int64_t)1 << 30);
  /* given values, any case for enums, `all` for counts */
  CHECK(bind("level=9, kind=SEPARATE, infer=all, max_value_bytes=7", DS_FORM_CREATE, &v,
             &err) == 0);
  CHECK(v.level == 9 && v.kind == 1 && v.infer == INT64_MAX && v.common.max_value_bytes == 7);
  /* the writer's text and fraction (the text points into the options: checked inside) */
  ds_options o = {0};
  CHECK(ds_options_add_list(&o, "path='a b', frac=0.25", &err) == 0);
  CHECK(ds_opt_bind(groups, DS_FORM_WRITER, &o, &v, &err) == 0);
  CHECK_STR(v.path, "a b");
  CHECK(v.frac == 0.25);
  CHECK(ds_opt_given(&o, &own[3]) != NULL && ds_opt_given(&o, &own[0]) == NULL);
  ds_options_free(&o);
  /* a bare yes/no option is true; every yes/no spec is a flag of
   * options.c, and only those */
  CHECK(bind("anonymous", DS_FORM_TVF, &v, &err) == 0);
  CHECK(v.common.remote.anonymous == 1);
  for (const ds_opt_spec *s = ds_common_option_specs; s->name; s++)
    CHECK(ds_opt_is_yes_no(s) == ds_options_is_flag(s->name));
  /* a BOOL: false|true in any case, its default, nothing else */
  int64_t x;
  CHECK(bind_flag("", &x, &err) == 0 && x == 1);
  CHECK(bind_flag("check=FALSE", &x, &err) == 0 && x == 0);
  CHECK(bind_flag("check=true", &x, &err) == 0 && x == 1);
  CHECK(bind_flag("check=yes", &x, &err) == -1);
  CHECK_STR(err, "option check='yes' is not one of false|true");
  {
    char t[32];
    ds_opt_default_text(&flag_specs[0], t, sizeof t);
    CHECK_STR(t, "true");
    ds_opt_values_text(&flag_specs[0], t, sizeof t);
    CHECK_STR(t, "false|true");
  }
  /* errors: range, enum, count, fraction */
  CHECK(bind("level=10", DS_FORM_CREATE, &v, &err) == -1);
  CHECK_STR(err, "option level='10' must be an integer from 1 to 9");
  CHECK(bind("kind=middle", DS_FORM_TVF, &v, &err) == -1);
  CHECK_STR(err, "option kind='middle' is not one of tail|separate");
  CHECK(bind("infer=some", DS_FORM_CREATE, &v, &err) == -1);
  CHECK_CONTAINS(err, "option infer='some' must be an integer");
  CHECK(bind("frac=1.5", DS_FORM_WRITER, &v, &err) == -1);
  CHECK_STR(err, "option frac must be a fraction in (0, 1], not '1.5'");
  /* unknown options list only what the form takes */
  CHECK(bind("x=1", DS_FORM_TVF, &v, &err) == -1);
  CHECK_STR(err, "unknown option 'x' (known options: level, kind, max_value_bytes" REMOTE ")");
  CHECK(bind("x=1", DS_FORM_CREATE, &v, &err) == -1);
  CHECK_STR(err, "unknown option 'x' (known options: level, kind, infer, max_value_bytes" REMOTE ")");
  CHECK(bind("x=1", DS_FORM_WRITER, &v, &err) == -1);
  CHECK_STR(err, "unknown option 'x' (known options: level, infer, path, frac, "
                 "max_value_bytes" REMOTE ")");
  /* a writer option in a reading CREATE is unknown there */
  CHECK(bind("path=p", DS_FORM_CREATE, &v, &err) == -1);
  CHECK_CONTAINS(err, "unknown option 'path'");
  /* a CREATE option in the table-valued form says so */
  CHECK(bind("infer=3", DS_FORM_TVF, &v, &err) == -1);
  CHECK_CONTAINS(err, "option 'infer' is only for the CREATE form");
  /* descriptions */
  char buf[64];
  ds_opt_default_text(&own[1], buf, sizeof buf);
  CHECK_STR(buf, "tail");
  ds_opt_values_text(&own[1], buf, sizeof buf);
  CHECK_STR(buf, "tail|separate");
  ds_opt_values_text(&own[2], buf, sizeof buf);
  CHECK_STR(buf, "N|all");
  char *u = ds_opt_usage("m('path')", groups, DS_FORM_TVF);
  CHECK_STR(u, "m('path'); options: level=N, kind=tail|separate, max_value_bytes=N, "
               "endpoint=..., region=..., url_style=auto|path|virtual, "
               "anonymous=false|true|0|1|no|yes, retries=N, timeout_ms=N, remote_cache=on|off");
  free(u);
  u = ds_opt_usage("m('path')", NULL, DS_FORMS_ALL);
  CHECK_STR(u, "m('path')");
  free(u);
  /* the entries other files find by position are those they name */
  CHECK_STR(bagz_read_specs[BAGZ_SPEC_LIMITS].name, "limits");
  CHECK_STR(bagz_read_specs[BAGZ_SPEC_LIMITS].names[BAGZ_LIMITS_SEPARATE], "separate");
  CHECK_STR(bagz_read_specs[BAGZ_SPEC_LAYOUT].name, "layout");
  CHECK_STR(bagz_read_specs[BAGZ_SPEC_LAYOUT].names[DS_LAYOUT_INTERLEAVED], "interleaved");
  CHECK_STR(atlas_read_specs[ATLAS_SPEC_DICTIONARY].name, "dictionary");
  free(err);
  return check_exit();
}
