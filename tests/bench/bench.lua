-- bench.lua: the wrk script of tests/bench/run.sh. For every run it counts the
-- replies that are not a success -- a non-2xx status, or a body holding
-- KnowHub's error envelope ("status":"error", which comes with HTTP 200) --
-- and done() prints them on one line that run.sh reads:
--   bench-errors: non2xx=N envelope=N
-- Environment: KNOWHUB_BENCH_TOKEN adds "Authorization: Bearer ...";
-- KNOWHUB_BENCH_CREATE=1 sends POST with a small JSON entry (POST /api/knowledge).
local token = os.getenv("KNOWHUB_BENCH_TOKEN")
if token and token ~= "" then
    wrk.headers["Authorization"] = "Bearer " .. token
end
if os.getenv("KNOWHUB_BENCH_CREATE") == "1" then
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
    wrk.body = '{"scenario":"When a benchmark creates an entry","content":'
        .. '"One short paragraph, the size of a typical experience entry.",'
        .. '"tags_type":["tool"],"tags":["bench"],"agent_id":"bench-agent","score":3}'
end

local threads = {}

function setup(thread)
    table.insert(threads, thread)
end

function init(args)
    non2xx = 0
    envelope = 0
end

function response(status, headers, body)
    if status < 200 or status > 299 then
        non2xx = non2xx + 1
    elseif body and body:find('"status":"error"', 1, true) then
        envelope = envelope + 1
    end
end

function done(summary, latency, requests)
    local n, e = 0, 0
    for _, t in ipairs(threads) do
        n = n + t:get("non2xx")
        e = e + t:get("envelope")
    end
    io.write(string.format("bench-errors: non2xx=%d envelope=%d\n", n, e))
end
