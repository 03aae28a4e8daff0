// session_bench: one Batsim v4 request holding 100k JOB_SUBMITTED events,
// handled in process by fbf_bv4_session_handle (io/bv4_session.c).
//
// The request is the shape Batsim sends when a burst of jobs shares a
// timestamp: {"now":1,"events":[{"timestamp":1,"type":"JOB_SUBMITTED",
// "data":{"job_id":"w0!i","job":{"id":"w0!i","subtime":1,"walltime":W,
// "res":R,"profile":"p"}}}, ...]} with R in 1..64 and W in 100..10000 s
// (fixed seed). It is built once, outside the timing.
//
//   BM_SessionSubmitBurst   parse (cJSON), validate, apply 100k submissions
//       to a fresh fcfs engine on 1024 resources, run the decision pass
//       (a few dozen jobs start) and print the reply. Each iteration gets a
//       fresh session: creating it and its SIMULATION_BEGINS (1024
//       resources) run with the timing paused, as does destroying it.
//       items_per_second = events handled.
//   BM_SessionParseOnly     cJSON_ParseWithLength + cJSON_Delete of the very
//       same text, for scale: the share of the above spent building the
//       JSON tree.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

extern "C" {
#include <cjson/cJSON.h>

#include "io/bv4_session.h"
#include "policies/registry.h"
}

namespace {

constexpr int kEvents = 100000;
constexpr int kResources = 1024;

std::string begins_text(int n)
{
    std::string r;
    for (int i = 0; i < n; i++) {
        if (i)
            r += ',';
        r += "{\"id\":" + std::to_string(i) + ",\"name\":\"h" + std::to_string(i) +
             "\",\"state\":\"idle\",\"properties\":{}}";
    }
    return "{\"now\":0,\"events\":[{\"timestamp\":0,\"type\":\"SIMULATION_BEGINS\",\"data\":{"
           "\"nb_resources\":" + std::to_string(n) + ",\"nb_compute_resources\":" +
           std::to_string(n) +
           ",\"nb_storage_resources\":0,\"config\":{},\"compute_resources\":[" + r +
           "],\"storage_resources\":[],\"workloads\":{},\"profiles\":{}}}]}";
}

std::string burst_text(int n)
{
    std::mt19937_64 rng(17);
    std::uniform_int_distribution<int> res(1, 64);
    std::uniform_int_distribution<int> wall(100, 10000);
    std::string m = "{\"now\":1,\"events\":[";
    m.reserve(static_cast<size_t>(n) * 150);
    for (int i = 0; i < n; i++) {
        std::string id = "\"w0!" + std::to_string(i) + "\"";
        if (i)
            m += ',';
        m += "{\"timestamp\":1,\"type\":\"JOB_SUBMITTED\",\"data\":{\"job_id\":" + id +
             ",\"job\":{\"id\":" + id + ",\"subtime\":1,\"walltime\":" +
             std::to_string(wall(rng)) + ",\"res\":" + std::to_string(res(rng)) +
             ",\"profile\":\"p\"}}}";
    }
    m += "]}";
    return m;
}

const std::string &begins()
{
    static const std::string s = begins_text(kResources);
    return s;
}

const std::string &burst()
{
    static const std::string s = burst_text(kEvents);
    return s;
}

fbf_bv4_session *fresh_session()
{
    const fbf_policy_entry *pe = fbf_policy_lookup("fcfs");
    if (!pe)
        std::abort();
    fbf_bv4_options o{};
    o.engine.policy = pe->ops;
    o.engine.reservation_depth = pe->default_depth;
    o.engine.workers = 1;
    o.log = nullptr;
    fbf_error err;
    fbf_bv4_session *s = fbf_bv4_session_create(&o, &err);
    const char *reply;
    size_t len;
    if (!s || fbf_bv4_session_handle(s, begins().data(), begins().size(), &reply, &len, &err) != 0)
        std::abort();
    return s;
}

void BM_SessionSubmitBurst(benchmark::State &state)
{
    const std::string &msg = burst();
    size_t reply_len = 0;
    for (auto _ : state) {
        state.PauseTiming();
        fbf_bv4_session *s = fresh_session();
        state.ResumeTiming();
        const char *reply;
        fbf_error err;
        if (fbf_bv4_session_handle(s, msg.data(), msg.size(), &reply, &reply_len, &err) != 0) {
            state.SkipWithError(err.text);
            break;
        }
        benchmark::DoNotOptimize(reply);
        state.PauseTiming();
        if (fbf_engine_nb_waiting(fbf_bv4_session_engine(s)) +
                fbf_engine_nb_running(fbf_bv4_session_engine(s)) !=
            static_cast<size_t>(kEvents))
            std::abort();
        fbf_bv4_session_destroy(s);
        state.ResumeTiming();
    }
    state.SetItemsProcessed(state.iterations() * kEvents);
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(msg.size()));
    state.counters["reply_bytes"] = static_cast<double>(reply_len);
}

void BM_SessionParseOnly(benchmark::State &state)
{
    const std::string &msg = burst();
    for (auto _ : state) {
        cJSON *root = cJSON_ParseWithLength(msg.data(), msg.size());
        if (!root)
            std::abort();
        benchmark::DoNotOptimize(root);
        cJSON_Delete(root);
    }
    state.SetItemsProcessed(state.iterations() * kEvents);
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(msg.size()));
}

}  // namespace

BENCHMARK(BM_SessionSubmitBurst)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SessionParseOnly)->Unit(benchmark::kMillisecond);
