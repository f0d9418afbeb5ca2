/* fuzz_lines.c — the dataset-file reader (alab_lines_*, c/src/io.h: `attnlab evidence --set FILE`) on arbitrary
 * bytes. The first two bytes choose the caps (max_line 1..256, max_file 1..4096 or unlimited), the rest is the
 * file. Properties: never crashes; every line given has at most max_line bytes, holds no LF, CR or NUL, is
 * valid UTF-8 and is NUL-terminated at its length; the lines with their breaks never add up to more than the
 * file; the bytes read never pass max_file + 1 (the byte that shows the file goes on), and then it is ELIMIT; an error is a documented code with a message, and every later call
 * returns it again; the line number only grows. */
#include "fuzz_common.h"
#include "internal.h"

#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    const size_t max_line = 1 + data[0];
    const uint64_t max_file = data[1] == 255 ? (uint64_t)1 << 40 : 1 + (uint64_t)data[1] * 16;
    data += 2;
    size -= 2;
    char path[64];
    snprintf(path, sizeof path, "/tmp/fuzz_lines.%d", (int)getpid());
    FILE *fp = fopen(path, "wb");
    if (!fp) return 0;
    if (size) fwrite(data, 1, size, fp);
    fclose(fp);

    alab_lines *r = NULL;
    int rc = alab_lines_open(&r, path, max_file, max_line);
    FUZZ_CHECK_RC(rc);
    if (rc == ALAB_OK) {
        size_t total = 0;
        long last_no = 0;
        for (int guard = 0; guard < 100000; guard++) {
            const char *line = NULL;
            size_t len = 0;
            rc = alab_lines_next(r, &line, &len);
            /* at most one byte past the cap is read (to see that the file goes on), and then the reader fails */
            FUZZ_CHECK(alab_lines_bytes(r) <= max_file + 1 && alab_lines_bytes(r) <= size);
            if (alab_lines_bytes(r) > max_file) FUZZ_CHECK(rc == ALAB_ELIMIT);
            FUZZ_CHECK(alab_lines_number(r) >= last_no);
            last_no = alab_lines_number(r);
            if (rc == 0) break;
            if (rc < 0) {
                FUZZ_CHECK_RC(rc);
                FUZZ_CHECK(rc == ALAB_EFORMAT || rc == ALAB_ELIMIT || rc == ALAB_EIO || rc == ALAB_ENOMEM);
                const char *l2 = NULL;
                size_t n2 = 0;
                FUZZ_CHECK(alab_lines_next(r, &l2, &n2) == rc); /* an error stays */
                break;
            }
            FUZZ_CHECK(rc == 1 && line != NULL);
            FUZZ_CHECK(len <= max_line && line[len] == '\0');
            for (size_t i = 0; i < len;) {
                FUZZ_CHECK(line[i] != '\n' && line[i] != '\r' && line[i] != '\0');
                const int k = alab_utf8_seq((const unsigned char *)line + i, len - i);
                FUZZ_CHECK(k >= 1 && k <= 4);
                i += (size_t)k;
            }
            total += len;
            FUZZ_CHECK(total <= size);
        }
        alab_lines_close(r);
    }
    unlink(path);
    return 0;
}
