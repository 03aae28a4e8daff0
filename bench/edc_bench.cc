// edc_bench: the scheduler's own time per exchange of a whole replay, for
// the paths Batsim 5 and Batsim v4 take into fastbf, without the peer's
// costs: a recorded conversation (fastbf-replay --record) is fed again to
// a fresh EDC or session, and only fastbf's calls are timed. Same
// decisions as when it was recorded, since fastbf is deterministic (each
// reply is checked against the recording, outside the timing).
//
//   BM_EdcJson      fbf_bv5_edc_take() (what batsim_edc_take_decisions
//                   runs) on the recorded Batsim 5 JSON messages
//   BM_EdcBinary    the same on their flatbuffers binary form (converted
//                   once, outside the timing); replies are converted back
//                   to JSON for the check, outside the timing
//   BM_V4Session    fbf_bv4_session_handle() (fastbf-replay --inproc) on
//                   the recorded Batsim v4 messages
//
// Inputs: FBF_EDC_RECORD and FBF_V4_RECORD name the recordings
// (bench/edc_cost.sh makes them from a trace); a benchmark without its
// file is skipped. items_per_second = jobs submitted in the conversation
// per second of fastbf's time; us_per_call is per exchange.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "io/bv4_session.h"
#include "io/bv5_edc.h"
#include "io/bv5_fb.h"
#include "policies/registry.h"
}

namespace {

struct Conversation {
    std::string init;
    std::vector<std::string> requests, replies;
    long jobs = 0;
    bool ok = false;
};

std::string unescape(const std::string &s)
{
    std::string r;
    r.reserve(s.size());
    for (size_t i = 0; i < s.size(); i++) {
        if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == 'n') {
            r += '\n';
            i++;
        } else {
            r += s[i];
        }
    }
    return r;
}

long count(const std::string &s, const char *needle)
{
    long n = 0;
    for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1))
        n++;
    return n;
}

// v5: the first request is the init string, its reply the hello.
Conversation load(const char *env, bool v5)
{
    Conversation c;
    const char *path = std::getenv(env);
    FILE *f = path ? std::fopen(path, "r") : nullptr;
    if (!f)
        return c;
    std::string line;
    char buf[1 << 16];
    bool first = true;
    while (std::fgets(buf, sizeof buf, f)) {
        line += buf;
        if (line.empty() || line.back() != '\n')
            continue;
        line.pop_back();
        std::string text = unescape(line.substr(2));
        if (line[0] == '>') {
            if (v5 && first)
                c.init = text;
            else
                c.requests.push_back(text);
        } else if (!(v5 && first)) {
            c.replies.push_back(text);
        } else {
            first = false;
        }
        line.clear();
    }
    std::fclose(f);
    for (const std::string &r : c.requests)
        c.jobs += count(r, v5 ? "\"JobSubmittedEvent\"" : "\"JOB_SUBMITTED\"");
    c.ok = !c.requests.empty() && c.requests.size() == c.replies.size();
    return c;
}

const Conversation &v5_conversation()
{
    static const Conversation c = load("FBF_EDC_RECORD", true);
    return c;
}

const Conversation &v4_conversation()
{
    static const Conversation c = load("FBF_V4_RECORD", false);
    return c;
}

fbf_power_config power_defaults()
{
    return fbf_power_config_default();
}

