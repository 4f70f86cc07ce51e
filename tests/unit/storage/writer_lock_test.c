/* storage/writer_lock.c: one writer per store directory, readers beside it, and a failed start
 * that takes away what it created and nothing else. */
#include "common/error.h"
#include "common/fs.h"
#include "storage/store.h"
#include "tests/t.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char base[] = "/tmp/rs-writer-lock-XXXXXX";

static bool
exists(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s%s%s", dir, name ? "/" : "", name ? name : "");
    return access(path, F_OK) == 0;
}

static void
second_writer_refused(void)
{
    char dir[256];
    struct rs_store_options ex = {.exclusive = true};
    rs_store *a = NULL, *b = NULL, *r = NULL;

    snprintf(dir, sizeof dir, "%s/one", base);
    T_EQ(rs_store_open(dir, &ex, &a), 0);
    /* flock is per open file: a second open in this process conflicts like another process */
    T_EQ(rs_store_open(dir, &ex, &b), RS_E_LOCKED);
    T_CHECK(b == NULL);
    T_EQ(rs_store_locked_by(dir), getpid());
    T_CHECK(exists(dir, "data.mdb")); /* the refused open removed nothing of the holder's */
    T_CHECK(exists(dir, "writer.lock"));
    T_EQ(rs_store_open(dir, NULL, &r), 0); /* a reader takes no lock */
    rs_store_close(r);
    rs_store_close(a);
    T_EQ(rs_store_open(dir, &ex, &b), 0); /* released by close */
    rs_store_close(b);
}

static void
discard_removes_only_what_it_made(void)
{
    char dir[256], top[256], keep[300];
    struct rs_store_options ex = {.exclusive = true};
    rs_store *s = NULL;

    /* a new directory (two levels): all of it goes */
    snprintf(top, sizeof top, "%s/new", base);
    snprintf(dir, sizeof dir, "%s/new/deeper", base);
    T_EQ(rs_store_open(dir, &ex, &s), 0);
    T_CHECK(exists(dir, "data.mdb"));
    rs_store_close_discard(s);
    T_CHECK(!exists(top, NULL));
    T_CHECK(exists(base, NULL));

    /* a directory that was there, with a file of someone else's: only the store files go */
    snprintf(dir, sizeof dir, "%s/mine", base);
    snprintf(keep, sizeof keep, "%s/keep.txt", dir);
    T_EQ(mkdir(dir, 0755), 0);
    FILE *f = fopen(keep, "w");
    T_CHECK(f != NULL);
    if (f)
        fclose(f);
    T_EQ(rs_store_open(dir, &ex, &s), 0);
    rs_store_close_discard(s);
    T_CHECK(exists(dir, "keep.txt"));
    T_CHECK(!exists(dir, "data.mdb"));
    T_CHECK(!exists(dir, "lock.mdb"));
    T_CHECK(!exists(dir, "writer.lock"));

    /* a store that was there stays whole */
    T_EQ(rs_store_open(dir, &ex, &s), 0);
    rs_store_close(s);
    T_EQ(rs_store_open(dir, &ex, &s), 0);
    rs_store_close_discard(s);
    T_CHECK(exists(dir, "data.mdb"));
    T_CHECK(exists(dir, "lock.mdb"));
    T_CHECK(exists(dir, "writer.lock"));
    T_EQ(rs_store_open(dir, NULL, &s), 0);
    rs_store_close(s);
}

static void
failed_open_leaves_nothing(void)
{
    char dir[256], file[256];
    rs_store *s = NULL;

    /* under a regular file: mkdir fails at the file; nothing was made */
    snprintf(file, sizeof file, "%s/plain", base);
    FILE *f = fopen(file, "w");
    T_CHECK(f != NULL);
    if (f)
        fclose(f);
    snprintf(dir, sizeof dir, "%s/plain/store", base);
    T_CHECK(rs_store_open(dir, NULL, &s) != 0);
    /* LMDB fails after the directories were made (a map larger than the address space): the
     * directories go again */
    struct rs_store_options huge = {.map_size = 1ull << 60};
    snprintf(dir, sizeof dir, "%s/x/y", base);
    T_CHECK(rs_store_open(dir, &huge, &s) != 0);
    snprintf(dir, sizeof dir, "%s/x", base);
    T_CHECK(!exists(dir, NULL));

    char *made = NULL;
    snprintf(dir, sizeof dir, "%s/x/y", base);
    T_EQ(rs_fs_mkdir_p_made(dir, 0755, &made), 0);
    T_CHECK(made != NULL && strlen(made) == strlen(base) + 2); /* base/x, the topmost made */
    free(made);
    T_EQ(rs_fs_mkdir_p_made(dir, 0755, &made), 0);
    T_CHECK(made == NULL); /* it existed */
    snprintf(dir, sizeof dir, "%s/x", base);
    rs_fs_remove_tree(dir);
}

/* What a store holds is for its owner only: a directory it creates is 0700, its files 0600
 * (whatever the umask allows beyond that); a directory that existed keeps its mode. */
static void
private_modes(void)
{
    char dir[600], path[700];
    struct stat st;
    rs_store *s = NULL;

    umask(022);
    snprintf(dir, sizeof dir, "%s/private/store", base);
    T_OK(rs_store_open(dir, NULL, &s));
    T_CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);
    snprintf(path, sizeof path, "%s/data.mdb", dir);
    T_CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    snprintf(path, sizeof path, "%s/private", base);
    T_CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0755); /* the parent made on the way */
    rs_store_close(s);
    rs_fs_remove_tree(path);
}

int
main(void)
{
    T_CHECK(mkdtemp(base) != NULL);
    T_RUN(second_writer_refused);
    T_RUN(discard_removes_only_what_it_made);
    T_RUN(failed_open_leaves_nothing);
    T_RUN(private_modes);
    rs_fs_remove_tree(base);
    return T_DONE("storage/writer_lock");
}
