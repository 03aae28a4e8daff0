/*
 * bv5_fb_kit: Batsim's binary messages for the tests (see bv5_fb_kit.h).
 */
#include "support/bv5_fb_kit.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "io/batprotocol_generated.h"

namespace fb = batprotocol::fb;
using flatbuffers::Offset;

struct fbf_test_fbmsg {
    flatbuffers::FlatBufferBuilder b{1 << 12};
    std::vector<Offset<fb::EventAndTimestamp>> events;
    double now = 0;
    int relabel = -1;
    unsigned omit = 0;
};

namespace {

void add(fbf_test_fbmsg *m, double ts, fb::Event type, Offset<void> table)
{
    int t = m->relabel >= 0 ? m->relabel : static_cast<int>(type);
    fb::EventAndTimestampBuilder e(m->b);
    e.add_timestamp(ts);
    e.add_event_type(static_cast<fb::Event>(t));
    if (!(m->omit & FBF_TEST_FB_NO_TABLE))
        e.add_event(table);
    m->events.push_back(e.Finish());
    m->relabel = -1;
    m->omit = 0;
}

/* Tables built member by member, so that a required one can be left out
 * (the generated builders insist on them). */
struct raw {
    flatbuffers::FlatBufferBuilder &b;
    flatbuffers::uoffset_t start;
    explicit raw(flatbuffers::FlatBufferBuilder &bb) : b(bb), start(bb.StartTable()) {}
    template <typename T> void scalar(flatbuffers::voffset_t f, T v) { b.AddElement<T>(f, v); }
    void ref(flatbuffers::voffset_t f, Offset<void> o) { b.AddOffset(f, o); }
    Offset<void> end() { return Offset<void>(b.EndTable(start)); }
};

} // namespace

