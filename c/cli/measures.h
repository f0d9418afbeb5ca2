/* c/cli/measures.h — the CLI's measures: one row each (kind, takes --set, one usage line). */
#define ALAB_CLI_MEASURES(X) \
    X(edge, "edge", 1, \
      "--layer L --head H|all           edge: the head (default: last layer, all heads)\n" \
      "      --knockout renorm|zero           edge/tokens: renormalise the row after a knockout (default) or not") \
    X(tokens, "tokens", 1, \
      "--token-mode column|delete|replace  tokens: knock out token j's column (default), delete it from\n" \
      "                                       the input, or replace it by --neutral ID (default: \" the\")") \
    X(ablation, "ablation", 0, \
      "--reference TEXT                 ablation: the text of the mean / resample ablation (default: the\n" \
      "                                       held-out passage the JS API uses, web/src/evidence-reference.js)\n" \
      "      --draws K --seed S               ablation: resample draws (default 20) and their seed (default 1)") \
    X(patch, "patch", 0, \
      "--corrupt TEXT --answers A,B     patch, pattern-value, path, trace: the corrupted text (as many tokens\n" \
      "                                       as TEXT) and the two answer ids (default: each run's top next token)") \
    X(pattern_value, "pattern-value", 0, \
      "--kind pattern-value             each head's attention pattern, values, or both, patched in each\n" \
      "                                       direction (denoise: into the corrupted run; noise: into the clean one)") \
    X(path, "path", 0, \
      "--receivers R[,R...]             path: each R is L.H.q, L.H.k, L.H.v (that input of head H of layer L)\n" \
      "                                       or logits (default); one sender grid per receiver, null below it\n" \
      "      --direction denoise|noise        path: patch into the corrupted run (default) or the clean one\n" \
      "      --freeze-mlp                     path: freeze the MLPs too (only the direct residual path is left)") \
    X(dla, "dla", 0, \
      "--answers A[,B]                  dla: the logit difference A - B, or the logit of A alone (default:\n" \
      "                                       the run's top next token and its second)") \
    X(value_norms, "value-norms", 0, \
      "--kind value-norms               ||v_j W_O^h|| of every layer, head and position j") \
    X(trace, "trace", 0, \
      "--kind trace                     each layer's attention and MLP output at each position, denoising") \
    X(composition, "composition", 0, \
      "[--n-null N] [--seed S]\n" \
      "      Q-, K- and V-composition of every head pair in adjacent layers (weights only, no --text) and\n" \
      "      their Gaussian null over N draws (default 200, 0 to 100000) seeded S (default 1)")
