/*
 * files: see files.h.
 */
#include "tools/campaign/files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *fbf_cmp_strf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

char *fbf_cmp_join(const char *dir, const char *name)
{
    if (name[0] == '/')
        return strdup(name);
    return fbf_cmp_strf("%s/%s", dir, name);
}

int fbf_cmp_mkdirs(const char *path, fbf_error *err)
{
    char *p = strdup(path);
    if (!p)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    int rc = 0;
    for (char *s = p + 1;; s++) {
        bool last = *s == '\0';
        if (*s != '/' && !last)
            continue;
        *s = '\0';
        if (mkdir(p, 0777) < 0 && errno != EEXIST) {
            rc = fbf_errorf(err, -errno, "cannot create folder '%s': %s", p, strerror(errno));
            break;
        }
        if (last)
            break;
        *s = '/';
    }
    if (!rc) {
        struct stat st;
        if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
            rc = fbf_errorf(err, -ENOTDIR, "'%s' is not a folder", path);
    }
    free(p);
    return rc;
}

static int fsync_dir_of(const char *path)
{
    char *d = strdup(path);
    if (!d)
        return -ENOMEM;
    char *slash = strrchr(d, '/');
    if (slash == d)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        strcpy(d, ".");
    int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(d);
    if (fd < 0)
        return -errno;
    int rc = fsync(fd) < 0 && errno != EINVAL ? -errno : 0;
    close(fd);
    return rc;
}

static int write_renamed(const char *path, const char *data, size_t len, bool durable,
                         fbf_error *err)
{
    char *tmp = fbf_cmp_strf("%s.tmp.%ld", path, (long)getpid());
    if (!tmp)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    int rc = 0;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        rc = fbf_errorf(err, -errno, "cannot write '%s': %s", tmp, strerror(errno));
        free(tmp);
        return rc;
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            rc = fbf_errorf(err, -errno, "cannot write '%s': %s", tmp, strerror(errno));
            break;
        }
        off += (size_t)w;
    }
    if (!rc && durable && fsync(fd) < 0)
        rc = fbf_errorf(err, -errno, "cannot flush '%s': %s", tmp, strerror(errno));
    if (close(fd) < 0 && !rc)
        rc = fbf_errorf(err, -errno, "cannot write '%s': %s", tmp, strerror(errno));
    if (!rc && rename(tmp, path) < 0)
        rc = fbf_errorf(err, -errno, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
    if (rc)
        unlink(tmp);
    else if (durable && fsync_dir_of(path) < 0)
        rc = fbf_errorf(err, -EIO, "cannot flush the folder of '%s'", path);
    free(tmp);
    return rc;
}

int fbf_cmp_write_atomic(const char *path, const char *data, size_t len, fbf_error *err)
{
    return write_renamed(path, data, len, true, err);
}

int fbf_cmp_write_replace(const char *path, const char *data, size_t len, fbf_error *err)
{
    return write_renamed(path, data, len, false, err);
}

char *fbf_cmp_read_file(const char *path, size_t *len, int *code, fbf_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (code)
            *code = -errno;
        fbf_errorf(err, -errno, "cannot read '%s': %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - 1 - n, f);
        if (n < cap - 1)
            break;
        char *b = realloc(buf, cap * 2);
        if (!b) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = b;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        if (code)
            *code = buf ? -EIO : -ENOMEM;
        fbf_errorf(err, -EIO, "cannot read '%s'%s", path, buf ? "" : ": out of memory");
        return NULL;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

bool fbf_cmp_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

char *fbf_cmp_dirname_abs(const char *path, fbf_error *err)
{
    /* The folder as named, not the one a symbolic link to the file points
     * into: paths in a campaign file are relative to where its user put it. */
    char *d = strdup(path);
    if (!d) {
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    char *slash = strrchr(d, '/');
    if (slash == d)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        strcpy(d, ".");
    char *real = realpath(d, NULL);
    if (!real)
        fbf_errorf(err, -errno, "cannot find the folder of '%s': %s", path, strerror(errno));
    free(d);
    return real;
}

char *fbf_cmp_shell_quote(const char *s)
{
    bool plain = *s != '\0';
    for (const char *p = s; *p; p++)
        plain &= (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                 strchr("_./:=,+-@%", *p) != NULL;
    if (plain)
        return strdup(s);
    size_t n = 3;
    for (const char *p = s; *p; p++)
        n += *p == '\'' ? 4 : 1;
    char *q = malloc(n), *o = q;
    if (!q)
        return NULL;
    *o++ = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *p;
        }
    }
    *o++ = '\'';
    *o = '\0';
    return q;
}

char *fbf_cmp_self_exe(void)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    return strdup(buf);
}
