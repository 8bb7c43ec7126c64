-- wrk script for bench/soak.sh: each connection walks the URL list (one path per line in
-- the file named by SOAK_URLS) round-robin from a random start, and every thread counts
-- the 5xx answers it sees; `done` prints the total on one line the script parses.
local paths = {}
local next_index = 0
server_errors = 0
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  for line in io.lines(os.getenv("SOAK_URLS")) do
    if line ~= "" then table.insert(paths, line) end
  end
  math.randomseed(os.time() + #threads)
  next_index = math.random(#paths)
end

function request()
  next_index = next_index % #paths + 1
  return wrk.format("GET", paths[next_index])
end

function response(status, headers, body)
  if status >= 500 then server_errors = server_errors + 1 end
end

function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do total = total + thread:get("server_errors") end
  io.write(string.format("SOAK 5xx=%d\n", total))
end
