// Search results in the panel show their passage as plain text: no Markdown
// syntax (headings' #, emphasis *, tables' |, links' [](), code fences), the
// query's words in <mark> elements, never cut inside a word; in English and
// in Chinese. Screenshots: search-snippets-en.png, search-snippets-zh.png.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setup } from './lib/harness.mjs';
import { searchPanel as search } from './lib/ui.mjs';

const EN_DOC = `---
title: Quarterly revenue per region
tags: [sales]
---

## Method

1. Parse **order_date** with \`pd.to_datetime\` *before* grouping.
2. Group by region and quarter, then sum the revenue.

| region | quarter | revenue |
|---|---|---:|
| North | Q1 | 120 |

See [the pandas guide](https://pandas.example/groupby) for the **sumproduct** trick.

\`\`\`python
df.groupby(["region", "quarter"]).sum()
\`\`\`

${'Check the totals against the ledger before sharing the chart with anyone outside the team. '.repeat(4)}
`;

const ZH_DOC = `---
title: 库存周转率的口径
tags: [库存]
---

## 方法

**库存周转率** = 本月销售成本 / 本月平均库存。

| 门店 | 周转率 |
|---|---|
| 浦东店 | 0.8 |

注意用*销售成本*而不是销售额，详见[口径说明](https://example.com/x)。
`;

let env;
before(async () => {
    env = await setup({ sessions: false });
    for (const [p, doc] of [['sales/quarterly-revenue.md', EN_DOC], ['库存/周转率口径.md', ZH_DOC]]) await env.admin.write('experiences', p, doc);
});
after(() => env?.teardown());

/** The passage's text without its ellipses, its marks, and whether it has a trailing ellipsis. */
async function shown(page, path) {
    const passage = page.locator(`.result[data-path="${path}"] .result-passage`);
    await passage.waitFor();
    return {
        text: await passage.evaluate((el) => [...el.childNodes].filter((n) => !(n.classList && n.classList.contains('ellipsis'))).map((n) => n.textContent).join('')),
        marks: await passage.locator('mark').allTextContents(),
        html: await passage.innerHTML(),
    };
}

describe('search snippets are plain text with marks', () => {
    test('English: no #, *, |, [](), ``` in the passage; the word marked; whole words', async () => {
        const page = await env.page(env.s.admin, { lang: 'en' });
        await search(page, 'sumproduct');
        const { text, marks, html } = await shown(page, 'sales/quarterly-revenue.md');
        for (const syntax of ['#', '*', '|', '](', '```', '`', '---']) assert.ok(!text.includes(syntax), `"${syntax}" in: ${text}`);
        assert.deepEqual(marks, ['sumproduct']);
        assert.match(html, /<mark>sumproduct<\/mark>/);
        assert.ok(text.includes('See the pandas guide for the sumproduct trick.'), text);
        assert.ok(text.includes('North Q1 120'), `a table row as words: ${text}`);
        assert.ok(text.includes('df.groupby(["region", "quarter"]).sum()'), `code as text: ${text}`);
        // the last word shown is a whole word of the document
        const last = text.trim().split(/\s+/).pop().replace(/[.,;:!?]+$/, '');
        assert.match(EN_DOC, new RegExp(`(^|[^A-Za-z])${last}([^A-Za-z]|$)`), `"${last}" is cut`);
        await env.shot(page, 'search-snippets-en');
        await page.close();
    });

    test('Chinese: no Markdown syntax; the words marked; whole characters', async () => {
        const page = await env.page(env.s.admin, { lang: 'zh' });
        await search(page, '销售成本');
        const { text, marks } = await shown(page, '库存/周转率口径.md');
        for (const syntax of ['#', '*', '|', '](', '---']) assert.ok(!text.includes(syntax), `"${syntax}" in: ${text}`);
        assert.ok(marks.length >= 1, `no mark in: ${text}`);
        for (const m of marks) assert.ok('销售成本'.includes(m) || m.includes('销售成本'), m);
        assert.ok(text.includes('库存周转率 = 本月销售成本 / 本月平均库存。'), text);
        assert.ok(text.includes('注意用销售成本而不是销售额，详见口径说明。'), text);
        await env.shot(page, 'search-snippets-zh');
        await page.close();
    });
});
