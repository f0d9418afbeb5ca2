/* tokenizer_json.c — Hugging Face tokenizer.json (+ tokenizer_config.json)
 * read into the byte-level BPE engine of bpe.c.
 *
 * Supported: a "BPE" model over GPT-2's byte alphabet (vocab: token -> id;
 * merges as "a b" strings or [a, b] pairs; ignore_merges), with
 *   normalizer     null or NFC (Qwen2/3);
 *   pre_tokenizer  ByteLevel with its own regex (GPT-2, GPT-NeoX/Pythia),
 *                  Sequence[Digits(individual_digits), ByteLevel] (SmolLM2), or
 *                  Sequence[Split(pattern, Isolated), ByteLevel(use_regex: false)]
 *                  with Llama 3's or Qwen2's pattern, recognised by its text;
 *   decoder        ByteLevel (or null);
 *   post_processor null, ByteLevel, TemplateProcessing "[BOS] $A", or a
 *                  Sequence of those;
 *   added_tokens   matched in the text before anything else (special or
 *                  not, leftmost then longest, as tokenizers.js and the Rust
 *                  crate do), with lstrip / rstrip; single_word is refused.
 * SentencePiece-style BPE (b->sp: no ByteLevel step in the pre_tokenizer;
 * Llama 2, TinyLlama, Mistral, Gemma): tokens are plain UTF-8 strings with
 * "\u2581" for a space, merged character by character, with
 *   normalizer     null, or Prepend / Replace (of a string) / NFC, or a
 *                  Sequence of those (run on each stretch between added tokens);
 *   pre_tokenizer  null, Metaspace (replacement, prepend_scheme always / first /
 *                  never, split: false), or Split on " " after a normalizer
 *                  that replaced every " " (Gemma: it splits nothing);
 *   model          byte_fallback (a character without a token becomes its
 *                  bytes' "<0xNN>" tokens), unk_token, fuse_unk, ignore_merges;
 *   decoder        Replace steps, ByteFallback, Fuse, Strip (in that order),
 *                  or Metaspace.
 * Where tokenizers.js and the Rust crate differ, tokenizers.js is followed
 * (Metaspace "first" prepends to every stretch of the text's first section);
 * Metaspace with split: true is refused because the two differ on it.
 * Anything else (WordPiece, Unigram, WordLevel, another pattern, dropout,
 * a subword prefix, truncation, remove_space) is refused with a code and
 * a message naming the field, never approximated.
 *
 * The token to prepend (alab_bpe_bos_to_add) is decided once here:
 *   1. tokenizer_config.json's add_bos_token, when it is a boolean: true ->
 *      its bos_token (a string or {"content": ...}), false -> none;
 *   2. else a TemplateProcessing whose single template is [SpecialToken, $A]
 *      -> that token (Llama 3.x's current files);
 *   3. else none.
 * alab_bpe_encode never prepends it: callers put it in front of the ids.
 */
#include "bpe_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOKENIZER_JSON_BYTES (256u << 20)
#define MAX_TOKENIZER_CONFIG_BYTES (16u << 20)

