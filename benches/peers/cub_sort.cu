// The CUB peer of gpu-radix: cub::DeviceRadixSort::SortKeys and SortPairs (onesweep on sm_80+)
// of u32 keys, alone and with a u32 payload, keys of 24 and 32 random bits sorting only those
// bits (begin_bit 0, end_bit 24 or 32), 2^20, 2^24 and 2^26 items, out of place (the input
// stays): the cases of `cargo bench -p gpu-radix --bench radix_vs_cub`, timed the same way (median
// of 20 after 3 warm-ups, CUDA events around the one call) in the same device run
// (`benches/radix-device-run.sh`).
// Build and run on the GPU host:
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/cub_sort benches/peers/cub_sort.cu
//   /tmp/cub_sort                      (every case)
//   /tmp/cub_sort WHAT BITS LOG2_N     (one case, e.g. under ncu: /tmp/cub_sort pairs 32 26)
// Prints CSV: what,keys_bits,n,cub_ms,temp_bytes; each result is checked (sorted keys, the
// payload following them).
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

static cudaError_t run(bool pairs, void* t, size_t& temp, const uint32_t* ki, uint32_t* ko, const uint32_t* vi, uint32_t* vo, size_t n, int bits) {
    if (pairs) return cub::DeviceRadixSort::SortPairs(t, temp, ki, ko, vi, vo, int(n), 0, bits);
    return cub::DeviceRadixSort::SortKeys(t, temp, ki, ko, int(n), 0, bits);
}

int main(int argc, char** argv) {
    std::vector<std::string> what_cases{"keys", "pairs"};
    std::vector<int> bit_cases{24, 32}, n_cases{20, 24, 26};
    if (argc == 4) {
        what_cases = {argv[1]};
        bit_cases = {std::atoi(argv[2])};
        n_cases = {std::atoi(argv[3])};
    }
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::fprintf(stderr, "device: %s; CUB %d.%d.%d\n", prop.name, CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION);
    std::printf("what,keys_bits,n,cub_ms,temp_bytes\n");
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
            for (const std::string& what : what_cases) {
                bool pairs = what == "pairs";
                size_t temp = 0;
                CHECK(run(pairs, nullptr, temp, ki, ko, vi, vo, n, bits));
                void* t;
                CHECK(cudaMalloc(&t, temp));
                cudaEvent_t a, b;
                CHECK(cudaEventCreate(&a)); CHECK(cudaEventCreate(&b));
                std::vector<float> ms;
                for (int rep = 0; rep < 23; ++rep) {
                    CHECK(cudaEventRecord(a));
                    CHECK(run(pairs, t, temp, ki, ko, vi, vo, n, bits));
                    CHECK(cudaEventRecord(b));
                    CHECK(cudaEventSynchronize(b));
                    float x;
                    CHECK(cudaEventElapsedTime(&x, a, b));
                    if (rep >= 3) ms.push_back(x);
                }
                std::vector<uint32_t> k2(n), v2(n);
                CHECK(cudaMemcpy(k2.data(), ko, n * 4, cudaMemcpyDeviceToHost));
                if (pairs) CHECK(cudaMemcpy(v2.data(), vo, n * 4, cudaMemcpyDeviceToHost));
                for (size_t i = 0; i < n; ++i) {
                    if ((i > 0 && k2[i - 1] > k2[i]) || (pairs && keys[v2[i]] != k2[i])) {
                        std::fprintf(stderr, "CUB result wrong at %zu\n", i);
                        return 1;
                    }
                }
                std::sort(ms.begin(), ms.end());
                std::printf("%s,%d,%zu,%.4f,%zu\n", what.c_str(), bits, n, ms[ms.size() / 2], temp);
                std::fflush(stdout);
                cudaFree(t);
                cudaEventDestroy(a); cudaEventDestroy(b);
            }
            cudaFree(ki); cudaFree(ko); cudaFree(vi); cudaFree(vo);
        }
    }
    return 0;
}
