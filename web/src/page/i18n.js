// i18n.js — every label of the page in English and Chinese: one table, STRINGS, and its translator.
//
// The table is made of parts, one per concern: the page's own strings (below: the controls, the figures, the
// in-model panel, the messages) and one per panel (strings/heads.js, strings/evidence.js, strings/circuits.js).
// One convention for the keys: the page's are plain (layer, figFind1), a panel's start with its prefix (hp, ev,
// cx), and a card's own words are the prefix and the word (evComputing, cxListBad: card.js asks for them so), or
// card and the word where every card says it alike (cardCompute); a key in two parts is an error at load. Static labels live in index.html as data-i18n="key" (text content),
// data-i18n-aria="key" (aria-label), data-i18n-title="key" (title) and data-i18n-alt (alt); applyStatic fills
// them. Dynamic labels call t(key, ...args). Strings are put into the DOM with textContent / setAttribute only,
// never as HTML. The figures take lang themselves (web/src/figures/*.js).

import { makeTranslator, applyStatic } from '../ui/i18n.js';
import { HEADS_STRINGS } from './strings/heads.js';
import { EVIDENCE_STRINGS } from './strings/evidence.js';
import { CIRCUITS_STRINGS } from './strings/circuits.js';

// The families' names as their authors write them.
const FAMILY = { gpt2: 'GPT-2', gpt_neox: 'GPT-NeoX', llama: 'Llama', qwen2: 'Qwen2', qwen3: 'Qwen3', mistral: 'Mistral',
                 gemma3_text: 'Gemma 3' };
// The figures' findings (fig-findings.js): a weight with 3 decimals, a token quoted, a mask named.
const f3 = (v) => (Number.isFinite(v) ? v.toFixed(3) : '—');
const fmtKl = (v) => (v === 0 ? '0' : v < 1e-4 ? v.toExponential(1) : v.toFixed(4));
const qt = (s) => `“${Array.from(String(s).trim() || String(s)).slice(0, 24).join('')}”`;
const maskEn = (m) => (m === 'full' ? 'the full mask' : m.startsWith('window:') ? `a window of ${m.slice(7)}` : 'the causal mask');
const maskZh = (m) => (m === 'full' ? '完全掩码' : m.startsWith('window:') ? `窗口为 ${m.slice(7)} 的掩码` : '因果掩码');
// A download size: 141 MB, 1.2 GB.
const size = (bytes) => (bytes >= 1e9 ? `${(bytes / 1e9).toFixed(1)} GB` : `${Math.round(bytes / 1e6)} MB`);
// 50257 → "50,257" without Intl: the first toLocaleString call loads ICU data (about 0.1–0.2 s on the page's first load)
const thousands = (n) => String(n).replace(/\B(?=(\d{3})+$)/g, ',');
// Grouped-query attention: the key-value heads, when fewer than the query heads.
const kv = (c, form) => (c.nKvHead && c.nKvHead < c.nHead ? form.replace('{n}', c.nKvHead) : '');
// Sliding-window layers (Mistral, Gemma 3): how many of the layers see only the last W tokens.
const slide = (c, form) => {
  const w = (c.layerMasks ?? []).filter((m) => m.startsWith('window:'));
  return w.length ? form.replace('{n}', w.length).replace('{L}', c.nLayer).replace('{W}', w[0].slice(7)) : '';
};

