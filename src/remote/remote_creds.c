/* remote_creds.c - credentials, region and endpoint of s3:// and gs:// from
 * the environment and AWS's shared files (remote_creds.h). */
#include "remote/remote_creds.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/vfs.h"

/* A copy of a non-empty environment variable, or NULL. */
static char *env_dup(const char *name) {
  const char *v = getenv(name);
  return v && *v ? ds_strf("%s", v) : NULL;
}

/* Overwrite and free a secret. */
static void wipe(char **p) {
  if (*p) {
    volatile char *v = *p;
    while (*v) *v++ = 0;
    free(*p);
    *p = NULL;
  }
}

/* Trim blanks at both ends, in place. */
static char *trim(char *s) {
  while (*s == ' ' || *s == '\t') s++;
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' ||
               s[n - 1] == '\n'))
    s[--n] = 0;
  return s;
}

/* The INI values wanted from one file's section. */
typedef struct ini_want {
  const char *keys[5];
  char *vals[5];
} ini_want;

/* The whole file at path (at most 1 MiB: a settings file), through the
 * file-system seam: 0 with *text malloc'd (*len bytes), -1 with errno. */
static int read_small(const char *path, char **text, size_t *len) {
  ds_vfs_file f;
  if (ds_vfs_open(&f, NULL, path) != 0) return -1;
  int rc = 0;
  if (f.st.kind != DS_VFS_FILE || f.st.size > ((uint64_t)1 << 20)) {
    errno = f.st.kind == DS_VFS_FILE ? EFBIG : EISDIR;
    rc = -1;
  }
  *len = rc == 0 ? (size_t)f.st.size : 0;
  *text = rc == 0 ? malloc(*len + 1) : NULL;
  if (rc == 0 && !*text) {
    errno = ENOMEM;
    rc = -1;
  }
  ssize_t got = rc == 0 && *len ? ds_vfs_pread(&f, *text, *len, 0) : 0;
  if (rc == 0 && got != (ssize_t)*len) {
    if (got >= 0) errno = EIO; /* shorter than its size: changed meanwhile */
    rc = -1;
  }
  ds_vfs_close(&f);
  if (rc) {
    free(*text);
    *text = NULL;
  }
  return rc;
}

/* Read `section` of the INI file at path into w (values found there and
 * not set yet). 0 ok (a missing file is ok), -1 with *err naming the
 * file and line (never a value). */
static int ini_read(const char *path, const char *section, ini_want *w,
                    int *found_section, char **err) {
  char *text = NULL;
  size_t len = 0;
  if (read_small(path, &text, &len) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return 0;
    return ds_err(err, "%s: %s", path, strerror(errno));
  }
  FILE *f = len ? fmemopen(text, len, "r") : NULL;
  if (!f) {
    free(text);
    return len ? ds_err(err, "out of memory") : 0;
  }
  char line[4096];
  int in = 0, lineno = 0, rc = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    if (!strchr(line, '\n') && !feof(f)) {
      rc = ds_err(err, "%s:%d: line too long", path, lineno);
      break;
    }
    int indented = line[0] == ' ' || line[0] == '\t';
    char *s = trim(line);
    if (!*s || *s == '#' || *s == ';') continue;
    if (*s == '[') {
      char *e = strchr(s, ']');
      if (!e) {
        rc = ds_err(err, "%s:%d: a section header without ']'", path, lineno);
        break;
      }
      *e = 0;
      in = strcmp(trim(s + 1), section) == 0;
      if (in) *found_section = 1;
      continue;
    }
    if (!in || indented) continue; /* nested settings (s3 = ...) skipped */
    char *eq = strchr(s, '=');
    if (!eq) {
      rc = ds_err(err, "%s:%d: a line without '=' in section [%s]", path, lineno,
                  section);
      break;
    }
    *eq = 0;
    char *k = trim(s), *v = trim(eq + 1);
    for (int i = 0; i < 5 && w->keys[i]; i++)
      if (strcasecmp(k, w->keys[i]) == 0 && !w->vals[i] && *v)
        w->vals[i] = ds_strf("%s", v);
  }
  memset(line, 0, sizeof line);
  fclose(f);
  memset(text, 0, len);
  free(text);
  return rc;
}

/* ~/<rest> or the variable's value. */
static char *file_path(const char *var, const char *rest) {
  const char *v = getenv(var);
  if (v && *v) return ds_strf("%s", v);
  const char *home = getenv("HOME");
  return home && *home ? ds_strf("%s/%s", home, rest) : NULL;
}

