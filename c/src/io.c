/* io.c — loading a model directory from the file system (native builds only;
 * the browser hands the same files over as buffers). */
#include "internal.h"
#include "json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read a whole file into a malloc'd buffer (plus a NUL byte not counted in
 * *len, so text files can be treated as C strings by the caller if needed). */
static int read_file(char **out, size_t *len, const char *path, size_t max_len) {
    *out = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return alab_fail(ALAB_EIO, "cannot open %s: %s", path, strerror(errno));
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return alab_fail(ALAB_EIO, "cannot seek in %s", path);
    }
    long size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return alab_fail(ALAB_EIO, "cannot tell the size of %s", path);
    }
    if ((unsigned long)size > max_len) {
        fclose(f);
        return alab_fail(ALAB_ELIMIT, "%s is %ld bytes, over the limit of %zu", path, size, max_len);
    }
    char *buf = malloc((size_t)size + 1);
    if (!buf) {
        fclose(f);
        return alab_fail(ALAB_ENOMEM, "cannot allocate %ld bytes for %s", size, path);
    }
    size_t got = fread(buf, 1, (size_t)size, f);
    fclose(f);
    if (got != (size_t)size) {
        free(buf);
        return alab_fail(ALAB_EIO, "short read on %s (%zu of %ld bytes)", path, got, size);
    }
    buf[size] = '\0';
    *out = buf;
    *len = (size_t)size;
    return ALAB_OK;
}

#define TEXT_FILE_MAX ((size_t)64 << 20)    /* config, vocab, merges, tokenizer, index */
#define WEIGHTS_FILE_MAX ((size_t)16 << 30) /* one safetensors file      */

static char *join_path(const char *dir, const char *name) {
    size_t plen = strlen(dir) + strlen(name) + 2;
    char *path = malloc(plen);
    if (path) snprintf(path, plen, "%s/%s", dir, name);
    return path;
}

static int exists(const char *dir, const char *name) {
    char *path = join_path(dir, name);
    FILE *f = path ? fopen(path, "rb") : NULL;
    free(path);
    if (f) fclose(f);
    return f != NULL;
}

/* dir/name into *out (NULL and 0 when optional and absent). */
static int read_in(char **out, size_t *len, const char *dir, const char *name, size_t max) {
    char *path = join_path(dir, name);
    if (!path) return alab_fail(ALAB_ENOMEM, "out of memory");
    int rc = read_file(out, len, path, max);
    free(path);
    return rc;
}

/* The distinct file names of the index's weight_map, in order of first use. */
static int shard_names(char ***names, int *n, const char *index, size_t len) {
    json_doc doc;
    *names = NULL;
    *n = 0;
    int rc = json_parse(&doc, index, len, TEXT_FILE_MAX);
    if (rc) {
        rc = alab_fail(rc, "model.safetensors.index.json: %s", doc.err);
        json_free(&doc);
        return rc;
    }
    const json_value *wm = json_get(doc.root, "weight_map");
    if (!wm || wm->type != JSON_OBJECT || wm->n == 0) {
        json_free(&doc);
        return alab_fail(ALAB_EFORMAT, "model.safetensors.index.json: no \"weight_map\" object");
    }
    char **out = calloc(wm->n, sizeof *out);
    if (!out) { json_free(&doc); return alab_fail(ALAB_ENOMEM, "out of memory"); }
    int k = 0;
    for (uint32_t i = 0; i < wm->n && rc == ALAB_OK; i++) {
        const json_value *v = &wm->u.items[i];
        if (v->type != JSON_STRING || strchr(v->u.str, '/') || strcmp(v->u.str, "..") == 0 || !*v->u.str) {
            rc = alab_fail(ALAB_EFORMAT, "model.safetensors.index.json: the file of \"%.80s\" is not a file name", v->key);
            break;
        }
        int seen = 0;
        for (int j = 0; j < k && !seen; j++) seen = strcmp(out[j], v->u.str) == 0;
        if (!seen && !(out[k++] = strdup(v->u.str))) rc = alab_fail(ALAB_ENOMEM, "out of memory");
    }
    json_free(&doc);
    *names = out;
    *n = k;
    return rc;
}

