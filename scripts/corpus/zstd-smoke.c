/* Smoke run of zstd for `make corpus`: compresses generated data at several levels (fast,
 * greedy, lazy and optimal parsers), with a trained dictionary, and decompresses it back;
 * prints sizes and checksums. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "zstd.h"
#include "zdict.h"

#define LEN (1 << 20)

static unsigned sum(const unsigned char *p, size_t n) {
    unsigned a = 1, b = 0;
    for (size_t i = 0; i < n; i++) { a = (a + p[i]) % 65521; b = (b + a) % 65521; }
    return (b << 16) | a;
}

int main(void) {
    size_t bound = ZSTD_compressBound(LEN);
    unsigned char *data = malloc(LEN), *packed = malloc(bound), *back = malloc(LEN);
    if (!data || !packed || !back) return 1;
    unsigned long x = 4242;
    for (size_t i = 0; i < LEN; i++) {
        x = x * 6364136223846793005UL + 1442695040888963407UL;
        data[i] = (unsigned char)("lorem ipsum dolor sit amet, "[(x >> 37) % 28] ^ ((i / 65536) & 1));
    }
    printf("data %08x\n", sum(data, LEN));
    int levels[] = {-5, 1, 3, 6, 9, 13, 16, 19};
    for (size_t k = 0; k < sizeof levels / sizeof *levels; k++) {
        size_t n = ZSTD_compress(packed, bound, data, LEN, levels[k]);
        if (ZSTD_isError(n)) return 2;
        size_t m = ZSTD_decompress(back, LEN, packed, n);
        if (ZSTD_isError(m) || m != LEN || memcmp(data, back, LEN)) return 3;
        printf("level %d: %zu bytes, %08x\n", levels[k], n, sum(packed, n));
    }
    /* a dictionary trained on 1 KiB samples, used on the first 64 KiB */
    size_t sizes[256];
    for (int i = 0; i < 256; i++) sizes[i] = 1024;
    unsigned char dict[16384];
    size_t dn = ZDICT_trainFromBuffer(dict, sizeof dict, data, sizes, 256);
    if (ZDICT_isError(dn)) return 4;
    ZSTD_CCtx *c = ZSTD_createCCtx();
    ZSTD_DCtx *d = ZSTD_createDCtx();
    size_t n = ZSTD_compress_usingDict(c, packed, bound, data, 65536, dict, dn, 3);
    if (ZSTD_isError(n)) return 5;
    size_t m = ZSTD_decompress_usingDict(d, back, LEN, packed, n, dict, dn);
    if (ZSTD_isError(m) || m != 65536 || memcmp(data, back, 65536)) return 6;
    printf("dictionary %zu bytes %08x: %zu bytes, %08x\n", dn, sum(dict, dn), n, sum(packed, n));
    ZSTD_freeCCtx(c);
    ZSTD_freeDCtx(d);
    return 0;
}
