/*
 * batsim_files: a workload as Batsim's workload and platform files (see
 * batsim_files.h).
 */
#include "tools/lib/batsim_files.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/jbuf.h"

/* b's text into path, whole or not at all (a temporary beside it). */
static int write_file(const char *path, const fbf_jbuf *b, fbf_error *err)
{
    if (b->oom)
        return fbf_errorf(err, -ENOMEM, "%s: out of memory", path);
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return fbf_errorf(err, -ENAMETOOLONG, "%s: path too long", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return fbf_errorf(err, -errno, "%s: %s", tmp, strerror(errno));
    size_t n = b->len ? fwrite(b->p, 1, b->len, f) : 0;
    int bad = n != b->len || ferror(f);
    int saved = errno;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    if (bad || rename(tmp, path) != 0) {
        int code = bad ? saved : errno;
        remove(tmp);
        return fbf_errorf(err, -(code ? code : EIO), "%s: %s", path, strerror(code ? code : EIO));
    }
    return 0;
}

int fbf_batsim_write_workload(const fbf_workload *wl, uint32_t nb_res, bool batsim5,
                              const char *path, fbf_batsim_files_stats *st, fbf_error *err)
{
    *st = (fbf_batsim_files_stats){0};
    if (nb_res == 0)
        return fbf_errorf(err, -EINVAL, "%s: no platform size (the workload gives none: pass "
                          "--nb-res N)", path);
    bool *used = calloc(wl->nb_profiles ? wl->nb_profiles : 1, sizeof *used);
    if (!used)
        return fbf_errorf(err, -ENOMEM, "%s: out of memory", path);
    fbf_jbuf b = {0};
    fbf_jbuf_lit(&b, "{\n  \"nb_res\": ");
    fbf_jbuf_int(&b, nb_res);
    fbf_jbuf_lit(&b, ",\n  \"jobs\": [");
    int rc = 0;
    for (size_t i = 0; i < wl->nb_jobs && rc == 0; i++) {
        const fbf_wl_job *j = &wl->jobs[i];
        if (j->res < 1 || j->res > (int64_t)nb_res) {
            rc = fbf_errorf(err, -EINVAL, "%s: job %s asks for %lld resources, outside [1, %u]",
                            path, j->id, (long long)j->res, nb_res);
            break;
        }
        const fbf_wl_profile *p = &wl->profiles[j->profile];
        if (!(p->delay > 0)) {
            st->zero_runtime++;
            continue;
        }
        used[j->profile] = true;
        const char *bang = strchr(j->id, '!');
        if (st->jobs++)
            fbf_jbuf_lit(&b, ",");
        fbf_jbuf_lit(&b, "\n    {\"id\": ");
        fbf_jbuf_str(&b, bang ? bang + 1 : j->id);
        fbf_jbuf_lit(&b, ", \"subtime\": ");
        fbf_jbuf_num(&b, j->subtime);
        if (j->walltime > 0) {
            fbf_jbuf_lit(&b, ", \"walltime\": ");
            fbf_jbuf_num(&b, j->walltime);
        }
        fbf_jbuf_lit(&b, ", \"res\": ");
        fbf_jbuf_int(&b, j->res);
        fbf_jbuf_lit(&b, ", \"profile\": ");
        fbf_jbuf_str(&b, p->name);
        if (j->extra) /* Batsim forwards a job's other fields as they are */
            fbf_jbuf_raw(&b, j->extra, strlen(j->extra));
        fbf_jbuf_lit(&b, "}");
    }
    fbf_jbuf_lit(&b, "\n  ],\n  \"profiles\": {");
    for (size_t k = 0; k < wl->nb_profiles && rc == 0; k++) {
        if (!used[k])
            continue;
        if (st->profiles++)
            fbf_jbuf_lit(&b, ",");
        fbf_jbuf_lit(&b, "\n    ");
        fbf_jbuf_str(&b, wl->profiles[k].name);
        if (batsim5)
            fbf_jbuf_lit(&b, ": {\"type\": \"DelayProfile\", \"delay\": ");
        else
            fbf_jbuf_lit(&b, ": {\"type\": \"delay\", \"delay\": ");
        fbf_jbuf_num(&b, wl->profiles[k].delay);
        fbf_jbuf_lit(&b, "}");
    }
    fbf_jbuf_lit(&b, "\n  }\n}\n");
    if (rc == 0)
        rc = write_file(path, &b, err);
    fbf_jbuf_fini(&b);
    free(used);
    return rc;
}

int fbf_batsim_write_platform(uint32_t nb_res, const char *path, fbf_error *err)
{
    if (nb_res == 0)
        return fbf_errorf(err, -EINVAL, "%s: a platform needs at least one host", path);
    char text[2048];
    int n = snprintf(
        text, sizeof text,
        "<?xml version='1.0'?>\n"
        "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
        "<!-- %u compute hosts and Batsim's master host, written by fastbf-replay "
        "(export-batsim) -->\n"
        "<platform version=\"4.1\">\n"
        "  <zone id=\"world\" routing=\"Full\">\n"
        "    <cluster id=\"compute\" prefix=\"r\" suffix=\"\" radical=\"0-%u\" speed=\"1Gf\"\n"
        "             bw=\"125MBps\" lat=\"50us\" bb_bw=\"2.25GBps\" bb_lat=\"500us\"/>\n"
        "    <cluster id=\"master\" prefix=\"master_host\" suffix=\"\" radical=\"0-0\" "
        "speed=\"1Gf\"\n"
        "             bw=\"125MBps\" lat=\"50us\" bb_bw=\"2.25GBps\" bb_lat=\"500us\">\n"
        "      <prop id=\"role\" value=\"master\"/>\n"
        "    </cluster>\n"
        "    <link id=\"backbone\" bandwidth=\"1.25GBps\" latency=\"500us\"/>\n"
        "    <zoneRoute src=\"compute\" dst=\"master\" gw_src=\"rcompute_router\"\n"
        "               gw_dst=\"master_hostmaster_router\">\n"
        "      <link_ctn id=\"backbone\"/>\n"
        "    </zoneRoute>\n"
        "  </zone>\n"
        "</platform>\n",
        nb_res, nb_res - 1);
    fbf_jbuf b = {0};
    fbf_jbuf_raw(&b, text, (size_t)n);
    int rc = write_file(path, &b, err);
    fbf_jbuf_fini(&b);
    return rc;
}
