/*
 * replay_run: running fastbf-replay from a test and reading what it wrote
 * (see replay_run.h).
 */
#define _XOPEN_SOURCE 700 /* nftw */
#define _GNU_SOURCE /* memmem */
#include "support/replay_run.h"
#include "support/testkit.h"

#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#ifndef FBF_BUILD_DIR
#define FBF_BUILD_DIR "build"
#endif

static const char *tool_path(const char *name)
{
    static char path[2][4096];
    int k = strcmp(name, "fastbf") == 0;
    const char *dir = getenv("FBF_BUILD_DIR");
    if (!dir || !*dir)
        dir = FBF_BUILD_DIR;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    return path[k];
}

const char *fbf_test_replay_path(void)
{
    return tool_path("fastbf-replay");
}

const char *fbf_test_replay_fastbf_path(void)
{
    return tool_path("fastbf");
}

char *fbf_test_replay_read(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n - 1 == 0) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

void fbf_test_replay_same_jobs(const char *a_dir, const char *b_dir, const char *what,
                               int min_lines)
{
    char pa[600], pb[600];
    snprintf(pa, sizeof pa, "%s/out_jobs.csv", a_dir);
    snprintf(pb, sizeof pb, "%s/out_jobs.csv", b_dir);
    char *a = fbf_test_replay_read(pa), *b = fbf_test_replay_read(pb);
    if (!a || !b)
        fail_msg("%s: cannot read %s", what, a ? pb : pa);
    if (strcmp(a, b) != 0) {
        size_t line = 1;
        for (size_t i = 0; a[i] && a[i] == b[i]; i++)
            line += a[i] == '\n';
        fail_msg("%s: %s differs from %s from line %zu", what, pa, pb, line);
    }
    int lines = 0;
    for (const char *c = a; *c; c++)
        lines += *c == '\n';
    if (lines <= min_lines)
        fail_msg("%s: out_jobs.csv has %d lines, expected more than %d", what, lines, min_lines);
    free(a);
    free(b);
    snprintf(pa, sizeof pa, "%s/out_schedule.csv", a_dir);
    snprintf(pb, sizeof pb, "%s/out_schedule.csv", b_dir);
    fbf_test_replay_expect_schedule(pb, pa, what);
}

/* The n-th comma-separated field of line (no quoting in out_schedule.csv),
 * into buf; false past the last. */
static bool csv_field(const char *line, int n, char *buf, size_t cap)
{
    for (; n > 0 && line; n--) {
        size_t k = strcspn(line, ",\n");
        line = line[k] == ',' ? line + k + 1 : NULL;
    }
    if (!line)
        return false;
    size_t k = strcspn(line, ",\n");
    snprintf(buf, cap, "%.*s", (int)k, line);
    return true;
}

void fbf_test_replay_expect_schedule(const char *got_path, const char *want_path,
                                     const char *what)
{
    char *got = fbf_test_replay_read(got_path), *want = fbf_test_replay_read(want_path);
    if (!got || !want)
        fail_msg("%s: cannot read %s", what, got ? want_path : got_path);
    const char *gv = strchr(got, '\n'), *wv = strchr(want, '\n');
    if (!gv || !wv || (size_t)(gv - got) != (size_t)(wv - want) ||
        strncmp(got, want, (size_t)(gv - got)) != 0)
        fail_msg("%s: %s: the header is not %s's:\n%s", what, got_path, want_path, got);
    gv++, wv++;
    char key[64], g[128], w[128];
    for (int c = 0; csv_field(got, c, key, sizeof key); c++) {
        bool hg = csv_field(gv, c, g, sizeof g), hw = csv_field(wv, c, w, sizeof w);
        if (!hg || !hw)
            fail_msg("%s: %s: no value for %s", what, hg ? want_path : got_path, key);
        if (strcmp(key, "batsim_version") == 0) {
            if (strncmp(g, "fastbf-replay ", 14) != 0 || !g[14])
                fail_msg("%s: %s: batsim_version '%s'", what, got_path, g);
        } else if (strcmp(key, "scheduling_time") == 0 || strcmp(key, "simulation_time") == 0) {
            char *end;
            const char *dot = strchr(g, '.');
            if (!(strtod(g, &end) >= 0) || *end || !dot || strlen(dot) != 7)
                fail_msg("%s: %s: %s '%s' is not a \"%%f\" time", what, got_path, key, g);
        } else if (strcmp(g, w) != 0) {
            fail_msg("%s: %s: %s is %s, %s has %s", what, got_path, key, g, want_path, w);
        }
    }
    if (csv_field(gv, 26, g, sizeof g) || !csv_field(gv, 25, g, sizeof g))
        fail_msg("%s: %s: not 26 values", what, got_path);
    free(got);
    free(want);
}

int fbf_test_replay_run(const char *const *args, int timeout_ms, char **out, char **err)
{
    return fbf_test_run_program(fbf_test_replay_path(), args, timeout_ms, out, err);
}

