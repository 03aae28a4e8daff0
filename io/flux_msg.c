/*
 * flux_msg: RFC 3's frames (see flux_msg.h).
 */
#include "io/flux_msg.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

const char *fbf_flux_type_name(uint8_t type, char buf[16])
{
    switch (type) {
    case FBF_FLUX_REQUEST: return "request";
    case FBF_FLUX_RESPONSE: return "response";
    case FBF_FLUX_EVENT: return "event";
    case FBF_FLUX_CONTROL: return "control";
    }
    snprintf(buf, 16, "type 0x%02x", type);
    return buf;
}

static bool topic_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
}

int fbf_flux_msg_decode_proto(fbf_flux_msg *m, const void *data, size_t len, fbf_error *err)
{
    *m = (fbf_flux_msg){0};
    const unsigned char *p = data;
    if (len != FBF_FLUX_PROTO_SIZE)
        return fbf_errorf(err, -EPROTO, "PROTO frame (the last): %zu bytes, RFC 3's is %d", len,
                          FBF_FLUX_PROTO_SIZE);
    if (p[0] != FBF_FLUX_MAGIC)
        return fbf_errorf(err, -EPROTO, "PROTO frame: magic 0x%02x, RFC 3's is 0x%02x", p[0],
                          FBF_FLUX_MAGIC);
    if (p[1] != FBF_FLUX_VERSION)
        return fbf_errorf(err, -EPROTO, "PROTO frame: version %u, fastbf reads version %d",
                          p[1], FBF_FLUX_VERSION);
    m->type = p[2];
    m->flags = p[3];
    m->userid = be32(p + 4);
    m->rolemask = be32(p + 8);
    m->aux1 = be32(p + 12);
    m->matchtag = be32(p + 16);
    if (m->type != FBF_FLUX_REQUEST && m->type != FBF_FLUX_RESPONSE &&
        m->type != FBF_FLUX_EVENT && m->type != FBF_FLUX_CONTROL)
        return fbf_errorf(err, -EPROTO, "PROTO frame: type 0x%02x is none of request (0x01), "
                          "response (0x02), event (0x04), control (0x08)", m->type);
    if (m->flags & FBF_FLUX_F_ROUTE)
        return fbf_errorf(err, -EPROTO, "PROTO frame: flag route (0x08): route frames are not "
                          "used on this socket");
    return 0;
}

int fbf_flux_msg_decode(fbf_flux_msg *m, const void *const *data, const size_t *len, size_t n,
                        fbf_error *err)
{
    *m = (fbf_flux_msg){0};
    if (n == 0)
        return fbf_errorf(err, -EPROTO, "an empty message: RFC 3 wants a PROTO frame last");
    if (n > 3)
        return fbf_errorf(err, -EPROTO, "a message of more than 3 frames: at most a topic, a "
                          "payload and the PROTO frame (route frames are not used here)");
    int rc = fbf_flux_msg_decode_proto(m, data[n - 1], len[n - 1], err);
    if (rc < 0)
        return rc;
    bool topic = m->flags & FBF_FLUX_F_TOPIC, payload = m->flags & FBF_FLUX_F_PAYLOAD;
    size_t want = 1 + (size_t)topic + (size_t)payload;
    if (n != want)
        return fbf_errorf(err, -EPROTO, "PROTO frame: flags 0x%02x say %s%s%sthen PROTO (%zu "
                          "frames), the message has %zu", m->flags, topic ? "a topic, " : "",
                          payload ? "a payload, " : "", !topic && !payload ? "nothing " : "",
                          want, n);
    size_t i = 0;
    if (topic) {
        const char *t = data[i];
        size_t tl = len[i++];
        if (tl == 0 || tl > FBF_FLUX_TOPIC_MAX)
            return fbf_errorf(err, -EPROTO, "topic frame: %zu bytes, a topic has 1 to %d", tl,
                              FBF_FLUX_TOPIC_MAX);
        for (size_t k = 0; k < tl; k++)
            if (!topic_char(t[k]))
                return fbf_errorf(err, -EPROTO, "topic frame: byte %zu (0x%02x) is not a topic "
                                  "character ([A-Za-z0-9._-])", k, (unsigned char)t[k]);
        m->topic = t;
        m->topic_len = tl;
    }
    if (payload) {
        const char *s = data[i];
        size_t pl = len[i];
        if (pl > 0 && s[pl - 1] == '\0')
            pl--; /* Flux's strings carry their NUL */
        const char *nul = memchr(s, '\0', pl);
        if (nul)
            return fbf_errorf(err, -EPROTO, "payload frame: a NUL byte at byte %zu (only a "
                              "last one is allowed)", (size_t)(nul - s));
        m->payload = s;
        m->payload_len = pl;
    }
    return 0;
}

uint8_t fbf_flux_msg_flags(const fbf_flux_msg *m)
{
    uint8_t f = m->flags & (uint8_t) ~(FBF_FLUX_F_TOPIC | FBF_FLUX_F_PAYLOAD);
    if (m->topic)
        f |= FBF_FLUX_F_TOPIC;
    if (m->payload)
        f |= FBF_FLUX_F_PAYLOAD;
    return f;
}

void fbf_flux_msg_proto(const fbf_flux_msg *m, unsigned char out[FBF_FLUX_PROTO_SIZE])
{
    out[0] = FBF_FLUX_MAGIC;
    out[1] = FBF_FLUX_VERSION;
    out[2] = m->type;
    out[3] = m->flags;
    put_be32(out + 4, m->userid);
    put_be32(out + 8, m->rolemask);
    put_be32(out + 12, m->aux1);
    put_be32(out + 16, m->matchtag);
}

bool fbf_flux_msg_is(const fbf_flux_msg *m, const char *t)
{
    size_t n = strlen(t);
    return m->topic && m->topic_len == n && memcmp(m->topic, t, n) == 0;
}

bool fbf_flux_msg_answerable(const void *const *data, const size_t *len, size_t n,
                             fbf_flux_msg *out)
{
    fbf_flux_msg m;
    if (n < 2 || fbf_flux_msg_decode_proto(&m, data[n - 1], len[n - 1], NULL) < 0 ||
        m.type != FBF_FLUX_REQUEST || (m.flags & FBF_FLUX_F_NORESPONSE))
        return false;
    /* The first frame read as a topic, alone before a PROTO frame. */
    fbf_flux_msg t, probe = {.type = FBF_FLUX_REQUEST, .flags = FBF_FLUX_F_TOPIC};
    unsigned char proto[FBF_FLUX_PROTO_SIZE];
    fbf_flux_msg_proto(&probe, proto);
    const void *f[2] = {data[0], proto};
    size_t l[2] = {len[0], FBF_FLUX_PROTO_SIZE};
    if (fbf_flux_msg_decode(&t, f, l, 2, NULL) < 0)
        return false;
    m.topic = t.topic;
    m.topic_len = t.topic_len;
    *out = m;
    return true;
}
