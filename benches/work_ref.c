/* Plain C reference for the synthetic work-per-pixel kernel (see benches/work_compare.sh).
 *
 *   h = g + 0x9E3779B9; k times: h = (h ^ (h >> 15)) * 0x2C1B3C6D; out = g ^ (h & mask)
 *   divergent: only odd g get the k rounds (even g: out = g ^ (h0 & mask)).
 *
 * 8K (7680x4320) 8-bit gray buffer, in place, blocks of 64 uint32_t lanes, OpenMP over chunks of
 * 64 Ki pixels. Input: gray[i] = (i * 2654435761u) >> 24. Prints one line per config with the
 * median of RUNS timed runs after one warm-up, and the FNV-1a 64 of the output at mask 0xFF.
 *
 *   gcc -O3 -march=native -fopenmp -mprefer-vector-width=256 benches/work_ref.c -o work_ref
 *   OMP_NUM_THREADS=2 ./work_ref [k=256] [runs=7] [mask=0] [variant=uniform|divergent|both]
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define W 7680
#define H 4320
#define BLOCK 64
#define CHUNK (64 * 1024)

static void block(uint8_t *px, int n, uint32_t k, uint32_t mask, int divergent) {
    uint32_t g[BLOCK], h[BLOCK];
    for (int l = 0; l < BLOCK; l++) g[l] = l < n ? px[l] : 0;
    for (int l = 0; l < BLOCK; l++) h[l] = g[l] + 0x9E3779B9u;
    if (divergent) {
        for (uint32_t r = 0; r < k; r++)
            for (int l = 0; l < BLOCK; l++)
                h[l] = (g[l] & 1) ? (h[l] ^ (h[l] >> 15)) * 0x2C1B3C6Du : h[l];
    } else {
        for (uint32_t r = 0; r < k; r++)
            for (int l = 0; l < BLOCK; l++) h[l] = (h[l] ^ (h[l] >> 15)) * 0x2C1B3C6Du;
    }
    for (int l = 0; l < n; l++) px[l] = (uint8_t)(g[l] ^ (h[l] & mask));
}

static void apply(uint8_t *buf, size_t len, uint32_t k, uint32_t mask, int divergent) {
    long chunks = (long)((len + CHUNK - 1) / CHUNK);
#pragma omp parallel for schedule(dynamic)
    for (long c = 0; c < chunks; c++) {
        size_t end = (size_t)(c + 1) * CHUNK < len ? (size_t)(c + 1) * CHUNK : len;
        for (size_t i = (size_t)c * CHUNK; i < end; i += BLOCK)
            block(buf + i, end - i < BLOCK ? (int)(end - i) : BLOCK, k, mask, divergent);
    }
}

static void input(uint8_t *buf, size_t len) {
    for (size_t i = 0; i < len; i++) buf[i] = (uint8_t)(((uint32_t)i * 2654435761u) >> 24);
}

static uint64_t fnv1a(const uint8_t *p, size_t len) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    uint32_t k = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 256;
    int runs = argc > 2 ? atoi(argv[2]) : 7;
    uint32_t mask = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 0) : 0;
    const char *variant = argc > 4 ? argv[4] : "uniform";
    if (runs < 1 || runs > 1000) runs = 7;
    size_t len = (size_t)W * H;
    uint8_t *buf = malloc(len);
    double *ms = malloc(sizeof(double) * (size_t)runs);
    if (!buf || !ms) return 1;
    for (int divergent = 0; divergent < 2; divergent++) {
        const char *name = divergent ? "divergent" : "uniform";
        if (strcmp(variant, "both") != 0 && strcmp(variant, name) != 0) continue;
        input(buf, len);
        apply(buf, len, k, 0xFF, divergent);
        uint64_t sum = fnv1a(buf, len);
        input(buf, len);
        apply(buf, len, k, mask, divergent); /* warm-up */
        for (int r = 0; r < runs; r++) {
            double t0 = now_ms();
            apply(buf, len, k, mask, divergent);
            ms[r] = now_ms() - t0;
        }
        qsort(ms, (size_t)runs, sizeof(double), cmp);
        double med = ms[runs / 2];
        printf("c k=%u threads=%d variant=%s mask=0x%x median_ms=%.2f min_ms=%.2f gprs=%.2f checksum=%016llx\n",
               k, omp_get_max_threads(), name, mask, med, ms[0], (double)len * k / (med * 1e-3) / 1e9,
               (unsigned long long)sum);
    }
    free(buf);
    free(ms);
    return 0;
}
