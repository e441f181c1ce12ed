/* abspath.h - a dataset path made absolute once, when a table is created,
 * so that a later change of directory (chdir, the shell's .cd) does not
 * change which files it names. */
#ifndef DS_ABSPATH_H
#define DS_ABSPATH_H

/* `spec` with every relative element prefixed by the current directory
 * (malloc'd). A path that exists as written is one element; otherwise the
 * comma-separated elements of a shard spec are resolved one by one, an
 * optional `posix:` prefix kept in front. Empty elements stay as they are. */
char *ds_path_absolute(const char *spec, char **err);

/* The file a writer writes for `spec`: spec past an optional `posix:`
 * prefix. NULL (and *err set) when spec names no single file: nothing after
 * the prefix, or a comma (a reader's list of files; a writer takes one). */
const char *ds_writer_path(const char *spec, char **err);

#endif