/* s3://: keys, region and endpoint from environment and profile. */
static int resolve_s3(const ds_remote_options *opt, ds_remote_config *c,
                      char **err) {
  const char *prof = getenv("AWS_PROFILE");
  if (!prof || !*prof) prof = "default";
  ini_want w = {{"aws_access_key_id", "aws_secret_access_key",
                 "aws_session_token", "region", "endpoint_url"},
                {0}};
  char *cred_file = file_path("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
  char *conf_file = file_path("AWS_CONFIG_FILE", ".aws/config");
  char *section = strcmp(prof, "default") == 0 ? ds_strf("default")
                                               : ds_strf("profile %s", prof);
  int rc = 0, found = 0;
  int env_keys = getenv("AWS_ACCESS_KEY_ID") && *getenv("AWS_ACCESS_KEY_ID") &&
                 getenv("AWS_SECRET_ACCESS_KEY") && *getenv("AWS_SECRET_ACCESS_KEY");
  if (cred_file) rc = ini_read(cred_file, prof, &w, &found, err);
  int keys_in_creds = w.vals[0] && w.vals[1];
  if (!rc && conf_file && section) rc = ini_read(conf_file, section, &w, &found, err);
  if (!rc && strcmp(prof, "default") != 0 && !found && !env_keys && !opt->anonymous)
    rc = ds_err(err, "AWS_PROFILE names profile '%s', found in neither %s nor %s",
                prof, cred_file ? cred_file : "~/.aws/credentials",
                conf_file ? conf_file : "~/.aws/config");
  if (!rc) {
    if (opt->anonymous) {
      snprintf(c->source, sizeof c->source, "none (anonymous)");
    } else if (env_keys) {
      c->access_key = env_dup("AWS_ACCESS_KEY_ID");
      c->secret_key = env_dup("AWS_SECRET_ACCESS_KEY");
      c->session_token = env_dup("AWS_SESSION_TOKEN");
      snprintf(c->source, sizeof c->source, "the environment (AWS_ACCESS_KEY_ID)");
    } else if (w.vals[0] && w.vals[1]) {
      c->access_key = w.vals[0];
      c->secret_key = w.vals[1];
      c->session_token = w.vals[2];
      w.vals[0] = w.vals[1] = w.vals[2] = NULL;
      snprintf(c->source, sizeof c->source, "profile '%.40s' in %.100s", prof,
               keys_in_creds ? cred_file : conf_file);
    } else {
      snprintf(c->source, sizeof c->source, "none found (unsigned requests)");
    }
    if (opt->region && *opt->region) c->region = ds_strf("%s", opt->region);
    if (!c->region) c->region = env_dup("AWS_REGION");
    if (!c->region) c->region = env_dup("AWS_DEFAULT_REGION");
    if (!c->region && w.vals[3]) c->region = ds_strf("%s", w.vals[3]);
    if (!c->region) c->region = ds_strf("us-east-1");
    if (opt->endpoint && *opt->endpoint) c->endpoint = ds_strf("%s", opt->endpoint);
    if (!c->endpoint) c->endpoint = env_dup("AWS_ENDPOINT_URL_S3");
    if (!c->endpoint) c->endpoint = env_dup("AWS_ENDPOINT_URL");
    if (!c->endpoint && w.vals[4]) c->endpoint = ds_strf("%s", w.vals[4]);
  }
  for (int i = 0; i < 5; i++) wipe(&w.vals[i]);
  free(cred_file);
  free(conf_file);
  free(section);
  return rc;
}

/* gs://: HMAC keys, or an OAuth token, or anonymous. */
static int resolve_gs(const ds_remote_options *opt, ds_remote_config *c) {
  if (opt->anonymous) {
    snprintf(c->source, sizeof c->source, "none (anonymous)");
  } else if (getenv("GS_ACCESS_KEY_ID") && *getenv("GS_ACCESS_KEY_ID") &&
             getenv("GS_SECRET_ACCESS_KEY") && *getenv("GS_SECRET_ACCESS_KEY")) {
    c->access_key = env_dup("GS_ACCESS_KEY_ID");
    c->secret_key = env_dup("GS_SECRET_ACCESS_KEY");
    snprintf(c->source, sizeof c->source, "the environment (GS_ACCESS_KEY_ID)");
  } else if ((c->bearer_token = env_dup("GOOGLE_OAUTH_ACCESS_TOKEN"))) {
    snprintf(c->source, sizeof c->source,
             "the environment (GOOGLE_OAUTH_ACCESS_TOKEN)");
  } else {
    snprintf(c->source, sizeof c->source, "none found (unsigned requests)");
  }
  c->region = ds_strf("%s", opt->region && *opt->region ? opt->region : "auto");
  if (opt->endpoint && *opt->endpoint) c->endpoint = ds_strf("%s", opt->endpoint);
  if (!c->endpoint) c->endpoint = env_dup("GS_ENDPOINT_URL");
  if (!c->endpoint) c->endpoint = ds_strf("https://storage.googleapis.com");
  return 0;
}

int ds_remote_config_resolve(ds_remote_scheme scheme, const ds_remote_options *opt,
                             ds_remote_config *out, char **err) {
  static const ds_remote_options none;
  memset(out, 0, sizeof *out);
  if (!opt) opt = &none;
  out->scheme = scheme;
  out->url_style = opt->url_style;
  int rc;
  if (scheme == DS_REMOTE_S3)
    rc = resolve_s3(opt, out, err);
  else if (scheme == DS_REMOTE_GS)
    rc = resolve_gs(opt, out);
  else
    rc = ds_err(err, "credentials are for s3:// and gs:// only");
  if (!rc && !out->region) rc = ds_err(err, "out of memory");
  if (rc) ds_remote_config_free(out);
  return rc;
}

void ds_remote_config_free(ds_remote_config *c) {
  wipe(&c->access_key);
  wipe(&c->secret_key);
  wipe(&c->session_token);
  wipe(&c->bearer_token);
  free(c->region);
  free(c->endpoint);
  c->region = c->endpoint = NULL;
}
