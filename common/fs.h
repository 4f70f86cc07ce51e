/* Small file-system helpers used by binaries: atomic file replacement (ready files, agent state),
 * recursive mkdir and removal, and whole-file reads with a size cap. */
#ifndef RS_COMMON_FS_H
#define RS_COMMON_FS_H

#include <stddef.h>
#include <sys/types.h>

/* Writes `len` bytes to `path` through a temporary file + fsync + rename, so readers see the old
 * content or the new one, never a torn file. Returns 0 or -errno. */
int rs_fs_write_atomic(const char *path, const void *data, size_t len);

/* rs_fs_write_atomic for what only its owner may read (mode 0600): an agent's spooled batches and
 * identity, which carry jobs' data and the id the server deduplicates by. */
int rs_fs_write_private(const char *path, const void *data, size_t len);

/* mkdir -p with mode 0755. Returns 0 (also when it exists) or -errno. */
int rs_fs_mkdir_p(const char *path);

/* mkdir -p whose last directory, when it makes it, is 0700 (a store, a spool); an existing one
 * keeps its mode. Returns 0 or -errno. */
int rs_fs_mkdir_p_private(const char *path);

/* mkdir -p that says what it made: on success *first_made is the topmost directory it created
 * (a new string, caller frees; removing it undoes the call) or NULL when `path` existed. The last
 * directory gets leaf_mode, the ones above it 0755. On failure it removes the directories it
 * created and returns -errno (-ENOMEM too). */
int rs_fs_mkdir_p_made(const char *path, mode_t leaf_mode, char **first_made);

/* Reads all of `path` into a new NUL-terminated buffer (caller frees). Fails with RS_E_TOO_BIG
 * past `max_len` bytes, or -errno. *out and *out_len are written only on success. */
int rs_fs_read_all(const char *path, size_t max_len, char **out, size_t *out_len);

/* rm -r: removes `path` and everything under it (symbolic links are removed, not followed).
 * Returns 0 (also when it does not exist) or the first -errno. */
int rs_fs_remove_tree(const char *path);

#endif
