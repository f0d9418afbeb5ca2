/* fuzz_tokenizer_json.c — the Hugging Face tokenizer.json reader
 * (c/src/tokenizer_json.c) on arbitrary bytes. Framing: the bytes before the
 * first NUL are tokenizer.json, the rest (if any) tokenizer_config.json.
 * Properties: never crashes, hangs or leaks; every failure is a documented
 * code with a message; an accepted tokenizer has 1 <= V <= ALAB_MAX_VOCAB (256 for a byte-level one)
 * ids, a BOS of -1 or an id, encodes a few fixed texts and the first bytes of
 * the input itself to ids in range that decode, never more ids than the worst
 * case it computed from the file (B n + C, B at most 16 per byte: issue 53),
 * labels every id it has. */
#include "fuzz_common.h"
#include "bpe_internal.h"

static const char *const texts[] = {
    "Hello world, it's 2024!", "<|begin_of_text|>a<|im_start|>b [L]  c  [R] d",
    "cafe\xcc\x81 \xe4\xbb\x8a\xe5\xa4\xa9 \xf0\x9f\x98\x80\r\n\r\n  x", "a\xff\xe2\x82 b", "",
};

static void check_encode(const alab_bpe *bpe, int V, const char *text, size_t len) {
    int ids[2048], n = 0;
    int rc = alab_bpe_encode(ids, 2048, &n, bpe, text, len);
    FUZZ_CHECK_RC(rc);
    FUZZ_CHECK(rc == ALAB_OK || (rc == ALAB_ELIMIT && n > 2048));
    FUZZ_CHECK(bpe->max_ids_per_byte <= BPE_MAX_IDS_PER_BYTE);
    FUZZ_CHECK((double)n <= bpe->max_ids_per_byte * (double)len + bpe->max_ids_const + 1e-6);
    if (rc != ALAB_OK) return;
    for (int i = 0; i < n; i++) FUZZ_CHECK(ids[i] >= 0 && ids[i] < V);
    size_t dlen;
    char out[8192];
    rc = alab_bpe_decode(out, sizeof out, &dlen, bpe, ids, n);
    FUZZ_CHECK(rc == ALAB_OK || (rc == ALAB_ELIMIT && dlen >= sizeof out));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *nul = memchr(data, 0, size);
    size_t jl = nul ? (size_t)(nul - data) : size, cl = nul ? size - jl - 1 : 0;
    /* exact-size heap copies, so ASan sees a read past either end */
    char *j = malloc(jl ? jl : 1), *c = malloc(cl ? cl : 1);
    if (!j || !c) { free(j); free(c); return 0; }
    memcpy(j, data, jl);
    if (cl) memcpy(c, nul + 1, cl);
    alab_bpe *bpe = NULL;
    int rc = alab_bpe_load_hf(&bpe, j, jl, nul ? c : NULL, cl);
    FUZZ_CHECK_RC(rc);
    FUZZ_CHECK((rc == ALAB_OK) == (bpe != NULL));
    if (bpe) {
        int V = alab_bpe_vocab_size(bpe);
        FUZZ_CHECK(V >= 1 && V <= ALAB_MAX_VOCAB); /* a SentencePiece-style vocabulary may be small */
        int bos = alab_bpe_bos_to_add(bpe);
        FUZZ_CHECK(bos >= -1 && bos < V);
        for (size_t t = 0; t < sizeof texts / sizeof *texts; t++) check_encode(bpe, V, texts[t], strlen(texts[t]));
        check_encode(bpe, V, (const char *)data, size < 512 ? size : 512);
        char out[256];
        for (int id = 0; id < V && id < 600; id++) {
            size_t dlen;
            rc = alab_bpe_display(out, sizeof out, &dlen, bpe, id);
            FUZZ_CHECK(rc == ALAB_OK || (rc == ALAB_ELIMIT && dlen >= sizeof out));
        }
        FUZZ_CHECK(alab_bpe_display(out, sizeof out, &(size_t){0}, bpe, V) == ALAB_ERANGE);
        alab_bpe_free(bpe);
    }
    free(j);
    free(c);
    return 0;
}
