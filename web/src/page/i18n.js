// i18n.js — every label of the page in English and Chinese.
//
// Static labels live in index.html as data-i18n="key" (text content),
// data-i18n-aria="key" (aria-label) and data-i18n-title="key" (title); apply()
// fills them. Dynamic labels call t(key, ...args). Strings are put into the DOM
// with textContent / setAttribute only, never as HTML. The figures take lang
// themselves (web/src/figures/*.js).

export const STRINGS = {
  en: {
    langToggle: '中文',
    langToggleAria: 'Switch the page to Chinese',
    tagline: 'Attention as causation — the chapter\'s four figures, computed live by a GPT-2 in your browser, with do-interventions that run inside the network.',
    skip: 'Skip to the figures',
    docTitle: 'attnlab — attention as causation',
    figKeys: 'Figure: click a cell, or use the arrow keys, to choose the effect row i and the cause column j',
    controls: 'Controls',

    // model
    modelTitle: 'Model',
    modelBuiltin: 'Built-in: brown-gpt2',
    modelCustom: (path) => `Server: ${path}`,
    modelDistil: 'distilgpt2 (Hugging Face, 353 MB)',
    modelHint: 'The built-in model needs no network. distilgpt2 and gpt2 are downloaded once from huggingface.co and kept in the browser cache.',
    modelGpt2: 'gpt2 (Hugging Face, 548 MB)',
    modelLocal: 'Local files…',
    modelLoad: 'Load',
    localName: 'local files',
    modelFiles: 'Choose the four files',
    modelFilesHint: 'config.json, model.safetensors, vocab.json, merges.txt — or drop them anywhere on the page.',
    modelLoaded: (name, c) => `${name}: ${c.nLayer} layers × ${c.nHead} heads, d = ${c.nEmbd}, ${c.vocabSize.toLocaleString('en')} tokens`,
    modelLoading: (name) => `Loading ${name}…`,
    modelCached: 'from the browser cache',
    progressFile: (file, pct, mb) => `${file}: ${pct === null ? '' : pct + ' %, '}${mb} MB`,
    dropHere: 'Drop the four model files',

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
    rowLabel: 'Effect i (row)',
    colLabel: 'Cause j (column)',
    cellHint: 'Click a cell of a heatmap, or focus a figure and use the arrow keys.',
    doKind: 'Kind',
    hard: 'Hard (one-hot)',
    soft: 'Soft (+λ)',
    lambda: 'Strength λ',
    tokOpt: (k, tok) => `${k}: ${tok}`,

    // mask + ablation
    maskTitle: 'Mask and ablation',
    mask: 'Attention mask',
    maskCausal: 'causal (GPT)',
    maskFull: 'full (BERT-style, no mask)',
    maskWindow: 'window (last W tokens)',
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
    fig1Text: 'Rows are effects i, columns candidate causes j. If attention models causation, a position looks back at its causes, so the weight sits below the diagonal. A − Aᵀ shows the direction: red where the row → column flow dominates, blue for the reverse.',
    fig2Title: '2 · Outer product and causal posterior',
    fig2Text: 'The outer product q_i ⊗ k_j (d_k × d_k) holds the hypothesis "j is a cause of i"; its trace is the dot product q_i·k_j, the raw attention score. A softmax over j turns the scores into the posterior P(j is a cause of i | context), printed in each cell.',
    fig2Head: (h, avg) => (avg ? `q and k of head ${h} (the view shows the head average; Fig. 2 needs one head).` : `q and k of head ${h}.`),
    fig2Demo: 'Random vectors instead (the chapter\'s demo: d_k = 16, T = 8)',
    fig3Title: '3 · Directionality',
    fig3Text: 'The DAG score is the share of attention below the diagonal. The chapter compares it with 0.5, which is right only for bidirectional attention: under GPT\'s causal mask even uniform attention scores the dashed red line, so that is the honest baseline. Right: the graph read off the weights, edges from cause to effect, width ∝ weight.',
    fig4Title: '4 · The do-operator',
    fig4Text: 'The chapter\'s do on the drawn matrix: the soft do adds λ to the log-weight of (i, j) and renormalises the row, keeping the other paths; the hard do collapses the row to one-hot at j — Pearl\'s surgery that cuts every other in-edge. The blue box marks the intervened row.',

    // in-model panel
    inModelTitle: 'The same do inside the network',
    inModelText: (where, kind) => `${kind} do(j → i) on ${where}, applied in the forward pass: the model's next-token prediction before and after, and how the attention of every layer changed.`,
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
    deltaMaps: 'ΔA = after − before (head average), from the intervened layer up',
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
    errMissing: (list) => `These files are missing: ${list}. A model needs config.json, model.safetensors, vocab.json and merges.txt.`,
    errWrongFiles: (code, msg) => `These are not the files of a GPT-2 model (${code}): ${msg}`,
    errMemory: 'The model does not fit into this tab\'s memory (WebAssembly can use at most 4 GB). Choose a smaller model.',
    errTooLong: (n) => `The text is too long for this model (at most ${n} tokens).`,
    errEmpty: 'Type some text first.',
    errWasm: (msg) => `The WebAssembly engine failed: ${msg}`,
    errOther: (code, msg) => `${code ? code + ': ' : ''}${msg}`,
    errKeepPrevious: (name) => `The page keeps using ${name}.`,
    errCache: 'The download worked, but the browser cache refused to store it (quota); it will be downloaded again next time.',
    errNoModel: 'No model is loaded. Pick one above.',
    errBuiltinMissing: (path) => `There is no model at ${path} on this server (the built-in one is built by \`make model\`). Pick distilgpt2, gpt2 or local files above.`,

    footer: 'attnlab — a GPT-2 in C and WebAssembly that keeps every attention matrix. Everything runs in this tab; nothing is sent anywhere.',
  },

  zh: {
    langToggle: 'English',
    langToggleAria: '切换为英文',
    tagline: '注意力即因果——本章的四幅图由浏览器中的 GPT-2 实时计算，do 干预直接在网络内部执行。',
    skip: '跳到图',
    docTitle: 'attnlab——注意力即因果',
    figKeys: '图：点击格子或用方向键选择果（行 i）和因（列 j）',
    controls: '控制面板',

    modelTitle: '模型',
    modelBuiltin: '内置：brown-gpt2',
    modelCustom: (path) => `服务器：${path}`,
    modelDistil: 'distilgpt2（Hugging Face，353 MB）',
    modelHint: '内置模型无需联网。distilgpt2 和 gpt2 从 huggingface.co 下载一次，之后保存在浏览器缓存中。',
    modelGpt2: 'gpt2（Hugging Face，548 MB）',
    modelLocal: '本地文件…',
    modelLoad: '加载',
    localName: '本地文件',
    modelFiles: '选择四个文件',
    modelFilesHint: 'config.json、model.safetensors、vocab.json、merges.txt——也可以直接拖放到页面上。',
    modelLoaded: (name, c) => `${name}：${c.nLayer} 层 × ${c.nHead} 个头，d = ${c.nEmbd}，词表 ${c.vocabSize.toLocaleString('en')}`,
    modelLoading: (name) => `正在加载 ${name}…`,
    modelCached: '来自浏览器缓存',
    progressFile: (file, pct, mb) => `${file}：${pct === null ? '' : pct + ' %，'}${mb} MB`,
    dropHere: '把四个模型文件拖放到这里',

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
    rowLabel: '果 i（行）',
    colLabel: '因 j（列）',
    cellHint: '点击热图中的格子，或聚焦某幅图后用方向键移动。',
    doKind: '类型',
    hard: '硬干预（one-hot）',
    soft: '软干预（+λ）',
    lambda: '强度 λ',
    tokOpt: (k, tok) => `${k}：${tok}`,

    maskTitle: '掩码与消融',
    mask: '注意力掩码',
    maskCausal: '因果（GPT）',
    maskFull: '完全（BERT 式，无掩码）',
    maskWindow: '窗口（最近 W 个词元）',
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
    fig1Text: '行是果位置 i，列是候选原因 j。如果注意力在建模因果，果会回看它的因，权重集中在对角线以下。A − Aᵀ 显示方向：红色表示行 → 列的流占主导，蓝色表示逆向流。',
    fig2Title: '2 · 外积与因果后验',
    fig2Text: '外积 q_i ⊗ k_j（d_k × d_k）编码“j 是 i 的原因”这一假设；它的迹等于点积 q_i·k_j，即原始注意力分数。对 j 做 softmax 后得到后验 P(j 是 i 的原因 | 上下文)，数值标注在格中。',
    fig2Head: (h, avg) => (avg ? `q 与 k 取自头 ${h}（当前显示的是各头平均；图 2 需要单个头）。` : `q 与 k 取自头 ${h}。`),
    fig2Demo: '改用随机向量（本章的演示：d_k = 16，T = 8）',
    fig3Title: '3 · 方向性',
    fig3Text: 'DAG 得分是对角线以下的注意力占比。本章拿它与 0.5 比较，但 0.5 只适用于双向注意力：在 GPT 的因果掩码下，连均匀注意力都能达到红色虚线的得分，这才是诚实的基线。右图：由权重读出的因果图，边从因指向果，边宽 ∝ 权重。',
    fig4Title: '4 · do 算子',
    fig4Text: '本章在所画矩阵上做的 do：软干预给 (i, j) 的对数权重加 λ 再归一化该行，保留其他路径；硬干预把该行坍缩为 j 处的 one-hot——Pearl 的“手术”，切断其他所有入边。蓝框标出被干预的行。',

    inModelTitle: '在网络内部做同样的 do',
    inModelText: (where, kind) => `在${where}上施加${kind} do(j → i)，直接作用于前向传播：干预前后模型对下一个词元的预测，以及每一层注意力的变化。`,
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
    deltaMaps: 'ΔA = 干预后 − 干预前（各头平均），从被干预层往上',
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
    errMissing: (list) => `缺少这些文件：${list}。模型需要 config.json、model.safetensors、vocab.json 和 merges.txt。`,
    errWrongFiles: (code, msg) => `这些不是 GPT-2 模型的文件（${code}）：${msg}`,
    errMemory: '这个模型超出了本标签页可用的内存（WebAssembly 最多 4 GB）。请选择更小的模型。',
    errTooLong: (n) => `文本对这个模型来说太长了（最多 ${n} 个词元）。`,
    errEmpty: '请先输入文本。',
    errWasm: (msg) => `WebAssembly 引擎出错：${msg}`,
    errOther: (code, msg) => `${code ? code + '：' : ''}${msg}`,
    errKeepPrevious: (name) => `页面继续使用 ${name}。`,
    errCache: '下载成功，但浏览器缓存拒绝保存（配额不足）；下次会重新下载。',
    errNoModel: '尚未加载模型，请在上方选择一个。',
    errBuiltinMissing: (path) => `本服务器的 ${path} 下没有模型（内置模型由 \`make model\` 生成）。请在上方选择 distilgpt2、gpt2 或本地文件。`,

    footer: 'attnlab——用 C 与 WebAssembly 实现、保留每一个注意力矩阵的 GPT-2。一切都在本标签页内运行，不向任何地方发送数据。',
  },
};

/** A translator for one language: t('key', ...args). Unknown keys throw (a typo never passes silently). */
export function translator(lang) {
  const table = STRINGS[lang];
  if (!table) throw new Error(`unknown language ${lang}`);
  return (key, ...args) => {
    const v = table[key];
    if (v === undefined) throw new Error(`i18n: no string '${key}' for ${lang}`);
    return typeof v === 'function' ? v(...args) : v;
  };
}

/** Fill the static labels under root (data-i18n, data-i18n-aria, data-i18n-title). */
export function applyStatic(root, t) {
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll('[data-i18n-aria]')) el.setAttribute('aria-label', t(el.dataset.i18nAria));
  for (const el of root.querySelectorAll('[data-i18n-title]')) el.setAttribute('title', t(el.dataset.i18nTitle));
}