int fbf_test_run_program(const char *path, const char *const *args, int timeout_ms, char **out,
                         char **err)
{
    char opath[64], epath[64];
    fbf_test_temp_name(opath, sizeof opath, "/tmp/fbf-replay-out-");
    fbf_test_temp_name(epath, sizeof epath, "/tmp/fbf-replay-err-");
    int ofd = mkstemp(opath), efd = mkstemp(epath);
    size_t n = 0;
    while (args && args[n])
        n++;
    const char **argv = calloc(n + 2, sizeof *argv);
    argv[0] = path;
    for (size_t i = 0; i < n; i++)
        argv[i + 1] = args[i];
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(ofd, 1);
        dup2(efd, 2);
        execv(argv[0], (char *const *)argv);
        _exit(126);
    }
    free(argv);
    close(ofd);
    close(efd);
    int status = 0, rc = -1;
    for (int waited = 0;; waited += 5) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            break;
        }
        if (waited >= timeout_ms) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            break;
        }
        usleep(5000);
    }
    if (out)
        *out = fbf_test_replay_read(opath);
    if (err)
        *err = fbf_test_replay_read(epath);
    unlink(opath);
    unlink(epath);
    return rc;
}

int fbf_test_replay_write(const char *path, const char *text, int gz)
{
    if (gz) {
        gzFile f = gzopen(path, "wb");
        if (!f)
            return -errno;
        int ok = gzputs(f, text) >= 0;
        return gzclose(f) == Z_OK && ok ? 0 : -EIO;
    }
    FILE *f = fopen(path, "w");
    if (!f)
        return -errno;
    fputs(text, f);
    return fclose(f) == 0 ? 0 : -EIO;
}

char *fbf_test_replay_tmpdir(void)
{
    char tmpl[64];
    fbf_test_temp_name(tmpl, sizeof tmpl, "/tmp/fbf-replay-test-");
    return mkdtemp(tmpl) ? strdup(tmpl) : NULL;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

void fbf_test_replay_rmdir(char *dir)
{
    if (dir)
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

char *fbf_test_replay_csv_text(const char *dir, const char *job, int col)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/out_jobs.csv", dir);
    char *text = fbf_test_replay_read(path);
    if (!text)
        return NULL;
    char *res = NULL;
    size_t jl = strlen(job);
    for (char *line = text; line && *line && !res;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (strncmp(line, job, jl) == 0 && line[jl] == ',') {
            /* Fields may be quoted ("" inside is one quote), commas and all. */
            char *f = line;
            for (int c = 0; c <= col && f; c++) {
                char buf[4096];
                size_t n = 0;
                bool q = *f == '"';
                char *p = f + q;
                for (; *p && (q || *p != ','); p++) {
                    if (q && *p == '"') {
                        if (p[1] != '"') {
                            q = false;
                            continue;
                        }
                        p++;
                    }
                    if (n + 1 < sizeof buf)
                        buf[n++] = *p;
                }
                buf[n] = '\0';
                if (c == col)
                    res = strdup(buf);
                f = *p == ',' ? p + 1 : NULL;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    return res;
}

double fbf_test_replay_csv(const char *dir, const char *job, int col)
{
    char *t = fbf_test_replay_csv_text(dir, job, col);
    double v = t ? strtod(t, NULL) : NAN;
    free(t);
    return v;
}

double fbf_test_replay_summary(const char *dir, const char *key)
{
    char path[4096], k[256];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    char *text = fbf_test_replay_read(path);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    free(text);
    snprintf(k, sizeof k, "%s", key);
    cJSON *node = root;
    for (char *part = strtok(k, "."); part && node; part = strtok(NULL, "."))
        node = cJSON_GetObjectItemCaseSensitive(node, part);
    double v = cJSON_IsNumber(node) ? node->valuedouble : NAN;
    cJSON_Delete(root);
    return v;
}

void fbf_test_replay_expect(const char *const *args, int timeout_ms, int rc, const char *needle,
                            bool on_stdout)
{
    char *out = NULL, *err = NULL;
    int got = fbf_test_replay_run(args, timeout_ms, &out, &err);
    if (got != rc)
        fail_msg("exit %d, expected %d; stderr:\n%s", got, rc, err);
    const char *hay = on_stdout ? out : err;
    if (needle && (!hay || !strstr(hay, needle)))
        fail_msg("expected '%s' in:\n%s", needle, hay ? hay : "(null)");
    free(out);
    free(err);
}

int fbf_test_replay_require_fastbf(void)
{
    if (access(fbf_test_replay_fastbf_path(), X_OK) == 0)
        return 0;
    fprintf(stderr, "fastbf not built at %s\n", fbf_test_replay_fastbf_path());
    return 1;
}

char *fbf_test_drop_announce(char *err)
{
    for (char *line = err; line && *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
        if (strncmp(line, "fastbf: ", 8) == 0 &&
            (memmem(line, len, " listening on ", 14) || memmem(line, len, " connected to ", 14))) {
            memmove(line, line + len, strlen(line + len) + 1);
            break;
        }
        line += len;
    }
    return err;
}
