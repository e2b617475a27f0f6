// The CUB peer of gpu-radix's bench: cub::DeviceRadixSort::SortPairs (onesweep on sm_80+) of
// u32 keys with a u32 payload, 2^20..2^26 pairs, keys of 24 and 32 random bits, sorting only the
// key bits asked for (begin_bit 0, end_bit 24 or 32), out of place (the input stays), as
// `cargo bench -p gpu-radix` does in place with its restoring copy subtracted.
// Build and run on the GPU host:
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/cub_sort_pairs benches/peers/cub_sort_pairs.cu
//   /tmp/cub_sort_pairs            (every case)
//   /tmp/cub_sort_pairs BITS LOG2_N  (one case, e.g. under ncu)
// Prints one line per case: bits, log2 n, median ms of 20 timed runs after 3 warm-ups, and the
// workspace CUB asked for.
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

int main(int argc, char** argv) {
    // One case when asked (bits, log2 n), else all of them.
    std::vector<int> bit_cases{24, 32}, n_cases{20, 22, 24, 26};
    if (argc == 3) {
        bit_cases = {std::atoi(argv[1])};
        n_cases = {std::atoi(argv[2])};
    }
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s; CUB %d.%d.%d\n", prop.name, CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION);
    std::printf("bits,log2_n,median_ms,temp_bytes\n");
    std::mt19937 rng(9);
    for (int bits : bit_cases) {
        for (int log_n : n_cases) {
            size_t n = size_t(1) << log_n;
            std::vector<uint32_t> keys(n), vals(n);
            for (size_t i = 0; i < n; ++i) {
                keys[i] = bits == 32 ? rng() : rng() & ((1u << bits) - 1);
                vals[i] = uint32_t(i);
            }
            uint32_t *ki, *ko, *vi, *vo;
            CHECK(cudaMalloc(&ki, n * 4)); CHECK(cudaMalloc(&ko, n * 4));
            CHECK(cudaMalloc(&vi, n * 4)); CHECK(cudaMalloc(&vo, n * 4));
            CHECK(cudaMemcpy(ki, keys.data(), n * 4, cudaMemcpyHostToDevice));
            CHECK(cudaMemcpy(vi, vals.data(), n * 4, cudaMemcpyHostToDevice));
            size_t temp = 0;
            CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp, ki, ko, vi, vo, int(n), 0, bits));
            void* t;
            CHECK(cudaMalloc(&t, temp));
            cudaEvent_t a, b;
            CHECK(cudaEventCreate(&a)); CHECK(cudaEventCreate(&b));
            std::vector<float> ms;
            for (int rep = 0; rep < 23; ++rep) {
                CHECK(cudaEventRecord(a));
                CHECK(cub::DeviceRadixSort::SortPairs(t, temp, ki, ko, vi, vo, int(n), 0, bits));
                CHECK(cudaEventRecord(b));
                CHECK(cudaEventSynchronize(b));
                float x;
                CHECK(cudaEventElapsedTime(&x, a, b));
                if (rep >= 3) ms.push_back(x);
            }
            // Check the result once: sorted by key, the payload a permutation consistent with it.
            std::vector<uint32_t> k2(n), v2(n);
            CHECK(cudaMemcpy(k2.data(), ko, n * 4, cudaMemcpyDeviceToHost));
            CHECK(cudaMemcpy(v2.data(), vo, n * 4, cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < n; ++i) {
                if ((i > 0 && k2[i - 1] > k2[i]) || keys[v2[i]] != k2[i]) { std::fprintf(stderr, "CUB result wrong at %zu\n", i); return 1; }
            }
            std::sort(ms.begin(), ms.end());
            std::printf("%d,%d,%.4f,%zu\n", bits, log_n, ms[ms.size() / 2], temp);
            cudaFree(ki); cudaFree(ko); cudaFree(vi); cudaFree(vo); cudaFree(t);
        }
    }
    return 0;
}
