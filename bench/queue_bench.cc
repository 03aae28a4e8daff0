// queue_bench: micro-benchmarks of the job store (engine/jobs.c) and the
// partitioned waiting queue (engine/queue.c) with 1e3 .. 1e6 jobs. Every
// figure is per job (items_per_second).
//
//   BM_JobsAdd/N          a fresh store, N fbf_jobs_add of ids "w0!i"
//                         (creating the store is timed, destroying it not).
//   BM_JobsFind/N         fbf_jobs_find of a random known id in a store of
//                         N jobs (ids drawn from a pre-shuffled list).
//   BM_PartitionInsert*/N one partition re-filled with all N jobs of a
//                         store per iteration, keys (subtime, seq):
//       InOrder     arrivals in key order: every insert lands at the tail;
//       NearOrder   subtime = i + U[0, 16): a job lands a few places
//                   before the tail (the backward walk is short);
//       Shuffled    arrivals in random order: the walk back from the tail
//                   is O(N) per insert, O(N^2) per fill (1e3, 1e4 only).
//   BM_QueueIterMerged/N/P  a full fbf_queue_iter walk over N waiting jobs
//                         spread over P = 1, 4, 16 partitions (seq % P, as
//                         the engine spreads them); the merge picks the
//                         smallest of P cursors for every job.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "engine/jobs.h"
#include "engine/queue.h"
}

namespace {

constexpr int64_t kMaxJobs = 1000000;

const std::vector<std::string> &ids()
{
    static std::vector<std::string> v = [] {
        std::vector<std::string> r(kMaxJobs);
        for (int64_t i = 0; i < kMaxJobs; i++)
            r[i] = "w0!" + std::to_string(i);
        return r;
    }();
    return v;
}

struct Store {
    fbf_jobs *js = nullptr;
    ~Store() { fbf_jobs_destroy(js); }
};

// One store of N jobs (handles 0..N-1, ids "w0!0".."w0!N-1") per size,
// built once and shared; benchmarks only rewrite subtimes and links.
fbf_jobs *store(int64_t n)
{
    static std::map<int64_t, std::unique_ptr<Store>> cache;
    auto &slot = cache[n];
    if (!slot) {
        slot = std::make_unique<Store>();
        slot->js = fbf_jobs_create();
        const auto &v = ids();
        for (int64_t i = 0; i < n; i++) {
            fbf_job_h h;
            if (fbf_jobs_add(slot->js, v[i].c_str(), &h) != 0 || h != static_cast<fbf_job_h>(i))
                std::abort();
        }
    }
    return slot->js;
}

void BM_JobsAdd(benchmark::State &state)
{
    const int64_t n = state.range(0);
    const auto &v = ids();
    for (auto _ : state) {
        fbf_jobs *js = fbf_jobs_create();
        for (int64_t i = 0; i < n; i++) {
            fbf_job_h h;
            if (fbf_jobs_add(js, v[i].c_str(), &h) != 0)
                std::abort();
        }
        state.PauseTiming();
        fbf_jobs_destroy(js);
        state.ResumeTiming();
    }
    state.SetItemsProcessed(state.iterations() * n);
}

void BM_JobsFind(benchmark::State &state)
{
    const int64_t n = state.range(0);
    fbf_jobs *js = store(n);
    const auto &v = ids();
    std::mt19937_64 rng(5);
    std::uniform_int_distribution<int64_t> pick(0, n - 1);
    std::vector<const char *> q(4096);
    for (auto &p : q)
        p = v[pick(rng)].c_str();
    size_t i = 0;
    for (auto _ : state) {
        fbf_job_h h = fbf_jobs_find(js, q[i++ & (q.size() - 1)]);
        if (h == FBF_JOB_NONE)
            std::abort();
        benchmark::DoNotOptimize(h);
    }
    state.SetItemsProcessed(state.iterations());
}

enum class Order { kInOrder, kNearOrder, kShuffled };

void partition_insert(benchmark::State &state, Order order)
{
    const int64_t n = state.range(0);
    fbf_jobs *js = store(n);
    std::mt19937_64 rng(9);
    std::uniform_real_distribution<double> jitter(0, 16);
    std::vector<fbf_job_h> arrival(n);
    for (int64_t i = 0; i < n; i++) {
        arrival[i] = static_cast<fbf_job_h>(i);
        fbf_job *j = fbf_jobs_get(js, static_cast<fbf_job_h>(i));
        j->subtime = static_cast<double>(i) + (order == Order::kNearOrder ? jitter(rng) : 0.0);
        j->qkey = j->subtime; // the queue key the engine gives under D1
        j->prev = j->next = FBF_JOB_NONE;
    }
    if (order == Order::kShuffled)
        std::shuffle(arrival.begin(), arrival.end(), rng);
    fbf_partition p;
    for (auto _ : state) {
        fbf_partition_init(&p);
        for (fbf_job_h h : arrival)
            fbf_partition_insert(&p, js, h);
        benchmark::DoNotOptimize(p.head);
    }
    if (p.count != static_cast<size_t>(n))
        std::abort();
    state.SetItemsProcessed(state.iterations() * n);
}

void BM_PartitionInsertInOrder(benchmark::State &state) { partition_insert(state, Order::kInOrder); }
void BM_PartitionInsertNearOrder(benchmark::State &state)
{
    partition_insert(state, Order::kNearOrder);
}
void BM_PartitionInsertShuffled(benchmark::State &state)
{
    partition_insert(state, Order::kShuffled);
}

void BM_QueueIterMerged(benchmark::State &state)
{
    const int64_t n = state.range(0);
    const unsigned np = static_cast<unsigned>(state.range(1));
    fbf_jobs *js = store(n);
    std::vector<fbf_partition> parts(np);
    for (auto &p : parts)
        fbf_partition_init(&p);
    for (int64_t i = 0; i < n; i++) {
        fbf_job *j = fbf_jobs_get(js, static_cast<fbf_job_h>(i));
        j->subtime = static_cast<double>(i / 8); // ties broken by seq, as in bursts
        j->qkey = j->subtime;
        j->prev = j->next = FBF_JOB_NONE;
    }
    for (int64_t i = 0; i < n; i++)
        fbf_partition_insert(&parts[i % np], js, static_cast<fbf_job_h>(i));
    std::vector<fbf_job_h> cur(np);
    for (auto _ : state) {
        fbf_queue_iter it;
        fbf_queue_iter_init(&it, parts.data(), np, cur.data());
        int64_t k = 0;
        for (fbf_job_h h; (h = fbf_queue_iter_next(&it, js)) != FBF_JOB_NONE;) {
            benchmark::DoNotOptimize(h);
            k++;
        }
        if (k != n)
            std::abort();
    }
    state.SetItemsProcessed(state.iterations() * n);
}

}  // namespace

BENCHMARK(BM_JobsAdd)->Arg(1000)->Arg(10000)->Arg(100000)->Arg(1000000);
BENCHMARK(BM_JobsFind)->Arg(1000)->Arg(10000)->Arg(100000)->Arg(1000000);
BENCHMARK(BM_PartitionInsertInOrder)->Arg(1000)->Arg(10000)->Arg(100000)->Arg(1000000);
BENCHMARK(BM_PartitionInsertNearOrder)->Arg(1000)->Arg(10000)->Arg(100000)->Arg(1000000);
BENCHMARK(BM_PartitionInsertShuffled)->Arg(1000)->Arg(10000);
BENCHMARK(BM_QueueIterMerged)
    ->ArgNames({"jobs", "parts"})
    ->ArgsProduct({{100000, 1000000}, {1, 4, 16}});
