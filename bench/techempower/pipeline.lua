-- wrk script for the plaintext test: each connection writes `depth`
-- requests at once (HTTP/1.1 pipelining) and reads their answers in order.
-- Usage: wrk ... -s pipeline.lua -- 16
init = function(args)
  local depth = tonumber(args[1]) or 1
  local batch = {}
  for i = 1, depth do
    batch[i] = wrk.format()
  end
  pipelined = table.concat(batch)
end

request = function()
  return pipelined
end
