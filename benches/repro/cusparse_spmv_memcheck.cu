// Reproducer for benches/experiments/2026-11-27-cusparse-spmv-memcheck.md: cusparseSpMV (CSR
// ALG1) on small matrices, each array allocated to its exact size, so that compute-sanitizer
// memcheck sees any access past one. Matrices: every Matrix Market file named on the command
// line (general, real, coordinate; rows sorted by the CSR build here), then `FUZZ` random ones
// of `FUZZ_ROWS` rows (R-MAT-like: skewed rows, empty rows). f32 and f64, beta 0 and 0.5, the
// stream-ordered pool (cudaMallocAsync) like our plans, and plain cudaMalloc.
// Build: nvcc -O2 -o repro cusparse_spmv_memcheck.cu -lcusparse
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include <random>
#include <thread>
#include <mutex>
#include <atomic>
#include <string>
#include <cuda_runtime.h>
#include <cusparse.h>

// LOCK=1: one process-wide mutex held around each cusparseSpMV_bufferSize and cusparseSpMV call.
static std::mutex g_lock;
static bool g_use_lock = false, g_lock_all = false, g_lock_each = false, g_lock_handle = false;
// LOCK=2: the whole life of each handle; LOCK=3: LOCK=1 plus each handle's creation and
// destruction; LOCK=5: every cuSPARSE call, one at a time (what a library can do).
// GUARD=1: y gets 64 more values past its m, set to 0xFF bytes, checked after the products
// (a write past y seen without memcheck).
static bool g_guard = false;
static std::atomic<int> g_guard_hits{0};

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); exit(1); } } while (0)
#define CS(x) do { std::unique_lock<std::mutex> l_(g_lock, std::defer_lock); if (g_lock_each) l_.lock(); cusparseStatus_t st_ = (x); if (st_ != CUSPARSE_STATUS_SUCCESS) { printf("cuSPARSE %d at %s:%d\n", (int)st_, __FILE__, __LINE__); exit(1); } } while (0)

// ALG=2: CSR ALG2 instead of ALG1.
static cusparseSpMVAlg_t g_alg = CUSPARSE_SPMV_CSR_ALG1;

struct Csr { int m, n; std::vector<int> ptr, idx; std::vector<double> val; };

static Csr from_coo(int m, int n, std::vector<std::pair<int,int>> e, std::mt19937_64 &g) {
    std::sort(e.begin(), e.end());
    e.erase(std::unique(e.begin(), e.end()), e.end());
    Csr a{m, n, std::vector<int>(m + 1, 0), {}, {}};
    std::uniform_real_distribution<double> u(-1, 1);
    for (auto &p : e) { a.ptr[p.first + 1]++; a.idx.push_back(p.second); a.val.push_back(u(g)); }
    for (int i = 0; i < m; i++) a.ptr[i + 1] += a.ptr[i];
    return a;
}

static bool read_mtx(const char *path, Csr &a, std::mt19937_64 &g) {
    FILE *f = fopen(path, "r");
    if (!f) return false;
    char line[4096];
    long m = 0, n = 0, nnz = 0;
    while (fgets(line, sizeof line, f)) { if (line[0] != '%') { sscanf(line, "%ld %ld %ld", &m, &n, &nnz); break; } }
    std::vector<std::pair<int,int>> e;
    for (long k = 0; k < nnz && fgets(line, sizeof line, f); k++) { long i, j; sscanf(line, "%ld %ld", &i, &j); e.push_back({(int)i - 1, (int)j - 1}); }
    fclose(f);
    a = from_coo((int)m, (int)n, e, g);
    return true;
}