static const char LLAMA3_PATTERN[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char QWEN2_PATTERN[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

#define TJ "tokenizer.json"

static int is_str(const json_value *v, const char *s) {
    return v && v->type == JSON_STRING && strcmp(v->u.str, s) == 0;
}
static int is_null(const json_value *v) { return !v || v->type == JSON_NULL; }

/* A boolean member: 0/1, or def when absent or null; -1 if another type. */
static int get_bool(const json_value *obj, const char *key, int def) {
    const json_value *v = json_get(obj, key);
    if (is_null(v)) return def;
    if (v->type == JSON_TRUE) return 1;
    if (v->type == JSON_FALSE) return 0;
    return -1;
}

static const char *type_of(const json_value *obj) {
    const json_value *t = json_get(obj, "type");
    return t && t->type == JSON_STRING ? t->u.str : NULL;
}

/* ByteLevel pre-tokenizer / decoder / post-processor settings. */
static int read_byte_level(const json_value *v, int *use_regex, int *add_prefix_space, const char *what) {
    int ur = get_bool(v, "use_regex", 1), aps = get_bool(v, "add_prefix_space", 0);
    if (ur < 0 || aps < 0) return alab_fail(ALAB_EVOCAB, TJ ": %s ByteLevel has a non-boolean setting", what);
    if (use_regex) *use_regex = ur;
    if (add_prefix_space) *add_prefix_space = aps;
    return ALAB_OK;
}

static int read_pre_tokenizer(alab_bpe *b, const json_value *pt) {
    const char *type = type_of(pt);
    if (!pt || pt->type != JSON_OBJECT || !type)
        return alab_fail(ALAB_EVOCAB, TJ ": pre_tokenizer must be an object with a type (a byte-level BPE has one)");
    int use_regex = 1, aps = 0, rc;
    if (strcmp(type, "ByteLevel") == 0) {
        if ((rc = read_byte_level(pt, &use_regex, &aps, "pre_tokenizer"))) return rc;
        if (!use_regex)
            return alab_fail(ALAB_EVOCAB, TJ ": a ByteLevel pre_tokenizer without its regex (use_regex: false) is "
                             "not supported alone");
        b->pretok = BPE_PRE_GPT2;
        b->add_prefix_space = aps;
        return ALAB_OK;
    }
    const json_value *list = json_get(pt, "pretokenizers");
    if (strcmp(type, "Sequence") != 0 || !list || list->type != JSON_ARRAY || list->n != 2)
        return alab_fail(ALAB_EVOCAB, TJ ": pre_tokenizer of type \"%.40s\" is not supported (supported: ByteLevel, "
                         "Sequence[Split, ByteLevel], Sequence[Digits, ByteLevel])", type);
    const json_value *first = &list->u.items[0], *second = &list->u.items[1];
    if (!is_str(json_get(second, "type"), "ByteLevel"))
        return alab_fail(ALAB_EVOCAB, TJ ": pre_tokenizer Sequence must end with ByteLevel");
    if ((rc = read_byte_level(second, &use_regex, &aps, "pre_tokenizer"))) return rc;
    if (aps) return alab_fail(ALAB_EVOCAB, TJ ": pre_tokenizer Sequence with add_prefix_space: true is not supported");
    const char *t1 = type_of(first);
    if (t1 && strcmp(t1, "Digits") == 0) {
        if (get_bool(first, "individual_digits", 0) != 1 || !use_regex)
            return alab_fail(ALAB_EVOCAB, TJ ": only Digits(individual_digits: true) then ByteLevel(use_regex: true) "
                             "is supported");
        b->pretok = BPE_PRE_GPT2_DIGITS;
        return ALAB_OK;
    }
    if (!t1 || strcmp(t1, "Split") != 0)
        return alab_fail(ALAB_EVOCAB, TJ ": pre_tokenizer Sequence starting with \"%.40s\" is not supported",
                         t1 ? t1 : "(no type)");
    if (use_regex)
        return alab_fail(ALAB_EVOCAB, TJ ": Split followed by ByteLevel(use_regex: true) is not supported");
    const json_value *pat = json_get(json_get(first, "pattern"), "Regex");
    if (!pat || pat->type != JSON_STRING)
        return alab_fail(ALAB_EVOCAB, TJ ": Split needs a pattern {\"Regex\": ...}");
    const json_value *behavior = json_get(first, "behavior");
    if (!is_str(behavior, "Isolated") || get_bool(first, "invert", 0) != 0)
        return alab_fail(ALAB_EVOCAB, TJ ": only Split with behavior \"Isolated\" and invert false is supported");
    if (strcmp(pat->u.str, LLAMA3_PATTERN) == 0) b->pretok = BPE_PRE_LLAMA3;
    else if (strcmp(pat->u.str, QWEN2_PATTERN) == 0) b->pretok = BPE_PRE_QWEN2;
    else
        return alab_fail(ALAB_EVOCAB, TJ ": unknown Split pattern \"%.120s\" (known: Llama 3's and Qwen2's)",
                         pat->u.str);
    return ALAB_OK;
}

static int read_normalizer(alab_bpe *b, const json_value *nz) {
    if (is_null(nz)) return ALAB_OK;
    const char *type = type_of(nz);
    if (type && strcmp(type, "NFC") == 0) { b->normalizer = BPE_NORM_NFC; return ALAB_OK; }
    if (type && strcmp(type, "Sequence") == 0) {
        const json_value *l = json_get(nz, "normalizers");
        if (l && l->type == JSON_ARRAY && l->n == 0) return ALAB_OK;
    }
    return alab_fail(ALAB_EVOCAB, TJ ": normalizer \"%.40s\" is not supported (supported: none, NFC)",
                     type ? type : "(no type)");
}

/* ---- SentencePiece-style files (b->sp) ---- */

/* A pre_tokenizer that holds a ByteLevel step marks a byte-level BPE; the others are read as sp. */
static int has_byte_level(const json_value *pt) {
    if (is_str(json_get(pt, "type"), "ByteLevel")) return 1;
    const json_value *l = json_get(pt, "pretokenizers");
    for (uint32_t i = 0; l && l->type == JSON_ARRAY && i < l->n; i++)
        if (has_byte_level(&l->u.items[i])) return 1;
    return 0;
}

/* A literal string setting (at most max bytes, non-empty unless empty_ok) copied to *out. */
static int get_text(const json_value *v, size_t max, int empty_ok, char **out, size_t *n, const char *what) {
    if (!v || v->type != JSON_STRING || (!empty_ok && v->n == 0) || v->n > max)
        return alab_fail(ALAB_EVOCAB, TJ ": %s must be a string of %s1 to %zu bytes", what, empty_ok ? "0 or " : "",
                         max);
    *out = malloc(v->n + 1);
    if (!*out) return alab_fail(ALAB_ENOMEM, TJ ": out of memory");
    memcpy(*out, v->u.str, v->n + 1);
    *n = v->n;
    return ALAB_OK;
}

/* A Replace's pattern: {"String": ...} only (a Regex is refused). */
static const json_value *string_pattern(const json_value *step, const char *what) {
    const json_value *p = json_get(json_get(step, "pattern"), "String");
    if (!p) alab_fail(ALAB_EVOCAB, TJ ": %s Replace needs a pattern {\"String\": ...} (a Regex pattern is not supported)",
                      what);
    return p;
}

#define SP_MAX_STEP_BYTES 16
static int read_sp_norm_step(alab_bpe *b, const json_value *st, int depth) {
    const char *type = type_of(st);
    if (!type) return alab_fail(ALAB_EVOCAB, TJ ": normalizer step without a type");
    if (strcmp(type, "Sequence") == 0) {
        const json_value *l = json_get(st, "normalizers");
        if (!l || l->type != JSON_ARRAY || depth > 2)
            return alab_fail(ALAB_EVOCAB, TJ ": normalizer Sequence needs a normalizers array (nested at most twice)");
        for (uint32_t i = 0; i < l->n; i++) {
            int rc = read_sp_norm_step(b, &l->u.items[i], depth + 1);
            if (rc) return rc;
        }
        return ALAB_OK;
    }
    if (b->n_norm == SP_MAX_NORM_STEPS)
        return alab_fail(ALAB_EVOCAB, TJ ": more than %d normalizer steps", SP_MAX_NORM_STEPS);
    sp_norm_step *n = &b->norm[b->n_norm];
    if (strcmp(type, "NFC") == 0) { n->kind = SP_NORM_NFC; b->n_norm++; return ALAB_OK; }
    if (strcmp(type, "Prepend") == 0) {
        n->kind = SP_NORM_PREPEND;
        int rc = get_text(json_get(st, "prepend"), SP_MAX_STEP_BYTES, 0, &n->with, &n->with_n, "normalizer Prepend's prepend");
        if (!rc) b->n_norm++;
        return rc;
    }
    if (strcmp(type, "Replace") == 0) {
        n->kind = SP_NORM_REPLACE;
        const json_value *p = string_pattern(st, "normalizer");
        if (!p) return ALAB_EVOCAB;
        int rc = get_text(p, SP_MAX_STEP_BYTES, 0, &n->pat, &n->pat_n, "normalizer Replace's pattern");
        if (!rc) {
            rc = get_text(json_get(st, "content"), SP_MAX_STEP_BYTES, 1, &n->with, &n->with_n,
                          "normalizer Replace's content");
            b->n_norm++; /* freed with the tokenizer either way */
        }
        return rc;
    }
    return alab_fail(ALAB_EVOCAB, TJ ": normalizer \"%.40s\" is not supported in a SentencePiece-style file "
                     "(supported: Prepend, Replace of a string, NFC, Sequence of those)", type);
}

static int read_sp_normalizer(alab_bpe *b, const json_value *nz) {
    if (is_null(nz)) return ALAB_OK;
    int rc = read_sp_norm_step(b, nz, 0);
    if (rc) return rc;
    /* the normalizer's own growth, before the added tokens are normalized with it (the whole file is checked
     * again once they are in: the Metaspace and the added tokens only add to it) */
    return bpe_expansion(b, TJ);
}

/* After the normalizer's steps, can the text still hold a " "? (a Split on " " is then not a no-op) */
static int spaces_survive(const alab_bpe *b) {
    int survive = 1;
    for (int i = 0; i < b->n_norm; i++) {
        const sp_norm_step *n = &b->norm[i];
        if (n->kind == SP_NORM_REPLACE && n->pat_n == 1 && n->pat[0] == ' ') survive = 0;
        if (n->with && memchr(n->with, ' ', n->with_n)) survive = 1;
    }
    return survive;
}

static int read_sp_pre_tokenizer(alab_bpe *b, const json_value *pt) {
    b->sp_pretok = SP_PRE_NONE;
    if (is_null(pt)) return ALAB_OK;
    const char *type = type_of(pt);
    if (type && strcmp(type, "Metaspace") == 0) {
        const json_value *rep = json_get(pt, "replacement"), *str_rep = json_get(pt, "str_rep");
        if (!rep || rep->type != JSON_STRING || rep->n == 0 || rep->n >= sizeof b->meta)
            return alab_fail(ALAB_EVOCAB, TJ ": Metaspace needs a replacement of 1 to %zu bytes", sizeof b->meta - 1);
        if (!is_null(str_rep) && !(str_rep->type == JSON_STRING && (str_rep->n == 0 || strcmp(str_rep->u.str, rep->u.str) == 0)))
            return alab_fail(ALAB_EVOCAB, TJ ": Metaspace with a str_rep other than its replacement is not supported");
        memcpy(b->meta, rep->u.str, rep->n + 1);
        b->meta_n = rep->n;
        const json_value *scheme = json_get(pt, "prepend_scheme");
        if (is_null(scheme) || is_str(scheme, "always")) b->meta_prepend = SP_PREPEND_ALWAYS; /* tokenizers.js's default */
        else if (is_str(scheme, "first")) b->meta_prepend = SP_PREPEND_FIRST;
        else if (is_str(scheme, "never")) b->meta_prepend = SP_PREPEND_NEVER;
        else return alab_fail(ALAB_EVOCAB, TJ ": Metaspace prepend_scheme must be \"always\", \"first\" or \"never\"");
        if (get_bool(pt, "split", 1) != 0)
            return alab_fail(ALAB_EVOCAB, TJ ": Metaspace with split: true (or no split) is not supported: the Rust "
                             "crate cuts the text before every replacement, tokenizers.js does not, and their ids "
                             "differ (runs of spaces)");
        b->sp_pretok = SP_PRE_METASPACE;
        return ALAB_OK;
    }
    if (type && strcmp(type, "Split") == 0) {
        /* Gemma: Split on " " after a normalizer that replaced every " ": nothing left to split */
        const json_value *p = json_get(json_get(pt, "pattern"), "String");
        if (p && p->type == JSON_STRING && p->n == 1 && p->u.str[0] == ' ' && !spaces_survive(b)) return ALAB_OK;
        return alab_fail(ALAB_EVOCAB, TJ ": a Split pre_tokenizer in a SentencePiece-style file is supported only on "
                         "\" \" after a normalizer that replaces every \" \" (then it splits nothing)");
    }
    return alab_fail(ALAB_EVOCAB, TJ ": pre_tokenizer \"%.40s\" is not supported (supported: ByteLevel and its "
                     "sequences, or for a SentencePiece-style file none, Metaspace, Split on \" \")",
                     type ? type : "(no type)");
}

/* Decoder steps: Replace of a string (any number), then ByteFallback, then Fuse, then Strip of the joined text;
 * or Metaspace alone (its replacement -> " ", one leading space cut). */
static int read_sp_decoder(alab_bpe *b, const json_value *d) {
    sp_decoder *dec = &b->dec;
    if (is_null(d)) return ALAB_OK;
    const char *type = type_of(d);
    if (type && strcmp(type, "Metaspace") == 0) {
        const json_value *rep = json_get(d, "replacement");
        if (!rep || rep->type != JSON_STRING || rep->n == 0 || rep->n > SP_MAX_STEP_BYTES)
            return alab_fail(ALAB_EVOCAB, TJ ": decoder Metaspace needs a replacement of 1 to %d bytes", SP_MAX_STEP_BYTES);
        sp_norm_step *r = &dec->replace[dec->n_replace++];
        r->pat = malloc(rep->n + 1);
        r->with = malloc(2);
        if (!r->pat || !r->with) return alab_fail(ALAB_ENOMEM, TJ ": out of memory");
        memcpy(r->pat, rep->u.str, rep->n + 1);
        r->pat_n = rep->n;
        memcpy(r->with, " ", 2);
        r->with_n = 1;
        dec->strip_char = ' ';
        dec->strip_start = 1; /* tokenizers.js cuts the first token's leading space whatever the prepend_scheme */
        return ALAB_OK;
    }
    const json_value *list = json_get(d, "decoders");
    const json_value *one = d;
    uint32_t n = 1;
    if (type && strcmp(type, "Sequence") == 0) {
        if (!list || list->type != JSON_ARRAY) return alab_fail(ALAB_EVOCAB, TJ ": decoder Sequence needs decoders");
        n = list->n;
        one = NULL;
    }
    int stage = 0; /* 0: replaces, 1: after ByteFallback, 2: after Fuse, 3: after Strip */
    for (uint32_t i = 0; i < n; i++) {
        const json_value *st = one ? one : &list->u.items[i];
        const char *t = type_of(st);
        if (t && strcmp(t, "Replace") == 0 && stage == 0) {
            if (dec->n_replace == SP_MAX_DEC_STEPS)
                return alab_fail(ALAB_EVOCAB, TJ ": more than %d decoder Replace steps", SP_MAX_DEC_STEPS);
            sp_norm_step *r = &dec->replace[dec->n_replace];
            const json_value *p = string_pattern(st, "decoder");
            if (!p) return ALAB_EVOCAB;
            int rc = get_text(p, SP_MAX_STEP_BYTES, 0, &r->pat, &r->pat_n, "decoder Replace's pattern");
            dec->n_replace++;
            if (!rc) rc = get_text(json_get(st, "content"), SP_MAX_STEP_BYTES, 1, &r->with, &r->with_n,
                                   "decoder Replace's content");
            if (rc) return rc;
        } else if (t && strcmp(t, "ByteFallback") == 0 && stage == 0) {
            dec->byte_fallback = 1;
            stage = 1;
        } else if (t && strcmp(t, "Fuse") == 0 && stage <= 1) {
            stage = 2;
        } else if (t && strcmp(t, "Strip") == 0 && stage == 2) {
            const json_value *c = json_get(st, "content");
            int64_t a = 0, z = 0;
            if (!c || c->type != JSON_STRING || c->n != 1 || (unsigned char)c->u.str[0] >= 0x80 ||
                (!is_null(json_get(st, "start")) && json_int64(json_get(st, "start"), &a)) ||
                (!is_null(json_get(st, "stop")) && json_int64(json_get(st, "stop"), &z)) || a < 0 || z < 0 ||
                a > 64 || z > 64)
                return alab_fail(ALAB_EVOCAB, TJ ": decoder Strip needs one ASCII character and start, stop in 0..64");
            dec->strip_char = (unsigned char)c->u.str[0];
            dec->strip_start = (int)a;
            dec->strip_stop = (int)z;
            stage = 3;
        } else {
            return alab_fail(ALAB_EVOCAB, TJ ": decoder step \"%.40s\" is not supported here (a SentencePiece-style "
                             "decoder is Replace steps, then ByteFallback, Fuse, Strip, in that order; or Metaspace)",
                             t ? t : "(no type)");
        }
    }
    return ALAB_OK;
}

static int read_decoder(const json_value *d) {
    if (is_null(d)) return ALAB_OK;
    if (is_str(json_get(d, "type"), "ByteLevel")) return ALAB_OK;
    const char *type = type_of(d);
    return alab_fail(ALAB_EVOCAB, TJ ": decoder \"%.40s\" is not supported (a byte-level BPE decodes with ByteLevel)",
                     type ? type : "(no type)");
}

/* Content of a special-token reference of the template, by name. */
static const char *template_token(const json_value *root, const json_value *item) {
    const json_value *st = json_get(item, "SpecialToken");
    const json_value *name = json_get(st, "id");
    if (!name || name->type != JSON_STRING || memchr(name->u.str, 0, name->n)) return NULL; /* a NUL would cut the name */
    return name->u.str;
}

/* post_processor: sets *bos_name to the template's leading special token. */
static int read_post_processor(const json_value *root, const json_value *pp, const char **bos_name) {
    if (is_null(pp)) return ALAB_OK;
    const char *type = type_of(pp);
    if (!type) return alab_fail(ALAB_EVOCAB, TJ ": post_processor has no type");
    if (strcmp(type, "ByteLevel") == 0) return ALAB_OK;
    if (strcmp(type, "Sequence") == 0) {
        const json_value *l = json_get(pp, "processors");
        if (!l || l->type != JSON_ARRAY) return alab_fail(ALAB_EVOCAB, TJ ": post_processor Sequence has no processors");
        for (uint32_t i = 0; i < l->n; i++) {
            int rc = read_post_processor(root, &l->u.items[i], bos_name);
            if (rc) return rc;
        }
        return ALAB_OK;
    }
    if (strcmp(type, "TemplateProcessing") == 0) {
        const json_value *single = json_get(pp, "single");
        int ok = single && single->type == JSON_ARRAY && (single->n == 1 || single->n == 2);
        if (ok && single->n == 2) {
            *bos_name = template_token(root, &single->u.items[0]);
            ok = *bos_name != NULL;
        }
        const json_value *seq = ok ? json_get(&single->u.items[single->n - 1], "Sequence") : NULL;
        if (!ok || !is_str(json_get(seq, "id"), "A"))
            return alab_fail(ALAB_EVOCAB, TJ ": post_processor TemplateProcessing: only \"$A\" or \"<special> $A\" "
                             "single templates are supported");
        /* the name may map to an id in special_tokens */
        return ALAB_OK;
    }
    return alab_fail(ALAB_EVOCAB, TJ ": post_processor \"%.40s\" is not supported", type);
}

/* Id of the added token (or vocabulary token) with this content, or -1. */
static int token_id_of(const alab_bpe *b, const char *content) {
    size_t n = strlen(content);
    for (int i = 0; i < b->n_added; i++) {
        int id = b->added[i].id;
        if (b->off[id + 1] - b->off[id] - 1 == n && memcmp(b->bytes + b->off[id], content, n) == 0) return id;
    }
    return -1;
}

static int read_model(alab_bpe *b, const json_value *model, const int16_t *char_to_byte) {
    if (!model || model->type != JSON_OBJECT) return alab_fail(ALAB_EVOCAB, TJ ": no model object");
    const char *type = type_of(model);
    if (type && strcmp(type, "BPE") != 0)
        return alab_fail(ALAB_EVOCAB, TJ ": model type \"%.40s\" is not supported (only byte-level BPE)", type);
    const json_value *vocab = json_get(model, "vocab"), *merges = json_get(model, "merges");
    if (!vocab || !merges || merges->type != JSON_ARRAY)
        return alab_fail(ALAB_EVOCAB, TJ ": model needs a vocab object and a merges array");
    const json_value *dropout = json_get(model, "dropout");
    if (!is_null(dropout) && !(dropout->type == JSON_NUMBER && dropout->u.num == 0))
        return alab_fail(ALAB_EVOCAB, TJ ": model.dropout is not supported (it makes encoding random)");
    const int bf = get_bool(model, "byte_fallback", 0), fu = get_bool(model, "fuse_unk", 0);
    if (bf < 0 || fu < 0) return alab_fail(ALAB_EVOCAB, TJ ": model.byte_fallback / fuse_unk is not a boolean");
    if (bf && !b->sp)
        return alab_fail(ALAB_EVOCAB, TJ ": model.byte_fallback with a ByteLevel pre_tokenizer is not supported");
    b->byte_fallback = bf;
    b->fuse_unk = fu;
    static const char *const affixes[] = {"continuing_subword_prefix", "end_of_word_suffix"};
    for (int i = 0; i < 2; i++) {
        const json_value *a = json_get(model, affixes[i]);
        if (!is_null(a) && !(a->type == JSON_STRING && a->n == 0))
            return alab_fail(ALAB_EVOCAB, TJ ": model.%s is not supported", affixes[i]);
    }
    int im = get_bool(model, "ignore_merges", 0);
    if (im < 0) return alab_fail(ALAB_EVOCAB, TJ ": model.ignore_merges is not a boolean");
    b->ignore_merges = im;
    int rc = bpe_load_vocab_object(b, vocab, TJ " model.vocab", char_to_byte);
    if (rc) return rc;
    const json_value *unk = json_get(model, "unk_token");
    if (!is_null(unk)) {
        /* tokenizers.js looks it up in the model's vocabulary; a name that is not there gives no id */
        if (unk->type != JSON_STRING || memchr(unk->u.str, 0, unk->n))
            return alab_fail(ALAB_EVOCAB, TJ ": model.unk_token is not a string");
        int id = -1;
        for (int i = 0; i < b->V && id < 0; i++)
            if (b->off[i + 1] - b->off[i] - 1 == unk->n && memcmp(b->bytes + b->off[i], unk->u.str, unk->n) == 0) id = i;
        if (id < 0 && b->sp)
            return alab_fail(ALAB_EVOCAB, TJ ": model.unk_token \"%.40s\" is not a token of model.vocab", unk->u.str);
        if (b->sp) b->unk = id; /* byte-level: every text has tokens, the unknown token is never used */
    }

    int32_t *made_at = NULL;
    size_t max_len = 0;
    for (uint32_t i = 0; i < merges->n; i++) {
        const json_value *m = &merges->u.items[i];
        size_t len = m->type == JSON_STRING ? m->n
                   : (m->type == JSON_ARRAY && m->n == 2 && m->u.items[0].type == JSON_STRING &&
                      m->u.items[1].type == JSON_STRING) ? m->u.items[0].n + m->u.items[1].n : (size_t)-1;
        if (len == (size_t)-1)
            return alab_fail(ALAB_EMERGES, TJ ": model.merges[%u] is neither \"a b\" nor [\"a\", \"b\"]", i);
        if (len > max_len) max_len = len;
    }
    unsigned char *scratch = malloc(max_len + 1);
    rc = scratch ? bpe_merges_begin(b, merges->n, &made_at) : alab_fail(ALAB_ENOMEM, TJ ": out of memory");
    char where[64];
    for (uint32_t i = 0; i < merges->n && rc == ALAB_OK; i++) {
        const json_value *m = &merges->u.items[i];
        snprintf(where, sizeof where, TJ " model.merges[%u]", i);
        const unsigned char *l, *r;
        size_t ll, rl;
        if (m->type == JSON_STRING) {
            l = (const unsigned char *)m->u.str;
            const unsigned char *sp = memchr(l, ' ', m->n);
            if (!sp || sp == l || sp == l + m->n - 1 || memchr(sp + 1, ' ', m->n - (size_t)(sp - l) - 1)) {
                rc = alab_fail(ALAB_EMERGES, "%s: expected two tokens separated by one space, got \"%.60s\"", where,
                               m->u.str);
                break;
            }
            ll = (size_t)(sp - l);
            r = sp + 1;
            rl = m->n - ll - 1;
        } else {
            l = (const unsigned char *)m->u.items[0].u.str;
            ll = m->u.items[0].n;
            r = (const unsigned char *)m->u.items[1].u.str;
            rl = m->u.items[1].n;
            if (ll == 0 || rl == 0) {
                rc = alab_fail(ALAB_EMERGES, "%s: an empty token", where);
                break;
            }
        }
        rc = bpe_add_merge(b, made_at, 0, l, ll, r, rl, scratch, char_to_byte, where);
    }
    free(made_at);
    free(scratch);
    return rc;
}

static int read_added_tokens(alab_bpe *b, const json_value *list) {
    if (is_null(list)) return ALAB_OK;
    if (list->type != JSON_ARRAY) return alab_fail(ALAB_EVOCAB, TJ ": added_tokens is not an array");
    if (list->n > ALAB_MAX_VOCAB) return alab_fail(ALAB_ELIMIT, TJ ": more than %d added tokens", ALAB_MAX_VOCAB);
    bpe_token_spec *spec = calloc((size_t)list->n + 1, sizeof *spec);
    if (!spec) return alab_fail(ALAB_ENOMEM, TJ ": out of memory");
    int rc = ALAB_OK;
    for (uint32_t i = 0; i < list->n && rc == ALAB_OK; i++) {
        const json_value *t = &list->u.items[i], *content = json_get(t, "content");
        int64_t id;
        if (t->type != JSON_OBJECT || !content || content->type != JSON_STRING || json_int64(json_get(t, "id"), &id)) {
            rc = alab_fail(ALAB_EVOCAB, TJ ": added_tokens[%u] needs an integer id and a string content", i);
            break;
        }
        int sw = get_bool(t, "single_word", 0), ls = get_bool(t, "lstrip", 0), rs = get_bool(t, "rstrip", 0);
        int sp = get_bool(t, "special", 0), nz = get_bool(t, "normalized", -1);
        if (sw < 0 || ls < 0 || rs < 0 || sp < 0 || nz < -1) {
            rc = alab_fail(ALAB_EVOCAB, TJ ": added_tokens[%u] has a non-boolean flag", i);
            break;
        }
        if (sw) {
            rc = alab_fail(ALAB_EVOCAB, TJ ": added_tokens[%u] (\"%.40s\") has single_word: true, which is not "
                           "supported", i, content->u.str);
            break;
        }
        if (nz < 0) nz = !sp; /* the default of tokenizers.js and the Rust crate */
        spec[i] = (bpe_token_spec){id, content->u.str, content->n,
                                   {0, (uint8_t)ls, (uint8_t)rs, (uint8_t)nz, (uint8_t)sp}};
    }
    if (rc == ALAB_OK) rc = bpe_add_tokens(b, spec, (int)list->n, TJ " added_tokens");
    free(spec);
    return rc;
}

/* tokenizer_config.json: add_bos_token and bos_token. *decided: 1 if it
 * says whether to add one (then *bos is the id or -1). */
static int read_config(alab_bpe *b, const char *cfg, size_t cfg_len, int *decided, int *bos) {
    *decided = 0;
    if (!cfg || cfg_len == 0) return ALAB_OK;
    json_doc doc;
    int rc = json_parse(&doc, cfg, cfg_len, MAX_TOKENIZER_CONFIG_BYTES);
    if (rc == ALAB_EJSON) rc = alab_fail(ALAB_EJSON, "tokenizer_config.json: %s", doc.err);
    else if (rc == ALAB_ELIMIT)
        rc = alab_fail(ALAB_ELIMIT, "tokenizer_config.json: %zu bytes is over the limit of %u", cfg_len,
                       MAX_TOKENIZER_CONFIG_BYTES);
    else if (rc) rc = alab_fail(rc, "tokenizer_config.json: %s", doc.err);
    else if (doc.root->type != JSON_OBJECT) rc = alab_fail(ALAB_EVOCAB, "tokenizer_config.json: not an object");
    /* tokenizers.js reads these from tokenizer_config.json and changes the text with them: not supported */
    static const char *const text_flags[] = {"remove_space", "do_lowercase_and_remove_accent"};
    for (int i = 0; i < 2 && rc == ALAB_OK; i++)
        if (get_bool(doc.root, text_flags[i], 0) != 0)
            rc = alab_fail(ALAB_EVOCAB, "tokenizer_config.json: %s is set, which is not supported", text_flags[i]);
    if (rc == ALAB_OK) {
        int add = get_bool(doc.root, "add_bos_token", -2);
        if (add == -1) rc = alab_fail(ALAB_EVOCAB, "tokenizer_config.json: add_bos_token is not a boolean");
        else if (add == 0) { *decided = 1; *bos = -1; }
        else if (add == 1) {
            const json_value *t = json_get(doc.root, "bos_token");
            if (t && t->type == JSON_OBJECT) t = json_get(t, "content");
            if (!t || t->type != JSON_STRING)
                rc = alab_fail(ALAB_EVOCAB, "tokenizer_config.json: add_bos_token is true but bos_token is not set");
            else if (memchr(t->u.str, 0, t->n)) /* C would cut the name at the NUL and find another token */
                rc = alab_fail(ALAB_EVOCAB, "tokenizer_config.json: bos_token contains a NUL character");
            else if ((*bos = token_id_of(b, t->u.str)) < 0)
                rc = alab_fail(ALAB_EVOCAB, "tokenizer_config.json: bos_token \"%.40s\" is not an added token",
                               t->u.str);
            else *decided = 1;
        }
    }
    json_free(&doc);
    return rc;
}

static int load_hf(alab_bpe *b, const char *text, size_t len, const char *cfg, size_t cfg_len) {
    json_doc doc;
    int rc = json_parse(&doc, text, len, MAX_TOKENIZER_JSON_BYTES);
    if (rc == ALAB_EJSON) rc = alab_fail(ALAB_EJSON, TJ ": %s", doc.err);
    else if (rc == ALAB_ELIMIT)
        rc = alab_fail(ALAB_ELIMIT, TJ ": %zu bytes is over the limit of %u", len, MAX_TOKENIZER_JSON_BYTES);
    else if (rc) rc = alab_fail(rc, TJ ": %s", doc.err);
    if (rc) { json_free(&doc); return rc; }

    const json_value *root = doc.root;
    const char *bos_name = NULL;
    int16_t char_to_byte[N_BYTE_CHARS];
    bpe_byte_alphabet(char_to_byte);
    b->hf = 1;
    if (root->type != JSON_OBJECT) rc = alab_fail(ALAB_EVOCAB, TJ ": not an object");
    if (!rc && !is_null(json_get(root, "truncation")))
        rc = alab_fail(ALAB_EVOCAB, TJ ": truncation is not supported (set it to null)");
    /* byte-level (a ByteLevel pre-tokenizer: GPT-2, Llama 3, Qwen) or SentencePiece-style (Llama 2, Gemma) */
    if (!rc) b->sp = !has_byte_level(json_get(root, "pre_tokenizer"));
    if (!rc) rc = b->sp ? read_sp_normalizer(b, json_get(root, "normalizer")) : read_normalizer(b, json_get(root, "normalizer"));
    if (!rc) rc = b->sp ? read_sp_pre_tokenizer(b, json_get(root, "pre_tokenizer"))
                        : read_pre_tokenizer(b, json_get(root, "pre_tokenizer"));
    if (!rc) rc = b->sp ? read_sp_decoder(b, json_get(root, "decoder")) : read_decoder(json_get(root, "decoder"));
    if (!rc) rc = read_post_processor(root, json_get(root, "post_processor"), &bos_name);
    if (!rc) rc = read_model(b, json_get(root, "model"), b->sp ? NULL : char_to_byte);
    if (!rc) rc = read_added_tokens(b, json_get(root, "added_tokens"));
    if (!rc && b->sp) rc = bpe_sp_finish(b, TJ);
    if (!rc) rc = bpe_expansion(b, TJ); /* the worst case of ids per byte of text, or ELIMIT */
    int decided = 0, bos = -1;
    if (!rc) rc = read_config(b, cfg, cfg_len, &decided, &bos);
    if (!rc) {
        if (decided) b->bos = bos;
        else if (bos_name) {
            /* special_tokens maps the template's name to ids; else the name is the content */
            const json_value *pp = json_get(root, "post_processor");
            const json_value *entry = NULL;
            for (int depth = 0; pp && depth < 2 && !entry; depth++) {
                const json_value *st = json_get(pp, "special_tokens");
                if (st) entry = json_get(st, bos_name);
                const json_value *l = json_get(pp, "processors");
                pp = NULL;
                for (uint32_t i = 0; l && l->type == JSON_ARRAY && i < l->n && !entry; i++) {
                    st = json_get(&l->u.items[i], "special_tokens");
                    if (st) entry = json_get(st, bos_name);
                }
            }
            const json_value *ids = json_get(entry, "ids");
            int64_t id = -1;
            if (ids && ids->type == JSON_ARRAY && ids->n == 1 && json_int64(&ids->u.items[0], &id) == 0) {
                if (id < 0 || id >= b->V)
                    rc = alab_fail(ALAB_EVOCAB, TJ ": the template's token \"%.40s\" has id %lld, outside 0..%d",
                                   bos_name, (long long)id, b->V - 1);
                else b->bos = (int)id;
            } else if ((b->bos = token_id_of(b, bos_name)) < 0) {
                rc = alab_fail(ALAB_EVOCAB, TJ ": the template's token \"%.40s\" is not an added token", bos_name);
            }
        }
    }
    json_free(&doc);
    return rc;
}

int alab_bpe_load_hf(alab_bpe **out, const char *tokenizer_json, size_t len, const char *tokenizer_config_json,
                     size_t cfg_len) {
    if (!out) return alab_fail(ALAB_EINVAL, "alab_bpe_load_hf: out is NULL");
    *out = NULL;
    if (!tokenizer_json || (!tokenizer_config_json && cfg_len > 0))
        return alab_fail(ALAB_EINVAL, "alab_bpe_load_hf: tokenizer_json is NULL");
    alab_bpe *b = malloc(sizeof *b);
    if (!b) return alab_fail(ALAB_ENOMEM, "alab_bpe_load_hf: out of memory");
    bpe_init(b);
    int rc = load_hf(b, tokenizer_json, len, tokenizer_config_json, cfg_len);
    if (rc) {
        alab_bpe_free(b);
        return rc;
    }
    if (!b->ignore_merges && !b->sp) { /* only ignore_merges and sp look tokens up by their bytes after loading */
        free(b->ix.slots);
        b->ix.slots = NULL;
    }
    *out = b;
    return ALAB_OK;
}
