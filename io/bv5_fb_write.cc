/*
 * bv5_fb_write: batprotocol's flatbuffers binary format, writing, and the
 * conversions to and from JSON (see bv5_fb.h).
 */
#include "io/bv5_fb_int.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>

#include "io/batprotocol_bfbs_generated.h"

/* io/bv5_edc.h: both formats write call times so. */
extern "C" uint64_t fbf_bv5_call_ms(double at);

namespace fb = batprotocol::fb;
using flatbuffers::Offset;

namespace {

/* ---------- writing ---------- */

struct writer {
    fbf_bv5_fb *f;
    double now;
    void add(fb::Event type, Offset<void> ev)
    {
        f->events.push_back(fb::CreateEventAndTimestamp(f->b, now, type, ev));
    }
    Offset<flatbuffers::String> hosts(const fbf_idset *s)
    {
        fbf_jbuf_reset(&f->scratch);
        fbf_jbuf_ranges(&f->scratch, s->r, s->n);
        if (f->scratch.oom)
            throw std::bad_alloc();
        return f->b.CreateString(f->scratch.p, f->scratch.len);
    }
    void begin()
    {
        f->b.Clear();
        f->events.clear();
    }
    void finish(const uint8_t **msg, size_t *len)
    {
        f->b.Finish(fb::CreateMessage(f->b, now, f->b.CreateVector(f->events)));
        *msg = f->b.GetBufferPointer();
        *len = f->b.GetSize();
    }
};

int put_one(writer &w, const fbf_out *d, size_t left, fbf_engine *engine,
            unsigned long *nb_calls, bool *killed, fbf_error *err)
{
    flatbuffers::FlatBufferBuilder &b = w.f->b;
    auto job_id = [&](const fbf_out *o) {
        return b.CreateString(o->id ? o->id : fbf_engine_job_id(engine, o->job));
    };
    switch (d->kind) {
    case FBF_OUT_EXECUTE: {
        auto id = job_id(d);
        auto hosts = w.hosts(d->machines);
        auto place = fb::CreatePredefinedExecutorPlacementStrategyWrapper(
            b, fb::PredefinedExecutorPlacementStrategy_SpreadOverHostsFirst);
        auto alloc = fb::CreateAllocationPlacement(
            b, hosts, fb::ExecutorPlacement_PredefinedExecutorPlacementStrategyWrapper,
            place.Union());
        w.add(fb::Event_ExecuteJobEvent, fb::CreateExecuteJobEvent(b, id, alloc).Union());
        return 0;
    }
    case FBF_OUT_REJECT: {
        auto id = job_id(d);
        w.add(fb::Event_RejectJobEvent, fb::CreateRejectJobEvent(b, id).Union());
        return 0;
    }
    case FBF_OUT_METADATA: return 0; /* a give-up is its RejectJobEvent */
    case FBF_OUT_KILL: {
        if (*killed)
            return 0;
        *killed = true;
        std::vector<Offset<flatbuffers::String>> &ids = w.f->ids;
        ids.clear();
        for (size_t i = 0; i < left; i++)
            if (d[i].kind == FBF_OUT_KILL)
                ids.push_back(job_id(&d[i]));
        auto v = b.CreateVector(ids);
        w.add(fb::Event_KillJobsEvent, fb::CreateKillJobsEvent(b, v).Union());
        return 0;
    }
    case FBF_OUT_SET_STATE: {
        auto hosts = w.hosts(d->machines);
        w.add(fb::Event_ChangeHostsPStateEvent,
              fb::CreateChangeHostsPStateEvent(b, hosts, d->pstate).Union());
        return 0;
    }
    case FBF_OUT_CALL_ME_LATER: {
        char name[40];
        snprintf(name, sizeof name, "fastbf-%lu", ++*nb_calls);
        auto id = b.CreateString(name);
        auto when = fb::CreateOneShot(b, fbf_bv5_call_ms(d->at), fb::TimeUnit_Millisecond);
        w.add(fb::Event_CallMeLaterEvent,
              fb::CreateCallMeLaterEvent(b, id, fb::TemporalTrigger_OneShot, when.Union())
                  .Union());
        return 0;
    }
    case FBF_OUT_REGISTER_PROFILE: {
        std::string name = std::string(d->workload) + "!" + d->profile;
        auto id = b.CreateString(name);
        auto delay = fb::CreateDelayProfile(b, d->at);
        auto p = fb::CreateProfileAndId(b, id, fb::Profile_DelayProfile, delay.Union());
        w.add(fb::Event_RegisterProfileEvent, fb::CreateRegisterProfileEvent(b, p).Union());
        return 0;
    }
    case FBF_OUT_REGISTER_JOB: {
        const char *bang = strchr(d->id, '!');
        std::string profile =
            std::string(d->id, bang ? static_cast<size_t>(bang - d->id) : 0) + "!" + d->profile;
        auto id = b.CreateString(d->id);
        auto extra = b.CreateString("");
        auto prof = b.CreateString(profile);
        auto job = fb::CreateJob(b, static_cast<uint32_t>(d->res), d->walltime, extra, true,
                                 prof);
        w.add(fb::Event_RegisterJobEvent, fb::CreateRegisterJobEvent(b, id, job).Union());
        return 0;
    }
    case FBF_OUT_NOTIFY:
        if (strcmp(d->text, "registration_finished") == 0) {
            w.add(fb::Event_FinishRegistrationEvent,
                  fb::CreateFinishRegistrationEvent(b).Union());
            return 0;
        }
        break;
    default: break;
    }
    return fbf_errorf(err, -ENOTSUP, "batprotocol cannot carry a decision of kind %d",
                      static_cast<int>(d->kind));
}

/* ---------- conversions ---------- */

int load_schema(fbf_bv5_fb *f, fbf_error *err)
{
    if (f->parser)
        return 0;
    flatbuffers::IDLOptions o;
    o.strict_json = true;                    /* quoted keys, as batprotocol's JSON */
    o.output_default_scalars_in_json = true; /* "now": 0 is a member JSON needs */
    o.indent_step = -1;                      /* one line */
    auto p = std::make_unique<flatbuffers::Parser>(o);
    if (!p->Deserialize(fb::MessageBinarySchema::data(), fb::MessageBinarySchema::size()))
        return fbf_errorf(err, -EPROTO, "flatbuffers: the built-in schema does not load");
    f->parser = std::move(p);
    return 0;
}

/* flatbuffers' messages span lines; fastbf's errors are one. */
int parse_error(const std::string &why, fbf_error *err)
{
    std::string line = why;
    for (char &ch : line)
        if (ch == '\n' || ch == '\r')
            ch = ' ';
    while (!line.empty() && line.back() == ' ')
        line.pop_back();
    return fbf_errorf(err, -EPROTO, "JSON: %s", line.c_str());
}

} // namespace

