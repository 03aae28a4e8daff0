// profile_bench: micro-benchmarks of the availability profile
// (engine/profile.c) with 1e3 .. 1e6 live reservations.
//
// Workload: capacity 1024; reservations start uniformly over a horizon of
// 100 s per reservation, last 100..2100 s and take 1..128 resources
// (<= capacity/8), which keeps the mean load near 70% of capacity, so
// earliest() has to jump over blocking breakpoints as a backfilling
// scheduler's would. Every size shares one lazily built profile; the add
// and remove benchmarks put it back the way they found it.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <vector>

extern "C" {
#include "engine/profile.h"
}

namespace {

constexpr uint32_t kCapacity = 1024;
constexpr double kSpacing = 100.0;  // horizon per reservation, seconds

// Spans per timing pause in add/remove: large enough to amortise the
// pause, small enough (size/8) that the profile size barely moves.
size_t batch_size(int64_t size)
{
    return std::min<size_t>(128, static_cast<size_t>(size) / 8);
}

struct Span {
    double start, end;
    uint32_t n;
};

struct Fixture {
    fbf_profile *p = nullptr;
    double horizon = 0;
    std::vector<Span> live;
    ~Fixture() { fbf_profile_destroy(p); }
};

Span random_span(std::mt19937_64 &rng, double horizon)
{
    std::uniform_real_distribution<double> start(0, horizon);
    std::uniform_int_distribution<int> len(100, 2099);
    std::uniform_int_distribution<uint32_t> n(1, kCapacity / 8);
    // Whole seconds, as in workload traces: keys repeat, as they do there.
    double s = static_cast<double>(static_cast<int64_t>(start(rng)));
    return Span{s, s + len(rng), n(rng)};
}

Fixture &fixture(int64_t size)
{
    // Building 1e6 reservations takes a while; do it once per size.
    static std::map<int64_t, std::unique_ptr<Fixture>> cache;
    auto &slot = cache[size];
    if (!slot) {
        slot = std::make_unique<Fixture>();
        slot->p = fbf_profile_create(kCapacity);
        slot->horizon = kSpacing * static_cast<double>(size);
        std::mt19937_64 rng(42);
        slot->live.reserve(static_cast<size_t>(size));
        for (int64_t i = 0; i < size; i++) {
            Span s = random_span(rng, slot->horizon);
            if (fbf_profile_add(slot->p, s.start, s.end, s.n) != 0)
                std::abort();
            slot->live.push_back(s);
        }
    }
    return *slot;
}

struct Query {
    double from, d;
    uint32_t n;
};

// 4,096 searches from [0, horizon) for 1..max_n resources during
// min_d..max_d seconds, the same for every build.
std::vector<Query> queries(double horizon, uint32_t max_n, int min_d, int max_d)
{
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> from(0, horizon);
    std::uniform_int_distribution<uint32_t> n(1, max_n);
    std::uniform_int_distribution<int> d(min_d, max_d);
    std::vector<Query> q(4096);
    for (auto &x : q)
        x = Query{from(rng), static_cast<double>(d(rng)), n(rng)};
    return q;
}

void BM_ProfileEarliest(benchmark::State &state)
{
    Fixture &f = fixture(state.range(0));
    std::vector<Query> q = queries(f.horizon, kCapacity / 4, 100, 4099);
    size_t i = 0;
    for (auto _ : state) {
        const Query &x = q[i++ & (q.size() - 1)];
        benchmark::DoNotOptimize(fbf_profile_earliest(f.p, x.from, x.n, x.d));
    }
    state.counters["breakpoints"] = static_cast<double>(fbf_profile_breakpoints(f.p));
}

void BM_ProfileAdd(benchmark::State &state)
{
    Fixture &f = fixture(state.range(0));
    std::mt19937_64 rng(11);
    const size_t nb = batch_size(state.range(0));
    std::vector<Span> batch(nb);
    for (auto &s : batch)
        s = random_span(rng, f.horizon);
    size_t i = 0;
    for (auto _ : state) {
        const Span &s = batch[i];
        benchmark::DoNotOptimize(fbf_profile_add(f.p, s.start, s.end, s.n));
        if (++i == nb) {
            // Undo the batch off the clock so the size stays near range(0).
            state.PauseTiming();
            for (Span &u : batch) {
                fbf_profile_remove(f.p, u.start, u.end, u.n);
                u = random_span(rng, f.horizon); // fresh keys: cold paths
            }
            i = 0;
            state.ResumeTiming();
        }
    }
    for (size_t j = 0; j < i; j++)
        fbf_profile_remove(f.p, batch[j].start, batch[j].end, batch[j].n);
}

void BM_ProfileRemove(benchmark::State &state)
{
    Fixture &f = fixture(state.range(0));
    std::mt19937_64 rng(13);
    // Remove live reservations in a random order, putting each batch back
    // off the clock: the tree keeps the shape a real workload leaves, and
    // consecutive chunks of one permutation never name a span twice.
    std::vector<size_t> perm(f.live.size());
    for (size_t k = 0; k < perm.size(); k++)
        perm[k] = k;
    std::shuffle(perm.begin(), perm.end(), rng);
    const size_t nb = batch_size(state.range(0));
    size_t base = 0, i = 0;
    for (auto _ : state) {
        const Span &s = f.live[perm[base + i]];
        benchmark::DoNotOptimize(fbf_profile_remove(f.p, s.start, s.end, s.n));
        if (++i == nb) {
            state.PauseTiming();
            for (size_t j = 0; j < nb; j++) {
                const Span &u = f.live[perm[base + j]];
                fbf_profile_add(f.p, u.start, u.end, u.n);
            }
            base = base + 2 * nb <= perm.size() ? base + nb : 0;
            i = 0;
            state.ResumeTiming();
        }
    }
    for (size_t j = 0; j < i; j++) {
        const Span &u = f.live[perm[base + j]];
        fbf_profile_add(f.p, u.start, u.end, u.n);
    }
}

// A profile shaped like conservative backfilling's: jobs of 1..64 of 256
// resources, 100..2099 s long, each placed at its earliest fit in the
// profile of those before it, so free() is a mosaic of small islands.
struct Packed {
    fbf_profile *p = nullptr;
    double horizon = 0;
    ~Packed() { fbf_profile_destroy(p); }
};

Packed &packed(int64_t size)
{
    static std::map<int64_t, std::unique_ptr<Packed>> cache;
    auto &slot = cache[size];
    if (!slot) {
        slot = std::make_unique<Packed>();
        slot->p = fbf_profile_create(256);
        std::mt19937_64 rng(42);
        std::uniform_int_distribution<uint32_t> n(1, 64);
        std::uniform_int_distribution<int> len(100, 2099);
        for (int64_t i = 0; i < size; i++) {
            uint32_t r = n(rng);
            double d = len(rng), t = fbf_profile_earliest(slot->p, 0, r, d);
            if (fbf_profile_add(slot->p, t, t + d, r) != 0)
                std::abort();
            slot->horizon = std::max(slot->horizon, t + d);
        }
    }
    return *slot;
}

// A search as compression makes them: from a point of the schedule, for a
// job of 1..64 resources, cut off five walltimes later (INFINITY when
// nothing fits before that).
void BM_ProfileEarliestPacked(benchmark::State &state)
{
    Packed &f = packed(state.range(0));
    std::vector<Query> q = queries(0.9 * f.horizon, 64, 100, 2099);
    size_t i = 0, found = 0;
    for (auto _ : state) {
        const Query &x = q[i++ & (q.size() - 1)];
        double t = fbf_profile_earliest_before(f.p, x.from, x.n, x.d, x.from + 5 * x.d);
        found += t < INFINITY;
        benchmark::DoNotOptimize(t);
    }
    state.counters["breakpoints"] = static_cast<double>(fbf_profile_breakpoints(f.p));
    state.counters["found"] = static_cast<double>(found) / static_cast<double>(i ? i : 1);
}

}  // namespace

BENCHMARK(BM_ProfileEarliestPacked)->Arg(1000)->Arg(10000)->Arg(100000);
BENCHMARK(BM_ProfileEarliest)->Arg(1000)->Arg(10000)->Arg(100000)->Arg(1000000);
BENCHMARK(BM_ProfileAdd)->Arg(1000)->Arg(10000)->Arg(100000)->Arg(1000000);
BENCHMARK(BM_ProfileRemove)->Arg(1000)->Arg(10000)->Arg(100000)->Arg(1000000);
