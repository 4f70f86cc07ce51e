/* Trace files (see trace_file.h): zlib's gz* functions read gzip and plain files alike. */
#include "import/trace_file.h"

#include "common/array.h"
#include "common/error.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <zlib.h>

struct source {
    gzFile gz;
    uint64_t size;
    rs_trace_progress_fn progress;
    void *progress_arg;
    char gz_error[128];
};

static ssize_t
source_read(void *arg, void *buf, size_t cap)
{
    struct source *s = arg;
    int n = gzread(s->gz, buf, (unsigned)(cap > (1u << 30) ? 1u << 30 : cap));

    if (n < 0) {
        int code;
        const char *msg = gzerror(s->gz, &code);
        snprintf(s->gz_error, sizeof s->gz_error, "%s", msg ? msg : "read error");
        return code == Z_ERRNO ? -errno : RS_E_MALFORMED;
    }
    if (s->progress) {
        z_off_t at = gzoffset(s->gz);
        s->progress(s->progress_arg, at > 0 ? (uint64_t)at : 0, s->size);
    }
    return n;
}

static int
source_open(struct source *s, const char *path, char *err, size_t err_len)
{
    struct stat st;

    if (stat(path, &st) != 0 || !(s->gz = gzopen(path, "rb"))) {
        int e = errno ? errno : ENOMEM;
        snprintf(err, err_len, "%s: %s", path, strerror(e));
        return -e;
    }
    gzbuffer(s->gz, 256u << 10);
    s->size = (uint64_t)st.st_size;
    return 0;
}

/* One pass over the file: an import, or (header == NULL) a header scan into *scanned. */
static int
pass(const char *path, const struct rs_kineto_options *o, const struct rs_kineto_header *header,
     struct rs_kineto_header *scanned, rs_kineto_sink_fn sink, void *sink_arg, struct source *src,
     struct rs_kineto_stats *stats, char *err, size_t err_len)
{
    rs_json_reader *r = NULL;
    char what[256] = "";
    int rc;

    if ((rc = source_open(src, path, err, err_len)) != 0)
        return rc;
    if ((rc = rs_json_reader_new(source_read, src, &r)) == 0) {
        if (scanned)
            rc = rs_kineto_header_scan(r, scanned, what, sizeof what);
        else
            rc = rs_kineto_import(r, o, header, sink, sink_arg, stats, what, sizeof what);
    }
    if (rc < 0)
        snprintf(err, err_len, "%s: %s%s%s", path, what[0] ? what : rs_strerror(rc),
                 src->gz_error[0] ? " — " : "", src->gz_error);
    rs_json_reader_free(r);
    gzclose(src->gz);
    return rc;
}

int
rs_trace_import_file(const char *path, const struct rs_kineto_options *o, rs_kineto_sink_fn sink,
                     void *sink_arg, rs_trace_progress_fn progress, void *progress_arg,
                     struct rs_kineto_stats *stats, char *err, size_t err_len)
{
    struct rs_kineto_options opts = *o;
    struct rs_kineto_header header = {0};
    struct source src = {.progress = progress, .progress_arg = progress_arg};
    int rc;

    rc = pass(path, &opts, NULL, NULL, sink, sink_arg, &src, stats, err, err_len);
    if (rc != RS_KINETO_NEED_HEADER)
        return rc;
    /* the header follows the events: read it first, then import with it */
    src.progress = NULL;
    if ((rc = pass(path, &opts, NULL, &header, NULL, NULL, &src, stats, err, err_len)) != 0)
        return rc;
    if (opts.rank < 0 && !header.have_rank)
        opts.rank = rs_trace_rank_from_name(path);
    bool assumed = opts.rank < 0 && !header.have_rank && opts.lone_rank0;
    if (assumed) {
        opts.rank = 0;
        header.world_size = header.world_size ? header.world_size : 1;
    }
    src.progress = progress;
    rc = pass(path, &opts, &header, NULL, sink, sink_arg, &src, stats, err, err_len);
    stats->rank_assumed = assumed;
    return rc == RS_KINETO_NEED_HEADER ? RS_E_MALFORMED : rc;
}

int64_t
rs_trace_rank_from_name(const char *path)
{
    const char *base = strrchr(path, '/'), *found = NULL;

    base = base ? base + 1 : path;
    for (const char *p = base; *p; p++)
        if (strncasecmp(p, "rank", 4) == 0) {
            const char *d = p + 4;
            if (*d == '_' || *d == '-')
                d++;
            if (isdigit((unsigned char)*d))
                found = d;
        }
    if (!found)
        return -1;
    char *end;
    long long v = strtoll(found, &end, 10);
    return v >= 0 && v <= 16777215 ? v : -1;
}

static bool
is_trace_name(const char *name)
{
    size_t n = strlen(name);
    return name[0] != '.' && ((n > 5 && strcmp(name + n - 5, ".json") == 0) ||
                              (n > 8 && strcmp(name + n - 8, ".json.gz") == 0));
}

struct path_list {
    char **v;
    size_t n, cap;
};

static int
add_path(struct path_list *l, const char *dir, const char *name)
{
    if (RS_ARRAY_RESERVE(l->v, l->cap, l->n, 1) != 0)
        return -ENOMEM;
    size_t len = (dir ? strlen(dir) + 1 : 0) + strlen(name) + 1;
    if (!(l->v[l->n] = malloc(len)))
        return -ENOMEM;
    snprintf(l->v[l->n], len, "%s%s%s", dir ? dir : "", dir ? "/" : "", name);
    l->n++;
    return 0;
}

static int
add_directory(struct path_list *l, const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int rc = 0;

    if (!d)
        return -errno;
    while (rc == 0 && (e = readdir(d)))
        if (is_trace_name(e->d_name))
            rc = add_path(l, dir, e->d_name);
    closedir(d);
    return rc;
}

static int
by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int
rs_trace_expand(char *const *args, size_t n_args, char ***paths, size_t *n_paths, char *err,
                size_t err_len)
{
    struct path_list l = {0};
    int rc = 0;

    for (size_t i = 0; i < n_args && rc == 0; i++) {
        struct stat st;
        size_t before = l.n;
        if (stat(args[i], &st) == 0) {
            rc = S_ISDIR(st.st_mode) ? add_directory(&l, args[i]) : add_path(&l, NULL, args[i]);
        } else {
            glob_t g;
            if (glob(args[i], 0, NULL, &g) == 0)
                for (size_t k = 0; k < g.gl_pathc && rc == 0; k++)
                    rc = add_path(&l, NULL, g.gl_pathv[k]);
            globfree(&g);
        }
        if (rc == 0 && l.n == before) {
            snprintf(err, err_len,
                     "%s: no trace files (a file, a directory of *.json[.gz], or a "
                     "glob)",
                     args[i]);
            rc = RS_E_NOT_FOUND;
        }
    }
    if (rc != 0) {
        if (rc == -ENOMEM)
            snprintf(err, err_len, "out of memory");
        rs_trace_paths_free(l.v, l.n);
        return rc;
    }
    qsort(l.v, l.n, sizeof *l.v, by_name);
    size_t kept = 0;
    for (size_t i = 0; i < l.n; i++) {
        if (kept > 0 && strcmp(l.v[kept - 1], l.v[i]) == 0)
            free(l.v[i]);
        else
            l.v[kept++] = l.v[i];
    }
    *paths = l.v;
    *n_paths = kept;
    return 0;
}

void
rs_trace_paths_free(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}
