-- bench.lua: the wrk script of tests/bench/run.sh. For every run it counts the
-- replies that are not a success -- a non-2xx status, or a body holding
-- KnowHub's error envelope ("status":"error", which comes with HTTP 200) --
-- and the replies served from the answer cache (X-Cache: hit), and done()
-- prints them on one line that run.sh reads:
--   bench-errors: non2xx=N envelope=N hits=N
-- Environment: KNOWHUB_BENCH_TOKEN adds "Authorization: Bearer ...";
-- KNOWHUB_BENCH_MODE selects the requests (default: wrk's URL, GET):
--   create        POST /api/knowledge with a small JSON entry
--   search-entry  GET /api/knowledge/search?q=WORDS&mode=lexical (entry view)
--   search-file   POST /api/knowledge/search {"query":"WORDS"} (file view)
-- A search's WORDS are 2-4 words (as many of each) of one line of
-- KNOWHUB_BENCH_WORDS -- run.sh writes a line per long-text entry, its words --
-- and no query repeats within the whole run.sh run: the queries are split into
-- KNOWHUB_BENCH_STREAMS x KNOWHUB_BENCH_THREADS disjoint classes by a hash of
-- their words, this wrk run's thread N (1-based) draws only from class
-- KNOWHUB_BENCH_STREAM x KNOWHUB_BENCH_THREADS + N - 1, and a thread never sends
-- a query twice. So every search is answered by computing it, none from the
-- cache (the hits count shows it).
local token = os.getenv("KNOWHUB_BENCH_TOKEN")
if token and token ~= "" then
    wrk.headers["Authorization"] = "Bearer " .. token
end
local mode = os.getenv("KNOWHUB_BENCH_MODE") or ""
if mode == "create" then
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
    wrk.body = '{"scenario":"When a benchmark creates an entry","content":'
        .. '"One short paragraph, the size of a typical experience entry.",'
        .. '"tags_type":["tool"],"tags":["bench"],"agent_id":"bench-agent","score":3}'
elseif mode == "search-file" then
    wrk.headers["Content-Type"] = "application/json"
end

local search = mode == "search-entry" or mode == "search-file"
local entries, words = {}, {} -- entries[i]: the word ids of line i; words[id]: the word

local function load_words(path)
    local ids = {}
    for line in io.lines(path) do
        local e = {}
        for w in line:gmatch("%S+") do
            local id = ids[w]
            if not id then
                id = #words + 1
                ids[w] = id
                words[id] = w
            end
            e[#e + 1] = id
        end
        if #e >= 4 then
            entries[#entries + 1] = e
        end
    end
    if #entries == 0 then
        error("bench.lua: no line of 4 words or more in " .. path)
    end
end

if search then
    load_words(os.getenv("KNOWHUB_BENCH_WORDS") or error("bench.lua: KNOWHUB_BENCH_WORDS is not set"))
end

local threads = {}

function setup(thread)
    table.insert(threads, thread)
    thread:set("id", #threads)
end

local class, classes, seen = 0, 1, {}

function init(args)
    non2xx = 0
    envelope = 0
    hits = 0
    if search then
        local n = tonumber(os.getenv("KNOWHUB_BENCH_THREADS")) or 1
        class = (tonumber(os.getenv("KNOWHUB_BENCH_STREAM")) or 0) * n + id - 1
        classes = (tonumber(os.getenv("KNOWHUB_BENCH_STREAMS")) or 1) * n
        math.randomseed(1 + class) -- the same queries for the same class in every run
    end
end

-- A new query of this thread's class: 2-4 different words of one entry,
-- space-separated: the first ones drawn at random, the last one at random
-- among the entry's words that put the query in the class.
local pick, fits = {}, {}
local function taken(id, n)
    for j = 1, n do
        if pick[j] == id then return true end
    end
    return false
end

local function next_query()
    for _ = 1, 100000 do
        local e = entries[math.random(#entries)]
        local k = math.random(2, 4)
        local h = 0
        for i = 1, k - 1 do
            local id
            repeat id = e[math.random(#e)] until not taken(id, i - 1)
            pick[i] = id
            h = (h * 40503 + id) % 2147483647
        end
        local n = 0
        for _, id in ipairs(e) do
            if (h * 40503 + id) % 2147483647 % classes == class and not taken(id, k - 1) then
                n = n + 1
                fits[n] = id
            end
        end
        if n > 0 then
            pick[k] = fits[math.random(n)]
            local q = words[pick[1]]
            for i = 2, k do
                q = q .. " " .. words[pick[i]]
            end
            if not seen[q] then
                seen[q] = true
                return q
            end
        end
    end
    error("bench.lua: no new query found")
end

local function urlencode(s)
    return (s:gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", c:byte()) end))
end

if search then
    function request()
        local q = next_query()
        if mode == "search-entry" then
            return wrk.format("GET", "/api/knowledge/search?q=" .. urlencode(q) .. "&mode=lexical")
        end
        -- Words are letters or Han characters: nothing to escape in JSON.
        return wrk.format("POST", "/api/knowledge/search", nil, '{"query":"' .. q .. '"}')
    end
end

function response(status, headers, body)
    if status < 200 or status > 299 then
        non2xx = non2xx + 1
    elseif body and body:find('"status":"error"', 1, true) then
        envelope = envelope + 1
    end
    if headers["X-Cache"] == "hit" then
        hits = hits + 1
    end
end

function done(summary, latency, requests)
    local n, e, h = 0, 0, 0
    for _, t in ipairs(threads) do
        n = n + t:get("non2xx")
        e = e + t:get("envelope")
        h = h + t:get("hits")
    end
    io.write(string.format("bench-errors: non2xx=%d envelope=%d hits=%d\n", n, e, h))
end
