/* Smoke run of zlib for `make corpus`: compresses generated data at every level, with deflate
 * and with the gzip stream format, inflates it back, and prints sizes and checksums. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "zlib.h"

#define LEN (1 << 20)

int main(void) {
    unsigned char *data = malloc(LEN), *packed = malloc(compressBound(LEN)), *back = malloc(LEN);
    if (!data || !packed || !back) return 1;
    unsigned long x = 12345;
    for (size_t i = 0; i < LEN; i++) {
        x = x * 6364136223846793005UL + 1442695040888963407UL;
        /* text-like: runs and a small alphabet */
        data[i] = (unsigned char)("abcdefgh  \n"[(x >> 33) % 11] + ((i / 4096) % 3));
    }
    printf("adler32 %08lx crc32 %08lx\n", adler32(1, data, LEN), crc32(0, data, LEN));
    for (int level = 0; level <= 9; level++) {
        uLongf plen = compressBound(LEN);
        if (compress2(packed, &plen, data, LEN, level) != Z_OK) return 2;
        uLongf blen = LEN;
        if (uncompress(back, &blen, packed, plen) != Z_OK || blen != LEN) return 3;
        if (memcmp(back, data, LEN) != 0) return 4;
        printf("level %d: %lu bytes, crc32 %08lx\n", level, (unsigned long)plen, crc32(0, packed, plen));
    }
    /* gzip format through a z_stream */
    z_stream s;
    memset(&s, 0, sizeof s);
    if (deflateInit2(&s, 6, Z_DEFLATED, 31, 9, Z_FILTERED) != Z_OK) return 5;
    s.next_in = data;
    s.avail_in = LEN;
    s.next_out = packed;
    s.avail_out = (uInt)compressBound(LEN);
    if (deflate(&s, Z_FINISH) != Z_STREAM_END) return 6;
    printf("gzip: %lu bytes, crc32 %08lx\n", s.total_out, crc32(0, packed, s.total_out));
    deflateEnd(&s);
    return 0;
}
