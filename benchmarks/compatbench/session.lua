-- wrk script: one legacy MCP session per connection, the same tools/call over and over, every answer checked.
--
-- usage: wrk -tN -cN ... -s session.lua URL -- CALL_BODY EXPECTED_BODY SESSION_ID_1 ... SESSION_ID_N
-- One connection per thread, and thread i posts in session i (opened beforehand: initialize, then
-- notifications/initialized). Every answer must be status 200 with exactly the bytes EXPECTED_BODY. At the end
-- one JSON line goes to stdout: the calls answered, the wrong ones and wrk's own counts.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("index", #threads)
end

function init(args)
  local headers = {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["MCP-Protocol-Version"] = "2025-06-18",
    ["Mcp-Session-Id"] = args[2 + index],
  }
  call = wrk.format("POST", nil, headers, args[1])
  expected = args[2]
  calls, wrong_status, wrong_body = 0, 0, 0
end

function request()
  return call
end

function response(status, headers, body)
  calls = calls + 1
  if status ~= 200 then
    wrong_status = wrong_status + 1
  elseif body ~= expected then
    wrong_body = wrong_body + 1
  end
end

function done(summary, latency, requests)
  local all_calls, status, body = 0, 0, 0
  for _, thread in ipairs(threads) do
    all_calls = all_calls + thread:get("calls")
    status = status + thread:get("wrong_status")
    body = body + thread:get("wrong_body")
  end
  local e = summary.errors
  io.write(string.format(
    '{"calls":%d,"duration_us":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"wrong_status":%d,"wrong_body":%d,"p50_us":%.0f,"p99_us":%.0f}\n',
    all_calls, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    status, body, latency:percentile(50), latency:percentile(99)))
end
