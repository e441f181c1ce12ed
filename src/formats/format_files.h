/* format_files.h - the file tests and sizes the formats' descriptors
 * (format.h) share: what is a regular file or directory, a sibling file,
 * the bytes of a file or of a directory tree, and why a path that is
 * neither can not be read. Plain C: no SQLite. */
#ifndef DS_FORMAT_FILES_H
#define DS_FORMAT_FILES_H

#include <stdint.h>

#include "core/shard_spec.h"

/* 1 when path is a directory / a regular file (links followed). */
int ds_fmt_is_dir(const char *path);
int ds_fmt_is_file(const char *path);
/* 1 when a sep b (dir "/" name, or path "" suffix) exists. */
int ds_fmt_exists_join(const char *a, const char *sep, const char *b);
/* 1 when s ends with suffix. */
int ds_fmt_ends_with(const char *s, const char *suffix);
/* Size of the regular file path, 0 when it is none. */
uint64_t ds_fmt_file_size(const char *path);
/* The bytes of a format kept in files (format.h expand, file_bytes):
 * *total = the sum of file_bytes over the files expand(path) lists. */
int ds_fmt_listed_bytes(const char *path, unsigned detail,
                        int (*expand)(const char *, ds_shard_list *, char **),
                        uint64_t (*file_bytes)(const char *, unsigned), uint64_t *total,
                        char **err);
/* format.h file_bytes of a format whose files have no side files: the
 * file's size. */
uint64_t ds_fmt_file_bytes(const char *file, unsigned detail);
/* Add the sizes of the regular files under dir to *total (lstat: links
 * are not followed). */
int ds_fmt_dir_bytes(const char *dir, uint64_t *total, char **err);
/* format.h bytes and shard_bytes of a format kept in a folder (atlas,
 * bcolz): *total = the sizes of the files under it (detail unused), or
 * DS_BYTES_UNKNOWN when the file system cannot list folders (http(s)). */
int ds_fmt_folder_bytes(const char *path, unsigned detail, uint64_t *total, char **err);
/* format.h detect_dir of a format kept in a folder and told by a file in
 * it: 1 when dir holds `first` (*detail = first_detail) or else `second`
 * (*detail = 0); 0 when neither. */
int ds_fmt_detect_dir_by(const char *dir, const char *first, unsigned first_detail,
                         const char *second, unsigned *detail);
/* The descriptor (format.h) of a format kept in a folder (atlas, bcolz):
 * told by `detect` (`rule` says what it looks for), its bytes and a
 * shard's those of the files under the folder, its shards from `list`. */
#define DS_FOLDER_FORMAT(fmt_name, detect, rule, list)                                        \
  {.name = fmt_name, .detect_dir = detect, .dir_rule = rule, .bytes = ds_fmt_folder_bytes,   \
   .shard_bytes = ds_fmt_folder_bytes, .list_shards = list}
/* The descriptor (format.h) of a format kept in files (bagz, datadings,
 * tfrecord): told by `file` and `pattern` (`rule` says what they look
 * for), its files those `spec_files` lists, each `bytes_of` bytes on
 * disk, its shards from `list`. */
#define DS_FILE_FORMAT(fmt_name, file, pattern, rule, spec_files, bytes_of, list)            \
  {.name = fmt_name, .detect_file = file, .detect_pattern = pattern, .file_rule = rule,      \
   .expand = spec_files, .file_bytes = bytes_of, .list_shards = list}
/* mode=replace's first look at the path of a dataset kept in a folder:
 * 0 when nothing is there, 1 when it is a directory (the writer then
 * looks inside), else an error: not a directory, so not `what` (e.g.
 * "an atlas dataset"). */
int ds_fmt_replace_dir(const char *path, const char *what, char **err);
/* Why `path`, neither a regular file nor a directory, cannot be read:
 * missing, a loop of links, a name too long, a device, a FIFO, ... */
int ds_fmt_path_problem(const char *path, char **err);

#endif
