-- wrk script: POST one fixed request on every connection and compare every answer with the expected one.
--
-- usage: wrk ... -s post.lua URL -- REQUEST_FILE EXPECTED_FILE
-- REQUEST_FILE holds header lines ("Name: value"), an empty line, then the body; EXPECTED_FILE the exact
-- body every answer must have (status 200). At the end one JSON line goes to stdout: the counts, the
-- latency percentiles (microseconds) and how many answers were wrong.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

local function slurp(path)
  local file = assert(io.open(path, "rb"))
  local text = file:read("*a")
  file:close()
  return text
end

function init(args)
  local spec = slurp(args[1])
  local split = spec:find("\n\n", 1, true)
  wrk.method = "POST"
  wrk.body = spec:sub(split + 2)
  for name, value in spec:sub(1, split):gmatch("([^:\n]+): ([^\n]*)\n") do
    wrk.headers[name] = value
  end
  expected = slurp(args[2])
  wrong_status = 0
  wrong_body = 0
end

function response(status, headers, body)
  if status ~= 200 then
    wrong_status = wrong_status + 1
  elseif body ~= expected then
    wrong_body = wrong_body + 1
  end
end

function done(summary, latency, requests)
  local status, body = 0, 0
  for _, thread in ipairs(threads) do
    status = status + thread:get("wrong_status")
    body = body + thread:get("wrong_body")
  end
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"wrong_status":%d,"wrong_body":%d,"p50_us":%.0f,"p99_us":%.0f,"max_us":%.0f}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    status, body, latency:percentile(50), latency:percentile(99), latency.max))
end
