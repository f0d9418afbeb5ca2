/* io.c — loading a model directory from the file system (native builds only;
 * the browser hands the same files over as buffers).
 *
 * Each file is opened without blocking (O_NONBLOCK: opening a FIFO for reading
 * would otherwise wait for a writer forever), checked with fstat to be a
 * regular file no larger than the limit of its kind, and only then read; by
 * alab_read_whole_file (io.h), which the CLI, tests, benchmarks and fuzzers
 * read their files with too. */
#include "io.h"

#include "internal.h"
#include "json.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

/* alab_fail, then errno = e (formatting may change errno; the CLI prints strerror(errno)). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail_errno(int e, int rc, const char *fmt, ...) {
    char msg[512]; /* alab_last_error's size */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    alab_fail(rc, "%s", msg);
    errno = e;
    return rc;
}

/* ALAB_READ_STREAMS: read to the end whatever fd is, growing the buffer, at most max_len bytes. */
static int read_stream(char **out, size_t *len, int fd, const char *path, uint64_t max_len) {
    char *buf = NULL;
    size_t cap = 0, got = 0;
    for (;;) {
        if (cap - got < 2) {
            const size_t grow = cap ? cap : 65536;
            char *nb = cap > SIZE_MAX - grow ? NULL : realloc(buf, cap + grow);
            if (!nb) {
                free(buf);
                return fail_errno(ENOMEM, ALAB_ENOMEM, "cannot allocate %zu more bytes for %s", grow, path);
            }
            buf = nb;
            cap += grow;
        }
        ssize_t r = read(fd, buf + got, cap - got - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            const int e = errno;
            free(buf);
            return fail_errno(e, ALAB_EIO, "cannot read %s: %s", path, strerror(e));
        }
        if (r == 0) break;
        got += (size_t)r;
        if (got > max_len) {
            free(buf);
            return fail_errno(EFBIG, ALAB_ELIMIT, "%s is more than %llu bytes, over the limit for this file", path,
                              (unsigned long long)max_len);
        }
    }
    buf[got] = '\0';
    *out = buf;
    *len = got;
    return ALAB_OK;
}

int alab_read_whole_file(char **out, size_t *len, const char *path, uint64_t max_len, unsigned flags) {
    *out = NULL;
    *len = 0;
    const int streams = (flags & ALAB_READ_STREAMS) != 0;
    /* without streams, O_NONBLOCK: opening a FIFO would otherwise wait for a writer */
    int fd = open(path, O_RDONLY | O_CLOEXEC | (streams ? 0 : O_NONBLOCK));
    if (fd < 0) {
        const int e = errno;
        return fail_errno(e, ALAB_EIO, "cannot open %s: %s", path, strerror(e));
    }
    if (streams) {
        int rc = read_stream(out, len, fd, path, max_len);
        const int e = errno;
        close(fd);
        errno = e;
        return rc;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return fail_errno(e, ALAB_EIO, "cannot stat %s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return fail_errno(S_ISDIR(st.st_mode) ? EISDIR : EINVAL, ALAB_EIO, "%s is %s, not a regular file", path,
                          kind_of(st.st_mode));
    }
    if (st.st_size < 0 || (uint64_t)st.st_size > max_len) {
        close(fd);
        return fail_errno(EFBIG, ALAB_ELIMIT, "%s is %lld bytes, over the limit of %llu for this file", path,
                          (long long)st.st_size, (unsigned long long)max_len);
    }
    if ((uint64_t)st.st_size >= SIZE_MAX) {
        close(fd);
        return fail_errno(ENOMEM, ALAB_ENOMEM, "%s is %lld bytes, more than this process can address", path,
                          (long long)st.st_size);
    }
    size_t size = (size_t)st.st_size;
    char *buf = malloc(size + 1);
    if (!buf) {
        close(fd);
        return fail_errno(ENOMEM, ALAB_ENOMEM, "cannot allocate %zu bytes for %s", size, path);
    }
    size_t got = 0;
    int read_errno = 0;
    while (got < size) {
        size_t want = size - got > ((size_t)1 << 30) ? ((size_t)1 << 30) : size - got;
        ssize_t r = read(fd, buf + got, want);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) read_errno = errno;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    if (got != size) {
        free(buf);
        if (read_errno) return fail_errno(read_errno, ALAB_EIO, "cannot read %s: %s", path, strerror(read_errno));
        return fail_errno(EIO, ALAB_EIO, "short read on %s (%zu of %zu bytes; did it change while it was read?)", path, got,
                          size);
    }
    buf[size] = '\0';
    *out = buf;
    *len = size;
    return ALAB_OK;
}

