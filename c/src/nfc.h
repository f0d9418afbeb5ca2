/* nfc.h — Unicode Normalization Form C of well-formed UTF-8 (nfc.c), the
 * normalizer bpe.c runs for the tokenizers that ask for it (Qwen2/3). */
#ifndef ALAB_NFC_H
#define ALAB_NFC_H

#include <stddef.h>

/* NFC of valid UTF-8 s[0..n): malloc'd, *out_len set; NULL if out of memory. */
unsigned char *bpe_nfc(const unsigned char *s, size_t n, size_t *out_len);
/* Its reference twin: the same three steps over the whole text at once,
 * without cutting it at boundaries (tests and fuzzing compare the two). */
unsigned char *bpe_nfc_ref(const unsigned char *s, size_t n, size_t *out_len);

#endif
