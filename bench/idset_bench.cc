// idset_bench: micro-benchmarks of resource-id sets (engine/idset.c).
//
//   BM_IdsetParse/R, BM_IdsetFormat/R   a set of R disjoint ranges
//       (R = 1, 10, 1000), in the canonical text Batsim sends and reads
//       back ("0-3 8-11 ..."); items = ranges, bytes = text length.
//   BM_IdsetTakeUnion/C/n   one start/complete cycle of a job of n
//       resources: fbf_idset_take_lowest(free, n) then fbf_idset_union
//       back, on the free set of a platform of C resources (1024, 65536)
//       fragmented by running jobs: free and busy runs of 1..8 ids
//       alternate, so the free set holds about C/9 ranges, as it does on a
//       platform that has been scheduling for a while. The cycle leaves
//       the free set as it found it.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "engine/idset.h"
}

namespace {

// R ranges of 1..4 ids separated by gaps of 1..4 ids, as canonical text.
std::string ranges_text(int64_t r)
{
    std::mt19937_64 rng(1);
    std::uniform_int_distribution<uint32_t> len(1, 4);
    std::string s;
    uint32_t id = 0;
    for (int64_t i = 0; i < r; i++) {
        uint32_t lo = id, hi = id + len(rng) - 1;
        if (i)
            s += ' ';
        s += std::to_string(lo);
        if (hi > lo)
            s += '-' + std::to_string(hi);
        id = hi + 1 + len(rng); // a gap of at least one id: ranges stay maximal
    }
    return s;
}

void BM_IdsetParse(benchmark::State &state)
{
    const std::string text = ranges_text(state.range(0));
    fbf_idset s;
    fbf_idset_init(&s);
    fbf_error err;
    for (auto _ : state) {
        if (fbf_idset_parse(&s, text.c_str(), &err) != 0)
            std::abort();
        benchmark::DoNotOptimize(s.r);
    }
    if (s.n != static_cast<uint32_t>(state.range(0)))
        std::abort();
    fbf_idset_fini(&s);
    state.SetItemsProcessed(state.iterations() * state.range(0));
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}

void BM_IdsetFormat(benchmark::State &state)
{
    const std::string text = ranges_text(state.range(0));
    fbf_idset s;
    fbf_idset_init(&s);
    if (fbf_idset_parse(&s, text.c_str(), nullptr) != 0)
        std::abort();
    std::vector<char> buf(text.size() + 1);
    for (auto _ : state) {
        size_t n = fbf_idset_format(&s, buf.data(), buf.size());
        benchmark::DoNotOptimize(n);
        benchmark::ClobberMemory();
    }
    if (text != buf.data())
        std::abort();
    fbf_idset_fini(&s);
    state.SetItemsProcessed(state.iterations() * state.range(0));
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}

void BM_IdsetTakeUnion(benchmark::State &state)
{
    const uint32_t capacity = static_cast<uint32_t>(state.range(0));
    const uint32_t n = static_cast<uint32_t>(state.range(1));
    std::mt19937_64 rng(3);
    std::uniform_int_distribution<uint32_t> run(1, 8);
    fbf_idset freeset, out;
    fbf_idset_init(&freeset);
    fbf_idset_init(&out);
    for (uint32_t id = 0; id < capacity;) {
        uint32_t hi = std::min(capacity - 1, id + run(rng) - 1);
        if (fbf_idset_add_range(&freeset, id, hi) != 0)
            std::abort();
        id = hi + 1 + run(rng); // busy run
    }
    const uint32_t ranges = freeset.n;
    const uint64_t count = fbf_idset_count(&freeset);
    for (auto _ : state) {
        if (fbf_idset_take_lowest(&freeset, n, &out) != 0 || fbf_idset_union(&freeset, &out) != 0)
            std::abort();
    }
    if (freeset.n != ranges || fbf_idset_count(&freeset) != count)
        std::abort();
    state.counters["free_ranges"] = static_cast<double>(ranges);
    state.counters["free_ids"] = static_cast<double>(count);
    fbf_idset_fini(&freeset);
    fbf_idset_fini(&out);
}

}  // namespace

BENCHMARK(BM_IdsetParse)->Arg(1)->Arg(10)->Arg(1000);
BENCHMARK(BM_IdsetFormat)->Arg(1)->Arg(10)->Arg(1000);
BENCHMARK(BM_IdsetTakeUnion)
    ->ArgNames({"capacity", "n"})
    ->Args({1024, 1})
    ->Args({1024, 32})
    ->Args({65536, 1})
    ->Args({65536, 32});