/** The page's own strings. */
const PAGE_STRINGS = {
  en: {
    langToggle: '中文',
    langToggleAria: 'Switch the page to Chinese',
    lineageLink: 'Where attention comes from: Hopfield → attention → linear attention →',
    tagline: 'Does attention mark causes? The chapter\'s four figures, computed live by a GPT-2 in your browser, with do-interventions inside the network to test that reading.',
    skip: 'Skip to the figures',
    docTitle: 'attnlab — does attention mark causes?',
    figKeys: 'Figure: click a cell, or use the arrow keys, to choose the effect row i and the cause column j',
    controls: 'Controls',
    controlsToggle: 'Model and controls',
    figFind1: (d) => `Found: row ${d.i} ${qt(d.ti)} puts its largest weight, ${f3(d.w)}, on ${qt(d.tj)} (column ${d.j}): ${d.ratio.toFixed(1)} × the uniform share 1/${Math.round(1 / d.uniform)} of its row.${d.oneSided ? ' A − Aᵀ is one-sided because of the mask, not the model.' : ''}`,
    figCannot1: (d) => `Cannot show: that ${qt(d.tj)} is a cause of ${qt(d.ti)}. A weight is a reading (rung 1); Fig. 4 and the panel below intervene.`,
    figFind2: (d) => `Found: q${d.i} · k${d.j} = tr(q${d.i} ⊗ k${d.j}) = ${d.dot.toFixed(2)}; after scaling and softmax, key ${qt(d.tj)} gets ${f3(d.p)} of row ${qt(d.ti)}, rank ${d.rank} of the ${d.n} keys it may weigh.`,
    figCannot2: () => 'Cannot show: a probability that the key caused the query. The softmax shares one row among the keys this head may see in this sentence, whatever their role.',
    figFind3: (d) => `Found: DAG score ${f3(d.s)} against ${f3(d.null)} for uniform attention under ${maskEn(d.mask)} (heads ${f3(d.lo)}–${f3(d.hi)}): ${d.above ? 'more weight off the diagonal, on earlier tokens, than uniform' : 'no more weight on earlier tokens than uniform attention gives'}.`,
    figCannot3: (d) => (d.mask === 'full' ? 'Cannot show: that the order is causal. The score counts weight below the diagonal; it does not test an intervention.'
      : 'Cannot show: that the order is causal. Under this mask no weight can sit above the diagonal, so the order is the mask\'s; compare with full attention in Fig. 1.'),
    figFind4: (d) => `Found: the soft do (λ = ${d.lambda.toFixed(1)}) moves A[${d.i}, ${d.j}] from ${f3(d.before)} to ${f3(d.soft)}; the hard do sets it to 1 and the rest of row ${qt(d.ti)} to 0.`,
    figCannot4: (d) => `Cannot show: what the model does after the do. This figure edits a picture; the panel below runs the do inside the forward pass${d.kl === null ? '' : ` (KL = ${fmtKl(d.kl)} nats)`}.`,
    cellLive: (i, a, j, b, v) => `Row ${i} “${a}”, column ${j} “${b}”: attention ${v}`,
    cellNoPair: 'no pair (masked)',
    copyLink: 'Copy link to this view',
    copyLinkDone: 'Copied: the link opens this sentence, layer, head, cell, do and mask.',
    copyLinkManual: 'The browser did not allow copying: select the link below and copy it.',
    copyLinkField: 'Link to this view',
    controlsSummary: (model, layer, head) => `${model} · layer ${layer} · ${head}`,

    // model
    modelTitle: 'Model',
    modelBuiltin: 'Built-in: brown-gpt2',
    modelCustom: (path) => `Server: ${path}`,
    modelHub: (name, bytes) => `${name} (Hugging Face, ${size(bytes)}${bytes > 1e9 ? ', large' : ''})`,
    modelHint: 'The built-in model needs no network. The others are downloaded once from huggingface.co and kept in the browser cache.',
    modelLarge: (name, bytes) => `${name} is about ${size(bytes)} of weights: the download takes a while, and the tab needs about as much memory again while it loads (weights stay in half precision).`,
    modelLocal: 'Local files…',
    modelLoad: 'Load',
    localName: 'local files',
    localModel: (c) => `local ${FAMILY[c.family] || 'GPT-2'} ${c.nLayer}×${c.nHead}`,
    modelFiles: 'Choose the files',
    modelDir: 'or a folder',
    modelFilesHint: 'A Hugging Face model folder: config.json, model.safetensors (or its index and shards), and tokenizer.json (GPT-2: vocab.json + merges.txt). Or drop the files anywhere on the page.',
    modelLoaded: (name, c) => `${name}: ${c.nLayer} layers × ${c.nHead} heads${kv(c, ' ({n} key-value)')}, d = ${c.nEmbd}, ${thousands(c.vocabSize)} tokens${slide(c, '; {n} of {L} layers see only the last {W} tokens (sliding window)')}`,
    engineThreads: (n, relaxed) => `wasm ${relaxed ? 'relaxed SIMD' : 'SIMD'}, ${n} ${n === 1 ? 'thread' : 'threads'}`,
    engineNote: (why) => `One thread: ${why}`,
    modelLoading: (name) => `Loading ${name}…`,
    modelCached: 'from the browser cache',
    progressFile: (file, pct, mb) => `${file}: ${pct === null ? '' : pct + ' %, '}${mb} MB`,
    progressTotal: (name, file, done, total, about, pct) => `Downloading ${name}: ${done} of ${about ? 'about ' : ''}${total} MB (${pct} %), now ${file}`,
    modelCancel: 'Cancel',
    linkHub: (name, bytes) => `This link was made with ${name} (${size(bytes)} from Hugging Face); the page shows the built-in model until you load it.`,
    linkHubLoad: 'Load it',
    linkLocal: 'This link was made with a model folder of its author\'s own, which a link cannot carry: choose that folder again with "Local files…" to see the same view; the built-in model is shown until then.',
    loadCancelled: (name, cur) => `Stopped loading ${name}; the page keeps ${cur}.`,
    loadCancelledNone: (name) => `Stopped loading ${name}; no model is loaded.`,
    statusDownloading: (name) => `Downloading ${name}…`,
    dropHere: 'Drop the model\'s files',
    prerenderAlt: 'The opening view, drawn when the page was built',
    prerenderNote: 'A picture drawn when the page was built; the live figure replaces it when the model is ready.',

    // text
    textTitle: 'Sentence',
    textLabel: 'Text (GPT-2 tokens)',
    run: 'Run',
    tokensLabel: 'Tokens',

    // view
    viewTitle: 'What to draw',
    layer: 'Layer',
    layerOpt: (l, last) => (last ? `${l} (last)` : String(l)),
    head: 'Head',
    headAvg: 'average',
    headOpt: (h) => `head ${h}`,

    // do
    doTitle: 'Intervention do(j → i)',
    rowLabel: 'Row i (query, read as effect)',
    colLabel: 'Column j (key, read as cause)',
    cellHint: 'Click a cell of a heatmap, or focus a figure and use the arrow keys.',
    doKind: 'Kind',
    hard: 'Hard (one-hot)',
    soft: 'Soft (+λ)',
    lambda: 'Strength λ',
    tokOpt: (k, tok) => `${k}: ${tok}`,
    tokBytes: 'bytes',

    // mask + ablation
    maskTitle: 'Mask and ablation',
    mask: 'Attention mask',
    maskCausal: 'causal (GPT)',
    maskFull: 'full (BERT-style, no mask)',
    maskWindow: 'window (last W tokens)',
    windowBad: (v, max, w) => `W must be a whole number from 1 to ${max} (got ${v}); the window stays at W = ${w}.`,
    window: 'W',
    ablation: 'Head ablation (layer × head)',
    ablationHint: 'A checked head\'s output is zeroed before the output projection.',
    ablateCell: (l, h) => `Ablate layer ${l}, head ${h}`,
    clearAblation: 'Clear',
    layerShort: 'L',
    headShort: 'H',

    // export
    exportTitle: 'Export',
    exportJson: 'Run data (JSON)',
    exportSvg: 'SVG',
    exportPng: 'PNG',
    exportFigAria: (n, kind) => `Download figure ${n} as ${kind}`,

    // figures
    fig1Title: '1 · Attention and asymmetry',
    fig1Text: 'Rows are query positions i, columns the keys j they weigh (the chapter reads them as effect and candidate cause). Under the causal mask a row can only weigh earlier keys, so every weight sits on or below the diagonal and A − Aᵀ is red below it by construction: that half shows the mask, not the model. To see what the model prefers, compare with the same model run without a mask.',
    fig1Compare: 'Compare with full attention',
    fig2Title: '2 · Outer product and causal posterior',
    fig2Text: 'The outer product q_i ⊗ k_j (d_k × d_k); its trace is the dot product q_i·k_j, the raw attention score. A softmax over j turns the scores of row i into weights that sum to 1, printed in each cell. The chapter reads the outer product as the hypothesis "j causes i" and the weights as a posterior over causes; that is its interpretation, the arithmetic is only a normalised similarity.',
    fig2Head: (h, avg) => (avg ? `q and k of head ${h} (the view shows the head average; Fig. 2 needs one head).` : `q and k of head ${h}.`),
    fig2Demo: 'Random vectors instead (the chapter\'s demo: d_k = 16, T = 8)',
    fig3Title: '3 · Directionality',
    fig3Text: 'The DAG score is the share of attention strictly below the diagonal. The red line is its null: the score of uniform attention under the mask in use, at this length. A head is more forward-looking than uniform only above that line; there is no fixed threshold such as 0.5 (that is the null without a mask, and only as the text grows). Right: edges read off the weights, from key to query, width ∝ weight — a picture of the weights, not a causal graph that was tested.',
    fig4Title: '4 · The do-operator',
    fig4Text: 'The chapter\'s do, applied to the drawn matrix only: the soft do adds λ to the log-weight of (i, j) and renormalises the row; the hard do makes the row one-hot at j, cutting the row\'s other weights as Pearl\'s do cuts a node\'s other parents. This panel edits a picture; the panel below makes the same edit inside the forward pass (an intervention on the mechanism, rung 2 of Pearl\'s ladder) and shows what the model then predicts. The blue box marks the intervened row.',
    // long texts (issue 38 items 2, 4: figs38)
    tokensCount: (n) => `${n} ${n === 1 ? 'token' : 'tokens'}`,
    tokensShow: 'show',
    tokensHide: 'hide',
    errTooLongCount: (count, n) => `The text is too long for this model: it has ${count} tokens, and this model reads at most ${n} tokens.`,
    figsStale: 'The figures below are still those of the previous text: the new one was not drawn.',

    // in-model panel
    inModelTitle: 'The same do inside the network',
    defaultNote: (n, row, col) => `The cell shown first, i = ${row} → j = ${col}, is the one whose do moves the prediction most among ${n} tried on the last row (the position the next token is read at), found on the loaded model.`,
    inModelText: (where, kind) => `${kind} do(j → i) on ${where}, applied in the forward pass: the model's next-token prediction before and after, and how the attention of every layer changed.`,
    inModelMasked: (where, kind) => `${kind} do(j → i) on ${where}: the mask hides this cell, so adding λ to its score would change nothing and the model refuses it (EMASKED). Nothing below changed. Choose a cell the mask lets the row see, or a hard do.`,
    whereAll: (l) => `all heads of layer ${l}`,
    whereHead: (l, h) => `head ${h} of layer ${l}`,
    kindHard: 'Hard',
    kindSoft: (lam) => `Soft (λ = ${lam})`,
    before: 'Before',
    after: 'After do',
    nextTokens: 'Top-10 next tokens',
    rank: '#',
    token: 'Token',
    prob: 'p',
    kl: 'KL(before ‖ after)',
    klUnit: 'nats',
    klZero: 'Unchanged: the next token is predicted at the last position, and a do on an earlier row of the last layer cannot reach it. Choose the last row, or an earlier layer to let the change travel up.',
    klZeroFix: 'Intervene at layer 0',
    topChange: (a, b) => `top token: ${a} → ${b}`,
    deltaTitle: 'Attention change per layer, mean |ΔA|',
    deltaNote: 'Layers before the intervened one cannot change: information only flows upward.',
    deltaLayer: (l) => `layer ${l}`,
    deltaLastLayer: 'The do is in the last layer, so only that layer changes; choose an earlier layer to watch the change travel up.',
    mvUp: 'moved up',
    mvDown: 'moved down',
    mvNew: 'new in the top 10',
    deltaDoHere: 'do here',
    deltaMaps: 'ΔA = after − before (head average), from the intervened layer up. Each map has its own colour scale, ± the largest |ΔA| of its layer (under it).',
    // the caption of the ΔA maps, from their own numbers (compare.js describeTrend)
    deltaTrend: (d, f) => ({
      one: `The change is in layer ${d.firstLayer} alone (largest |ΔA| ${f(d.first)}).`,
      fades: `In this run the change fades as it travels up: the largest |ΔA| goes from ${f(d.first)} in layer ${d.firstLayer} to ${f(d.last)} in layer ${d.lastLayer}.`,
      grows: `In this run the change grows as it travels up: the largest |ΔA| goes from ${f(d.first)} in layer ${d.firstLayer} to ${f(d.last)} in layer ${d.lastLayer}.`,
      peak: `In this run the change first grows, from ${f(d.first)} in layer ${d.firstLayer} to ${f(d.peak)} in layer ${d.peakLayer}, then falls to ${f(d.last)} in layer ${d.lastLayer}.`,
      mixed: `In this run the largest |ΔA| goes up and down: ${f(d.first)} in layer ${d.firstLayer}, at most ${f(d.peak)} (layer ${d.peakLayer}), ${f(d.last)} in layer ${d.lastLayer}.`,
    })[d.kind],
    deltaScale: (m) => `scale ±${m}`,
    deltaCell: (i, j, v) => `effect i=${i}, cause j=${j}: ΔA = ${v}`,
    deltaBar: (l, v, mx) => `layer ${l}: mean |ΔA| = ${v}, max |ΔA| = ${mx}`,
    refTitle: 'Mask and ablation versus the unmodified model',
    refText: (kl, a, b) => `KL(unmodified ‖ this model) = ${kl} nats; top token ${a} → ${b}.`,

    // status and errors
    statusLoadingWasm: 'Starting the WebAssembly worker…',
    statusRunning: 'Computing…',
    statusReady: 'Ready.',
    errorTitle: 'Something went wrong',
    dismiss: 'Dismiss',
    errNetwork: (host) => `Network error: ${host} could not be reached. Check the connection (the built-in model needs none) and try again.`,
    errHttp: (status, file) => `The server answered HTTP ${status} for ${file}.`,
    errMissing: (list, fam) => `These files are missing: ${list}. ${fam ? `A ${FAMILY[fam] || fam} model needs config.json, model.safetensors (or its index and shards) and ${fam === 'gpt2' ? 'vocab.json + merges.txt' : 'tokenizer.json (and tokenizer_config.json when it has one)'}.` : 'A model folder needs config.json, model.safetensors (or its index and shards) and its tokenizer: tokenizer.json, or vocab.json + merges.txt for GPT-2.'}`,
    errWrongFiles: (code, msg, fam) => `These are not the files of ${fam ? `a ${FAMILY[fam] || fam} model` : 'a model attnlab runs'} (${code}): ${msg}`,
    errMemory: 'The model does not fit into this tab\'s memory (WebAssembly can use at most 4 GB). Choose a smaller model.',
    errTooLong: (n) => `The text is too long for this model (at most ${n} tokens).`,
    errEmpty: 'Type some text first.',
    errWasm: (msg) => `The WebAssembly engine failed: ${msg}`,
    errOther: (code, msg) => `${code ? code + ': ' : ''}${msg}`,
    errKeepPrevious: (name) => `The page keeps using ${name}.`,
    errCache: 'The download worked, but the browser cache refused to store it (quota); it will be downloaded again next time.',
    errNoModel: 'No model is loaded. Pick one above.',
    urlRefused: (what) => `The link asked for a view the page cannot show, so these values were ignored: ${what}.`,
    errParam: (p) => `The link's model (?model=${p}) was refused: a model must be a path on this server, like /tests/fixtures/tiny/. The built-in model is used instead.`,
    errBuiltinMissing: (path) => `There is no model at ${path} on this server (the built-in one is built by \`make model\`). Pick distilgpt2, gpt2 or local files above.`,

    // the words every card of the evidence and circuits panels says alike (card.js CARD_WORDS)
    cardCompute: 'Compute', cardCancel: 'Cancel', cardCancelled: 'Cancelled.',
    cardRung1: 'rung 1 · seeing', cardRung2: 'rung 2 · doing',
    cardSrcList: 'your list', cardSetLabel: 'set', cardLimit: 'limit', cardNameList: 'your list',
    cardPairCount: (n) => (n === 1 ? '1 pair' : `${n} pairs`),

    footer: 'attnlab — a GPT-2 in C and WebAssembly that keeps every attention matrix. Everything runs in this tab; nothing is sent anywhere.',
  },

  zh: {
    langToggle: 'English',
    langToggleAria: '切换为英文',
    lineageLink: '注意力从何而来：霍普菲尔德 → 注意力 → 线性注意力 →',
    tagline: '注意力标出的是原因吗？本章的四幅图由浏览器中的 GPT-2 实时计算，do 干预直接在网络内部执行，用来检验这种解读。',
    skip: '跳到图',
    docTitle: 'attnlab——注意力标出的是原因吗？',
    figKeys: '图：点击格子或用方向键选择果（行 i）和因（列 j）',
    controls: '控制面板',
    controlsToggle: '模型与控制',
    figFind1: (d) => `本次结果：第 ${d.i} 行 ${qt(d.ti)} 的最大权重 ${f3(d.w)} 落在 ${qt(d.tj)}（第 ${d.j} 列），是该行均匀份额 1/${Math.round(1 / d.uniform)} 的 ${d.ratio.toFixed(1)} 倍。${d.oneSided ? 'A − Aᵀ 只有一侧有值，这是掩码造成的，不是模型。' : ''}`,
    figCannot1: (d) => `不能说明：${qt(d.tj)} 是 ${qt(d.ti)} 的原因。权重只是一种读法（第一阶）；图 4 与下方面板才做干预。`,
    figFind2: (d) => `本次结果：q${d.i} · k${d.j} = tr(q${d.i} ⊗ k${d.j}) = ${d.dot.toFixed(2)}；缩放并经 softmax 后，键 ${qt(d.tj)} 在 ${qt(d.ti)} 这一行得到 ${f3(d.p)}，在它可看的 ${d.n} 个键中排第 ${d.rank}。`,
    figCannot2: () => '不能说明：键是查询之因的概率。softmax 只是把一行的权重分给这个头在本句中能看到的键，不论它们的角色。',
    figFind3: (d) => `本次结果：在${maskZh(d.mask)}下 DAG 得分 ${f3(d.s)}，均匀注意力为 ${f3(d.null)}（各头 ${f3(d.lo)}–${f3(d.hi)}）：${d.above ? '比均匀注意力更多地离开对角线、落在更早的词上' : '落在更早词上的权重不比均匀注意力多'}。`,
    figCannot3: (d) => (d.mask === 'full' ? '不能说明：这种顺序是因果的。得分只统计对角线以下的权重，并没有做干预。'
      : '不能说明：这种顺序是因果的。在此掩码下权重不可能出现在对角线以上，顺序来自掩码；可在图 1 中与完全注意力对比。'),
    figFind4: (d) => `本次结果：软干预（λ = ${d.lambda.toFixed(1)}）把 A[${d.i}, ${d.j}] 从 ${f3(d.before)} 变为 ${f3(d.soft)}；硬干预把它设为 1，${qt(d.ti)} 这一行其余为 0。`,
    figCannot4: (d) => `不能说明：do 之后模型会怎样。此图只改图像；下方面板在前向传播中执行同一个 do${d.kl === null ? '' : `（KL = ${fmtKl(d.kl)} 奈特）`}。`,
    cellLive: (i, a, j, b, v) => `第 ${i} 行“${a}”，第 ${j} 列“${b}”：注意力 ${v}`,
    cellNoPair: '无此对（被掩码）',
    copyLink: '复制本视图的链接',
    copyLinkDone: '已复制：链接会打开这句话及其层、头、单元格、do 与掩码。',
    copyLinkManual: '浏览器不允许复制：请选中下面的链接并复制。',
    copyLinkField: '本视图的链接',
    controlsSummary: (model, layer, head) => `${model} · 第 ${layer} 层 · ${head}`,

    modelTitle: '模型',
    modelBuiltin: '内置：brown-gpt2',
    modelCustom: (path) => `服务器：${path}`,
    modelHub: (name, bytes) => `${name}（Hugging Face，${size(bytes)}${bytes > 1e9 ? '，较大' : ''}）`,
    modelHint: '内置模型无需联网。其他模型从 huggingface.co 下载一次，之后保存在浏览器缓存中。',
    modelLarge: (name, bytes) => `${name} 的权重约 ${size(bytes)}：下载需要一段时间，加载时标签页还要再占用差不多同样多的内存（权重以半精度保存）。`,
    modelLocal: '本地文件…',
    modelLoad: '加载',
    localName: '本地文件',
    localModel: (c) => `本地 ${FAMILY[c.family] || 'GPT-2'} ${c.nLayer}×${c.nHead}`,
    modelFiles: '选择文件',
    modelDir: '或选择文件夹',
    modelFilesHint: 'Hugging Face 模型文件夹：config.json、model.safetensors（或其索引与分片）以及 tokenizer.json（GPT-2 为 vocab.json + merges.txt）。也可以直接拖放到页面上。',
    modelLoaded: (name, c) => `${name}：${c.nLayer} 层 × ${c.nHead} 个头${kv(c, '（{n} 个键值头）')}，d = ${c.nEmbd}，词表 ${thousands(c.vocabSize)}${slide(c, '；{L} 层中有 {n} 层只看最近 {W} 个词元（滑动窗口）')}`,
    engineThreads: (n, relaxed) => `wasm ${relaxed ? '宽松 SIMD' : 'SIMD'}，${n} 个线程`,
    engineNote: (why) => `单线程：${why}`,
    modelLoading: (name) => `正在加载 ${name}…`,
    modelCached: '来自浏览器缓存',
    progressFile: (file, pct, mb) => `${file}：${pct === null ? '' : pct + ' %，'}${mb} MB`,
    progressTotal: (name, file, done, total, about, pct) => `正在下载 ${name}：${done} / ${about ? '约 ' : ''}${total} MB（${pct} %），当前文件 ${file}`,
    modelCancel: '取消',
    linkHub: (name, bytes) => `此链接使用的是 ${name}（来自 Hugging Face，${size(bytes)}）；加载之前，页面显示内置模型。`,
    linkHubLoad: '加载',
    linkLocal: '此链接使用的是作者本地的模型文件夹，链接无法携带它：请用“本地文件…”重新选择该文件夹以看到同一视图；在此之前页面显示内置模型。',
    loadCancelled: (name, cur) => `已停止加载 ${name}；页面继续使用 ${cur}。`,
    loadCancelledNone: (name) => `已停止加载 ${name}；当前没有已加载的模型。`,
    statusDownloading: (name) => `正在下载 ${name}…`,
    dropHere: '把模型文件拖放到这里',
    prerenderAlt: '构建页面时绘制的初始视图',
    prerenderNote: '这是构建页面时绘制的静态图；模型就绪后由实时计算的图替换。',

    textTitle: '句子',
    textLabel: '文本（GPT-2 词元）',
    run: '运行',
    tokensLabel: '词元',

    viewTitle: '显示内容',
    layer: '层',
    layerOpt: (l, last) => (last ? `${l}（最后一层）` : String(l)),
    head: '注意力头',
    headAvg: '平均',
    headOpt: (h) => `头 ${h}`,

    doTitle: '干预 do(j → i)',
    rowLabel: '行 i（查询，读作果）',
    colLabel: '列 j（键，读作因）',
    cellHint: '点击热图中的格子，或聚焦某幅图后用方向键移动。',
    doKind: '类型',
    hard: '硬干预（独热）',
    soft: '软干预（+λ）',
    lambda: '强度 λ',
    tokOpt: (k, tok) => `${k}：${tok}`,
    tokBytes: '字节',

    maskTitle: '掩码与消融',
    mask: '注意力掩码',
    maskCausal: '因果（GPT）',
    maskFull: '完全（BERT 式，无掩码）',
    maskWindow: '窗口（最近 W 个词元）',
    windowBad: (v, max, w) => `W 必须是 1 到 ${max} 之间的整数（输入为 ${v}）；窗口保持 W = ${w}。`,
    window: 'W',
    ablation: '注意力头消融（层 × 头）',
    ablationHint: '勾选的头在输出投影之前被置零。',
    ablateCell: (l, h) => `消融第 ${l} 层的头 ${h}`,
    clearAblation: '清除',
    layerShort: '层',
    headShort: '头',

    exportTitle: '导出',
    exportJson: '运行数据（JSON）',
    exportSvg: 'SVG',
    exportPng: 'PNG',
    exportFigAria: (n, kind) => `下载图 ${n}（${kind}）`,

    fig1Title: '1 · 注意力与不对称性',
    fig1Text: '行是查询位置 i，列是它加权的键 j（原章把它们读作果与候选因）。在因果掩码下，每一行只能看到更早的键，权重全部落在对角线上或其下方，因此 A − Aᵀ 在对角线以下必然为红色：这一半反映的是掩码，不是模型。想看模型本身偏向哪个方向，请与不加掩码的同一模型对比。',
    fig1Compare: '与完全注意力对比',
    fig2Title: '2 · 外积与因果后验',
    fig2Text: '外积 q_i ⊗ k_j（d_k × d_k）；它的迹就是点积 q_i·k_j，即未经缩放的注意力分数。对第 i 行的分数按 j 做 softmax，得到和为 1 的权重，数值标在格中。原章把外积解读为“j 导致 i”的假设、把权重解读为关于原因的后验；这是原章的诠释，计算本身只是归一化的相似度。',
    fig2Head: (h, avg) => (avg ? `q 与 k 取自头 ${h}（当前显示的是各头平均；图 2 需要单个头）。` : `q 与 k 取自头 ${h}。`),
    fig2Demo: '改用随机向量（本章的演示：d_k = 16，T = 8）',
    fig3Title: '3 · 方向性',
    fig3Text: 'DAG 得分是严格位于对角线以下的注意力占比。红线是它的零假设：在当前掩码和长度下均匀注意力的得分。只有高于这条线，某个头才比均匀注意力更偏向前文；不存在 0.5 这样的固定门槛（0.5 只是无掩码且文本足够长时的零假设）。右图：由权重读出的边，从键指向查询，边宽 ∝ 权重——这是权重的图示，而非经过检验的因果图。',
    fig4Title: '4 · do 算子',
    fig4Text: '原章的 do 只作用于画出来的矩阵：软干预给 (i, j) 的对数权重加 λ 后重新归一化该行；硬干预把该行变成只在 j 处为 1 的独热行，像 Pearl 的 do 切断节点的其他父节点那样去掉该行的其余权重。此图只修改图像；下方面板在前向传播中做同样的修改（对机制的干预，Pearl 阶梯的第二级），并显示模型随后的预测。蓝框标出被干预的行。',
    // long texts (issue 38 items 2, 4: figs38)
    tokensCount: (n) => `${n} 个词元`,
    tokensShow: '展开',
    tokensHide: '收起',
    errTooLongCount: (count, n) => `文本对这个模型来说太长了：它有 ${count} 个词元，而这个模型最多读取 ${n} 个词元。`,
    figsStale: '下面的图仍是上一段文本的：新文本没有画出来。',

    inModelTitle: '在网络内部做同样的 do',
    defaultNote: (n, row, col) => `首先显示的单元格 i = ${row} → j = ${col}：在最后一行（读取下一个词元预测的位置）试过的 ${n} 个单元格中，其 do 最能改变预测；由当前加载的模型求得。`,
    inModelText: (where, kind) => `在${where}上施加${kind} do(j → i)，直接作用于前向传播：干预前后模型对下一个词元的预测，以及每一层注意力的变化。`,
    inModelMasked: (where, kind) => `在${where}上施加${kind} do(j → i)：掩码隐藏了这个单元，给它的得分加 λ 不会改变任何东西，因此模型拒绝执行（EMASKED），下方没有任何变化。请选择该行能看到的单元，或改用硬干预。`,
    whereAll: (l) => `第 ${l} 层的所有头`,
    whereHead: (l, h) => `第 ${l} 层的头 ${h}`,
    kindHard: '硬',
    kindSoft: (lam) => `软（λ = ${lam}）`,
    before: '干预前',
    after: 'do 之后',
    nextTokens: '下一个词元的前 10 名',
    rank: '#',
    token: '词元',
    prob: 'p',
    kl: 'KL(干预前 ‖ 干预后)',
    klUnit: '奈特',
    klZero: '没有变化：下一个词元是在最后一个位置上预测的，在最后一层对更早的行做 do 无法影响它。请选择最后一行，或选择更早的层，让变化向上传播。',
    klZeroFix: '改在第 0 层干预',
    topChange: (a, b) => `首选词元：${a} → ${b}`,
    deltaTitle: '各层注意力的变化，平均 |ΔA|',
    deltaNote: '被干预层之前的层不会改变：信息只向上流动。',
    deltaLayer: (l) => `第 ${l} 层`,
    deltaLastLayer: '干预发生在最后一层，所以只有这一层改变；选择更早的层，可以看到变化如何向上传播。',
    mvUp: '排名上升',
    mvDown: '排名下降',
    mvNew: '新进入前 10',
    deltaDoHere: '干预处',
    deltaMaps: 'ΔA = 干预后 − 干预前（各头平均），从被干预层往上。每张图有自己的色标，为该层最大的 |ΔA|（写在图下）。',
    deltaTrend: (d, f) => ({
      one: `变化只在第 ${d.firstLayer} 层（最大 |ΔA| 为 ${f(d.first)}）。`,
      fades: `本次运行中，变化向上传播时逐渐减弱：最大 |ΔA| 从第 ${d.firstLayer} 层的 ${f(d.first)} 降到第 ${d.lastLayer} 层的 ${f(d.last)}。`,
      grows: `本次运行中，变化向上传播时逐渐增强：最大 |ΔA| 从第 ${d.firstLayer} 层的 ${f(d.first)} 升到第 ${d.lastLayer} 层的 ${f(d.last)}。`,
      peak: `本次运行中，变化先增强，从第 ${d.firstLayer} 层的 ${f(d.first)} 升到第 ${d.peakLayer} 层的 ${f(d.peak)}，再降到第 ${d.lastLayer} 层的 ${f(d.last)}。`,
      mixed: `本次运行中，最大 |ΔA| 时升时降：第 ${d.firstLayer} 层为 ${f(d.first)}，最高 ${f(d.peak)}（第 ${d.peakLayer} 层），第 ${d.lastLayer} 层为 ${f(d.last)}。`,
    })[d.kind],
    deltaScale: (m) => `色标 ±${m}`,
    deltaCell: (i, j, v) => `果 i=${i}，因 j=${j}：ΔA = ${v}`,
    deltaBar: (l, v, mx) => `第 ${l} 层：平均 |ΔA| = ${v}，最大 |ΔA| = ${mx}`,
    refTitle: '掩码与消融相对于原始模型',
    refText: (kl, a, b) => `KL(原始 ‖ 当前) = ${kl} 奈特；首选词元 ${a} → ${b}。`,

    statusLoadingWasm: '正在启动 WebAssembly 工作线程…',
    statusRunning: '计算中…',
    statusReady: '就绪。',
    errorTitle: '出错了',
    dismiss: '关闭',
    errNetwork: (host) => `网络错误：无法连接 ${host}。请检查网络后重试（内置模型不需要联网）。`,
    errHttp: (status, file) => `服务器对 ${file} 返回了 HTTP ${status}。`,
    errMissing: (list, fam) => `缺少这些文件：${list}。${fam ? `${FAMILY[fam] || fam} 模型需要 config.json、model.safetensors（或其索引与分片）以及 ${fam === 'gpt2' ? 'vocab.json + merges.txt' : 'tokenizer.json（若有 tokenizer_config.json 也一并提供）'}。` : '模型文件夹需要 config.json、model.safetensors（或其索引与分片）以及分词器：tokenizer.json，GPT-2 则为 vocab.json + merges.txt。'}`,
    errWrongFiles: (code, msg, fam) => `这些不是${fam ? ` ${FAMILY[fam] || fam} ` : ' attnlab 能运行的'}模型的文件（${code}）：${msg}`,
    errMemory: '这个模型超出了本标签页可用的内存（WebAssembly 最多 4 GB）。请选择更小的模型。',
    errTooLong: (n) => `文本对这个模型来说太长了（最多 ${n} 个词元）。`,
    errEmpty: '请先输入文本。',
    errWasm: (msg) => `WebAssembly 引擎出错：${msg}`,
    errOther: (code, msg) => `${code ? code + '：' : ''}${msg}`,
    errKeepPrevious: (name) => `页面继续使用 ${name}。`,
    errCache: '下载成功，但浏览器缓存拒绝保存（配额不足）；下次会重新下载。',
    errNoModel: '尚未加载模型，请在上方选择一个。',
    urlRefused: (what) => `链接要求的视图无法显示，以下取值已被忽略：${what}。`,
    errParam: (p) => `链接中的模型（?model=${p}）被拒绝：模型必须是本服务器上的路径，例如 /tests/fixtures/tiny/。现在使用内置模型。`,
    errBuiltinMissing: (path) => `本服务器的 ${path} 下没有模型（内置模型由 \`make model\` 生成）。请在上方选择 distilgpt2、gpt2 或本地文件。`,

    cardCompute: '计算', cardCancel: '取消', cardCancelled: '已取消。',
    cardRung1: '第一阶 · 观察', cardRung2: '第二阶 · 干预',
    cardSrcList: '自定义列表', cardSetLabel: '数据集', cardLimit: '数量上限', cardNameList: '自定义列表',
    cardPairCount: (n) => `${n} 对`,

    footer: 'attnlab——用 C 与 WebAssembly 实现、保留每一个注意力矩阵的 GPT-2。一切都在本标签页内运行，不向任何地方发送数据。',
  },
};

/** The parts merged, each language apart; a key in two parts throws (one part would hide the other's string). */
function merge(...parts) {
  const out = {};
  for (const lang of ['en', 'zh']) {
    out[lang] = {};
    for (const part of parts) {
      for (const [k, v] of Object.entries(part[lang])) {
        if (k in out[lang]) throw new Error(`page i18n: the key '${k}' is in two parts of the table`);
        out[lang][k] = v;
      }
    }
  }
  return out;
}

/** Every string of the page: the page's own and each panel's. */
export const STRINGS = merge(PAGE_STRINGS, HEADS_STRINGS, EVIDENCE_STRINGS, CIRCUITS_STRINGS);

/** A translator for one language: t('key', ...args). Unknown keys throw (a typo never passes silently). */
export const translator = makeTranslator(STRINGS, 'page');

export { applyStatic };