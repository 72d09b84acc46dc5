/* Smoke run of lz4 for `make corpus`: the block format (fast and high compression at several
 * levels) and the frame format, each decompressed back; prints sizes and xxHash checksums. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lz4.h"
#include "lz4hc.h"
#include "lz4frame.h"
#include "xxhash.h"

#define LEN (1 << 20)

int main(void) {
    char *data = malloc(LEN), *packed = malloc(LZ4F_compressFrameBound(LEN, NULL) + LZ4_compressBound(LEN)),
         *back = malloc(LEN);
    if (!data || !packed || !back) return 1;
    unsigned long x = 777;
    for (int i = 0; i < LEN; i++) {
        x = x * 6364136223846793005UL + 1442695040888963407UL;
        data[i] = "the quick brown fox "[(x >> 35) % 20 / ((i / 8192) % 4 + 1)];
    }
    printf("xxh32 %08x xxh64 %016llx\n", XXH32(data, LEN, 0), (unsigned long long)XXH64(data, LEN, 0));
    for (int accel = 1; accel <= 8; accel *= 2) {
        int n = LZ4_compress_fast(data, packed, LEN, LZ4_compressBound(LEN), accel);
        if (n <= 0 || LZ4_decompress_safe(packed, back, n, LEN) != LEN || memcmp(data, back, LEN)) return 2;
        printf("fast %d: %d bytes, xxh32 %08x\n", accel, n, XXH32(packed, n, 0));
    }
    for (int level = 3; level <= 12; level += 3) {
        int n = LZ4_compress_HC(data, packed, LEN, LZ4_compressBound(LEN), level);
        if (n <= 0 || LZ4_decompress_safe(packed, back, n, LEN) != LEN || memcmp(data, back, LEN)) return 3;
        printf("hc %d: %d bytes, xxh32 %08x\n", level, n, XXH32(packed, n, 0));
    }
    size_t n = LZ4F_compressFrame(packed, LZ4F_compressFrameBound(LEN, NULL), data, LEN, NULL);
    if (LZ4F_isError(n)) return 4;
    LZ4F_dctx *d;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION))) return 5;
    size_t out = LEN, in = n;
    size_t r = LZ4F_decompress(d, back, &out, packed, &in, NULL);
    if (LZ4F_isError(r) || out != LEN || memcmp(data, back, LEN)) return 6;
    LZ4F_freeDecompressionContext(d);
    printf("frame: %zu bytes, xxh32 %08x\n", n, XXH32(packed, n, 0));
    return 0;
}