int alab_model_load_dir(alab_model **out, const char *dir) { return alab_model_load_dir_ex(out, dir, ALAB_WEIGHTS_AUTO); }

int alab_model_load_dir_ex(alab_model **out, const char *dir, int weights) {
    if (!out || !dir) return alab_fail(ALAB_EINVAL, "alab_model_load_dir: NULL argument");
    *out = NULL;
    alab_model_files f = {0};
    char *cfg = NULL, *index = NULL, *vocab = NULL, *merges = NULL, *tok = NULL, *tokcfg = NULL;
    char **names = NULL;
    int n_names = 0;
    alab_shard *shards = NULL;
    int rc = read_in(&cfg, &f.config_len, dir, "config.json", TEXT_FILE_MAX);
    const int sharded = rc == ALAB_OK && !exists(dir, "model.safetensors") && exists(dir, "model.safetensors.index.json");
    if (rc == ALAB_OK && sharded) {
        rc = read_in(&index, &f.index_len, dir, "model.safetensors.index.json", TEXT_FILE_MAX);
        if (rc == ALAB_OK) rc = shard_names(&names, &n_names, index, f.index_len);
    } else if (rc == ALAB_OK) {
        static char single[] = "model.safetensors";
        static char *one[1] = {single};
        names = one;
        n_names = 1;
    }
    if (rc == ALAB_OK && !(shards = calloc((size_t)n_names, sizeof *shards))) rc = alab_fail(ALAB_ENOMEM, "out of memory");
    for (int i = 0; i < n_names && rc == ALAB_OK; i++) {
        if (sharded && !exists(dir, names[i])) {
            rc = alab_fail(ALAB_EMISSING, "shard %s (named by model.safetensors.index.json) is missing from %s", names[i], dir);
            break;
        }
        shards[i].name = names[i];
        rc = read_in((char **)&shards[i].data, &shards[i].len, dir, names[i], WEIGHTS_FILE_MAX);
    }
    if (rc == ALAB_OK) {
        /* every tokenizer file there is: the loader picks (tokenizer.json but for GPT-2) */
        const int gpt2_files = exists(dir, "vocab.json") && exists(dir, "merges.txt");
        if (gpt2_files) {
            rc = read_in(&vocab, &f.vocab_len, dir, "vocab.json", TEXT_FILE_MAX);
            if (rc == ALAB_OK) rc = read_in(&merges, &f.merges_len, dir, "merges.txt", TEXT_FILE_MAX);
        }
        if (rc == ALAB_OK && exists(dir, "tokenizer.json")) {
            rc = read_in(&tok, &f.tokenizer_len, dir, "tokenizer.json", TEXT_FILE_MAX);
            if (rc == ALAB_OK && exists(dir, "tokenizer_config.json"))
                rc = read_in(&tokcfg, &f.tokenizer_config_len, dir, "tokenizer_config.json", TEXT_FILE_MAX);
        } else if (rc == ALAB_OK && !gpt2_files) {
            rc = alab_fail(ALAB_EIO, "%s has no tokenizer: vocab.json + merges.txt or tokenizer.json", dir);
        }
    }
    if (rc == ALAB_OK) {
        f.config_json = cfg;
        f.shards = shards;
        f.n_shards = n_names;
        f.index_json = index;
        f.vocab_json = vocab;
        f.merges = merges;
        f.tokenizer_json = tok;
        f.tokenizer_config_json = tokcfg;
        f.weights = weights;
        rc = alab_model_load_files(out, &f); /* the shards' data pass to the model, on success and on failure */
    } else if (shards) {
        for (int i = 0; i < n_names; i++) free(shards[i].data);
    }
    free(shards);
    if (sharded && names) {
        for (int i = 0; i < n_names; i++) free(names[i]);
        free(names);
    }
    free(cfg), free(index), free(vocab), free(merges), free(tok), free(tokcfg);
    return rc;
}
