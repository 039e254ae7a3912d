-- wrk script: one legacy MCP session per connection, then the same tools/call over and over, every answer checked.
--
-- usage: wrk -tN -cN ... -s session.lua URL -- INITIALIZE_BODY CALL_BODY EXPECTED_BODY
-- (one connection per thread: a thread's Lua state is its connection's session). Each connection posts the
-- initialize body, takes the Mcp-Session-Id of the answer, posts notifications/initialized (202), then the call
-- body in that session; every call's answer must be status 200 with exactly the bytes EXPECTED_BODY. At the
-- end one JSON line goes to stdout: the calls answered, the wrong ones and wrk's own counts.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  headers = {["Content-Type"] = "application/json", ["Accept"] = "application/json, text/event-stream"}
  call_body = args[2]
  expected = args[3]
  next_request = wrk.format("POST", nil, headers, args[1])
  step = "initialize"
  calls, wrong_status, wrong_body = 0, 0, 0
end

function request()
  return next_request
end

function response(status, answer_headers, body)
  if step == "call" then
    calls = calls + 1
    if status ~= 200 then
      wrong_status = wrong_status + 1
    elseif body ~= expected then
      wrong_body = wrong_body + 1
    end
  elseif step == "initialize" then
    for name, value in pairs(answer_headers) do
      if name:lower() == "mcp-session-id" then
        headers["Mcp-Session-Id"] = value
      end
    end
    if status ~= 200 or not headers["Mcp-Session-Id"] then
      wrong_status = wrong_status + 1
    end
    headers["MCP-Protocol-Version"] = "2025-06-18"
    next_request = wrk.format("POST", nil, headers, '{"jsonrpc":"2.0","method":"notifications/initialized"}')
    step = "initialized"
  else
    if status ~= 202 then
      wrong_status = wrong_status + 1
    end
    next_request = wrk.format("POST", nil, headers, call_body)
    step = "call"
  end
end

function done(summary, latency, requests)
  local calls_all, status, body = 0, 0, 0
  for _, thread in ipairs(threads) do
    calls_all = calls_all + thread:get("calls")
    status = status + thread:get("wrong_status")
    body = body + thread:get("wrong_body")
  end
  local e = summary.errors
  io.write(string.format(
    '{"calls":%d,"duration_us":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"wrong_status":%d,"wrong_body":%d,"p50_us":%.0f,"p99_us":%.0f}\n',
    calls_all, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    status, body, latency:percentile(50), latency:percentile(99)))
end