/* ---- a text file line by line (io.h) ------------------------------------------------------------------- */

int alab_utf8_seq(const unsigned char *s, size_t n) {
    const unsigned c = s[0];
    if (c < 0x80) return 1;
    int len;
    unsigned lo = 0x80, hi = 0xBF; /* the range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;      /* overlong */
        else if (c == 0xED) hi = 0x9F; /* U+D800..U+DFFF: surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;      /* overlong */
        else if (c == 0xF4) hi = 0x8F; /* above U+10FFFF */
    } else return 0;                   /* a continuation byte, C0, C1, F5..FF */
    if (n < (size_t)len || s[1] < lo || s[1] > hi) return 0;
    for (int k = 2; k < len; k++)
        if (s[k] < 0x80 || s[k] > 0xBF) return 0;
    return len;
}

#define LINES_CHUNK 65536

struct alab_lines {
    int fd, err;             /* err: the error every call returns after the first */
    char *path;
    unsigned char *buf;      /* the chunk read last: buf[pos..end) not yet looked at */
    size_t pos, end;
    char *line;              /* the line being built, line_cap bytes */
    size_t line_cap, max_line;
    uint64_t read, max_file; /* bytes read from the file */
    long number;             /* lines given so far (or the one that failed) */
    int eof, cr;             /* cr: the last line ended in CR, so a LF first is part of that break */
};

int alab_lines_open(alab_lines **out, const char *path, uint64_t max_file, size_t max_line) {
    *out = NULL;
    if (!path || max_line < 1 || max_line > SIZE_MAX / 2) return alab_fail(ALAB_EINVAL, "alab_lines_open: bad argument");
    alab_lines *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path)) || !(r->buf = malloc(LINES_CHUNK))) {
        if (r) { free(r->path); free(r->buf); }
        free(r);
        return fail_errno(ENOMEM, ALAB_ENOMEM, "cannot allocate a line reader for %s", path);
    }
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        const int e = errno;
        free(r->path);
        free(r->buf);
        free(r);
        return fail_errno(e, ALAB_EIO, "cannot open %s: %s", path, strerror(e));
    }
    r->max_line = max_line;
    r->max_file = max_file;
    *out = r;
    return ALAB_OK;
}

long alab_lines_number(const alab_lines *r) { return r ? r->number : 0; }
uint64_t alab_lines_bytes(const alab_lines *r) { return r ? r->read : 0; }

void alab_lines_close(alab_lines *r) {
    if (!r) return;
    if (r->fd >= 0) close(r->fd);
    free(r->path);
    free(r->buf);
    free(r->line);
    free(r);
}

/* The next chunk into buf: 1, 0 at the end, or an error. */
static int lines_fill(alab_lines *r) {
    for (;;) {
        /* never more than one byte past max_file: that byte is what tells an over-long file from one that ends
         * exactly at the cap */
        const uint64_t room = r->max_file - (r->read < r->max_file ? r->read : r->max_file) + 1;
        ssize_t got = read(r->fd, r->buf, room < LINES_CHUNK ? (size_t)room : LINES_CHUNK);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            const int e = errno;
            return fail_errno(e, ALAB_EIO, "cannot read %s: %s", r->path, strerror(e));
        }
        if (got == 0) return 0;
        r->read += (uint64_t)got;
        if (r->read > r->max_file)
            return fail_errno(EFBIG, ALAB_ELIMIT, "%s is more than %llu bytes, over the limit for a dataset file",
                              r->path, (unsigned long long)r->max_file);
        r->pos = 0;
        r->end = (size_t)got;
        return 1;
    }
}

