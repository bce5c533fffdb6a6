-- wrk script of bench/soak.sh: GETs random paths from a file, one path a
-- line (written by bench/soakcheck prepare), and prints its counts as one
-- machine-readable line at the end.
--
--   wrk -t1 -c32 -d60s -s bench/soak.lua http://127.0.0.1:PORT -- paths.txt
--
-- Every response's status is counted in Lua, so "non2xx" is exact (wrk's
-- own "Non-2xx or 3xx" counter only counts statuses above 399).

local threads = {}
local counter = 0

function setup(thread)
   counter = counter + 1
   thread:set("id", counter)
   table.insert(threads, thread)
end

local paths = {}
non2xx = 0
first_bad = ""

function init(args)
   local file = args[1] or os.getenv("SOAK_PATHS")
   local f = assert(io.open(file, "r"), "cannot open paths file " .. tostring(file))
   for line in f:lines() do
      if #line > 0 then
         paths[#paths + 1] = line
      end
   end
   f:close()
   assert(#paths > 0, "no paths in " .. file)
   math.randomseed(os.time() * 1000 + (id or 0))
end

function request()
   return wrk.format("GET", paths[math.random(#paths)])
end

function response(status, headers, body)
   if status < 200 or status > 299 then
      non2xx = non2xx + 1
      if first_bad == "" then
         first_bad = tostring(status) .. " " .. string.sub(body or "", 1, 120)
      end
   end
end

function done(summary, latency, requests)
   local bad, sample = 0, ""
   for _, t in ipairs(threads) do
      bad = bad + (t:get("non2xx") or 0)
      local s = t:get("first_bad") or ""
      if sample == "" then sample = s end
   end
   local e = summary.errors
   io.write(string.format(
      "SOAKWRK requests=%d duration_us=%d bytes=%d non2xx=%d status_gt399=%d connect=%d read=%d write=%d timeout=%d p50_ms=%.2f p99_ms=%.2f max_ms=%.2f\n",
      summary.requests, summary.duration, summary.bytes, bad, e.status,
      e.connect, e.read, e.write, e.timeout,
      latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
   if sample ~= "" then
      io.write("SOAKWRK_FIRST_BAD " .. string.gsub(sample, "\n", " ") .. "\n")
   end
end
