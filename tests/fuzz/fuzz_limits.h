/* fuzz_limits.h - limits the fuzz harnesses share with the extension's
 * own: JSON output is held to 1 MiB, as the extension holds it to
 * max_value_bytes or SQLite's length limit (map keys nested in map keys
 * would otherwise grow to 2^depth bytes). */
#ifndef DS_FUZZ_LIMITS_H
#define DS_FUZZ_LIMITS_H

#define FUZZ_JSON_CAP (1u << 20)

#endif