int alab_lines_next(alab_lines *r, const char **line, size_t *len) {
    *line = NULL;
    *len = 0;
    if (!r) return alab_fail(ALAB_EINVAL, "alab_lines_next: NULL reader");
    if (r->err) return r->err;
    if (r->eof) return 0;
    size_t n = 0; /* bytes of this line so far */
    int rc = ALAB_OK, any = 0;
    r->number++;
    for (;;) {
        if (r->pos == r->end) {
            rc = lines_fill(r);
            if (rc < 0) break;
            if (rc == 0) { r->eof = 1; break; }
        }
        unsigned char c = r->buf[r->pos];
        if (r->cr && c == '\n' && !any) { /* the LF of a CRLF */
            r->cr = 0;
            r->pos++;
            continue;
        }
        r->cr = 0;
        any = 1;
        if (c == '\n' || c == '\r') {
            r->cr = c == '\r';
            r->pos++;
            break;
        }
        if (c == '\0') {
            rc = fail_errno(EILSEQ, ALAB_EFORMAT, "%s line %ld byte %zu: a NUL byte (a dataset file is UTF-8 text)", r->path,
                            r->number, n + 1);
            break;
        }
        if (n >= r->max_line) {
            rc = fail_errno(EFBIG, ALAB_ELIMIT, "%s line %ld is longer than %zu bytes, the limit of a line", r->path,
                            r->number, r->max_line);
            break;
        }
        if (n + 4 >= r->line_cap) { /* room for a 4-byte sequence and the NUL */
            size_t cap = r->line_cap ? 2 * r->line_cap : 256;
            if (cap > r->max_line + 8) cap = r->max_line + 8;
            char *nl = realloc(r->line, cap);
            if (!nl) { rc = fail_errno(ENOMEM, ALAB_ENOMEM, "cannot allocate %zu bytes for a line of %s", cap, r->path); break; }
            r->line = nl;
            r->line_cap = cap;
        }
        if (c < 0x80) {
            r->line[n++] = (char)c;
            r->pos++;
            continue;
        }
        /* a multi-byte sequence, perhaps across two chunks: gather up to 4 bytes first */
        unsigned char seq[4];
        size_t k = 0, want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        while (k < want) {
            if (r->pos == r->end) {
                int f = lines_fill(r);
                if (f < 0) { rc = f; break; }
                if (f == 0) { r->eof = 1; break; }
            }
            seq[k] = r->buf[r->pos];
            if (k > 0 && (seq[k] < 0x80 || seq[k] > 0xBF)) break; /* not a continuation: left for the next round */
            k++;
            r->pos++;
        }
        if (rc < 0) break;
        if (alab_utf8_seq(seq, k) != (int)want || n + k > r->max_line) {
            if (n + k > r->max_line && alab_utf8_seq(seq, k) == (int)want)
                rc = fail_errno(EFBIG, ALAB_ELIMIT, "%s line %ld is longer than %zu bytes, the limit of a line", r->path,
                                r->number, r->max_line);
            else
                rc = fail_errno(EILSEQ, ALAB_EFORMAT, "%s line %ld byte %zu: invalid UTF-8 (0x%02X)", r->path, r->number,
                                n + 1, c);
            break;
        }
        memcpy(r->line + n, seq, k);
        n += k;
    }
    if (rc < 0) {
        r->err = rc;
        return rc;
    }
    if (!any && r->eof) { /* nothing after the last break */
        r->number--;
        return 0;
    }
    if (!r->line) { /* an empty line before any byte was kept */
        if (!(r->line = malloc(r->line_cap = 256))) {
            r->err = fail_errno(ENOMEM, ALAB_ENOMEM, "cannot allocate a line of %s", r->path);
            return r->err;
        }
    }
    r->line[n] = '\0';
    *line = r->line;
    *len = n;
    return 1;
}

/* tokenizer.json and the shard index share the vocabulary's limit; tokenizer_config.json has its own */
#define TOKENIZER_CONFIG_MAX ((uint64_t)16 << 20)

static char *join_path(const char *dir, const char *name) {
    size_t plen = strlen(dir) + strlen(name) + 2;
    char *path = malloc(plen);
    if (path) snprintf(path, plen, "%s/%s", dir, name);
    return path;
}

/* Is there an entry of that name? (stat, never open: opening a FIFO would block;
 * alab_read_whole_file then refuses whatever is not a regular file.) */
static int exists(const char *dir, const char *name) {
    char *path = join_path(dir, name);
    struct stat st;
    const int ok = path && stat(path, &st) == 0;
    free(path);
    return ok;
}

/* dir/name into *out (NULL and 0 when optional and absent). */
static int read_in(char **out, size_t *len, const char *dir, const char *name, uint64_t max) {
    char *path = join_path(dir, name);
    if (!path) return alab_fail(ALAB_ENOMEM, "out of memory");
    int rc = alab_read_whole_file(out, len, path, max, 0);
    free(path);
    return rc;
}

/* The distinct file names of the index's weight_map, in order of first use: each a plain shard name
 * (alab_shard_name_ok), at most ALAB_MAX_SHARDS of them, found distinct through a hash table (linear in the
 * entries), all checked before any shard is opened. */
