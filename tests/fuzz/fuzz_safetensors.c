/* fuzz_safetensors.c — safetensors header and layout validation on arbitrary
 * bytes. Properties: never crashes or reads outside the buffer; an accepted
 * file's every tensor lies inside the data section, its byte size is shape x
 * dtype size, no two non-empty tensors overlap, and st_find finds each by
 * name. The input is copied to an exact-size heap buffer so ASan sees any
 * read past its end. */
#include "fuzz_common.h"
#include "internal.h"
#include "safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    st_file f;
    int rc = st_parse(&f, buf, size);
    FUZZ_CHECK_RC(rc);
    if (rc == ALAB_OK) {
        FUZZ_CHECK(f.data_offset >= 8 && f.data_offset <= size && f.data_offset + f.data_len == size);
        volatile unsigned sum = 0;
        for (int i = 0; i < f.n; i++) {
            const st_tensor *t = &f.tensors[i];
            FUZZ_CHECK(t->begin <= f.data_len && t->nbytes <= f.data_len - t->begin);
            FUZZ_CHECK(t->data == f.data + t->begin);
            size_t count = 1;
            for (int d = 0; d < t->ndim; d++) {
                FUZZ_CHECK(t->shape[d] >= 0);
                FUZZ_CHECK(alab_mul_size(&count, count, (size_t)t->shape[d]) == 0);
            }
            FUZZ_CHECK(count * st_dtype_size(t->dtype) == t->nbytes);
            FUZZ_CHECK(st_find(&f, t->name) == t);
            if (t->nbytes) sum += t->data[0] + t->data[t->nbytes - 1]; /* ASan: inside the buffer */
            for (int j = 0; j < i && i < 64; j++) { /* pairwise: quadratic, so the first 64 */
                const st_tensor *u = &f.tensors[j];
                if (t->nbytes && u->nbytes)
                    FUZZ_CHECK(t->begin + t->nbytes <= u->begin || u->begin + u->nbytes <= t->begin);
            }
        }
        (void)sum;
        st_free(&f);
    }
    free(buf);
    return 0;
}
