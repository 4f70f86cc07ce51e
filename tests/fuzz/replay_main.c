/* Replays a fuzz corpus through LLVMFuzzerTestOneInput without libFuzzer (gcc builds, make
 * test): every file of every directory given on the command line is one input. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
main(int argc, char **argv)
{
    int passed = 0;

    for (int i = 1; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        if (!d) {
            fprintf(stderr, "cannot open corpus %s\n", argv[i]);
            printf("fuzz replay: %d passed, 1 failed\n", passed);
            return 1;
        }
        while ((e = readdir(d))) {
            char path[4096];
            FILE *f;
            if (e->d_name[0] == '.')
                continue;
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            if (!(f = fopen(path, "rb")))
                continue;
            uint8_t *buf = malloc(1 << 24);
            size_t n = fread(buf, 1, 1 << 24, f);
            fclose(f);
            LLVMFuzzerTestOneInput(buf, n); /* a crash or sanitizer report fails the run */
            free(buf);
            passed++;
        }
        closedir(d);
    }
    printf("fuzz replay (%s): %d passed, 0 failed\n", argc > 1 ? argv[1] : "", passed);
    return 0;
}