static int shard_names(char ***names, int *n, const char *index, size_t len) {
    json_doc doc;
    *names = NULL;
    *n = 0;
    int rc = json_parse(&doc, index, len, ALAB_MAX_INDEX_BYTES);
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
    size_t cap = 16;
    while (cap < 2 * (size_t)ALAB_MAX_SHARDS && cap < 2 * (size_t)wm->n) cap *= 2;
    const json_value **slot = calloc(cap, sizeof *slot);
    char **out = calloc(ALAB_MAX_SHARDS, sizeof *out);
    if (!out || !slot) {
        free(out);
        free(slot);
        json_free(&doc);
        return alab_fail(ALAB_ENOMEM, "out of memory");
    }
    int k = 0;
    for (uint32_t i = 0; i < wm->n && rc == ALAB_OK; i++) {
        const json_value *v = &wm->u.items[i];
        if (v->type != JSON_STRING || !alab_shard_name_ok(v->u.str, v->n)) {
            rc = alab_fail(ALAB_EFORMAT, "model.safetensors.index.json: the file of \"%.80s\" is not a plain shard file name "
                           "(letters, digits, '.', '_', '-', '+', ending in .safetensors)", v->key);
            break;
        }
        size_t h = alab_fnv1a(v->u.str, v->n) & (cap - 1);
        while (slot[h] && !(slot[h]->n == v->n && memcmp(slot[h]->u.str, v->u.str, v->n) == 0)) h = (h + 1) & (cap - 1);
        if (slot[h]) continue; /* named before */
        if (k == ALAB_MAX_SHARDS) {
            rc = alab_fail(ALAB_ELIMIT, "model.safetensors.index.json names more than %d shard files (ALAB_MAX_SHARDS)", ALAB_MAX_SHARDS);
            break;
        }
        slot[h] = v;
        if (!(out[k++] = strdup(v->u.str))) rc = alab_fail(ALAB_ENOMEM, "out of memory");
    }
    free(slot);
    json_free(&doc);
    *names = out;
    *n = k;
    return rc;
}

int alab_model_load_dir(alab_model **out, const char *dir) { return alab_model_load_dir_ex(out, dir, ALAB_WEIGHTS_AUTO); }

int alab_model_load_dir_ex(alab_model **out, const char *dir, int weights) {
    if (!out || !dir) return alab_fail(ALAB_EINVAL, "alab_model_load_dir: NULL argument");
    *out = NULL;
    if (!dir[0]) return alab_fail(ALAB_EINVAL, "alab_model_load_dir: the directory is an empty string");
    alab_model_files f = {0};
    char *cfg = NULL, *index = NULL, *vocab = NULL, *merges = NULL, *tok = NULL, *tokcfg = NULL;
    char **names = NULL;
    int n_names = 0;
    alab_shard *shards = NULL;
    int rc = read_in(&cfg, &f.config_len, dir, "config.json", ALAB_MAX_CONFIG_BYTES);
    const int sharded = rc == ALAB_OK && !exists(dir, "model.safetensors") && exists(dir, "model.safetensors.index.json");
    if (rc == ALAB_OK && sharded) {
        rc = read_in(&index, &f.index_len, dir, "model.safetensors.index.json", ALAB_MAX_INDEX_BYTES);
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
        rc = read_in((char **)&shards[i].data, &shards[i].len, dir, names[i], ALAB_MAX_WEIGHTS_FILE_BYTES);
    }
    if (rc == ALAB_OK) {
        /* every tokenizer file there is: the loader picks (tokenizer.json but for GPT-2) */
        const int gpt2_files = exists(dir, "vocab.json") && exists(dir, "merges.txt");
        if (gpt2_files) {
            rc = read_in(&vocab, &f.vocab_len, dir, "vocab.json", ALAB_MAX_VOCAB_BYTES);
            if (rc == ALAB_OK) rc = read_in(&merges, &f.merges_len, dir, "merges.txt", ALAB_MAX_MERGES_BYTES);
        }
        if (rc == ALAB_OK && exists(dir, "tokenizer.json")) {
            rc = read_in(&tok, &f.tokenizer_len, dir, "tokenizer.json", ALAB_MAX_VOCAB_BYTES);
            if (rc == ALAB_OK && exists(dir, "tokenizer_config.json"))
                rc = read_in(&tokcfg, &f.tokenizer_config_len, dir, "tokenizer_config.json", TOKENIZER_CONFIG_MAX);
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
