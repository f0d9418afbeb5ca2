/* commands.c — the commands that run the model once: tokenize (a text's ids
 * and tokens), run (one forward pass with the interventions of the command
 * line: the last layer's attention, DAG scores, the next tokens) and generate
 * (sampling with the key/value cache). Text or JSON, written at once. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"

/* A number of the JSON output: null when it is not finite (printf's "nan" and "-nan" are not JSON; a model that
 * overflows gives them, issue 53 item 4). json_floats does the same for arrays. */
static void json_number(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "%.9g", v);
    else fputs("null", f);
}

int cmd_tokenize(const cli *c, alab_model *m) {
    int *ids = NULL, n = 0;
    if (encode(&ids, &n, m, c->text)) { free(ids); return 1; }
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f) { free(ids); return fail_rc(ALAB_ENOMEM, "output"); }
    if (c->json) {
        fputs("{\"ids\":", f);
        json_ints(f, ids, n);
        fputs(",\"tokens\":", f);
        json_tokens(f, alab_model_bpe(m), ids, n);
        fputs("}\n", f);
    } else {
        size_t dl;
        for (int i = 0; i < n; i++)
            fprintf(f, "%4d  %6d  '%s'\n", i, ids[i], display(alab_model_bpe(m), ids[i], &dl));
    }
    fclose(f);
    int rc = write_stdout(out, len);
    free(out);
    free(ids);
    return rc;
}

int cmd_run(const cli *c, alab_model *m) {
    const alab_config *cfg = alab_model_config(m);
    const alab_bpe *bpe = alab_model_bpe(m);
    int *ids = NULL, T = 0;
    if (encode(&ids, &T, m, c->text)) { free(ids); return 1; }
    int rc = alab_forward(m, ids, T, &c->run);
    if (rc) { free(ids); return fail_rc(rc, "run"); }

    const int L = cfg->n_layer, NH = cfg->n_head, HS = cfg->head_dim;
    const size_t TT = (size_t)T * T;
    const float *att = alab_result_attention(m);
    const float *last = att + (size_t)(L - 1) * NH * TT;
    float *avg = malloc(TT * sizeof(float));
    double *head_dag = malloc((size_t)NH * sizeof(double));
    int k = c->top < cfg->vocab_size ? c->top : cfg->vocab_size;
    int *top_ids = malloc((size_t)k * sizeof(int));
    float *top_p = malloc((size_t)k * sizeof(float));
    char *out = NULL;
    size_t len = 0;
    FILE *f = NULL;
    if (!avg || !head_dag || !top_ids || !top_p || !(f = open_memstream(&out, &len))) {
        rc = fail_rc(ALAB_ENOMEM, "run");
        goto done;
    }
    alab_head_average(avg, last, NH, T);
    for (int h = 0; h < NH; h++) head_dag[h] = alab_dag_score(last + (size_t)h * TT, T);
    /* the null of the mask the last layer ran under (the CLI sets one mask for every layer; "causal" is the layer's
       own, within its sliding window when config.json gives one: Mistral, Gemma 3) */
    const int own_window = c->run.mask == ALAB_MASK_CAUSAL ? alab_model_layer_window(m, L - 1) : 0;
    const int null_mode = own_window > 0 ? ALAB_MASK_WINDOW : c->run.mask, null_window = own_window > 0 ? own_window : c->run.window;
    double dag = alab_dag_score(avg, T), null_dag = alab_mask_null_dag_score(null_mode, null_window, T);
    if ((rc = alab_result_topk(top_ids, top_p, k, m))) { rc = fail_rc(rc, "top-k"); goto done; }

    size_t dl;
    if (c->json) {
        fprintf(f, "{\"model\":{\"n_layer\":%d,\"n_head\":%d,\"n_embd\":%d,\"vocab_size\":%d,\"n_positions\":%d},",
                L, NH, cfg->n_embd, cfg->vocab_size, cfg->n_positions);
        fputs("\"ids\":", f);
        json_ints(f, ids, T);
        fputs(",\"tokens\":", f);
        json_tokens(f, bpe, ids, T);
        fputs(",\"attentions\":[", f);
        for (int l = 0; l < L; l++) {
            fputs(l ? ",[" : "[", f);
            for (int h = 0; h < NH; h++) {
                fputs(h ? ",[" : "[", f);
                for (int i = 0; i < T; i++) {
                    if (i) fputc(',', f);
                    json_floats(f, att + ((size_t)(l * NH + h) * T + i) * T, (size_t)T);
                }
                fputc(']', f);
            }
            fputc(']', f);
        }
        fputs("],\"dag_score\":", f);
        json_number(f, dag);
        fputs(",\"dag_scores_last_layer\":[", f);
        for (int h = 0; h < NH; h++) {
            if (h) fputc(',', f);
            json_number(f, head_dag[h]);
        }
        fputs("],\"null_dag_score\":", f);
        json_number(f, null_dag);
        fputs(",\"top\":[", f);
        for (int i = 0; i < k; i++) {
            fprintf(f, "%s{\"id\":%d,\"token\":", i ? "," : "", top_ids[i]);
            const char *d = display(bpe, top_ids[i], &dl);
            json_str(f, d, dl);
            fputs(",\"prob\":", f);
            json_number(f, top_p[i]);
            fputc('}', f);
        }
        fputs("],\"logits\":", f);
        json_floats(f, alab_result_logits(m), (size_t)cfg->vocab_size);
        if (alab_result_q(m)) {
            fprintf(f, ",\"capture\":{\"layer\":%d,\"head\":%d,\"q\":", c->run.capture_layer, c->run.capture_head);
            json_floats(f, alab_result_q(m), (size_t)T * HS);
            fputs(",\"k\":", f);
            json_floats(f, alab_result_k(m), (size_t)T * HS);
            fputc('}', f);
        }
        fputs("}\n", f);
    } else {
        fprintf(f, "model: %d layers, %d heads, d=%d, vocab %d, context %d\n", L, NH, cfg->n_embd, cfg->vocab_size,
                cfg->n_positions);
        fprintf(f, "tokens (%d):", T);
        for (int i = 0; i < T; i++) fprintf(f, " [%s]", display(bpe, ids[i], &dl));
        fprintf(f, "\n\nlast layer, head-averaged attention (row = effect i, column = cause j):\n");
        for (int i = 0; i < T; i++) {
            fprintf(f, "%3d ", i);
            for (int j = 0; j < T; j++) fprintf(f, " %5.3f", avg[(size_t)i * T + j]);
            fputc('\n', f);
        }
        char mask_name[32];
        if (null_mode == ALAB_MASK_WINDOW) snprintf(mask_name, sizeof mask_name, "window:%d", null_window);
        else snprintf(mask_name, sizeof mask_name, "%s", null_mode == ALAB_MASK_FULL ? "full" : "causal");
        fprintf(f, "\nDAG score (last layer, head average): %.4f   null (uniform attention, mask %s, T=%d): %.4f\n",
                dag, mask_name, T, null_dag);
        fprintf(f, "per head:");
        for (int h = 0; h < NH; h++) fprintf(f, " h%d=%.4f", h, head_dag[h]);
        fprintf(f, "\n\nnext token (top %d%s):\n", k, c->n_interv ? ", after the interventions" : "");
        for (int i = 0; i < k; i++)
            fprintf(f, "  %2d. %-16s %6.2f%%  (id %d)\n", i + 1, display(bpe, top_ids[i], &dl),
                    100.0 * top_p[i], top_ids[i]);
    }
    fclose(f);
    f = NULL;
    rc = write_stdout(out, len);
done:
    if (f) fclose(f);
    free(out);
    free(avg);
    free(head_dag);
    free(top_ids);
    free(top_p);
    free(ids);
    return rc;
}

