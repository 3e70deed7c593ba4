-- httpd-wrk.lua - the wrk script of the HTTP benchmark (bench/httpd.py) and of
-- its test (tests/bench/test_httpd.py): when wrk is done, prints one line
--   wrk-result requests=N duration_us=D bytes=B connect=N read=N write=N
--   status=N timeout=N mean_us=X p50_us=X p90_us=X p99_us=X max_us=X sent=N received=N
-- (status: responses with a status above 399; timeout: responses slower than
-- --timeout; latencies in microseconds, from wrk's own histogram).
--
-- With the script argument "count" (wrk ... URL -- count), every thread also
-- counts the requests it sent and the responses it received, through the
-- request() and response() hooks; that makes wrk build each request in Lua
-- and hand each response to Lua, so the benchmark does not use it, and
-- without it sent and received are -1.
--
-- wrk runs setup() and done() in its main Lua state and init(), request()
-- and response() in each thread's own state; done() reads the threads'
-- counters with thread:get().

local threads = {}

function setup(thread)
   table.insert(threads, thread)
end

function init(args)
   -- args[0] is the URL; the script's own arguments follow.
   if args[1] == "count" then
      sent, received = 0, 0
      local req = wrk.format()
      request = function()
         sent = sent + 1
         return req
      end
      response = function(status, headers, body)
         received = received + 1
      end
   end
end

function done(summary, latency, requests)
   local sent, received = -1, -1
   for i, t in ipairs(threads) do
      local s, r = t:get("sent"), t:get("received")
      if s ~= nil then
         -- wrk calls the first thread's request() once before it starts,
         -- to check the request it returns: that one was never sent.
         if i == 1 then
            s = s - 1
         end
         sent = math.max(sent, 0) + s
         received = math.max(received, 0) + r
      end
   end
   local e = summary.errors
   io.write(string.format(
      "wrk-result requests=%d duration_us=%d bytes=%d connect=%d read=%d write=%d " ..
      "status=%d timeout=%d mean_us=%.1f p50_us=%d p90_us=%d p99_us=%d max_us=%d " ..
      "sent=%d received=%d\n",
      summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write,
      e.status, e.timeout, latency.mean, latency:percentile(50), latency:percentile(90),
      latency:percentile(99), latency.max, sent, received))
end