void run_edc(benchmark::State &state, uint32_t format)
{
    const Conversation &c = v5_conversation();
    if (!c.ok) {
        state.SkipWithError("FBF_EDC_RECORD: no Batsim 5 recording (bench/edc_cost.sh)");
        return;
    }
    bool binary = format == FBF_BV5_FORMAT_BINARY;
    fbf_bv5_fb *conv = fbf_bv5_fb_create();
    std::vector<std::string> msgs;
    for (const std::string &r : c.requests) {
        if (!binary) {
            msgs.push_back(r);
            continue;
        }
        const uint8_t *b;
        size_t n;
        fbf_error err;
        if (fbf_bv5_fb_from_json(conv, r.data(), r.size(), &b, &n, &err) < 0) {
            state.SkipWithError(err.text);
            fbf_bv5_fb_destroy(conv);
            return;
        }
        msgs.emplace_back(reinterpret_cast<const char *>(b), n);
    }
    fbf_power_config power = power_defaults();
    const fbf_policy_entry *pe = fbf_policy_lookup("easy");
    double calls = 0;
    for (auto _ : state) {
        state.PauseTiming();
        fbf_bv5_options o{};
        o.session.engine.policy = pe->ops;
        o.session.engine.reservation_depth = pe->default_depth;
        o.session.engine.workers = 1;
        o.session.call_margin = 1e-3;
        o.session.call_per_event = 2e-5;
        o.session.power = &power;
        o.format = format;
        fbf_error err;
        fbf_bv5_edc *e = fbf_bv5_edc_create(&o, &err);
        const uint8_t *hello;
        size_t hl;
        if (!e || fbf_bv5_edc_hello(e, &hello, &hl, &err) < 0) {
            state.SkipWithError(err.text);
            break;
        }
        state.ResumeTiming();
        for (size_t i = 0; i < msgs.size(); i++) {
            const uint8_t *reply;
            size_t len;
            if (fbf_bv5_edc_take(e, reinterpret_cast<const uint8_t *>(msgs[i].data()),
                                 msgs[i].size(), &reply, &len, &err) < 0) {
                state.SkipWithError(err.text);
                break;
            }
            benchmark::DoNotOptimize(reply);
            if (i % 997 == 0) { // a sample of the replies against the recording
                state.PauseTiming();
                const char *json = reinterpret_cast<const char *>(reply);
                size_t jl = len;
                if (binary && fbf_bv5_fb_to_json(conv, reply, len, &json, &jl, &err) < 0)
                    std::abort();
                std::string got(json, jl), want = c.replies[i];
                while (!got.empty() && (got.back() == '\0' || got.back() == '\n'))
                    got.pop_back();
                if (!binary && got != want) {
                    state.SkipWithError("a reply differs from the recording");
                    state.ResumeTiming();
                    break;
                }
                state.ResumeTiming();
            }
        }
        calls += static_cast<double>(msgs.size());
        state.PauseTiming();
        fbf_bv5_edc_destroy(e);
        state.ResumeTiming();
    }
    fbf_bv5_fb_destroy(conv);
    state.SetItemsProcessed(state.iterations() * c.jobs);
    state.counters["us_per_call"] =
        benchmark::Counter(calls * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.counters["calls"] = static_cast<double>(msgs.size());
}

void BM_EdcJson(benchmark::State &state) { run_edc(state, FBF_BV5_FORMAT_JSON); }
void BM_EdcBinary(benchmark::State &state) { run_edc(state, FBF_BV5_FORMAT_BINARY); }

void BM_V4Session(benchmark::State &state)
{
    const Conversation &c = v4_conversation();
    if (!c.ok) {
        state.SkipWithError("FBF_V4_RECORD: no Batsim v4 recording (bench/edc_cost.sh)");
        return;
    }
    const fbf_policy_entry *pe = fbf_policy_lookup("easy");
    fbf_power_config power = power_defaults();
    double calls = 0;
    for (auto _ : state) {
        state.PauseTiming();
        fbf_bv4_options o{};
        o.engine.policy = pe->ops;
        o.engine.reservation_depth = pe->default_depth;
        o.engine.workers = 1;
        o.power = &power;
        fbf_error err;
        fbf_bv4_session *s = fbf_bv4_session_create(&o, &err);
        if (!s) {
            state.SkipWithError(err.text);
            break;
        }
        state.ResumeTiming();
        for (size_t i = 0; i < c.requests.size(); i++) {
            const char *reply;
            size_t len;
            if (fbf_bv4_session_handle(s, c.requests[i].data(), c.requests[i].size(), &reply,
                                       &len, &err) < 0) {
                state.SkipWithError(err.text);
                break;
            }
            benchmark::DoNotOptimize(reply);
        }
        calls += static_cast<double>(c.requests.size());
        state.PauseTiming();
        fbf_bv4_session_destroy(s);
        state.ResumeTiming();
    }
    state.SetItemsProcessed(state.iterations() * c.jobs);
    state.counters["us_per_call"] =
        benchmark::Counter(calls * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.counters["calls"] = static_cast<double>(c.requests.size());
}

} // namespace

BENCHMARK(BM_EdcJson)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EdcBinary)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_V4Session)->Unit(benchmark::kMillisecond);
