// The corpus and queries of the search comparisons (search_parity: SQLite
// and PostgreSQL; search_memory: the index in memory and the passes):
// English, Chinese, identifiers, prefixes, the same every run.

const EN = ('inventory turnover revenue forecast pipeline cleaning missing values pandas dataframe ' +
    'join merge quarterly report churn retention cohort funnel conversion latency timeout retry ' +
    'schema migration index query planner vacuum backup restore deploy rollback canary metric ' +
    'dashboard alert threshold anomaly seasonality holiday promotion discount margin supplier ' +
    'warehouse shipment invoice refund ledger audit compliance privacy token session cache')
    .split(' ');
const ZH = ('库存 周转 销售 收入 预测 清洗 缺失 数据 报表 季度 留存 转化 漏斗 延迟 超时 重试 索引 ' +
    '迁移 备份 恢复 部署 回滚 指标 告警 阈值 异常 节假日 促销 折扣 毛利 供应商 仓库 发货 发票 退款 ' +
    '审计 合规 隐私 会话 缓存').split(' ');
const IDS = ['sales_data_2024', 'user_id', 'q3_report', 'order_items', 'gmv_daily', 'sku_v2'];

/** A small deterministic generator (the same corpus and queries every run). */
function rng(seed) {
    let x = seed >>> 0;
    return () => {
        x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
        return x / 2 ** 32;
    };
}
const rand = rng(20261203);
const pick = (list) => list[Math.floor(rand() * list.length)];
const words = (n, lists) => Array.from({ length: n }, () => pick(pick(lists))).join(' ');

export function corpus(n) {
    const out = [];
    for (let i = 0; i < n; i++) {
        const zh = i % 3 === 0;
        const lists = zh ? [ZH, ZH, EN] : [EN, EN, IDS];
        out.push({
            category: 'experiences',
            // a path of its own: the default (<id>.md for a title without letters) would put random
            // hex words in the stem, which prefix queries ("bac", "fac") then find
            path: `parity/n${i}.md`,
            title: `${words(2 + (i % 3), lists)} n${i}`,
            scenario: words(4, lists),
            content: `${words(12 + (i % 9), lists)} ${zh ? words(3, [ZH]).replaceAll(' ', '') : ''}`,
            tags: [pick(zh ? ZH : EN), pick(IDS)],
        });
    }
    return out;
}

export function queries() {
    const q = [];
    for (const w of [...EN.slice(0, 20), ...ZH.slice(0, 15), ...IDS]) q.push(w);
    for (let i = 0; i < 25; i++) q.push(`${pick(EN)} ${pick(EN)}`);
    for (let i = 0; i < 15; i++) q.push(`${pick(ZH)}${pick(ZH)}`); // a Han run of two words
    for (let i = 0; i < 10; i++) q.push(`${pick(ZH)} ${pick(EN)} ${pick(IDS)}`);
    for (const w of EN.slice(20, 35)) q.push(w.slice(0, 3)); // prefixes only
    q.push('库', '数', 'nothing_like_this', 'invent', '库存周转率');
    return q;
}


/** A result list as "title @ score" lines, ties in title order: entries of
 * equal score are ordered by their update time (whole seconds) and path, which
 * differ between two stacks fed at different moments, not by backend. A full
 * list (LIMIT) loses its lowest score group, which the limit may cut anywhere. */
export function canon(results, key, LIMIT) {
    let rows = results.map((r) => ({ title: r.title, score: Number(r[key]).toFixed(6) }));
    if (rows.length === LIMIT) rows = rows.filter((r) => r.score !== rows[rows.length - 1].score);
    rows.sort((a, b) => Number(b.score) - Number(a.score) || (a.title < b.title ? -1 : 1));
    return rows.map((r) => `${r.title} @ ${r.score}`);
}
/** The scores of a result list, in its own order: the ranking itself. */
export const scores = (results, key) => results.map((r) => Number(r[key]).toFixed(6));
