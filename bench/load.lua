-- wrk script for make bench-load: each request asks for a random path
-- from the file given after "--", and done() prints one line of figures:
--   RESULT requests=N seconds=S rps=R p50_us=A p99_us=B non2xx=C errors=E
--          timeouts=T
-- errors counts every socket error (connect, read, write) and timeout;
-- timeouts (requests slower than wrk's --timeout, 2 s by default) are
-- also given alone.
local paths = {}

function init(args)
  local f = assert(io.open(args[1], "r"))
  for line in f:lines() do
    if #line > 0 then paths[#paths + 1] = line end
  end
  f:close()
  math.randomseed(os.time() + (tonumber(tostring({}):match("0x(%x+)"), 16) or 0))
end

function request()
  return wrk.format("GET", paths[math.random(#paths)])
end

function done(summary, latency, requests)
  local e = summary.errors
  local seconds = summary.duration / 1e6
  io.write(string.format(
    "RESULT requests=%d seconds=%.2f rps=%.0f p50_us=%d p99_us=%d non2xx=%d errors=%d timeouts=%d\n",
    summary.requests, seconds, summary.requests / seconds,
    latency:percentile(50), latency:percentile(99),
    e.status, e.connect + e.read + e.write + e.timeout, e.timeout))
end
