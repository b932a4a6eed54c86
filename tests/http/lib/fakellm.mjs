// fakellm.mjs: a fake OpenAI-compatible LLM on loopback for the tests (the
// only fake in the suite). It answers POST /chat/completions by purpose —
// recognised from the system prompt knowhub sends — in a mode the test sets:
//   const llm = await startFakeLlm();
//   llm.mode('route', 'hallucinate');   // or ok, slow, 401, 429, 500, nonjson, empty,
//                                        // wrongshape, long, context, model404, filter, fenced
//   startStack({ KNOWHUB_LLM_BASE_URL: llm.url, KNOWHUB_LLM_API_KEY: 'sk-test' })
//   llm.calls  // [{purpose, model, messages, authorization}]
import http from 'node:http';

export const PURPOSES = {
    route: /route searches/i,
    evolve: /Rewrite the knowledge entry/i,
    distill: /distill a finished data analysis/i,
    slim: /merge near-duplicate entries/i,
    conflict: /judge whether two entries/i,
};

function purposeOf(messages) {
    const system = (messages.find((m) => m.role === 'system') || {}).content || '';
    for (const [name, re] of Object.entries(PURPOSES)) if (re.test(system)) return name;
    return 'unknown';
}

function completion(content, extra = {}) {
    return {
        id: 'chatcmpl-fake',
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: extra.finish_reason || 'stop' }],
        usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
    };
}

// The "ok" answer for each purpose.
function canned(purpose, messages, opts) {
    const user = messages.filter((m) => m.role === 'user').map((m) => m.content).join('\n');
    switch (purpose) {
        case 'route': {
            const handles = [...user.matchAll(/^\[(\d+)\]/gm)].map((m) => Number(m[1]));
            const pick = opts.pick ? opts.pick(handles, user) : handles.slice().reverse();
            return JSON.stringify({ handles: pick });
        }
        case 'evolve': {
            const feedback = (user.split('Feedback:\n')[1] || '').trim();
            return opts.content || `## Method\nEvolved after feedback: ${feedback}`;
        }
        case 'distill':
            return (
                opts.content ||
                '---\ntitle: "Growth analysis: compare quarters per region — percent change reveals leaders"\ntags: [sales, growth]\n---\n\n## When to Use\nComparing growth.\n\n## Method\nGroup, then pct_change.\n\n## Pitfalls & Tips\nDerive the quarter first.\n'
            );
        case 'slim':
            return opts.content || 'Merged: one entry that keeps every method.';
        case 'conflict': // opts.verdict (unrelated unless set: the other features' tests see no conflict), opts.reason; opts.content any text, to play a lying LLM
            return opts.content || JSON.stringify({ verdict: opts.verdict || 'unrelated', reason: opts.reason || 'The fake LLM finds that they disagree.' });
        default:
            return 'ok';
    }
}

export async function startFakeLlm() {
    const modes = {};
    const options = {};
    const calls = [];
    const server = http.createServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
            let parsed = {};
            try {
                parsed = JSON.parse(body);
            } catch {
                parsed = {};
            }
            const messages = Array.isArray(parsed.messages) ? parsed.messages : [];
            const purpose = purposeOf(messages);
            calls.push({ purpose, model: parsed.model, messages, authorization: req.headers.authorization, path: req.url });
            const mode = modes[purpose] || modes['*'] || 'ok';
            const opts = options[purpose] || {};
            const send = (status, obj, type = 'application/json') => {
                res.writeHead(status, { 'Content-Type': type });
                res.end(typeof obj === 'string' ? obj : JSON.stringify(obj));
            };
            if (req.url !== '/v1/chat/completions' && req.url !== '/chat/completions')
                return send(404, { error: { message: `no route ${req.url}` } });
            switch (mode) {
                case 'slow': // after opts.delayMs (20 s); opts.status: then that error instead
                    return setTimeout(
                        () => (opts.status ? send(opts.status, { error: { message: 'The server had an error (late)' } }) : send(200, completion(canned(purpose, messages, opts)))),
                        opts.delayMs || 20000,
                    );
                case '401':
                    return send(401, { error: { message: 'Incorrect API key provided' } });
                case '429':
                    return send(429, { error: { message: 'Rate limit reached' } });
                case '500':
                    return send(500, { error: { message: 'The server had an error' } });
                case 'context':
                    return send(400, { error: { message: "This model's maximum context length is 8192 tokens" } });
                case 'model404':
                    return send(404, { error: { message: 'The model `x` does not exist' } });
                case 'filter':
                    return send(200, completion('', { finish_reason: 'content_filter' }));
                case 'nonjson':
                    return send(200, '<html>gateway says hi</html>', 'text/html');
                case 'empty':
                    return send(200, completion(''));
                case 'wrongshape':
                    return send(200, { result: 'no choices here' });
                case 'hallucinate':
                    return send(200, completion(JSON.stringify({ handles: [97, 98, 99] })));
                case 'fenced':
                    return send(200, completion(`\`\`\`markdown\n${canned(purpose, messages, opts)}\n\`\`\``));
                case 'prose':
                    return send(200, completion(`Sure! The relevant ones:\n\`\`\`json\n${canned(purpose, messages, opts)}\n\`\`\`\nHope that helps.`));
                case 'long':
                    return send(200, completion('x'.repeat(opts.length || 5000)));
                default:
                    return send(200, completion(canned(purpose, messages, opts)));
            }
        });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address();
    return {
        url: `http://127.0.0.1:${port}/v1`,
        port,
        calls,
        mode(purpose, mode, opts) {
            modes[purpose] = mode;
            if (opts) options[purpose] = opts;
        },
        reset() {
            for (const k of Object.keys(modes)) delete modes[k];
            for (const k of Object.keys(options)) delete options[k];
            calls.length = 0;
        },
        stop() {
            server.closeAllConnections?.();
            return new Promise((resolve) => server.close(resolve));
        },
    };
}
