-- wrk script for scripts/load.sh: cycles through a fixed mix of requests
-- (success, *fx.Error, panic, 404, validation failure, valid POST) and, for
-- every response, checks that the body matches its status. At the end it
-- prints one "status <code> <count>" line per status, "mismatch <n>" for
-- responses whose body did not match, and wrk's socket error counts.

local mix = {
  { method = "GET",  path = "/hello" },                                            -- 200
  { method = "GET",  path = "/users/42" },                                         -- 200
  { method = "GET",  path = "/conflict/7" },                                       -- 409
  { method = "GET",  path = "/panic" },                                            -- 500
  { method = "GET",  path = "/no/such/route" },                                    -- 404
  { method = "POST", path = "/items", body = '{"name":1}' },                       -- 422
  { method = "POST", path = "/items", body = '{"name":"apple","qty":3}' },         -- 201
}

-- expected body fragment per status
local expect = {
  [200] = '"',
  [201] = '"name":"apple"',
  [404] = '{"error":{"code":"FX_NOT_FOUND","message":"Route GET /no/such/route not found"}}',
  [409] = '{"error":{"code":"APP_CONFLICT","message":"User already exists","details":{"id":"7"}}}',
  [422] = '"code":"FX_VALIDATION_ERROR","message":"Request validation failed"',
  [500] = '{"error":{"code":"FX_INTERNAL_ERROR","message":"Internal server error"}}',
}

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

local requests = {}
local i = 0
c200, c201, c404, c409, c422, c500, cother, mismatch = 0, 0, 0, 0, 0, 0, 0, 0

function init(args)
  for k, r in ipairs(mix) do
    local headers = {}
    if r.body then headers["Content-Type"] = "application/json" end
    requests[k] = wrk.format(r.method, r.path, headers, r.body)
  end
end

function request()
  i = i % #requests + 1
  return requests[i]
end

function response(status, headers, body)
  if     status == 200 then c200 = c200 + 1
  elseif status == 201 then c201 = c201 + 1
  elseif status == 404 then c404 = c404 + 1
  elseif status == 409 then c409 = c409 + 1
  elseif status == 422 then c422 = c422 + 1
  elseif status == 500 then c500 = c500 + 1
  else cother = cother + 1 end
  local want = expect[status]
  if want == nil or not string.find(body, want, 1, true) then
    mismatch = mismatch + 1
    if mismatch <= 3 then io.stderr:write("mismatch: ", status, " ", body, "\n") end
  end
  if status >= 400 and headers["Content-Type"] ~= "application/json" then
    mismatch = mismatch + 1
  end
end

function done(summary, latency, requests)
  local names = { "c200", "c201", "c404", "c409", "c422", "c500", "cother", "mismatch" }
  local total = {}
  for _, n in ipairs(names) do total[n] = 0 end
  for _, t in ipairs(threads) do
    for _, n in ipairs(names) do total[n] = total[n] + t:get(n) end
  end
  for _, n in ipairs({ "c200", "c201", "c404", "c409", "c422", "c500" }) do
    io.write(string.format("status %s %d\n", string.sub(n, 2), total[n]))
  end
  io.write(string.format("status other %d\n", total.cother))
  io.write(string.format("mismatch %d\n", total.mismatch))
  io.write(string.format("requests %d\n", summary.requests))
  local e = summary.errors
  io.write(string.format("socket_errors %d\n", e.connect + e.read + e.write + e.timeout))
  io.write(string.format("p50_us %d\np99_us %d\n", latency:percentile(50), latency:percentile(99)))
end
