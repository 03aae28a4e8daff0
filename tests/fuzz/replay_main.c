/*
 * replay_main: runs a fuzz target's LLVMFuzzerTestOneInput on saved inputs,
 * without libFuzzer, so that every build (plain, ASan + UBSan, TSan, with
 * gcc or clang) replays the corpora of tests/fuzz/corpus/ as a test.
 *
 * Usage: <target>_replay PATH...   (a PATH is an input file or a directory
 * of them; a directory's regular files are run in name order, hidden files
 * and subdirectories skipped). Each input is handed over in a buffer of
 * exactly its size, as libFuzzer does, so a read past its end is caught.
 *
 * Exits 0 after running every input; 1 when a PATH cannot be read, or when
 * no input was found at all (a corpus that went missing is a failure, not
 * a pass). A fault in the target stops the run as it would stop the
 * fuzzer: abort() or a sanitizer report, with the input's name printed
 * first to stderr.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional in a target, as in libFuzzer. */
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Reads all of PATH into a buffer of exactly its size (malloc(1) when empty,
 * never read). Returns NULL with errno set on failure. */
static uint8_t *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        fclose(f);
        return NULL;
    }
    size_t n = (size_t)st.st_size;
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf || fread(buf, 1, n, f) != n) {
        int e = ferror(f) ? EIO : ENOMEM;
        free(buf);
        fclose(f);
        errno = e;
        return NULL;
    }
    fclose(f);
    *size = n;
    return buf;
}

static int run_file(const char *path)
{
    size_t size = 0;
    uint8_t *buf = read_all(path, &size);
    if (!buf) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    /* Named before it runs: a crash leaves the culprit on stderr. */
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, size);
    LLVMFuzzerTestOneInput(buf, size);
    free(buf);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular, non-hidden file of DIR in name order; adds their
 * number to *count. */
static int run_dir(const char *dir, size_t *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(len);
        if (!p) {
            rc = -1;
            break;
        }
        snprintf(p, len, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(p);
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = realloc(names, cap * sizeof *names);
            if (!grown) {
                free(p);
                rc = -1;
                break;
            }
            names = grown;
        }
        names[n++] = p;
    }
    closedir(d);
    if (rc != 0)
        fprintf(stderr, "replay: %s: out of memory\n", dir);
    if (n)
        qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        if (rc == 0 && run_file(names[i]) != 0)
            rc = -1;
        free(names[i]);
    }
    free(names);
    if (rc == 0)
        *count += n;
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH...   (input files or directories of them)\n",
                argv[0]);
        return 1;
    }
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    size_t count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            return 1;
        }
        if (S_ISDIR(st.st_mode)) {
            if (run_dir(argv[i], &count) != 0)
                return 1;
        } else {
            if (run_file(argv[i]) != 0)
                return 1;
            count++;
        }
    }
    if (count == 0) {
        fprintf(stderr, "replay: no input found\n");
        return 1;
    }
    printf("replay: %zu inputs, no fault\n", count);
    return 0;
}