extern "C" {

fbf_test_fbmsg *fbf_test_fbmsg_new(void) { return new fbf_test_fbmsg(); }
void fbf_test_fbmsg_free(fbf_test_fbmsg *m) { delete m; }

void fbf_test_fbmsg_start(fbf_test_fbmsg *m, double now)
{
    m->b.Clear();
    m->events.clear();
    m->now = now;
    m->relabel = -1;
    m->omit = 0;
}

int fbf_test_fb_event_type(const char *name)
{
    for (int t = fb::Event_MIN; t <= fb::Event_MAX; t++)
        if (strcmp(fb::EnumNamesEvent()[t], name) == 0)
            return t;
    return -1;
}

void fbf_test_fbmsg_relabel(fbf_test_fbmsg *m, int type) { m->relabel = type; }
void fbf_test_fbmsg_omit(fbf_test_fbmsg *m, unsigned what) { m->omit |= what; }

void fbf_test_fbmsg_begins(fbf_test_fbmsg *m, double ts, uint32_t nb_hosts, uint32_t nb_listed,
                           const int *states, const char *sleep_pstates)
{
    flatbuffers::FlatBufferBuilder &b = m->b;
    std::vector<Offset<fb::Host>> hosts;
    for (uint32_t i = 0; i < nb_listed; i++) {
        auto name = b.CreateString("h" + std::to_string(i));
        Offset<flatbuffers::Vector<Offset<fb::HostProperty>>> props;
        if (sleep_pstates)
            props = b.CreateVector(std::vector<Offset<fb::HostProperty>>{
                fb::CreateHostPropertyDirect(b, "sleep_pstates", sleep_pstates)});
        raw h(b);
        h.scalar<uint32_t>(fb::Host::VT_ID, i);
        if (!(m->omit & FBF_TEST_FB_NO_NAME))
            h.ref(fb::Host::VT_NAME, name.Union());
        h.scalar<int8_t>(fb::Host::VT_STATE, states ? states[i] : fb::HostState_IDLE);
        if (sleep_pstates)
            h.ref(fb::Host::VT_PROPERTIES, props.Union());
        hosts.push_back(Offset<fb::Host>(h.end().o));
    }
    auto list = nb_listed ? b.CreateVector(hosts) : 0;
    auto context = b.CreateString("{}");
    raw e(b);
    e.scalar<uint32_t>(fb::SimulationBeginsEvent::VT_HOST_NUMBER, nb_hosts);
    e.scalar<uint32_t>(fb::SimulationBeginsEvent::VT_COMPUTATION_HOST_NUMBER, nb_hosts);
    if (nb_listed)
        e.ref(fb::SimulationBeginsEvent::VT_COMPUTATION_HOSTS, list.Union());
    if (!(m->omit & FBF_TEST_FB_NO_CONTEXT))
        e.ref(fb::SimulationBeginsEvent::VT_BATSIM_EXECUTION_CONTEXT_JSON, context.Union());
    add(m, ts, fb::Event_SimulationBeginsEvent, e.end());
}

void fbf_test_fbmsg_submitted(fbf_test_fbmsg *m, double ts, const char *id, uint32_t res,
                              double walltime, double subtime)
{
    flatbuffers::FlatBufferBuilder &b = m->b;
    auto sid = b.CreateString(id);
    flatbuffers::Optional<double> wall = flatbuffers::nullopt;
    if (!std::isnan(walltime))
        wall = walltime;
    auto job = fb::CreateJobDirect(b, res, wall, "", true, "w0!delay");
    raw e(b);
    if (!(m->omit & FBF_TEST_FB_NO_JOB_ID))
        e.ref(fb::JobSubmittedEvent::VT_JOB_ID, sid.Union());
    if (!(m->omit & FBF_TEST_FB_NO_JOB))
        e.ref(fb::JobSubmittedEvent::VT_JOB, job.Union());
    e.scalar<double>(fb::JobSubmittedEvent::VT_SUBMISSION_TIME, subtime);
    add(m, ts, fb::Event_JobSubmittedEvent, e.end());
}

void fbf_test_fbmsg_completed(fbf_test_fbmsg *m, double ts, const char *id, int state)
{
    auto sid = m->b.CreateString(id);
    raw e(m->b);
    if (!(m->omit & FBF_TEST_FB_NO_JOB_ID))
        e.ref(fb::JobCompletedEvent::VT_JOB_ID, sid.Union());
    e.scalar<int8_t>(fb::JobCompletedEvent::VT_STATE, static_cast<int8_t>(state));
    add(m, ts, fb::Event_JobCompletedEvent, e.end());
}

void fbf_test_fbmsg_killed(fbf_test_fbmsg *m, double ts, const char *const *ids, size_t n)
{
    flatbuffers::FlatBufferBuilder &b = m->b;
    std::vector<Offset<flatbuffers::String>> v;
    std::vector<Offset<fb::JobAndProgress>> progress;
    for (size_t i = 0; i < n; i++) {
        v.push_back(b.CreateString(ids[i]));
        auto atomic = fb::CreateKillProgressAtomicProfileDirect(b, "w0!delay", 0.5);
        auto wrap = fb::CreateKillProgressWrapper(b, fb::KillProgress_KillProgressAtomicProfile,
                                                  atomic.Union());
        progress.push_back(fb::CreateJobAndProgress(b, v.back(), wrap));
    }
    auto ev = fb::CreateJobsKilledEvent(b, b.CreateVector(v), b.CreateVector(progress));
    add(m, ts, fb::Event_JobsKilledEvent, ev.Union());
}

void fbf_test_fbmsg_called(fbf_test_fbmsg *m, double ts, const char *call_id)
{
    add(m, ts, fb::Event_RequestedCallEvent,
        fb::CreateRequestedCallEventDirect(m->b, call_id).Union());
}

void fbf_test_fbmsg_empty(fbf_test_fbmsg *m, double ts, const char *type)
{
    int t = fbf_test_fb_event_type(type);
    if (t < 0) {
        fprintf(stderr, "bv5_fb_kit: no event type %s\n", type);
        abort();
    }
    raw e(m->b);
    add(m, ts, static_cast<fb::Event>(t), e.end());
}

void fbf_test_fbmsg_pstate(fbf_test_fbmsg *m, double ts, const char *hosts, uint32_t pstate)
{
    auto h = hosts ? m->b.CreateString(hosts) : 0;
    add(m, ts, fb::Event_HostsPStateChangedEvent,
        fb::CreateHostsPStateChangedEvent(m->b, h, pstate).Union());
}

void fbf_test_fbmsg_onoff(fbf_test_fbmsg *m, double ts, const char *hosts, uint32_t state)
{
    auto h = hosts ? m->b.CreateString(hosts) : 0;
    add(m, ts, fb::Event_HostsTurnedOnOffEvent,
        fb::CreateHostsTurnedOnOffEvent(m->b, h, state).Union());
}

const uint8_t *fbf_test_fbmsg_finish(fbf_test_fbmsg *m, bool no_events, size_t *len)
{
    auto v = no_events ? 0 : m->b.CreateVector(m->events);
    m->b.Finish(fb::CreateMessage(m->b, m->now, v));
    *len = m->b.GetSize();
    return m->b.GetBufferPointer();
}

double fbf_test_fb_lines(const uint8_t *buf, size_t len, char *out, size_t cap)
{
    flatbuffers::Verifier v(buf, len);
    if (!fb::VerifyMessageBuffer(v))
        return NAN;
    const fb::Message *msg = fb::GetMessage(buf);
    std::string s;
    char t[64];
    for (const fb::EventAndTimestamp *e : *msg->events()) {
        switch (e->event_type()) {
        case fb::Event_ExecuteJobEvent: {
            const fb::ExecuteJobEvent *x = e->event_as_ExecuteJobEvent();
            s += "E " + x->job_id()->str() + " " + x->allocation()->host_allocation()->str();
            break;
        }
        case fb::Event_RejectJobEvent:
            s += "R " + e->event_as_RejectJobEvent()->job_id()->str();
            break;
        case fb::Event_KillJobsEvent:
            s += "K";
            for (const flatbuffers::String *id : *e->event_as_KillJobsEvent()->job_ids())
                s += " " + id->str();
            break;
        case fb::Event_CallMeLaterEvent: {
            const fb::OneShot *o = e->event_as_CallMeLaterEvent()->when_as_OneShot();
            unsigned long long ms = !o ? 0
                                    : o->time_unit() == fb::TimeUnit_Millisecond ? o->time()
                                                                                 : o->time() * 1000;
            snprintf(t, sizeof t, "C %llu", ms);
            s += t;
            break;
        }
        case fb::Event_ChangeHostsPStateEvent: {
            const fb::ChangeHostsPStateEvent *p = e->event_as_ChangeHostsPStateEvent();
            snprintf(t, sizeof t, " %u", p->pstate());
            s += "P " + p->host_ids()->str() + t;
            break;
        }
        case fb::Event_ForceSimulationStopEvent: s += "F"; break;
        case fb::Event_EDCHelloEvent: {
            const fb::EDCHelloEvent *h = e->event_as_EDCHelloEvent();
            const fb::EDCRequestedSimulationFeatures *f = h->requested_simulation_features();
            s += "H " + h->decision_component_name()->str();
            if (f && f->dynamic_registration())
                s += " d";
            break;
        }
        case fb::Event_RegisterJobEvent: {
            const fb::RegisterJobEvent *j = e->event_as_RegisterJobEvent();
            snprintf(t, sizeof t, " %u %.17g ", j->job()->resource_request(),
                     j->job()->walltime().value_or(-1));
            s += "J " + j->job_id()->str() + t + j->job()->profile_id()->str();
            break;
        }
        case fb::Event_RegisterProfileEvent: {
            const fb::ProfileAndId *p = e->event_as_RegisterProfileEvent()->profile();
            snprintf(t, sizeof t, " %.17g", p->profile_as_DelayProfile()->delay());
            s += "D " + p->id()->str() + t;
            break;
        }
        case fb::Event_FinishRegistrationEvent: s += "Z"; break;
        default: s += std::string("? ") + fb::EnumNameEvent(e->event_type()); break;
        }
        s += "\n";
    }
    snprintf(out + strlen(out), cap - strlen(out), "%s", s.c_str());
    return msg->now();
}

} // extern "C"
