/* tfexample_schema.c - infer the feature columns of a bag of
 * tf.train.Example records from its first records (see
 * tfexample_schema.h), as datadings infers its field columns. */
#include "tfexample_schema.h"

#include <stdlib.h>

#include "tfexample.h"
#include "tfexample_cell.h"

int ds_tfex_infer(ds_schema *s, uint64_t count, uint64_t infer,
                  ds_tfex_record_fn get, void *ctx, int bytes_text,
                  uint64_t max_value_bytes, char **err) {
  ds_tfex ex = {0};
  ex.arena.limit = (size_t)max_value_bytes;
  int rc = 0;
  uint64_t seen = 0;
  for (uint64_t i = 0; i < count && i < infer && rc == 0; i++, seen++) {
    const uint8_t *p;
    size_t n;
    char *why = NULL;
    if (get(ctx, i, &p, &n, &why) || ds_tfex_decode(&ex, p, n, &why)) {
      rc = ds_err(err, "record %llu: %s (records=tfexample reads serialized "
                       "tf.train.Example records; this one is not)",
                  (unsigned long long)i, why ? why : "out of memory");
      free(why);
      break;
    }
    for (size_t k = 0; k < ex.n && rc == 0; k++) {
      const ds_tfex_feature *f = &ex.features[k];
      rc = ds_schema_observe(s, f->name, f->name_len, ds_tfex_cell_type(f, bytes_text), err);
    }
  }
  ds_tfex_free(&ex);
  if (rc == 0 && s->n == 0 && seen > 0)
    rc = ds_err(err, "the first %llu records hold no tf.train.Example feature, so the "
                     "table would have no columns (are they tf.train.Example records? "
                     "name the features with columns='name TYPE, ...' if they are)",
                (unsigned long long)seen);
  return rc;
}
