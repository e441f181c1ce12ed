/* remote_creds.h - where the credentials and settings of s3:// and gs://
 * come from: never from SQL text (it ends up in schemas and logs), only
 * from the environment and the files AWS's tools read, and, for what is
 * not secret, from the table's options (endpoint=, region=, anonymous).
 *
 * s3://, in the order AWS's CLI uses:
 *   keys:     AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN);
 *             else the profile (AWS_PROFILE, else "default") in the
 *             credentials file (AWS_SHARED_CREDENTIALS_FILE, else
 *             ~/.aws/credentials: [name]) then in the config file
 *             (AWS_CONFIG_FILE, else ~/.aws/config: [profile name], [default]):
 *             aws_access_key_id, aws_secret_access_key, aws_session_token;
 *             else none: requests go unsigned (public buckets).
 *   region:   region= > AWS_REGION > AWS_DEFAULT_REGION > the profile's
 *             region > us-east-1.
 *   endpoint: endpoint= > AWS_ENDPOINT_URL_S3 > AWS_ENDPOINT_URL > the
 *             profile's endpoint_url > AWS's own.
 * gs:// (Cloud Storage's XML API):
 *   keys:     HMAC keys GS_ACCESS_KEY_ID + GS_SECRET_ACCESS_KEY (the names of
 *             gsutil's boto settings), signed with Signature V4 (region
 *             "auto"); else an OAuth access token GOOGLE_OAUTH_ACCESS_TOKEN
 *             (sent as "Authorization: Bearer"); else anonymous.
 *   endpoint: endpoint= > GS_ENDPOINT_URL > https://storage.googleapis.com.
 * `anonymous` (the option) skips every key. Error messages name files and
 * line numbers, never a value read from them. */
#ifndef DS_REMOTE_CREDS_H
#define DS_REMOTE_CREDS_H

#include "remote/remote_url.h"

/* The non-secret options of a table (NULL / 0: not given). */
typedef struct ds_remote_options {
  const char *endpoint;
  const char *region;
  int anonymous;
  ds_url_style url_style;
} ds_remote_options;

/* What requests to one scheme need. Secrets are wiped by ..._free. */
typedef struct ds_remote_config {
  ds_remote_scheme scheme;
  char *access_key;    /* NULL: unsigned, or bearer_token */
  char *secret_key;
  char *session_token; /* NULL when none */
  char *bearer_token;  /* gs:// OAuth token, NULL when none */
  char *region;        /* never NULL */
  char *endpoint;      /* NULL: AWS's own endpoint */
  ds_url_style url_style;
  char source[160];    /* where the keys came from, for messages: "the
                          environment", "profile 'x' in /home/u/.aws/credentials",
                          "none (anonymous)" -- never a value */
} ds_remote_config;

/* Resolve for scheme S3 or GS. 0 ok, -1 with *err (no secret in it). */
int ds_remote_config_resolve(ds_remote_scheme scheme, const ds_remote_options *opt,
                             ds_remote_config *out, char **err);
/* Free (secrets overwritten first). */
void ds_remote_config_free(ds_remote_config *c);

#endif