/* ---------- the C interface: no exception crosses it ---------- */

extern "C" {

int fbf_bv5_fb_hello(fbf_bv5_fb *f, const char *protocol_version, const char *version,
                     bool dynamic, const uint8_t **msg, size_t *len, fbf_error *err)
{
    try {
        writer w{f, 0};
        w.begin();
        flatbuffers::FlatBufferBuilder &b = f->b;
        auto hello = fb::CreateEDCHelloEventDirect(
            b, protocol_version, "fastbf", version, "",
            fb::CreateEDCRequestedSimulationFeatures(b, dynamic, false, false));
        w.add(fb::Event_EDCHelloEvent, hello.Union());
        w.finish(msg, len);
        return 0;
    } catch (const std::bad_alloc &) {
        return fbf_errorf(err, -ENOMEM, "out of memory");
    }
}

int fbf_bv5_fb_reply(fbf_bv5_fb *f, double now, const fbf_out *outs, size_t n,
                     fbf_engine *engine, unsigned long *nb_calls, const uint8_t **msg,
                     size_t *len, fbf_error *err)
{
    try {
        writer w{f, now};
        w.begin();
        bool killed = false;
        for (size_t i = 0; i < n; i++) {
            int rc = put_one(w, &outs[i], n - i, engine, nb_calls, &killed, err);
            if (rc < 0)
                return rc;
        }
        w.finish(msg, len);
        return 0;
    } catch (const std::bad_alloc &) {
        return fbf_errorf(err, -ENOMEM, "out of memory building the reply");
    }
}

const uint8_t *fbf_bv5_fb_refusal(fbf_bv5_fb *f, double now, size_t *len)
{
    try {
        writer w{f, now};
        w.begin();
        w.add(fb::Event_ForceSimulationStopEvent,
              fb::CreateForceSimulationStopEvent(f->b).Union());
        const uint8_t *msg;
        w.finish(&msg, len);
        return msg;
    } catch (const std::bad_alloc &) {
        return nullptr;
    }
}

int fbf_bv5_fb_to_json(fbf_bv5_fb *f, const uint8_t *buf, size_t len, const char **json,
                       size_t *json_len, fbf_error *err)
{
    try {
        int rc = load_schema(f, err);
        if (rc < 0)
            return rc;
        if (len >= FLATBUFFERS_MAX_BUFFER_SIZE ||
            !fbf_bv5_fb_verified(buf = fbf_bv5_fb_aligned(f, buf, len), len))
            return fbf_errorf(err, -EPROTO, "flatbuffers: the message does not verify");
        f->text.clear();
        if (!flatbuffers::GenerateText(*f->parser, buf, &f->text))
            return fbf_errorf(err, -EPROTO, "flatbuffers: the message has no JSON form");
        *json = f->text.c_str();
        *json_len = f->text.size();
        return 0;
    } catch (const std::bad_alloc &) {
        return fbf_errorf(err, -ENOMEM, "out of memory");
    }
}

int fbf_bv5_fb_from_json(fbf_bv5_fb *f, const char *json, size_t len, const uint8_t **buf,
                         size_t *buf_len, fbf_error *err)
{
    try {
        int rc = load_schema(f, err);
        if (rc < 0)
            return rc;
        if (len && json[len - 1] == '\0')
            len--;
        f->text.assign(json, len); /* the parser wants a NUL-terminated text */
        if (!f->parser->ParseJson(f->text.c_str())) {
            rc = parse_error(f->parser->error_, err);
            /* The parser stays: ParseJson clears its builder and its reading
             * state, and each table reads its fields relative to the top of
             * the field stack, so what a refused text leaves mid-table lies
             * below anything a later parse reads. Deserialising the schema
             * again was most of the cost of a refusal; the leftovers are
             * only memory, bounded by a fresh parser every 256 refusals. */
            if (++f->refused % 256 == 0)
                f->parser.reset();
            return rc;
        }
        *buf = f->parser->builder_.GetBufferPointer();
        *buf_len = f->parser->builder_.GetSize();
        return 0;
    } catch (const std::bad_alloc &) {
        return fbf_errorf(err, -ENOMEM, "out of memory");
    }
}

} // extern "C"