int cmd_generate(const cli *c, alab_model *m) {
    int *ids = NULL, T = 0;
    if (encode(&ids, &T, m, c->text)) { free(ids); return 1; }
    int *out_ids = malloc((size_t)(c->max_new ? c->max_new : 1) * sizeof(int));
    int n = 0;
    uint64_t rng = c->seed;
    int rc = out_ids ? alab_generate(out_ids, &n, m, ids, T, c->max_new, c->temperature, c->top_k, &rng) : ALAB_ENOMEM;
    if (rc) { free(ids); free(out_ids); return fail_rc(rc, "generate"); }
    size_t need = 0;
    alab_model_decode(NULL, 0, &need, m, out_ids, n);
    char *text = malloc(need + 1);
    char *out = NULL;
    size_t len = 0;
    FILE *f = text ? open_memstream(&out, &len) : NULL;
    if (!f) { free(text); free(ids); free(out_ids); return fail_rc(ALAB_ENOMEM, "generate"); }
    alab_model_decode(text, need + 1, &need, m, out_ids, n);
    if (c->json) {
        fputs("{\"prompt_ids\":", f);
        json_ints(f, ids, T);
        fputs(",\"ids\":", f);
        json_ints(f, out_ids, n);
        fputs(",\"text\":", f);
        json_str(f, text, need);
        fputs("}\n", f);
    } else {
        fprintf(f, "%s%.*s\n", c->text, (int)need, text);
    }
    fclose(f);
    rc = write_stdout(out, len);
    free(out);
    free(text);
    free(ids);
    free(out_ids);
    return rc;
}