template <typename T> static int run(cusparseHandle_t h, cudaStream_t s, const Csr &a, bool pool, T beta, const char *name) {
    if (a.m == 0 || a.n == 0 || a.idx.empty()) return 0;
    cudaDataType t = sizeof(T) == 8 ? CUDA_R_64F : CUDA_R_32F;
    auto alloc = [&](void **p, size_t b) { if (pool) CK(cudaMallocAsync(p, b, s)); else CK(cudaMalloc(p, b)); };
    auto release = [&](void *p) { if (pool) CK(cudaFreeAsync(p, s)); else CK(cudaFree(p)); };
    int nnz = (int)a.idx.size();
    void *dp, *di, *dv, *dx, *dy;
    alloc(&dp, sizeof(int) * (a.m + 1)); alloc(&di, sizeof(int) * nnz); alloc(&dv, sizeof(T) * nnz);
    alloc(&dx, sizeof(T) * a.n); alloc(&dy, sizeof(T) * (a.m + (g_guard ? 64 : 0)));
    if (g_guard) CK(cudaMemsetAsync((char *)dy + sizeof(T) * a.m, 0xFF, sizeof(T) * 64, s));
    std::vector<T> v(a.val.begin(), a.val.end()), x(a.n, (T)1), y(a.m, (T)0.25);
    CK(cudaMemcpyAsync(dp, a.ptr.data(), sizeof(int) * (a.m + 1), cudaMemcpyHostToDevice, s));
    CK(cudaMemcpyAsync(di, a.idx.data(), sizeof(int) * nnz, cudaMemcpyHostToDevice, s));
    CK(cudaMemcpyAsync(dv, v.data(), sizeof(T) * nnz, cudaMemcpyHostToDevice, s));
    CK(cudaMemcpyAsync(dx, x.data(), sizeof(T) * a.n, cudaMemcpyHostToDevice, s));
    CK(cudaMemcpyAsync(dy, y.data(), sizeof(T) * a.m, cudaMemcpyHostToDevice, s));
    cusparseSpMatDescr_t ma; cusparseDnVecDescr_t vx, vy;
    CS(cusparseCreateCsr(&ma, a.m, a.n, nnz, dp, di, dv, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, t));
    CS(cusparseCreateDnVec(&vx, a.n, dx, t)); CS(cusparseCreateDnVec(&vy, a.m, dy, t));
    T alpha = 1; size_t bytes = 0;
    {
        std::unique_lock<std::mutex> l(g_lock, std::defer_lock);
        if (g_use_lock) l.lock();
        CS(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, ma, vx, &beta, vy, t, g_alg, &bytes));
    }
    void *buf = nullptr; if (bytes) alloc(&buf, bytes);
    for (int rep = 0; rep < 3; rep++) {
        std::unique_lock<std::mutex> l(g_lock, std::defer_lock);
        if (g_use_lock) l.lock();
        CS(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, ma, vx, &beta, vy, t, g_alg, buf));
    }
    CK(cudaMemcpyAsync(y.data(), dy, sizeof(T) * a.m, cudaMemcpyDeviceToHost, s));
    std::vector<unsigned char> guard(g_guard ? sizeof(T) * 64 : 0);
    if (g_guard) CK(cudaMemcpyAsync(guard.data(), (char *)dy + sizeof(T) * a.m, guard.size(), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    for (size_t b = 0; b < guard.size(); b++) if (guard[b] != 0xFF) { printf("%s: byte %zu past y (m %d) written\n", name, b, a.m); g_guard_hits++; break; }
    // Check y = A x + beta * 0.25... after 3 reps with beta: y_k = Ax + beta*y_{k-1}.
    int bad = 0;
    for (int i = 0; i < a.m; i++) {
        double ax = 0; for (int k = a.ptr[i]; k < a.ptr[i + 1]; k++) ax += (double)v[k];
        double want = 0.25; for (int r = 0; r < 3; r++) want = ax + (double)beta * want;
        if (fabs((double)y[i] - want) > 1e-4 * (1 + fabs(want))) bad++;
    }
    if (bad) printf("%s: %d wrong rows (m %d n %d nnz %d bytes %zu)\n", name, bad, a.m, a.n, nnz, bytes);
    CS(cusparseDestroySpMat(ma)); CS(cusparseDestroyDnVec(vx)); CS(cusparseDestroyDnVec(vy));
    if (buf) release(buf);
    release(dp); release(di); release(dv); release(dx); release(dy);
    return bad;
}

// THREADS > 0: that many host threads, each making and dropping a handle per matrix (as our
// plans do) on one shared stream (SHARED=1, as our test binaries do) or a stream each, ITERS
// random R-MAT-like matrices of 32 rows each, f32 then f64.
static std::atomic<int> g_bad{0};
static bool g_mix = true, g_pool = true;
// ROWS=a,b: most matrices of a rows, every seventh of b (default 32,300).
static int g_rows_a = 32, g_rows_b = 300;
static void worker(int id, cudaStream_t shared, int iters) {
    std::mt19937_64 g(1000 + id);
    cudaStream_t s = shared;
    if (!s) CK(cudaStreamCreate(&s));
    for (int it = 0; it < iters; it++) {
        int rows = (g_mix && it % 7 == 3) ? g_rows_b : g_rows_a, edges = (int)(g() % (4 * rows + 1));
        std::vector<std::pair<int,int>> e;
        for (int k = 0; k < edges; k++) {
            int i = 0, j = 0;
            for (int half = rows / 2; half >= 1; half /= 2) {
                double p = std::uniform_real_distribution<double>(0, 1)(g);
                if (p < 0.57) {} else if (p < 0.76) j += half; else if (p < 0.95) i += half; else { i += half; j += half; }
            }
            e.push_back({i % rows, j % rows});
        }
        Csr a = from_coo(rows, rows, e, g);
        // LOCK=2: the whole handle's life and its products under the lock.
        std::unique_lock<std::mutex> whole(g_lock, std::defer_lock);
        if (g_lock_all) whole.lock();
        cusparseHandle_t h;
        {
            std::unique_lock<std::mutex> l(g_lock, std::defer_lock);
            if (g_lock_handle) l.lock();
            CS(cusparseCreate(&h)); CS(cusparseSetStream(h, s));
        }
        g_bad += run<float>(h, s, a, g_pool, 0.0f, "thread f32");
        g_bad += run<double>(h, s, a, g_pool, 0.0, "thread f64");
        {
            std::unique_lock<std::mutex> l(g_lock, std::defer_lock);
            if (g_lock_handle) l.lock();
            CS(cusparseDestroy(h));
        }
    }
    if (!shared) CK(cudaStreamDestroy(s));
}

int main(int argc, char **argv) {
    if (getenv("THREADS")) {
        int lk = getenv("LOCK") ? atoi(getenv("LOCK")) : 0;
        g_use_lock = lk == 1 || lk == 3;
        g_lock_handle = lk == 3;
        g_lock_each = lk == 5;
        g_lock_all = getenv("LOCK") && atoi(getenv("LOCK")) == 2;
        g_guard = getenv("GUARD") && atoi(getenv("GUARD"));
        g_mix = !getenv("MIX") || atoi(getenv("MIX"));
        if (getenv("ALG") && atoi(getenv("ALG")) == 2) g_alg = CUSPARSE_SPMV_CSR_ALG2;
        if (getenv("ROWS")) sscanf(getenv("ROWS"), "%d,%d", &g_rows_a, &g_rows_b);
        g_pool = !getenv("POOL") || atoi(getenv("POOL"));
        int t = atoi(getenv("THREADS")), iters = getenv("ITERS") ? atoi(getenv("ITERS")) : 200;
        cudaStream_t shared = nullptr;
        CK(cudaFree(0));
        if (!getenv("SHARED") || atoi(getenv("SHARED"))) CK(cudaStreamCreate(&shared));
        std::vector<std::thread> ts;
        for (int i = 0; i < t; i++) ts.emplace_back(worker, i, shared, iters);
        for (auto &th : ts) th.join();
        printf("alg %d, rows %d,%d: threads %d, iters %d, shared stream %d, lock %d, pool %d, mix %d, guard %d: %d wrong rows, %d guards written\n", (int)g_alg, g_rows_a, g_rows_b, t, iters, shared != nullptr, lk, (int)g_pool, (int)g_mix, (int)g_guard, g_bad.load(), g_guard_hits.load());
        return (g_bad + g_guard_hits) != 0;
        return g_bad != 0;
    }
    std::mt19937_64 g(12345);
    cusparseHandle_t h; cudaStream_t s;
    CK(cudaStreamCreate(&s)); CS(cusparseCreate(&h)); CS(cusparseSetStream(h, s));
    std::vector<std::pair<std::string, Csr>> ms;
    for (int i = 1; i < argc; i++) { Csr a; if (read_mtx(argv[i], a, g)) ms.push_back({argv[i], a}); else printf("cannot read %s\n", argv[i]); }
    int fuzz = getenv("FUZZ") ? atoi(getenv("FUZZ")) : 0, rows = getenv("FUZZ_ROWS") ? atoi(getenv("FUZZ_ROWS")) : 32;
    for (int f = 0; f < fuzz; f++) {
        int m = rows, n = rows, edges = (int)(g() % (4 * rows + 1));
        std::vector<std::pair<int,int>> e;
        for (int k = 0; k < edges; k++) {  // R-MAT-ish: quadrant descent with a = 0.57, b = c = 0.19
            int i = 0, j = 0;
            for (int half = rows / 2; half >= 1; half /= 2) {
                double p = std::uniform_real_distribution<double>(0, 1)(g);
                if (p < 0.57) {} else if (p < 0.76) j += half; else if (p < 0.95) i += half; else { i += half; j += half; }
            }
            e.push_back({i % m, j % n});
        }
        char name[64]; snprintf(name, sizeof name, "fuzz %d", f);
        ms.push_back({name, from_coo(m, n, e, g)});
    }
    int bad = 0;
    for (auto &p : ms) for (int pool = 0; pool < 2; pool++) {
        bad += run<float>(h, s, p.second, pool, 0.0f, p.first.c_str());
        bad += run<float>(h, s, p.second, pool, 0.5f, p.first.c_str());
        bad += run<double>(h, s, p.second, pool, 0.0, p.first.c_str());
    }
    int ver; CS(cusparseGetVersion(h, &ver));
    printf("cuSPARSE %d: %zu matrices, %d wrong rows\n", ver, ms.size(), bad);
    return bad != 0;
}
